/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost memtest NAME: the real RAM cost of a VM
 * (docs/published-measurements.md#real-ram-cost-memtest). Load the guest, trim its cache, put
 * pressure on the host (with a MADV_FREE canary as positive control), then stop the VM and
 * measure what the host gains: footprint figures cannot show memory the host compressed or the
 * guest freed, the free memory gained at stop can.
 */
#include "clients/agent_client.h"
#include "clock.h"
#include "commands/cli.h"
#include "commands/commands.h"
#include "jsonutil.h"
#include "clients/lima.h"
#include "clients/process.h"
#include "log.h"
#include "measure/measure.h"
#include "meminfo.h"
#include "measure/memtest_report.h"
#include "message.h"
#include "platform/platform.h"
#include "measure/pressure.h"
#include "commands/progress.h"
#include "measure/results.h"
#include "measure/svg.h"
#include "measure/timeline.h"
#include "units.h"
#include "platform/vmproc.h"
#include "measure/workload.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum workload_kind { WL_AUTO, WL_PGBENCH, WL_FILL };

struct memtest_opts {
	const char *name;
	enum workload_kind workload;
	uint64_t size;
	const char *fill_dir, *tmpfs_dir;
	const char *image;
	bool no_pull;
	int scale, clients;
	double duration;
	bool pressure_none, pressure_set;
	uint64_t pressure, canary;
	double hold, settle_max;
	bool restart, yes;
	const char *results_dir;
};

struct memtest {
	struct cli_opts cli; /* --json, --pid, NAME */
	struct memtest_opts o;
	struct lima_instance inst;
	struct vmproc vp;
	struct timeline tl;
	struct tl_sampler sampler;
	struct progress prog;
	json_t *doc, *phases, *result;
	time_t started;
	struct fill_plan fill;
	bool fill_pending; /* files may be in the guest: remove them */
	struct pg_session pg;
	uint64_t guest_free_before_trim;
	bool has_guest_free_before_trim;
	double stop_t;
	bool has_stop;
};

static const struct cli_spec memtest_spec = {
    .name = "memtest",
    .synopsis = "NAME [--workload pgbench|fill] [--size SIZE] [--fill-dir DIR]\n"
		"                      [--tmpfs DIR] [--image IMAGE] [--no-pull] [--scale N]\n"
		"                      [--clients N] [--duration SECONDS] [--pressure SIZE|none]\n"
		"                      [--hold SECONDS] [--canary SIZE] [--settle SECONDS]\n"
		"                      [--restart] [--yes] [--json] [--results DIR|none] [--pid PID]",
    .help = "The real RAM cost of a running Lima instance: baseline, workload, guest trim, host\n"
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

/* memtest's command line into m->cli and m->o: CLI_CONTINUE, or the exit code to return. */
static int parse_args(int argc, char **argv, struct memtest *m)
{
	struct memtest_opts *o = &m->o;
	*o = (struct memtest_opts){.scale = 50,
				   .clients = 8,
				   .duration = 60,
				   .canary = PRESSURE_DEFAULT_CANARY,
				   .hold = PRESSURE_DEFAULT_HOLD,
				   .settle_max = 30,
				   .results_dir = "."};
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
	    {.name = "--yes", .kind = CLI_FLAG, .flag = &o->yes},
	    {.name = "--results", .kind = CLI_TEXT, .text = &o->results_dir},
	    {0},
	};
	struct cli_spec spec = memtest_spec;
	spec.options = options;
	int rc = cli_parse(&spec, argc, argv, &m->cli);
	if (rc != CLI_CONTINUE)
		return rc;
	o->name = m->cli.args[0];
	if (workload && strcmp(workload, "pgbench") == 0)
		o->workload = WL_PGBENCH;
	else if (workload && strcmp(workload, "fill") == 0)
		o->workload = WL_FILL;
	else if (workload)
		return cli_usage_error(&spec, &m->cli, "--workload is pgbench or fill, not \"%s\"",
				       workload);
	if (o->size && o->workload == WL_PGBENCH)
		return cli_usage_error(
		    &spec, &m->cli, "--size is for --workload fill (pgbench sizes itself with --scale)");
	return CLI_CONTINUE;
}

/* ---- readings ------------------------------------------------------------------------------- */

static double elapsed(const struct memtest *m)
{
	return vmc_monotonic_s() - m->tl.t0;
}

static json_t *seconds_json(double s)
{
	return json_real((double)(long long)(s * 10.0 + 0.5) / 10.0);
}

static json_t *vm_json(pid_t pid)
{
	struct platform_proc_sample ps;
	if (pid <= 0 || platform_proc_sample(pid, &ps) != 0)
		return json_null();
	return json_pack("{s:o, s:o, s:o}", "footprint", vmc_json_u64(ps.footprint), "resident",
			 vmc_json_u64(ps.resident), "peak_footprint",
			 vmc_json_u64(ps.peak_footprint));
}

/* /proc/meminfo of the guest through limactl shell: works with or without the agent. */
static json_t *guest_json(const struct memtest *m)
{
	const char *argv[] = {"limactl", "shell", m->inst.name, "cat", "/proc/meminfo", NULL};
	struct process_result r;
	if (process_run(argv, &(struct process_options){.timeout_ms = 60000, .stop = &cli_stop},
			&r) != 0)
		return json_null();
	struct vmc_meminfo mi;
	json_t *g = json_null();
	if (r.exit_code == 0 && vmc_meminfo_parse(r.out, &mi) == 0)
		g = json_pack("{s:o, s:o, s:o, s:o, s:o}", "total", vmc_json_u64(mi.total), "free",
			      vmc_json_u64(mi.free), "available", vmc_json_u64(mi.available),
			      "file_cache", vmc_json_u64(vmc_meminfo_file_cache(&mi)), "shmem",
			      vmc_json_u64(mi.shmem));
	else
		debug("guest meminfo: exit %d: %s", r.exit_code, r.err);
	process_result_free(&r);
	return g;
}

/* One reading; also a timeline sample, so the SVG has a point exactly there. */
static json_t *reading(struct memtest *m, bool guest)
{
	timeline_sample_now(&m->tl, m->vp.pid, NULL);
	struct platform_host_memory hm;
	json_t *host = platform_host_memory(&hm) == 0 ? measure_host_json(&hm) : json_null();
	json_t *r = json_pack("{s:o, s:o, s:o}", "t", seconds_json(elapsed(m)), "host", host, "vm",
			      vm_json(m->vp.pid));
	if (guest)
		json_object_set_new(r, "guest", guest_json(m));
	return r;
}

static json_t *phase_begin(struct memtest *m, const char *name, const char *label)
{
	timeline_phase_begin(&m->tl, name, label, vmc_monotonic_s());
	progress_phase(&m->prog, name);
	json_t *p = json_pack("{s:s, s:o}", "name", name, "start", seconds_json(elapsed(m)));
	json_array_append_new(m->phases, p);
	return p;
}

static void phase_end(struct memtest *m, json_t *phase, json_t *reading_json)
{
	json_object_set_new(phase, "end", seconds_json(elapsed(m)));
	if (reading_json) {
		json_object_set_new(phase, "reading", reading_json);
		double fp = -1, fr = -1;
		memtest_num(reading_json, "vm.footprint", &fp);
		memtest_num(reading_json, "host.free", &fr);
		char a[32], b[32];
		if (m->prog.tty) /* people read this one, scripts the other */
			progress_event(&m->prog, "done", "VM %s, host free %s",
				       fp < 0 ? "gone"
					      : vmc_format_bytes((uint64_t)fp, a, sizeof a),
				       vmc_format_bytes((uint64_t)(fr < 0 ? 0 : fr), b, sizeof b));
		else
			progress_event(&m->prog, "done", "vm_footprint=%.0f host_free=%.0f", fp,
				       fr);
	} else {
		progress_event(&m->prog, "done", "%s", "");
	}
}

static void set_note(json_t *phase, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_note(json_t *phase, const char *fmt, ...)
{
	char text[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	json_object_set_new(phase, "note", json_string(text));
}

/* ---- phases -----------------------------------------------------------------------------------
 */

static int run_baseline(struct memtest *m)
{
	json_t *p = phase_begin(m, "baseline", "baseline");
	phase_end(m, p, reading(m, true));
	return VMC_EXIT_OK;
}

static void on_note(const char *text, void *ctx)
{
	progress_note(ctx, text);
}

static int run_fill(struct memtest *m, json_t *p, char *err, size_t errsize)
{
	struct fill_result fr;
	progress_note(&m->prog, "writing to tmpfs, then files into page cache");
	m->fill_pending = true;
	int rc = workload_fill(&m->inst, &m->fill, &cli_stop, &fr, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	char a[32], b[32];
	set_note(p, "fill: %s through tmpfs, %s into page cache in %.0f s",
		 vmc_format_bytes(fr.tmpfs_bytes, a, sizeof a),
		 vmc_format_bytes(fr.cache_bytes, b, sizeof b), fr.seconds);
	json_object_set_new(
	    p, "fill",
	    json_pack("{s:o, s:o, s:o}", "tmpfs_bytes", vmc_json_u64(fr.tmpfs_bytes), "cache_bytes",
		      vmc_json_u64(fr.cache_bytes), "seconds", seconds_json(fr.seconds)));
	return VMC_EXIT_OK;
}

static int run_pgbench(struct memtest *m, json_t *p, char *err, size_t errsize)
{
	m->pg.stop = &cli_stop;
	m->pg.note = on_note;
	m->pg.note_ctx = &m->prog;
	int rc = pg_start(&m->pg, &m->inst, m->o.image, !m->o.no_pull, 600, err, errsize);
	struct pg_run run = {0};
	if (rc == VMC_EXIT_OK)
		rc = pg_init(&m->pg, m->o.scale, err, errsize);
	if (rc == VMC_EXIT_OK)
		rc = pg_bench(&m->pg, m->o.clients, m->o.duration, &run, err, errsize);
	char rerr[256];
	if (pg_remove(&m->pg, rerr, sizeof rerr) != VMC_EXIT_OK)
		warn("%s", rerr);
	if (rc != VMC_EXIT_OK)
		return rc;
	json_t *pj = pg_run_json(&run);
	json_object_set_new(p, "pgbench",
			    json_pack("{s:s, s:b, s:s, s:i, s:o, s:o, s:O}", "image", m->pg.image,
				      "pulled", m->pg.pulled, "docker_version",
				      m->pg.server_version, "scale", m->o.scale, "ready_seconds",
				      seconds_json(m->pg.ready_seconds), "init_seconds",
				      seconds_json(m->pg.init_seconds), "run", pj));
	json_object_set_new(m->result, "pgbench", json_pack("[o]", pj));
	set_note(p, "pgbench -s %d -c %d -T %.0f: %.0f tps, %.2f ms (%s)", m->o.scale, m->o.clients,
		 m->o.duration, run.tps, run.latency_ms, m->pg.image);
	return VMC_EXIT_OK;
}

static int run_workload(struct memtest *m, char *err, size_t errsize)
{
	bool fill = m->o.workload == WL_FILL;
	char label[64], size[32];
	if (fill)
		snprintf(label, sizeof label, "fill %s",
			 vmc_format_bytes(m->fill.size, size, sizeof size));
	else
		snprintf(label, sizeof label, "pgbench -s %d", m->o.scale);
	json_t *p = phase_begin(m, "workload", label);
	json_object_set_new(p, "kind", json_string(fill ? "fill" : "pgbench"));
	int rc = fill ? run_fill(m, p, err, errsize) : run_pgbench(m, p, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	phase_end(m, p, reading(m, true));
	double gf;
	if (memtest_num(p, "reading.guest.free", &gf)) {
		m->guest_free_before_trim = (uint64_t)gf;
		m->has_guest_free_before_trim = true;
	}
	return VMC_EXIT_OK;
}

/* The agent is the real path; without it, drop_caches through limactl shell still trims. */
static int trim_with_drop_caches(struct memtest *m, json_t *p, const char *why)
{
	const char *script =
	    "sync; if [ \"$(id -u)\" = 0 ]; then echo 3 >/proc/sys/vm/drop_caches; "
	    "else sudo -n sh -c 'echo 3 >/proc/sys/vm/drop_caches'; fi";
	const char *argv[] = {"limactl", "shell", m->inst.name, "sh", "-c", script, NULL};
	struct process_result r;
	int rc =
	    process_run(argv, &(struct process_options){.timeout_ms = 120000, .stop = &cli_stop}, &r);
	bool ok = rc == 0 && r.exit_code == 0;
	if (rc == 0)
		process_result_free(&r);
	warn("vmcost-agent not reachable (%s): trimmed with drop_caches through limactl shell "
	     "instead",
	     why);
	json_object_set_new(p, "method", json_string("drop_caches via limactl shell"));
	json_object_set_new(p, "agent_error", json_string(why));
	json_object_set_new(m->result, "trim_method",
			    json_string("drop_caches, agent unreachable"));
	return ok ? VMC_EXIT_OK : VMC_EXIT_AGENT;
}

static int trim_with_agent(struct memtest *m, json_t *p, char *err, size_t errsize)
{
	json_t *doc = NULL;
	progress_note(&m->prog, "POST /v1/trim {\"force\":true}");
	int rc = agent_call(&m->inst, "POST", "/v1/trim", "{\"force\":true}", 300000, &doc, err,
			    errsize);
	if (rc == VMC_EXIT_AGENT && !json_is_object(doc))
		return trim_with_drop_caches(m, p, err);
	if (rc != VMC_EXIT_OK)
		return rc;
	const char *method = vmc_json_get_str(doc, "method");
	char how[96];
	snprintf(how, sizeof how, "vmcost-agent, %s", method ? method : "no trim needed");
	json_object_set_new(p, "method", json_string(how));
	json_object_set_new(m->result, "trim_method", json_string(how));
	json_object_set_new(p, "agent", doc);
	return VMC_EXIT_OK;
}

/*
 * Free-page reporting hands memory back in 256 MiB steps every 2 s
 * (docs/lab.md#free-page-reporting-under-tcg): wait until the footprint has not fallen by more
 * than 16 MiB for 6 s, at most settle_max.
 */
static double settle_footprint(struct memtest *m)
{
	double start = vmc_monotonic_s(), best_at = start;
	uint64_t best = UINT64_MAX;
	while (!cli_stop) {
		struct platform_proc_sample ps;
		double t = vmc_monotonic_s();
		if (platform_proc_sample(m->vp.pid, &ps) != 0)
			break;
		if (ps.footprint + 16 * VMC_MIB < best || best == UINT64_MAX) {
			best = ps.footprint;
			best_at = t;
		}
		char note[96], b[32];
		snprintf(note, sizeof note, "waiting for the footprint to settle (%s, %.0f s)",
			 vmc_format_bytes(ps.footprint, b, sizeof b), t - start);
		progress_note(&m->prog, note);
		if ((t - best_at >= 6 && t - start >= 4) || t - start >= m->o.settle_max)
			break;
		sleep(1);
	}
	return vmc_monotonic_s() - start;
}

static int run_trim(struct memtest *m, char *err, size_t errsize)
{
	json_t *p = phase_begin(m, "trim", "trim");
	int rc = trim_with_agent(m, p, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	double settled = settle_footprint(m);
	json_object_set_new(p, "settled_after_s", seconds_json(settled));
	json_t *r = reading(m, true);
	double gf;
	if (m->has_guest_free_before_trim && memtest_num(r, "guest.free", &gf)) {
		int64_t freed = (int64_t)gf - (int64_t)m->guest_free_before_trim;
		json_object_set_new(m->result, "guest_freed_by_trim",
				    json_integer(freed > 0 ? freed : 0));
	}
	const char *how = vmc_json_get_str(p, "method");
	set_note(p, "%s; footprint settled after %.0f s", how ? how : "?", settled);
	phase_end(m, p, r);
	if (m->fill_pending) {
		char cerr[256];
		if (workload_fill_cleanup(&m->inst, &m->fill, cerr, sizeof cerr) == VMC_EXIT_OK)
			m->fill_pending = false;
		else
			warn("%s", cerr);
	}
	return VMC_EXIT_OK;
}

static void on_pressure(const struct pressure_status *st, void *ctx)
{
	struct memtest *m = ctx;
	char t[32], note[160];
	if (st->stage == PRESSURE_HOLDING)
		snprintf(note, sizeof note,
			 "holding %s, %.0f s left; canary %llu of %llu pages resident",
			 vmc_format_bytes(st->touched, t, sizeof t), st->hold_left,
			 (unsigned long long)st->canary_resident,
			 (unsigned long long)st->canary_pages);
	else
		snprintf(note, sizeof note, "%s: %s touched", pressure_stage_name(st->stage),
			 vmc_format_bytes(st->touched, t, sizeof t));
	progress_note(&m->prog, note);
}

static json_t *pressure_json(const struct pressure_result *r)
{
	return json_pack(
	    "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:b}", "size", vmc_json_u64(r->size),
	    "touched", vmc_json_u64(r->touched), "canary_pages", vmc_json_u64(r->canary_pages),
	    "canary_discarded", vmc_json_u64(r->canary_discarded), "canary_min_resident",
	    vmc_json_u64(r->canary_min_resident), "touch_seconds", seconds_json(r->touch_seconds),
	    "hold_seconds", seconds_json(r->hold_seconds), "interrupted", r->interrupted,
	    "conclusive", r->conclusive);
}

static void compressor_into(json_t *result, const char *key, const json_t *reading_json)
{
	double v;
	if (memtest_num(reading_json, "host.compressor_used", &v))
		json_object_set_new(result, key, json_integer((json_int_t)v));
}

static int run_pressure(struct memtest *m, char *err, size_t errsize)
{
	if (m->o.pressure_none) {
		json_t *p = phase_begin(m, "pressure", "no pressure");
		json_object_set_new(p, "skipped", json_true());
		set_note(p, "skipped (--pressure none)");
		json_object_set_new(m->result, "pressure", json_string("skipped"));
		phase_end(m, p, NULL);
		return VMC_EXIT_OK;
	}
	char label[64], size[32];
	snprintf(label, sizeof label, "pressure %s",
		 vmc_format_bytes(m->o.pressure, size, sizeof size));
	json_t *p = phase_begin(m, "pressure", label);
	json_t *before = reading(m, false);
	compressor_into(m->result, "compressor_before", before);
	json_object_set_new(p, "before", before);
	struct pressure_plan plan = {
	    .size = m->o.pressure, .canary_size = m->o.canary, .hold_seconds = m->o.hold};
	struct pressure_result res;
	int rc = pressure_run(&plan, on_pressure, m, &cli_stop, &res, err, errsize);
	if (rc != 0)
		return VMC_EXIT_FAILURE;
	json_object_set_new(p, "result", pressure_json(&res));
	if (res.interrupted)
		return VMC_EXIT_INTERRUPTED;
	json_object_set_new(m->result, "pressure",
			    json_string(res.conclusive ? "conclusive" : "INCONCLUSIVE"));
	json_object_set_new(m->result, "canary_pages", vmc_json_u64(res.canary_pages));
	json_object_set_new(m->result, "canary_discarded", vmc_json_u64(res.canary_discarded));
	char note[400];
	memtest_pressure_text(m->doc, note, sizeof note);
	set_note(p, "%s", note);
	phase_end(m, p, reading(m, false));
	return VMC_EXIT_OK;
}

/* Median of three host readings 0.3 s apart: one page-cache hiccup does not move the result. */
static json_t *steady_reading(struct memtest *m)
{
	json_t *r[3];
	double f[3];
	for (int i = 0; i < 3; i++) {
		if (i)
			usleep(300 * 1000);
		r[i] = reading(m, false);
		f[i] = 0;
		memtest_num(r[i], "host.free", &f[i]);
	}
	int mid = (f[0] <= f[1]) == (f[1] <= f[2]) ? 1 : ((f[1] <= f[0]) == (f[0] <= f[2]) ? 0 : 2);
	for (int i = 0; i < 3; i++)
		if (i != mid)
			json_decref(r[i]);
	return r[mid];
}

static int wait_gone(const struct memtest *m, double timeout_s)
{
	double start = vmc_monotonic_s();
	/* A zombie is alive to kill(2) but holds no memory: gone once it cannot be sampled. */
	struct platform_proc_sample ps;
	while (platform_pid_alive(m->vp.pid) && platform_proc_sample(m->vp.pid, &ps) == 0) {
		if (vmc_monotonic_s() - start > timeout_s)
			return -1;
		usleep(200 * 1000);
	}
	return 0;
}

/*
 * Host free memory rises as the kernel frees the VM's pages (on Linux already done when the
 * process is gone; on macOS the helper's memory may trail). Settled once a second brings no more
 * than the background drift measured before the stop (plus 8 MiB), so a host whose memory
 * keeps moving for other reasons does not stretch the measurement window.
 */
static double settle_free(struct memtest *m, double drift_per_s)
{
	double start = vmc_monotonic_s(), last_t = start;
	double allowed = (drift_per_s > 0 ? drift_per_s : -drift_per_s) + 8.0 * VMC_MIB;
	uint64_t last = 0;
	struct platform_host_memory hm;
	if (platform_host_memory(&hm) == 0)
		last = hm.free;
	progress_note(&m->prog, "letting host memory settle");
	while (vmc_monotonic_s() - start < m->o.settle_max && !cli_stop) {
		usleep(1000 * 1000);
		if (platform_host_memory(&hm) != 0)
			break;
		double t = vmc_monotonic_s();
		double rate = ((double)hm.free - (double)last) / (t - last_t);
		last = hm.free;
		last_t = t;
		if (rate <= allowed)
			break;
	}
	return vmc_monotonic_s() - start;
}

/* Quiet time before the stop: how much host memory moves anyway (other processes). */
#define CONTROL_WINDOW_S 5.0

static json_t *control_window(struct memtest *m, json_t *p, double *drift)
{
	json_t *a = steady_reading(m);
	progress_note(&m->prog, "control window: host memory without the stop");
	struct timespec nap = {(time_t)CONTROL_WINDOW_S, 0};
	while (nanosleep(&nap, &nap) != 0 && errno == EINTR && !cli_stop)
		;
	json_t *b = steady_reading(m);
	double f0 = 0, f1 = 0, v0 = 0, v1 = 0;
	memtest_num(a, "host.free", &f0);
	memtest_num(b, "host.free", &f1);
	memtest_num(a, "vm.footprint", &v0);
	memtest_num(b, "vm.footprint", &v1);
	/* What the VM itself returned meanwhile (free-page reporting) is not someone else's. */
	*drift = (f1 - f0) + (v1 - v0);
	json_object_set_new(p, "control_start", a);
	return b;
}

/*
 * The stop can only free what the VM held: a gain well beyond the footprint, or a host whose
 * free memory moved (beyond what the VM itself returned) by more than a tenth of the gain in
 * the control window, means someone else changed host memory meanwhile.
 */
static void judge_noise(struct memtest *m, double gain, double drift, double footprint)
{
	double slack = footprint / 10 > 128.0 * VMC_MIB ? footprint / 10 : 128.0 * VMC_MIB;
	double tolerance = gain / 10 > 64.0 * VMC_MIB ? gain / 10 : 64.0 * VMC_MIB;
	const char *reason = NULL;
	char text[200];
	if (gain > footprint + slack) {
		snprintf(text, sizeof text, "the host gained %.0f MiB more than the VM held",
			 (gain - footprint) / (double)VMC_MIB);
		reason = text;
	} else if (drift > tolerance || -drift > tolerance) {
		snprintf(text, sizeof text,
			 "host free memory moved by %+.0f MiB in the %.0f s before "
			 "the stop",
			 drift / (double)VMC_MIB, CONTROL_WINDOW_S);
		reason = text;
	}
	json_t *noise = json_pack("{s:f, s:I, s:b}", "window_s", CONTROL_WINDOW_S, "drift",
				  (json_int_t)drift, "noisy", reason != NULL);
	if (reason) {
		json_object_set_new(noise, "reason", json_string(reason));
		warn("noisy measurement: %s; other processes are changing host memory: re-run on a "
		     "quiet host",
		     reason);
	}
	json_object_set_new(m->result, "noise", noise);
}

static int limactl_stop(const struct memtest *m, char *err, size_t errsize)
{
	const char *argv[] = {"limactl", "stop", m->inst.name, NULL};
	struct process_result r;
	if (process_run(argv, &(struct process_options){.timeout_ms = 400000}, &r) != 0) {
		errorf(err, errsize, "cannot run limactl:");
		return VMC_EXIT_FAILURE;
	}
	int rc = VMC_EXIT_OK;
	if (r.exit_code != 0) {
		char last[300];
		process_last_line(r.err, last, sizeof last);
		snprintf(err, errsize, "limactl stop %s failed (exit %d): %s", m->inst.name,
			 r.exit_code, last);
		rc = VMC_EXIT_FAILURE;
	}
	process_result_free(&r);
	if (rc == VMC_EXIT_OK && wait_gone(m, 120) != 0) {
		snprintf(err, errsize, "limactl stop %s returned but pid %d still runs",
			 m->inst.name, (int)m->vp.pid);
		rc = VMC_EXIT_FAILURE;
	}
	return rc;
}

static int run_stop(struct memtest *m, char *err, size_t errsize)
{
	json_t *p = phase_begin(m, "stop", "limactl stop");
	double drift = 0;
	json_t *before = control_window(m, p, &drift);
	compressor_into(m->result, "compressor_after", before);
	double fp = 0, peak;
	if (memtest_num(before, "vm.footprint", &fp))
		json_object_set_new(m->result, "footprint_before_stop",
				    json_integer((json_int_t)fp));
	if (memtest_num(before, "vm.peak_footprint", &peak))
		json_object_set_new(m->result, "peak_footprint", json_integer((json_int_t)peak));
	json_object_set_new(p, "before", before);
	progress_note(&m->prog, "limactl stop");
	double t0 = vmc_monotonic_s();
	int rc = limactl_stop(m, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	double stop_s = vmc_monotonic_s() - t0;
	double gone = timeline_vm_gone_at(&m->tl, t0 - m->tl.t0);
	m->stop_t = gone >= 0 ? gone : elapsed(m);
	m->has_stop = true;
	double settle_s = settle_free(m, drift / CONTROL_WINDOW_S);
	json_t *after = steady_reading(m);
	double f0 = 0, f1 = 0, a0 = 0, a1 = 0;
	memtest_num(before, "host.free", &f0);
	memtest_num(after, "host.free", &f1);
	memtest_num(before, "host.available", &a0);
	memtest_num(after, "host.available", &a1);
	json_object_set_new(m->result, "ram_freed_by_stop", json_integer((json_int_t)(f1 - f0)));
	json_object_set_new(m->result, "available_gained_by_stop",
			    json_integer((json_int_t)(a1 - a0)));
	judge_noise(m, f1 - f0, drift, fp);
	/* The background trend of the control window, extrapolated over the stop's own window. */
	double window = json_number_value(json_object_get(after, "t")) -
			json_number_value(json_object_get(before, "t"));
	json_object_set_new(
	    json_object_get(m->result, "noise"), "gain_drift_corrected",
	    json_integer((json_int_t)(f1 - f0 - drift / CONTROL_WINDOW_S * window)));
	json_object_set_new(json_object_get(m->result, "noise"), "stop_window_s",
			    seconds_json(window));
	json_object_set_new(p, "after", after);
	json_object_set_new(p, "stop_seconds", seconds_json(stop_s));
	json_object_set_new(p, "settle_seconds", seconds_json(settle_s));
	char g[32], d[32];
	set_note(p, "stopped in %.1f s, settled %.1f s: host free %s (drift %s in %.0f s before)",
		 stop_s, settle_s, vmc_format_bytes_delta((int64_t)(f1 - f0), g, sizeof g),
		 vmc_format_bytes_delta((int64_t)drift, d, sizeof d), CONTROL_WINDOW_S);
	json_object_set_new(p, "end", seconds_json(elapsed(m)));
	if (m->prog.tty)
		progress_event(&m->prog, "done", "host free %s", g);
	else
		progress_event(&m->prog, "done", "ram_freed_by_stop=%.0f drift=%.0f", f1 - f0,
			       drift);
	return VMC_EXIT_OK;
}

static int run_restart(struct memtest *m, char *err, size_t errsize)
{
	json_t *p = phase_begin(m, "restart", "limactl start");
	progress_note(&m->prog, "limactl start");
	double t0 = vmc_monotonic_s();
	const char *argv[] = {"limactl", "start", m->inst.name, NULL};
	struct process_result r;
	if (process_run(argv, &(struct process_options){.timeout_ms = 900000}, &r) != 0) {
		errorf(err, errsize, "cannot run limactl:");
		return VMC_EXIT_FAILURE;
	}
	int code = r.exit_code;
	char last[300];
	process_last_line(r.err, last, sizeof last);
	process_result_free(&r);
	if (code != 0) {
		snprintf(err, errsize, "limactl start %s failed (exit %d): %s", m->inst.name, code,
			 last);
		return VMC_EXIT_FAILURE;
	}
	json_object_set_new(p, "seconds", seconds_json(vmc_monotonic_s() - t0));
	set_note(p, "limactl start took %.0f s", vmc_monotonic_s() - t0);
	phase_end(m, p, NULL);
	return VMC_EXIT_OK;
}

/* ---- setup ------------------------------------------------------------------------------------
 */

static int confirm_stop(const struct memtest *m)
{
	const struct memtest_opts *o = &m->o;
	if (o->yes)
		return VMC_EXIT_OK;
	if (!isatty(STDIN_FILENO))
		return cli_fail(&m->cli, VMC_EXIT_USAGE,
				"memtest ends by stopping instance \"%s\" (limactl stop %s); pass "
				"--yes to allow it (stdin is not a terminal, so it cannot ask)",
				o->name, o->name);
	fprintf(stderr,
		"vmcost memtest ends by stopping instance \"%s\" (limactl stop %s)%s.\n"
		"Containers and processes in it stop too. Continue? [y/N] ",
		o->name, o->name, o->restart ? " and starts it again" : "");
	char answer[16] = "";
	if (!fgets(answer, sizeof answer, stdin) || (answer[0] != 'y' && answer[0] != 'Y')) {
		fprintf(stderr, "nothing was done\n");
		return VMC_EXIT_FAILURE;
	}
	return VMC_EXIT_OK;
}

static void guest_cmdline(const struct memtest *m, char *buf, size_t size)
{
	const char *argv[] = {"limactl", "shell", m->inst.name, "cat", "/proc/cmdline", NULL};
	process_first_line(argv, 60000, buf, size);
}

static int choose_defaults(struct memtest *m)
{
	struct memtest_opts *o = &m->o;
	if (o->workload == WL_AUTO) {
		char sock[PATH_MAX + 32];
		snprintf(sock, sizeof sock, "%s/sock/docker.sock", m->inst.dir);
		o->workload = access(sock, F_OK) == 0 ? WL_PGBENCH : WL_FILL;
	}
	uint64_t mem = m->inst.memory ? m->inst.memory : 2 * VMC_GIB;
	if (o->workload == WL_FILL) {
		if (!o->size)
			o->size = mem / 2;
		if (o->size > mem / 4 * 3)
			return cli_fail(&m->cli, VMC_EXIT_USAGE,
					"--size %llu MiB is more than 3/4 of the VM's %llu MiB: the "
					"guest would run out of memory; use at most %llu MiB",
					(unsigned long long)(o->size >> 20),
					(unsigned long long)(mem >> 20),
					(unsigned long long)(mem / 4 * 3 >> 20));
		m->fill = (struct fill_plan){
		    .size = o->size, .dir = o->fill_dir, .tmpfs_dir = o->tmpfs_dir};
	}
	if (!o->pressure_none && !o->pressure_set) {
		struct platform_host_memory hm;
		if (platform_host_memory(&hm) != 0)
			return cli_fail(&m->cli, VMC_EXIT_FAILURE, "cannot read host memory:");
		o->pressure = pressure_default_size(&hm, o->canary);
		if (o->pressure == 0)
			return cli_fail(&m->cli, VMC_EXIT_FAILURE,
					"the host has no room for memory pressure (available %llu "
					"MiB): run with --pressure none",
					(unsigned long long)(hm.available >> 20));
	}
	return VMC_EXIT_OK;
}

static json_t *settings_json(const struct memtest *m)
{
	const struct memtest_opts *o = &m->o;
	char text[160], b[32];
	if (o->workload == WL_FILL)
		snprintf(text, sizeof text, "fill %s (tmpfs %s, files in %s)",
			 vmc_format_bytes(o->size, b, sizeof b),
			 o->tmpfs_dir ? o->tmpfs_dir : "/dev/shm",
			 o->fill_dir ? o->fill_dir : "/var/tmp/vmcost-fill");
	else
		snprintf(text, sizeof text, "pgbench -s %d, %d clients x %.0f s (%s)", o->scale,
			 o->clients, o->duration, o->image ? o->image : PG_DEFAULT_IMAGE);
	json_t *s = json_pack("{s:s, s:s}", "workload", o->workload == WL_FILL ? "fill" : "pgbench",
			      "workload_text", text);
	if (o->workload == WL_FILL) {
		json_object_set_new(s, "size", vmc_json_u64(o->size));
	} else {
		json_object_set_new(s, "image",
				    json_string(o->image ? o->image : PG_DEFAULT_IMAGE));
		json_object_set_new(s, "scale", json_integer(o->scale));
		json_object_set_new(s, "clients", json_integer(o->clients));
		json_object_set_new(s, "duration_s", json_real(o->duration));
	}
	json_object_set_new(s, "pressure",
			    o->pressure_none ? json_null() : vmc_json_u64(o->pressure));
	json_object_set_new(s, "pressure_hold_s", json_real(o->hold));
	json_object_set_new(s, "canary", vmc_json_u64(o->canary));
	json_object_set_new(s, "settle_max_s", json_real(o->settle_max));
	json_object_set_new(s, "restart", json_boolean(o->restart));
	return s;
}

static void build_header(struct memtest *m)
{
	char when[32], lv[160], cmdline[1024], line[512];
	results_iso_time(m->started, when, sizeof when);
	lima_limactl_version(lv, sizeof lv);
	guest_cmdline(m, cmdline, sizeof cmdline);
	json_t *machine = results_machine();
	results_machine_line(machine, line, sizeof line);
	m->doc = json_pack("{s:s, s:s, s:s}", "command", "memtest", "version", VMCOST_VERSION,
			   "started_at", when);
	json_object_set_new(m->doc, "machine", machine);
	json_object_set_new(m->doc, "machine_line", json_string(line));
	json_object_set_new(m->doc, "instance",
			    json_pack("{s:s, s:s, s:s, s:i, s:o, s:s, s:s}", "name", m->inst.name,
				      "vm_type", m->inst.vm_type, "arch", m->inst.arch, "cpus",
				      m->inst.cpus, "memory", vmc_json_u64(m->inst.memory), "dir",
				      m->inst.dir, "lima_version", m->inst.lima_version));
	json_object_set_new(m->doc, "lima", json_pack("{s:s}", "limactl_version", lv));
	json_object_set_new(m->doc, "guest",
			    json_pack("{s:s, s:b}", "kernel_cmdline", cmdline, "init_on_free",
				      strstr(cmdline, "init_on_free=1") != NULL));
	json_object_set_new(m->doc, "vm_process",
			    json_pack("{s:i, s:s}", "pid", (int)m->vp.pid, "method", m->vp.method));
	json_object_set_new(m->doc, "settings", settings_json(m));
	m->phases = json_array();
	json_object_set_new(m->doc, "phases", m->phases);
	m->result = json_object();
	json_object_set_new(m->doc, "result", m->result);
}

/* ---- results ----------------------------------------------------------------------------------
 */

struct svg_ctx {
	struct memtest *m;
};

static int write_svg(FILE *f, void *ctx)
{
	struct memtest *m = ctx;
	char subtitle[512], title[300];
	snprintf(title, sizeof title, "vmcost memtest %s", m->inst.name);
	const char *machine = memtest_str(m->doc, "machine_line");
	const char *wl = memtest_str(m->doc, "settings.workload_text");
	char mem[32];
	snprintf(subtitle, sizeof subtitle, "%s, %s, %d CPUs; %s", m->inst.vm_type,
		 vmc_format_bytes(m->inst.memory, mem, sizeof mem), m->inst.cpus, wl ? wl : "");
	double gain = 0;
	memtest_num(m->doc, "result.ram_freed_by_stop", &gain);
	struct svg_options opt = {.title = title,
				  .subtitle = subtitle,
				  .machine = machine,
				  .has_stop_gain = m->has_stop,
				  .stop_t = m->stop_t,
				  .stop_gain = (int64_t)gain};
	return svg_timeline_write(f, &m->tl, &opt);
}

static int write_markdown(FILE *f, void *ctx)
{
	return memtest_report_markdown(f, ctx);
}

static int write_results(struct memtest *m, char *err, size_t errsize)
{
	if (strcmp(m->o.results_dir, "none") == 0)
		return VMC_EXIT_OK;
	int rc = results_ensure_dir(m->o.results_dir, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	char base[4096], md[4200], js[4200], svg[4200];
	if (results_base(m->o.results_dir, "memtest", m->inst.name, m->started, base,
			 sizeof base) != 0) {
		snprintf(err, errsize, "results path too long");
		return VMC_EXIT_FAILURE;
	}
	snprintf(md, sizeof md, "%s.md", base);
	snprintf(js, sizeof js, "%s.json", base);
	snprintf(svg, sizeof svg, "%s.svg", base);
	json_object_set_new(m->doc, "files",
			    json_pack("{s:s, s:s, s:s}", "markdown", md, "json", js, "svg", svg));
	json_object_set_new(m->doc, "timeline", timeline_json(&m->tl));
	if (results_write_file(svg, write_svg, m) != 0 ||
	    results_write_file(md, write_markdown, m->doc) != 0 ||
	    results_write_json(js, m->doc) != 0) {
		errorf(err, errsize, "cannot write results in %s:", m->o.results_dir);
		return VMC_EXIT_FAILURE;
	}
	return VMC_EXIT_OK;
}

/* ---- main -------------------------------------------------------------------------------------
 */

static void cleanup_guest(struct memtest *m)
{
	char err[256];
	if (m->pg.id[0] && pg_remove(&m->pg, err, sizeof err) != VMC_EXIT_OK)
		warn("%s", err);
	if (m->fill_pending && workload_fill_cleanup(&m->inst, &m->fill, err, sizeof err) != 0)
		warn("%s", err);
}

static int run_phases(struct memtest *m, char *err, size_t errsize)
{
	int rc = run_baseline(m);
	if (rc == VMC_EXIT_OK && !cli_stop)
		rc = run_workload(m, err, errsize);
	if (rc == VMC_EXIT_OK && !cli_stop)
		rc = run_trim(m, err, errsize);
	if (rc == VMC_EXIT_OK && !cli_stop)
		rc = run_pressure(m, err, errsize);
	if (cli_stop)
		return VMC_EXIT_INTERRUPTED;
	if (rc == VMC_EXIT_OK)
		rc = run_stop(m, err, errsize);
	if (rc == VMC_EXIT_OK && m->o.restart)
		rc = run_restart(m, err, errsize);
	return rc;
}

static void on_sample(const struct tl_sample *s, void *ctx)
{
	progress_sample(ctx, s);
}

static int finish(struct memtest *m, int rc, const char *err)
{
	timeline_sampler_stop(&m->sampler);
	progress_clear(&m->prog);
	if (rc == VMC_EXIT_INTERRUPTED || cli_stop) {
		cleanup_guest(m);
		return cli_fail(&m->cli, VMC_EXIT_INTERRUPTED,
				"interrupted: %s was not stopped; pressure released%s",
				m->inst.name,
				m->fill_pending || m->pg.id[0] ? "" : ", guest cleaned up");
	}
	if (rc != VMC_EXIT_OK) {
		cleanup_guest(m);
		cli_fail(&m->cli, rc, "%s", err);
		return rc;
	}
	char werr[512];
	int wrc = write_results(m, werr, sizeof werr);
	if (m->cli.json)
		vmc_json_write(stdout, m->doc);
	else
		memtest_report_human(stdout, m->doc, vmc_use_color(stdout));
	if (wrc != VMC_EXIT_OK) {
		cli_fail(&m->cli, wrc, "%s", werr);
		return wrc;
	}
	const char *verdict = memtest_str(m->doc, "result.pressure");
	return verdict && strcmp(verdict, "INCONCLUSIVE") == 0 ? VMC_EXIT_INCONCLUSIVE
							       : VMC_EXIT_OK;
}

/* Everything before the first phase: CLI_CONTINUE, or the exit code (message printed). */
static int prepare(struct memtest *m, int argc, char **argv)
{
	int rc = parse_args(argc, argv, m);
	if (rc != CLI_CONTINUE)
		return rc;
	char err[1024] = "";
	rc = lima_instance_require_running(m->o.name, &m->inst, err, sizeof err);
	if (rc == VMC_EXIT_OK)
		rc = vmproc_find(&m->inst, m->cli.pid, &m->vp, err, sizeof err);
	if (rc != VMC_EXIT_OK)
		return cli_fail(&m->cli, rc, "%s", err);
	rc = choose_defaults(m);
	if (rc == VMC_EXIT_OK)
		rc = confirm_stop(m);
	return rc == VMC_EXIT_OK ? CLI_CONTINUE : rc;
}

static int run(struct memtest *m)
{
	cli_catch_signals();
	docker_set_abort_check(cli_stop_requested);
	m->started = time(NULL);
	timeline_init(&m->tl, vmc_monotonic_s());
	progress_init(&m->prog, stderr, isatty(STDERR_FILENO), "memtest", m->tl.t0);
	build_header(m);
	m->sampler = (struct tl_sampler){.tl = &m->tl,
					 .pid = m->vp.pid,
					 .interval = 1.0,
					 .on_sample = on_sample,
					 .ctx = &m->prog};
	char err[1024] = "";
	int rc;
	if (timeline_sampler_start(&m->sampler) != 0)
		rc = cli_fail(&m->cli, VMC_EXIT_FAILURE, "cannot start the sampler thread");
	else
		rc = finish(m, run_phases(m, err, sizeof err), err);
	json_decref(m->doc);
	progress_destroy(&m->prog);
	timeline_free(&m->tl);
	return rc;
}

int cmd_memtest(int argc, char **argv)
{
	struct memtest *m = calloc(1, sizeof *m);
	if (!m)
		return cli_fail(NULL, VMC_EXIT_FAILURE, "out of memory");
	int rc = prepare(m, argc, argv);
	if (rc == CLI_CONTINUE)
		rc = run(m);
	free(m);
	return rc;
}
