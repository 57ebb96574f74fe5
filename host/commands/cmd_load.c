/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost load NAME: the published load table
 * (docs/published-measurements.md#final-template-under-load): pgbench -s 50 with 8 clients x
 * 60 s and 1 client x 20 s (tps, mean latency) in a postgres container through the Docker Engine
 * API, then the idle host CPU of the VM process with the container still running.
 */
#include "clients/lima.h"
#include "clients/vmproc.h"
#include "clock.h"
#include "commands/cli.h"
#include "commands/commands.h"
#include "jsonutil.h"
#include "log.h"
#include "measure/load_report.h"
#include "measure/progress.h"
#include "measure/results.h"
#include "measure/vm_sample.h"
#include "measure/workload.h"
#include "message.h"
#include "platform/platform.h"
#include "stats.h"
#include "units.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct load_opts {
	const char *name, *image, *results_dir;
	bool no_pull, keep;
	int scale, clients;
	double duration, single_duration, idle, interval;
};

static const struct cli_spec load_spec = {
    .name = "load",
    .synopsis = "NAME [--image IMAGE] [--no-pull] [--scale N] [--clients N]\n"
		"                   [--duration SECONDS] [--single-duration SECONDS]\n"
		"                   [--idle SECONDS] [--interval SECONDS] [--keep] [--json]\n"
		"                   [--results DIR|none] [--pid PID]",
    .help =
	"The published load table through the instance's docker.sock: pgbench -i -s N, then\n"
	"N clients x S s and 1 client x S s (tps, mean latency), then the idle CPU of the\n"
	"VM process with the postgres container still running.\n"
	"\n"
	"  --image            postgres image (default " WORKLOAD_PG_IMAGE "), pulled if missing\n"
	"                     unless --no-pull\n"
	"  --scale            pgbench -s (50)\n"
	"  --clients          clients of the first run (8); --duration its -T (60)\n"
	"  --single-duration  -T of the 1-client run (20)\n"
	"  --idle, --interval idle measurement with the container running (60 s in 10 s "
	"steps)\n"
	"  --keep             leave the container running afterwards (docker rm "
	"-f " WORKLOAD_PG_CONTAINER ")\n"
	"  --results          where the .md/.json go (default: the current directory)\n",
    .flags = CLI_PID,
    .min_args = 1,
    .max_args = 1,
};

/* load's command line into cli and o: CLI_CONTINUE, or the exit code to return. */
static int parse_args(int argc, char **argv, struct cli_opts *cli, struct load_opts *o)
{
	*o = (struct load_opts){.scale = 50,
				.clients = 8,
				.duration = 60,
				.single_duration = 20,
				.idle = 60,
				.interval = 10,
				.results_dir = "."};
	const struct cli_option options[] = {
	    {.name = "--image", .kind = CLI_TEXT, .text = &o->image},
	    {.name = "--no-pull", .kind = CLI_FLAG, .flag = &o->no_pull},
	    {.name = "--scale", .kind = CLI_COUNT, .count = &o->scale},
	    {.name = "--clients", .kind = CLI_COUNT, .count = &o->clients},
	    {.name = "--duration", .kind = CLI_SECONDS, .seconds = &o->duration},
	    {.name = "--single-duration", .kind = CLI_SECONDS, .seconds = &o->single_duration},
	    {.name = "--idle", .kind = CLI_SECONDS, .seconds = &o->idle},
	    {.name = "--interval", .kind = CLI_SECONDS, .seconds = &o->interval},
	    {.name = "--keep", .kind = CLI_FLAG, .flag = &o->keep},
	    {.name = "--results", .kind = CLI_TEXT, .text = &o->results_dir},
	    {0},
	};
	struct cli_spec spec = load_spec;
	spec.options = options;
	int rc = cli_parse(&spec, argc, argv, cli);
	if (rc != CLI_CONTINUE)
		return rc;
	o->name = cli->args[0];
	if (o->interval > o->idle)
		return cli_usage_error(&spec, cli,
				       "--interval (%.0f s) is longer than --idle (%.0f s)",
				       o->interval, o->idle);
	return CLI_CONTINUE;
}

static void on_note(const char *text, void *ctx)
{
	progress_note(ctx, text);
}

/* CPU of the VM process per interval, as % of one core (the published kit's idle figure). */
static int idle_cpu(pid_t pid, const struct load_opts *o, struct progress *prog, json_t **out,
		    char *err, size_t errsize)
{
	size_t n = (size_t)(o->idle / o->interval);
	double *pct = calloc(n ? n : 1, sizeof *pct);
	if (!pct) {
		snprintf(err, errsize, "out of memory");
		return VMC_EXIT_FAILURE;
	}
	struct platform_proc_sample prev, cur;
	if (platform_proc_sample(pid, &prev) != 0) {
		vmc_errorf(err, errsize, "cannot sample pid %d:", (int)pid);
		free(pct);
		return VMC_EXIT_HELPER;
	}
	size_t got = 0;
	for (size_t i = 0; i < n && !cli_stop; i++) {
		char note[96];
		snprintf(note, sizeof note, "idle CPU, interval %zu of %zu", i + 1, n);
		progress_note(prog, note);
		struct timespec nap = {(time_t)o->interval,
				       (long)((o->interval - (double)(time_t)o->interval) * 1e9)};
		while (nanosleep(&nap, &nap) != 0 && errno == EINTR && !cli_stop)
			;
		if (cli_stop || platform_proc_sample(pid, &cur) != 0)
			break;
		pct[got++] = measure_cpu_percent(&prev, &cur);
		prev = cur;
	}
	struct vmc_summary s = vmc_summarize(pct, got);
	json_t *samples = json_array();
	for (size_t i = 0; i < got; i++)
		json_array_append_new(samples, json_real(pct[i]));
	free(pct);
	*out = json_pack("{s:f, s:f, s:f, s:f, s:i, s:o}", "median_percent", s.median,
			 "min_percent", s.min, "max_percent", s.max, "interval_s", o->interval,
			 "intervals", (int)got, "percent", samples);
	return cli_stop ? VMC_EXIT_INTERRUPTED : VMC_EXIT_OK;
}

struct load {
	struct cli_opts cli; /* --json, --pid, NAME */
	struct load_opts o;
	struct lima_instance inst;
	struct vmproc vp;
	struct progress prog;
	struct workload_pg_session pg;
	time_t started;
	json_t *doc;
};

static int run_benchmarks(struct load *l, struct workload_pg_run runs[2], char *err, size_t errsize)
{
	progress_phase(&l->prog, "postgres");
	int rc = workload_pg_start(&l->pg, &l->inst, l->o.image, !l->o.no_pull, 600, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	progress_phase(&l->prog, "pgbench -i");
	rc = workload_pg_init(&l->pg, l->o.scale, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	progress_phase(&l->prog, "pgbench");
	rc = workload_pg_bench(&l->pg, l->o.clients, l->o.duration, &runs[0], err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	progress_event(&l->prog, "done", "clients=%d tps=%.1f", runs[0].clients, runs[0].tps);
	rc = workload_pg_bench(&l->pg, 1, l->o.single_duration, &runs[1], err, errsize);
	if (rc == VMC_EXIT_OK)
		progress_event(&l->prog, "done", "clients=1 tps=%.1f", runs[1].tps);
	return rc;
}

static int write_markdown(FILE *f, void *ctx)
{
	return load_report_markdown(f, ctx);
}

static int write_results(struct load *l, char *md, size_t mdsize, char *err, size_t errsize)
{
	md[0] = '\0';
	if (strcmp(l->o.results_dir, "none") == 0)
		return VMC_EXIT_OK;
	int rc = results_ensure_dir(l->o.results_dir, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	char base[4096], js[4200];
	if (results_base(l->o.results_dir, "load", l->inst.name, l->started, base, sizeof base)) {
		snprintf(err, errsize, "results path too long");
		return VMC_EXIT_FAILURE;
	}
	snprintf(md, mdsize, "%s.md", base);
	snprintf(js, sizeof js, "%s.json", base);
	json_object_set_new(l->doc, "files", json_pack("{s:s, s:s}", "markdown", md, "json", js));
	if (results_write_file(md, write_markdown, l->doc) != 0 ||
	    results_write_json(js, l->doc) != 0) {
		vmc_errorf(err, errsize, "cannot write results in %s:", l->o.results_dir);
		return VMC_EXIT_FAILURE;
	}
	return VMC_EXIT_OK;
}

static json_t *header(struct load *l)
{
	char when[32], line[512], lv[160];
	results_iso_time(l->started, when, sizeof when);
	json_t *machine = results_machine();
	results_machine_line(machine, line, sizeof line);
	lima_limactl_version(lv, sizeof lv);
	json_t *doc = json_pack("{s:s, s:s, s:s, s:s}", "command", "load", "version",
				VMCOST_VERSION, "started_at", when, "limactl_version", lv);
	json_object_set_new(doc, "machine", machine);
	json_object_set_new(doc, "machine_line", json_string(line));
	json_object_set_new(doc, "instance",
			    json_pack("{s:s, s:s, s:i, s:o}", "name", l->inst.name, "vm_type",
				      l->inst.vm_type, "cpus", l->inst.cpus, "memory",
				      vmc_json_u64(l->inst.memory)));
	json_object_set_new(doc, "vm_process",
			    json_pack("{s:i, s:s}", "pid", (int)l->vp.pid, "method", l->vp.method));
	return doc;
}

static int finish(struct load *l, int rc, struct workload_pg_run runs[2], json_t *idle,
		  const char *err)
{
	char rerr[256];
	if (!l->o.keep || rc != VMC_EXIT_OK)
		if (workload_pg_remove(&l->pg, rerr, sizeof rerr) != VMC_EXIT_OK)
			vmc_warn("%s", rerr);
	progress_clear(&l->prog);
	if (rc == VMC_EXIT_INTERRUPTED || cli_stop) {
		json_decref(idle);
		return cli_fail(&l->cli, VMC_EXIT_INTERRUPTED,
				"interrupted: the postgres container was removed");
	}
	if (rc != VMC_EXIT_OK) {
		json_decref(idle);
		cli_fail(&l->cli, rc, "%s", err);
		return rc;
	}
	json_object_set_new(l->doc, "pgbench",
			    json_pack("{s:s, s:b, s:s, s:i, s:f, s:f, s:[o, o], s:b}", "image",
				      l->pg.image, "pulled", l->pg.pulled, "docker_version",
				      l->pg.server_version, "scale", l->o.scale, "ready_seconds",
				      l->pg.ready_seconds, "init_seconds", l->pg.init_seconds,
				      "runs", workload_pg_run_json(&runs[0]),
				      workload_pg_run_json(&runs[1]), "kept", l->o.keep));
	json_object_set_new(l->doc, "idle_cpu", idle);
	char md[4200], werr[512];
	int wrc = write_results(l, md, sizeof md, werr, sizeof werr);
	if (l->cli.json)
		vmc_json_write(stdout, l->doc);
	else
		load_report_human(stdout, l->doc, *md ? md : NULL);
	if (wrc != VMC_EXIT_OK)
		cli_fail(&l->cli, wrc, "%s", werr);
	return wrc;
}

int cmd_load(int argc, char **argv)
{
	struct load l = {0};
	int rc = parse_args(argc, argv, &l.cli, &l.o);
	if (rc != CLI_CONTINUE)
		return rc;
	char err[1024] = "";
	rc = lima_instance_require_running(l.o.name, &l.inst, err, sizeof err);
	if (rc == VMC_EXIT_OK)
		rc = vmproc_find(&l.inst, l.cli.pid, &l.vp, err, sizeof err);
	if (rc != VMC_EXIT_OK)
		return cli_fail(&l.cli, rc, "%s", err);
	cli_catch_signals();
	docker_set_abort_check(cli_stop_requested);
	l.started = time(NULL);
	progress_init(&l.prog, stderr, isatty(STDERR_FILENO), "load", vmc_monotonic_s());
	l.pg.stop = &cli_stop;
	l.pg.note = on_note;
	l.pg.note_ctx = &l.prog;
	l.doc = header(&l);
	struct workload_pg_run runs[2] = {{0}};
	json_t *idle = NULL;
	rc = run_benchmarks(&l, runs, err, sizeof err);
	if (rc == VMC_EXIT_OK) {
		progress_phase(&l.prog, "idle");
		rc = idle_cpu(l.vp.pid, &l.o, &l.prog, &idle, err, sizeof err);
	}
	rc = finish(&l, rc, runs, idle, err);
	json_decref(l.doc);
	progress_destroy(&l.prog);
	return rc;
}
