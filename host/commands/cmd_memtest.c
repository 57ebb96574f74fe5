/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost memtest NAME: the real RAM cost of a VM
 * (docs/published-measurements.md#real-ram-cost-memtest). Load the guest, trim its cache, put
 * pressure on the host (with a MADV_FREE canary as positive control), then stop the VM and
 * measure what the host gains: footprint figures cannot show memory the host compressed or the
 * guest freed, the free memory gained at stop can.
 */
#include "clock.h"
#include "commands/cli.h"
#include "commands/commands.h"
#include "jsonutil.h"
#include "log.h"
#include "measure/memtest.h"
#include "measure/memtest_report.h"
#include "measure/pressure.h"
#include "platform/platform.h"
#include "units.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The command around a run: its command line and where the results go. */
struct memtest_command {
	struct cli_opts cli; /* --json, --pid, NAME */
	const char *results_dir;
	bool yes;
	struct memtest run;
};

static const struct cli_spec memtest_spec = {
    .name = "memtest",
    .synopsis =
	"NAME [--workload pgbench|fill] [--size SIZE] [--fill-dir DIR]\n"
	"                      [--tmpfs DIR] [--image IMAGE] [--no-pull] [--scale N]\n"
	"                      [--clients N] [--duration SECONDS] [--pressure SIZE|none]\n"
	"                      [--hold SECONDS] [--canary SIZE] [--settle SECONDS]\n"
	"                      [--restart] [--yes] [--json] [--results DIR|none] [--pid PID]",
    .help =
	"The real RAM cost of a running Lima instance: baseline, workload, guest trim, host\n"
	"pressure, then `limactl stop NAME` and the host's free-memory gain. Stops the\n"
	"instance (asks first unless --yes); --restart starts it again afterwards.\n"
	"\n"
	"  --workload    pgbench (default when the instance has sock/docker.sock): postgres\n"
	"                through the Docker API, pgbench -i -s N then -c N -T S; fill: SIZE\n"
	"                written to a tmpfs and deleted, then SIZE of files read into page\n"
	"                cache, through limactl shell (default SIZE: half the VM's memory)\n"
	"  --fill-dir    guest directory for the page-cache files (default "
	"/var/tmp/vmcost-fill)\n"
	"  --tmpfs       guest tmpfs directory (default /dev/shm)\n"
	"  --image       postgres image (default " PG_DEFAULT_IMAGE "); --no-pull: fail if absent\n"
	"  --scale, --clients, --duration   pgbench -s (50), -c (8), -T (60)\n"
	"  --pressure    host memory to allocate and hold (default: a size that makes the\n"
	"                host reclaim, from its free/available memory); none skips it\n"
	"  --hold        seconds the pressure is held (40); --canary: MADV_FREE control (1G)\n"
	"  --settle      longest wait for memory to settle after trim and stop (30)\n"
	"  --results     where the .md/.json/.svg go (default: the current directory)\n"
	"\n"
	"Exit codes: 0 done, 4 instance stopped, 10 Docker failure, 11 pressure INCONCLUSIVE\n"
	"(its canary was never discarded), 130 interrupted (nothing left allocated).\n",
    .flags = CLI_PID,
    .min_args = 1,
    .max_args = 1,
};

/* ---- options -------------------------------------------------------------------------------- */

/* memtest's command line into c: CLI_CONTINUE, or the exit code to return. */
static int parse_args(int argc, char **argv, struct memtest_command *c)
{
	struct memtest_settings *o = &c->run.o;
	*o = (struct memtest_settings){.scale = 50,
				       .clients = 8,
				       .duration = 60,
				       .canary = PRESSURE_DEFAULT_CANARY,
				       .hold = PRESSURE_DEFAULT_HOLD,
				       .settle_max = 30};
	c->results_dir = ".";
	const char *workload = NULL;
	const struct cli_option options[] = {
	    {.name = "--workload", .kind = CLI_TEXT, .text = &workload},
	    {.name = "--size", .kind = CLI_SIZE, .size = &o->size},
	    {.name = "--fill-dir", .kind = CLI_TEXT, .text = &o->fill_dir},
	    {.name = "--tmpfs", .kind = CLI_TEXT, .text = &o->tmpfs_dir},
	    {.name = "--image", .kind = CLI_TEXT, .text = &o->image},
	    {.name = "--no-pull", .kind = CLI_FLAG, .flag = &o->no_pull},
	    {.name = "--scale", .kind = CLI_COUNT, .count = &o->scale},
	    {.name = "--clients", .kind = CLI_COUNT, .count = &o->clients},
	    {.name = "--duration", .kind = CLI_SECONDS, .seconds = &o->duration},
	    {.name = "--pressure",
	     .kind = CLI_SIZE,
	     .size = &o->pressure,
	     .given = &o->pressure_set,
	     .none = &o->pressure_none},
	    {.name = "--hold", .kind = CLI_SECONDS, .seconds = &o->hold},
	    {.name = "--canary", .kind = CLI_SIZE, .size = &o->canary},
	    {.name = "--settle", .kind = CLI_SECONDS, .seconds = &o->settle_max},
	    {.name = "--restart", .kind = CLI_FLAG, .flag = &o->restart},
	    {.name = "--yes", .kind = CLI_FLAG, .flag = &c->yes},
	    {.name = "--results", .kind = CLI_TEXT, .text = &c->results_dir},
	    {0},
	};
	struct cli_spec spec = memtest_spec;
	spec.options = options;
	int rc = cli_parse(&spec, argc, argv, &c->cli);
	if (rc != CLI_CONTINUE)
		return rc;
	if (workload && strcmp(workload, "pgbench") == 0)
		o->workload = MEMTEST_PGBENCH;
	else if (workload && strcmp(workload, "fill") == 0)
		o->workload = MEMTEST_FILL;
	else if (workload)
		return cli_usage_error(&spec, &c->cli, "--workload is pgbench or fill, not \"%s\"",
				       workload);
	if (o->size && o->workload == MEMTEST_PGBENCH)
		return cli_usage_error(
		    &spec, &c->cli,
		    "--size is for --workload fill (pgbench sizes itself with --scale)");
	return CLI_CONTINUE;
}

/* ---- before the run ----------------------------------------------------------------------------
 */

static int confirm_stop(const struct memtest_command *c)
{
	const char *name = c->run.inst.name;
	if (c->yes)
		return VMC_EXIT_OK;
	if (!isatty(STDIN_FILENO))
		return cli_fail(&c->cli, VMC_EXIT_USAGE,
				"memtest ends by stopping instance \"%s\" (limactl stop %s); pass "
				"--yes to allow it (stdin is not a terminal, so it cannot ask)",
				name, name);
	fprintf(stderr,
		"vmcost memtest ends by stopping instance \"%s\" (limactl stop %s)%s.\n"
		"Containers and processes in it stop too. Continue? [y/N] ",
		name, name, c->run.o.restart ? " and starts it again" : "");
	char answer[16] = "";
	if (!fgets(answer, sizeof answer, stdin) || (answer[0] != 'y' && answer[0] != 'Y')) {
		fprintf(stderr, "nothing was done\n");
		return VMC_EXIT_FAILURE;
	}
	return VMC_EXIT_OK;
}

static int choose_defaults(struct memtest_command *c)
{
	struct memtest *m = &c->run;
	struct memtest_settings *o = &m->o;
	if (o->workload == MEMTEST_AUTO) {
		char sock[PATH_MAX + 32];
		snprintf(sock, sizeof sock, "%s/sock/docker.sock", m->inst.dir);
		o->workload = access(sock, F_OK) == 0 ? MEMTEST_PGBENCH : MEMTEST_FILL;
	}
	uint64_t mem = m->inst.memory ? m->inst.memory : 2 * VMC_GIB;
	if (o->workload == MEMTEST_FILL) {
		if (!o->size)
			o->size = mem / 2;
		if (o->size > mem / 4 * 3)
			return cli_fail(
			    &c->cli, VMC_EXIT_USAGE,
			    "--size %llu MiB is more than 3/4 of the VM's %llu MiB: the "
			    "guest would run out of memory; use at most %llu MiB",
			    (unsigned long long)(o->size >> 20), (unsigned long long)(mem >> 20),
			    (unsigned long long)(mem / 4 * 3 >> 20));
		m->fill = (struct fill_plan){
		    .size = o->size, .dir = o->fill_dir, .tmpfs_dir = o->tmpfs_dir};
	}
	if (!o->pressure_none && !o->pressure_set) {
		struct platform_host_memory hm;
		if (platform_host_memory(&hm) != 0)
			return cli_fail(&c->cli, VMC_EXIT_FAILURE, "cannot read host memory:");
		o->pressure = pressure_default_size(&hm, o->canary);
		if (o->pressure == 0)
			return cli_fail(&c->cli, VMC_EXIT_FAILURE,
					"the host has no room for memory pressure (available %llu "
					"MiB): run with --pressure none",
					(unsigned long long)(hm.available >> 20));
	}
	return VMC_EXIT_OK;
}

/* Everything before the first phase: CLI_CONTINUE, or the exit code (message printed). */
static int prepare(struct memtest_command *c, int argc, char **argv)
{
	int rc = parse_args(argc, argv, c);
	if (rc != CLI_CONTINUE)
		return rc;
	struct memtest *m = &c->run;
	char err[1024] = "";
	rc = lima_instance_require_running(c->cli.args[0], &m->inst, err, sizeof err);
	if (rc == VMC_EXIT_OK)
		rc = vmproc_find(&m->inst, c->cli.pid, &m->vp, err, sizeof err);
	if (rc != VMC_EXIT_OK)
		return cli_fail(&c->cli, rc, "%s", err);
	rc = choose_defaults(c);
	if (rc == VMC_EXIT_OK)
		rc = confirm_stop(c);
	return rc == VMC_EXIT_OK ? CLI_CONTINUE : rc;
}

/* ---- the run -----------------------------------------------------------------------------------
 */

static void on_sample(const struct tl_sample *s, void *ctx)
{
	progress_sample(ctx, s);
}

/* Reports the run: the results files, the table or the JSON, and the exit code. */
static int finish(struct memtest_command *c, int rc, const char *err)
{
	struct memtest *m = &c->run;
	timeline_sampler_stop(&m->sampler);
	progress_clear(&m->prog);
	if (rc == VMC_EXIT_INTERRUPTED || cli_stop) {
		memtest_cleanup_guest(m);
		return cli_fail(&c->cli, VMC_EXIT_INTERRUPTED,
				"interrupted: %s was not stopped; pressure released%s",
				m->inst.name,
				m->fill_pending || m->pg.id[0] ? "" : ", guest cleaned up");
	}
	if (rc != VMC_EXIT_OK) {
		memtest_cleanup_guest(m);
		return cli_fail(&c->cli, rc, "%s", err);
	}
	char werr[512];
	int wrc = strcmp(c->results_dir, "none") == 0
		      ? VMC_EXIT_OK
		      : memtest_write_results(m, c->results_dir, werr, sizeof werr);
	if (c->cli.json)
		vmc_json_write(stdout, m->doc);
	else
		memtest_report_human(stdout, m->doc, vmc_use_color(stdout));
	if (wrc != VMC_EXIT_OK)
		return cli_fail(&c->cli, wrc, "%s", werr);
	const char *verdict = memtest_str(m->doc, "result.pressure");
	return verdict && strcmp(verdict, "INCONCLUSIVE") == 0 ? VMC_EXIT_INCONCLUSIVE
							       : VMC_EXIT_OK;
}

static int run(struct memtest_command *c)
{
	struct memtest *m = &c->run;
	cli_catch_signals();
	docker_set_abort_check(cli_stop_requested);
	m->stop = &cli_stop;
	m->started = time(NULL);
	timeline_init(&m->tl, vmc_monotonic_s());
	progress_init(&m->prog, stderr, isatty(STDERR_FILENO), "memtest", m->tl.t0);
	memtest_build_header(m);
	m->sampler = (struct tl_sampler){.tl = &m->tl,
					 .pid = m->vp.pid,
					 .interval = 1.0,
					 .on_sample = on_sample,
					 .ctx = &m->prog};
	char err[1024] = "";
	int rc;
	if (timeline_sampler_start(&m->sampler) != 0)
		rc = cli_fail(&c->cli, VMC_EXIT_FAILURE, "cannot start the sampler thread");
	else
		rc = finish(c, memtest_run_phases(m, err, sizeof err), err);
	json_decref(m->doc);
	progress_destroy(&m->prog);
	timeline_free(&m->tl);
	return rc;
}

int cmd_memtest(int argc, char **argv)
{
	struct memtest_command *c = calloc(1, sizeof *c);
	if (!c)
		return cli_fail(NULL, VMC_EXIT_FAILURE, "out of memory");
	int rc = prepare(c, argc, argv);
	if (rc == CLI_CONTINUE)
		rc = run(c);
	free(c);
	return rc;
}
