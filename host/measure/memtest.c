/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memtest's phases (docs/published-measurements.md#real-ram-cost-memtest): baseline, a workload,
 * the guest's trim, host pressure with its MADV_FREE canary, then `limactl stop` and the host's
 * free-memory gain, each recorded as a phase of the JSON document with its readings. The
 * judgement of the numbers is memtest_noise.c; the files, memtest_results.c.
 */
#include "measure/memtest.h"

#include "clients/agent_client.h"
#include "clients/process.h"
#include "clock.h"
#include "jsonutil.h"
#include "log.h"
#include "measure/memtest_noise.h"
#include "measure/memtest_report.h"
#include "measure/pressure.h"
#include "measure/results.h"
#include "measure/vm_sample.h"
#include "meminfo.h"
#include "message.h"
#include "platform/platform.h"
#include "settle.h"
#include "units.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
	if (process_run(argv, &(struct process_options){.timeout_ms = 60000, .stop = m->stop},
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
		vmc_debug("guest meminfo: exit %d: %s", r.exit_code, r.err);
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
	struct workload_fill_result fr;
	progress_note(&m->prog, "writing to tmpfs, then files into page cache");
	m->fill_pending = true;
	int rc = workload_fill(&m->inst, &m->fill, m->stop, &fr, err, errsize);
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
	m->pg.stop = m->stop;
	m->pg.note = on_note;
	m->pg.note_ctx = &m->prog;
	int rc = workload_pg_start(&m->pg, &m->inst, m->o.image, !m->o.no_pull, 600, err, errsize);
	struct workload_pg_run run = {0};
	if (rc == VMC_EXIT_OK)
		rc = workload_pg_init(&m->pg, m->o.scale, err, errsize);
	if (rc == VMC_EXIT_OK)
		rc = workload_pg_bench(&m->pg, m->o.clients, m->o.duration, &run, err, errsize);
	char rerr[256];
	if (workload_pg_remove(&m->pg, rerr, sizeof rerr) != VMC_EXIT_OK)
		vmc_warn("%s", rerr);
	if (rc != VMC_EXIT_OK)
		return rc;
	json_t *pj = workload_pg_run_json(&run);
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
	bool fill = m->o.workload == MEMTEST_FILL;
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
	    process_run(argv, &(struct process_options){.timeout_ms = 120000, .stop = m->stop}, &r);
	bool ok = rc == 0 && r.exit_code == 0;
	if (rc == 0)
		process_result_free(&r);
	vmc_warn("vmcost-agent not reachable (%s): trimmed with drop_caches through limactl shell "
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

/* Waits until the VM's footprint settles after a trim (memtest_footprint_settled). */
static double settle_footprint(struct memtest *m)
{
	struct memtest_footprint_settle settle = {.started = false};
	double start = vmc_monotonic_s();
	while (!*m->stop) {
		struct platform_proc_sample ps;
		double t = vmc_monotonic_s();
		if (platform_proc_sample(m->vp.pid, &ps) != 0)
			break;
		char note[96], b[32];
		snprintf(note, sizeof note, "waiting for the footprint to settle (%s, %.0f s)",
			 vmc_format_bytes(ps.footprint, b, sizeof b), t - start);
		progress_note(&m->prog, note);
		if (memtest_footprint_settled(&settle, t, ps.footprint, m->o.settle_max))
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
			vmc_warn("%s", cerr);
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

/*
 * How far the VM's footprint fell while the host was under pressure. On krunkit this is the
 * return free-page reporting made: libkrun MADV_FREEs what the guest reports free, so the pages
 * stay in the footprint until the host needs them (docs/memtest.md#krunkit).
 */
static void returned_under_pressure(json_t *result, const json_t *before, const json_t *after)
{
	double f0, f1;
	if (memtest_num(before, "vm.footprint", &f0) && memtest_num(after, "vm.footprint", &f1))
		json_object_set_new(result, "footprint_fell_under_pressure",
				    json_integer((json_int_t)(f0 - f1)));
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
	int rc = pressure_run(&plan, on_pressure, m, m->stop, &res, err, errsize);
	if (rc != 0)
		return VMC_EXIT_FAILURE;
	json_object_set_new(p, "result", pressure_json(&res));
	if (res.interrupted)
		return VMC_EXIT_INTERRUPTED;
	json_object_set_new(m->result, "pressure",
			    json_string(res.conclusive ? "conclusive" : "INCONCLUSIVE"));
	json_object_set_new(m->result, "canary_pages", vmc_json_u64(res.canary_pages));
	json_object_set_new(m->result, "canary_discarded", vmc_json_u64(res.canary_discarded));
	json_t *after = reading(m, false);
	returned_under_pressure(m->result, before, after);
	char note[400];
	memtest_pressure_text(m->doc, note, sizeof note);
	set_note(p, "%s", note);
	phase_end(m, p, after);
	return VMC_EXIT_OK;
}

/* Median of three host readings 0.3 s apart (memtest_median_of_three). */
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
	int mid = memtest_median_of_three(f);
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

/* Waits until host free memory stops rising after the stop (vmc_free_settled, shared with
 * autostop). */
static double settle_free(struct memtest *m, double drift_per_s)
{
	double start = vmc_monotonic_s(), last_t = start;
	uint64_t last = 0;
	struct platform_host_memory hm;
	if (platform_host_memory(&hm) == 0)
		last = hm.free;
	progress_note(&m->prog, "letting host memory settle");
	while (vmc_monotonic_s() - start < m->o.settle_max && !*m->stop) {
		usleep(1000 * 1000);
		if (platform_host_memory(&hm) != 0)
			break;
		double t = vmc_monotonic_s();
		double rise = ((double)hm.free - (double)last) / (t - last_t);
		last = hm.free;
		last_t = t;
		if (vmc_free_settled(rise, drift_per_s))
			break;
	}
	return vmc_monotonic_s() - start;
}

static json_t *control_window(struct memtest *m, json_t *p, double *drift)
{
	json_t *a = steady_reading(m);
	progress_note(&m->prog, "control window: host memory without the stop");
	struct timespec nap = {(time_t)MEMTEST_CONTROL_WINDOW_S, 0};
	while (nanosleep(&nap, &nap) != 0 && errno == EINTR && !*m->stop)
		;
	json_t *b = steady_reading(m);
	double f0 = 0, f1 = 0, v0 = 0, v1 = 0;
	memtest_num(a, "host.free", &f0);
	memtest_num(b, "host.free", &f1);
	memtest_num(a, "vm.footprint", &v0);
	memtest_num(b, "vm.footprint", &v1);
	*drift = memtest_control_drift(f0, f1, v0, v1);
	json_object_set_new(p, "control_start", a);
	return b;
}

/* result.noise: the control window's drift and memtest_judge_noise's verdict. */
static void record_noise(struct memtest *m, double gain, double drift, double footprint)
{
	struct memtest_noise verdict;
	memtest_judge_noise(gain, drift, footprint, &verdict);
	json_t *noise = json_pack("{s:f, s:I, s:b}", "window_s", MEMTEST_CONTROL_WINDOW_S, "drift",
				  (json_int_t)drift, "noisy", verdict.noisy);
	if (verdict.noisy) {
		json_object_set_new(noise, "reason", json_string(verdict.reason));
		vmc_warn(
		    "noisy measurement: %s; other processes are changing host memory: re-run on a "
		    "quiet host",
		    verdict.reason);
	}
	json_object_set_new(m->result, "noise", noise);
}

static int limactl_stop(const struct memtest *m, char *err, size_t errsize)
{
	const char *argv[] = {"limactl", "stop", m->inst.name, NULL};
	struct process_result r;
	if (process_run(argv, &(struct process_options){.timeout_ms = 400000}, &r) != 0) {
		vmc_errorf(err, errsize, "cannot run limactl:");
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
	double settle_s = settle_free(m, drift / MEMTEST_CONTROL_WINDOW_S);
	json_t *after = steady_reading(m);
	double f0 = 0, f1 = 0, a0 = 0, a1 = 0;
	memtest_num(before, "host.free", &f0);
	memtest_num(after, "host.free", &f1);
	memtest_num(before, "host.available", &a0);
	memtest_num(after, "host.available", &a1);
	json_object_set_new(m->result, "ram_freed_by_stop", json_integer((json_int_t)(f1 - f0)));
	json_object_set_new(m->result, "available_gained_by_stop",
			    json_integer((json_int_t)(a1 - a0)));
	record_noise(m, f1 - f0, drift, fp);
	/* The background trend of the control window, extrapolated over the stop's own window. */
	double window = json_number_value(json_object_get(after, "t")) -
			json_number_value(json_object_get(before, "t"));
	json_object_set_new(
	    json_object_get(m->result, "noise"), "gain_drift_corrected",
	    json_integer((json_int_t)memtest_gain_drift_corrected(f1 - f0, drift, window)));
	json_object_set_new(json_object_get(m->result, "noise"), "stop_window_s",
			    seconds_json(window));
	json_object_set_new(p, "after", after);
	json_object_set_new(p, "stop_seconds", seconds_json(stop_s));
	json_object_set_new(p, "settle_seconds", seconds_json(settle_s));
	char g[32], d[32];
	set_note(p, "stopped in %.1f s, settled %.1f s: host free %s (drift %s in %.0f s before)",
		 stop_s, settle_s, vmc_format_bytes_delta((int64_t)(f1 - f0), g, sizeof g),
		 vmc_format_bytes_delta((int64_t)drift, d, sizeof d), MEMTEST_CONTROL_WINDOW_S);
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
		vmc_errorf(err, errsize, "cannot run limactl:");
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

/* ---- the run ------------------------------------------------------------------------------- */

static void guest_cmdline(const struct memtest *m, char *buf, size_t size)
{
	const char *argv[] = {"limactl", "shell", m->inst.name, "cat", "/proc/cmdline", NULL};
	process_first_line(argv, 60000, buf, size);
}

/* A results file names the guest's kernel as well as the host's. */
static void guest_kernel(const struct memtest *m, char *buf, size_t size)
{
	const char *argv[] = {"limactl", "shell", m->inst.name, "uname", "-r", NULL};
	process_first_line(argv, 60000, buf, size);
}

static json_t *settings_json(const struct memtest *m)
{
	const struct memtest_settings *o = &m->o;
	char text[160], b[32];
	if (o->workload == MEMTEST_FILL)
		snprintf(text, sizeof text, "fill %s (tmpfs %s, files in %s)",
			 vmc_format_bytes(o->size, b, sizeof b),
			 o->tmpfs_dir ? o->tmpfs_dir : "/dev/shm",
			 o->fill_dir ? o->fill_dir : "/var/tmp/vmcost-fill");
	else
		snprintf(text, sizeof text, "pgbench -s %d, %d clients x %.0f s (%s)", o->scale,
			 o->clients, o->duration, o->image ? o->image : WORKLOAD_PG_IMAGE);
	json_t *s =
	    json_pack("{s:s, s:s}", "workload", o->workload == MEMTEST_FILL ? "fill" : "pgbench",
		      "workload_text", text);
	if (o->workload == MEMTEST_FILL) {
		json_object_set_new(s, "size", vmc_json_u64(o->size));
	} else {
		json_object_set_new(s, "image",
				    json_string(o->image ? o->image : WORKLOAD_PG_IMAGE));
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

void memtest_build_header(struct memtest *m)
{
	char when[32], lv[160], cmdline[1024], kernel[128], line[512];
	results_iso_time(m->started, when, sizeof when);
	lima_limactl_version(lv, sizeof lv);
	guest_cmdline(m, cmdline, sizeof cmdline);
	guest_kernel(m, kernel, sizeof kernel);
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
			    json_pack("{s:s, s:s, s:b}", "kernel", kernel, "kernel_cmdline",
				      cmdline, "init_on_free",
				      strstr(cmdline, "init_on_free=1") != NULL));
	json_object_set_new(m->doc, "vm_process",
			    json_pack("{s:i, s:s}", "pid", (int)m->vp.pid, "method", m->vp.method));
	json_object_set_new(m->doc, "settings", settings_json(m));
	m->phases = json_array();
	json_object_set_new(m->doc, "phases", m->phases);
	m->result = json_object();
	json_object_set_new(m->doc, "result", m->result);
}

void memtest_cleanup_guest(struct memtest *m)
{
	char err[256];
	if (m->pg.id[0] && workload_pg_remove(&m->pg, err, sizeof err) != VMC_EXIT_OK)
		vmc_warn("%s", err);
	if (m->fill_pending && workload_fill_cleanup(&m->inst, &m->fill, err, sizeof err) != 0)
		vmc_warn("%s", err);
}

int memtest_run_phases(struct memtest *m, char *err, size_t errsize)
{
	int rc = run_baseline(m);
	if (rc == VMC_EXIT_OK && !*m->stop)
		rc = run_workload(m, err, errsize);
	if (rc == VMC_EXIT_OK && !*m->stop)
		rc = run_trim(m, err, errsize);
	if (rc == VMC_EXIT_OK && !*m->stop)
		rc = run_pressure(m, err, errsize);
	if (*m->stop)
		return VMC_EXIT_INTERRUPTED;
	if (rc == VMC_EXIT_OK)
		rc = run_stop(m, err, errsize);
	if (rc == VMC_EXIT_OK && m->o.restart)
		rc = run_restart(m, err, errsize);
	return rc;
}
