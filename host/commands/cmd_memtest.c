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
#include "measure/memtest_preflight.h"
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
	bool yes, check;
	struct preflight pf;
	struct memtest run;
};

static const struct cli_spec memtest_spec = {
    .name = "memtest",
    .synopsis =
	"NAME [--workload pgbench|fill] [--size SIZE] [--fill-dir DIR]\n"
	"                      [--tmpfs DIR] [--image IMAGE] [--no-pull] [--scale N]\n"
	"                      [--clients N] [--duration SECONDS] [--pressure SIZE|none]\n"
	"                      [--hold SECONDS] [--canary SIZE] [--settle SECONDS]\n"
	"                      [--restart] [--yes] [--check] [--json] [--results DIR|none]\n"
	"                      [--pid PID]",
    .help = "The real RAM cost of a running Lima instance: baseline, workload, guest trim, host\n"
	    "pressure, then `limactl stop NAME` and the host's free-memory gain. Stops the\n"
	    "instance (asks first unless --yes); --restart starts it again afterwards. A\n"
	    "pre-flight first checks the tmpfs and fill directory (a disk-backed one is picked\n"
	    "when the default is not), Docker and the image, host memory for the pressure, the\n"
	    "permission to stop the instance and --results, and refuses before anything runs.\n"
	    "\n"
	    "  --workload    pgbench (default when the instance has sock/docker.sock): postgres\n"
	    "                through the Docker API, pgbench -i -s N then -c N -T S; fill: SIZE\n"
	    "                written to a tmpfs and deleted, then SIZE of files read into page\n"
	    "                cache, through limactl shell (default SIZE: half the VM's memory)\n"
	    "  --fill-dir    guest directory for the page-cache files (default "
	    "/var/tmp/vmcost-fill)\n"
	    "  --tmpfs       guest tmpfs directory (default /dev/shm)\n"
	    "  --image       postgres image (default " WORKLOAD_PG_IMAGE
	    "); --no-pull: fail if absent\n"
	    "  --scale, --clients, --duration   pgbench -s (50), -c (8), -T (60)\n"
	    "  --pressure    host memory to allocate and hold (default: a size that makes the\n"
	    "                host reclaim, from its free/available memory); none skips it\n"
	    "  --hold        seconds the pressure is held (40); --canary: MADV_FREE control (1G)\n"
	    "  --settle      longest wait for memory to settle after trim and stop (30)\n"
	    "  --results     where the .md/.json/.svg go (default: the current directory)\n"
	    "  --check       run only the pre-flight and print its verdicts (stops nothing)\n"
	    "\n"
	    "Exit codes: 0 done, 2 bad option (the pre-flight's too: a RAM-backed --fill-dir),\n"
	    "4 instance stopped, 7 not permitted (another user's instance), 10 Docker failure,\n"
	    "11 pressure INCONCLUSIVE (its canary was never discarded), 130 interrupted (nothing\n"
	    "left allocated).\n",
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
	    {.name = "--check", .kind = CLI_FLAG, .flag = &c->check},
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

/* Refused at once when it could not ask anyway; the question itself waits for the pre-flight. */
static int require_answerable(const struct memtest_command *c)
{
	const char *name = c->run.inst.name;
	if (c->yes || c->check || isatty(STDIN_FILENO))
		return VMC_EXIT_OK;
	return cli_fail(&c->cli, VMC_EXIT_USAGE,
			"memtest ends by stopping instance \"%s\" (limactl stop %s); pass --yes to "
			"allow it (stdin is not a terminal, so it cannot ask)",
			name, name);
}

static int confirm_stop(const struct memtest_command *c)
{
	const char *name = c->run.inst.name;
	if (c->yes)
		return VMC_EXIT_OK;
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
	return VMC_EXIT_OK;
}

/* The pre-flight's verdicts: on stdout for --check, on stderr before a run. */
static void report_preflight(const struct memtest_command *c, int rc)
{
	const char *name = c->run.inst.name;
	FILE *f = c->check ? stdout : stderr;
	if (!(c->check && c->cli.json)) {
		fprintf(f, "vmcost memtest %s: pre-flight%s\n", name,
			rc == VMC_EXIT_OK ? "" : " (refused)");
		preflight_print(f, &c->pf, vmc_use_color(f));
	}
	const char *reason = "";
	for (int i = 0; i < PREFLIGHT_NCHECKS && rc != VMC_EXIT_OK; i++)
		if (c->pf.verdicts[i].status == PREFLIGHT_FAIL) {
			reason = c->pf.verdicts[i].message;
			break;
		}
	if (rc != VMC_EXIT_OK)
		cli_fail(NULL, rc, "memtest refused before it started (nothing was changed): %s",
			 reason);
	if (c->cli.json && (c->check || rc != VMC_EXIT_OK)) {
		json_t *doc =
		    json_pack("{s:s, s:o}", "instance", name, "preflight", preflight_json(&c->pf));
		if (rc != VMC_EXIT_OK)
			json_object_set_new(doc, "error",
					    json_pack("{s:i, s:s}", "code", rc, "message", reason));
		cli_print_json(doc);
	}
}

/*
 * Every precondition before the baseline (measure/memtest_preflight.h). A pass fixes what the
 * run uses: SIZE, the fill directory (perhaps one it picked) and the pressure.
 */
static int run_preflight(struct memtest_command *c)
{
	struct memtest *m = &c->run;
	struct memtest_settings *o = &m->o;
	struct preflight_request req = {.name = m->inst.name,
					.fill = o->workload == MEMTEST_FILL,
					.vm_memory = m->inst.memory,
					.size = o->size,
					.fill_dir = o->fill_dir,
					.tmpfs_dir = o->tmpfs_dir,
					.image = o->image,
					.no_pull = o->no_pull,
					.pressure_none = o->pressure_none,
					.pressure_set = o->pressure_set,
					.pressure = o->pressure,
					.canary = o->canary,
					.results_dir = c->results_dir};
	int rc = preflight_run(&req, &m->inst, m->vp.pid, &c->pf);
	report_preflight(c, rc);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (o->workload == MEMTEST_FILL) {
		o->size = c->pf.size;
		o->fill_dir = c->pf.fill_dir;
		m->fill = (struct workload_fill_plan){
		    .size = o->size, .dir = o->fill_dir, .tmpfs_dir = o->tmpfs_dir};
	}
	if (!o->pressure_none)
		o->pressure = c->pf.pressure;
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
		rc = require_answerable(c);
	if (rc == VMC_EXIT_OK)
		rc = run_preflight(c);
	if (rc != VMC_EXIT_OK || c->check)
		return rc;
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
	json_object_set_new(m->doc, "preflight", preflight_json(&c->pf));
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
