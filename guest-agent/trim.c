/* SPDX-License-Identifier: Apache-2.0 */
#include "trim.h"

#include "agent.h"
#include "jsonutil.h"
#include "loadavg.h"
#include "state.h"
#include "trim_pass.h"
#include "trim_policy.h"
#include "units.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* One agent_trim call, from agent_state_begin_pass() to agent_state_end_pass(). */
struct trim_call {
	struct agent_state *st;
	const struct agent_config *cfg;
	struct agent_state_pass pass;
	bool dry_run, force;
	bool full_window; /* the decision covers the whole interval: restart the window after it */
	double start;
	json_t *doc;
};

/* ---- the document ------------------------------------------------------------------------- */

static json_t *new_doc(const char *decision, const char *reason, bool dry_run, bool force)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "ran", json_false());
	json_object_set_new(doc, "decision", json_string(decision));
	json_object_set_new(doc, "reason", json_string(reason));
	json_object_set_new(doc, "dry_run", json_boolean(dry_run));
	json_object_set_new(doc, "forced", json_boolean(force));
	return doc;
}

static void set_reason(json_t *doc, const char *decision, const char *reason)
{
	json_object_set_new(doc, "decision", json_string(decision));
	json_object_set_new(doc, "reason", json_string(reason));
}

static void set_bytes(json_t *doc, const char *key, uint64_t v)
{
	json_object_set_new(doc, key, vmc_json_u64(v));
}

static json_t *idle_json(const struct agent_config *cfg, const struct trim_idle_inputs *in,
			 const struct trim_idle_verdict *v)
{
	json_t *j = json_object();
	json_object_set_new(j, "idle", json_boolean(v->idle));
	json_object_set_new(j, "reason", json_string(v->reason));
	json_object_set_new(j, "window_s", json_real(in->window_s));
	json_object_set_new(j, "cpu_busy_percent",
			    in->cpu_busy_percent < 0 ? json_null()
						     : json_real(in->cpu_busy_percent));
	json_object_set_new(j, "cpu_limit_percent", json_real(cfg->idle_cpu_percent));
	json_object_set_new(j, "load1", in->load1 < 0 ? json_null() : json_real(in->load1));
	json_object_set_new(j, "load1_limit", json_real(cfg->idle_load1));
	if (in->psi_enabled) {
		json_t *psi = json_object();
		json_object_set_new(psi, "cpu", json_real(in->psi_cpu));
		json_object_set_new(psi, "io", json_real(in->psi_io));
		json_object_set_new(psi, "memory", json_real(in->psi_memory));
		json_object_set_new(psi, "limit", json_real(cfg->idle_psi_percent));
		json_object_set_new(j, "psi_some_percent", psi);
	} else {
		json_object_set_new(j, "psi_some_percent", json_null());
	}
	return j;
}

static void plan_json(json_t *doc, const struct trim_pass *p)
{
	json_object_set_new(doc, "method", json_string(trim_method_name(p->method)));
	json_object_set_new(doc, "fallback",
			    p->fallback[0] ? json_string(p->fallback) : json_null());
	set_bytes(doc, "floor_bytes", p->floor);
	set_bytes(doc, "step_bytes", p->step);
	set_bytes(doc, "reclaimable_before", trim_reclaimable(&p->before));
	set_bytes(doc, "target_bytes", p->target);
	json_object_set_new(doc, "page_reporting", json_boolean(p->reporting));
}

static void result_json(json_t *doc, const struct trim_pass *p, const struct agent_state_trim *rec,
			const struct vmc_meminfo *after)
{
	json_object_set_new(doc, "ran", json_true());
	json_object_set_new(doc, "method", json_string(rec->method));
	json_object_set_new(doc, "fallback",
			    p->fallback[0] ? json_string(p->fallback) : json_null());
	json_object_set_new(doc, "reclaim_format", json_string(rec->format));
	json_object_set_new(doc, "eagain", json_boolean(p->eagain));
	set_bytes(doc, "reclaimed_bytes", rec->reclaimed_bytes);
	set_bytes(doc, "freed_bytes", rec->freed_bytes);
	set_bytes(doc, "file_cache_before", vmc_meminfo_file_cache(&p->before));
	set_bytes(doc, "file_cache_after", vmc_meminfo_file_cache(after));
	set_bytes(doc, "reclaimable_after", trim_reclaimable(after));
	set_bytes(doc, "mem_free_before", p->before.free);
	set_bytes(doc, "mem_free_after", after->free);
	json_object_set_new(doc, "duration_s", json_real(rec->duration_s));
}

/* ---- the decision ------------------------------------------------------------------------- */

/* Ends the pass: a dry run records nothing and keeps the idle window. Returns the document. */
static json_t *decided(struct trim_call *c, enum agent_state_outcome outcome, const char *reason,
		       const struct trim_idle_sample *rebase)
{
	struct agent_state_pass_end end = {.outcome =
					       c->dry_run ? AGENT_STATE_OUTCOME_NONE : outcome,
					   .reason = reason,
					   .rebase = c->dry_run ? NULL : rebase};
	agent_state_end_pass(c->st, &end);
	return c->doc;
}

static json_t *failed(struct trim_call *c, const struct trim_pass *p)
{
	struct agent_state_pass_end end = {.format = p->format};
	agent_state_end_pass(c->st, &end);
	json_decref(c->doc);
	errno = p->errnum;
	return NULL;
}

/* Rate limit: never more often than the interval unless forced. True (and why) if too soon. */
static bool too_soon(const struct trim_call *c, char *reason, size_t size)
{
	double ago = c->start - c->pass.last_trim_at;
	if (!c->pass.has_last_trim || ago >= c->cfg->interval_s)
		return false;
	char a[32], i[32];
	snprintf(reason, size, "last trim %s ago, interval %s: force it to trim sooner",
		 vmc_format_duration(ago, a, sizeof a),
		 vmc_format_duration(c->cfg->interval_s, i, sizeof i));
	return true;
}

/* Judges the window since the baseline into a new document; now is the window's end. */
static void judge(struct trim_call *c, struct trim_idle_sample *now,
		  struct trim_idle_verdict *verdict)
{
	const struct trim_io *io = &c->pass.io;
	const struct trim_idle_sample *baseline = &c->pass.baseline;
	/* A fresh process has no history to judge by: watch the CPU for a few seconds first. */
	if (!c->force && c->start - baseline->t < TRIM_MIN_WINDOW_S) {
		io->sleep(io->ctx, TRIM_MIN_WINDOW_S - (c->start - baseline->t));
		c->start = io->now(io->ctx);
	}
	trim_sample_idle(now, io->now(io->ctx));
	struct vmc_loadavg la;
	struct trim_idle_inputs in;
	trim_idle_inputs(baseline, now, vmc_loadavg_read(&la) == 0 ? la.load1 : -1, &in);
	trim_judge_idle(c->cfg, &in, verdict);
	c->full_window = in.window_s >= c->cfg->interval_s * TRIM_FULL_WINDOW_SHARE;
	c->doc = new_doc("skipped", verdict->reason, c->dry_run, c->force);
	/* Forced right after start there is no window to judge: say so instead of guessing. */
	if (c->force && in.window_s < TRIM_MIN_WINDOW_S)
		json_object_set_new(c->doc, "idle", json_null());
	else
		json_object_set_new(c->doc, "idle", idle_json(c->cfg, &in, verdict));
}

static json_t *nothing_to_do(struct trim_call *c, const struct trim_pass *p)
{
	char reason[256], r[32], f[32];
	snprintf(reason, sizeof reason,
		 "reclaimable cache %s is within the %s floor: nothing to trim",
		 vmc_format_bytes(trim_reclaimable(&p->before), r, sizeof r),
		 vmc_format_bytes(p->floor, f, sizeof f));
	set_reason(c->doc, "nothing-to-do", reason);
	struct trim_idle_sample s;
	if (c->full_window)
		trim_sample_idle(&s, c->pass.io.now(c->pass.io.ctx));
	return decided(c, AGENT_STATE_OUTCOME_NOTHING_TO_DO, reason, c->full_window ? &s : NULL);
}

static json_t *dry_run_reply(struct trim_call *c, const struct trim_pass *p)
{
	char reason[256], t[32], s[32];
	const char *then = p->reporting ? ", then compact" : "";
	if (p->method == TRIM_METHOD_DROP_CACHES) {
		snprintf(reason, sizeof reason,
			 "would drop all clean page cache (%s above the floor) via drop_caches%s",
			 vmc_format_bytes(p->target, t, sizeof t), then);
	} else {
		unsigned steps = trim_planned_steps(p->target, p->step);
		snprintf(reason, sizeof reason,
			 "would trim %s via memory.reclaim in %u step%s of at most %s%s",
			 vmc_format_bytes(p->target, t, sizeof t), steps, steps == 1 ? "" : "s",
			 vmc_format_bytes(p->step, s, sizeof s), then);
	}
	set_reason(c->doc, "dry-run", reason);
	return decided(c, AGENT_STATE_OUTCOME_NONE, reason, NULL);
}

static void record_trim(const struct trim_call *c, const struct trim_pass *p,
			const struct vmc_meminfo *after, struct agent_state_trim *rec)
{
	*rec = (struct agent_state_trim){.when = time(NULL),
					 .at = c->start,
					 .duration_s = c->pass.io.now(c->pass.io.ctx) - c->start,
					 .target_bytes = p->target,
					 .steps = p->steps,
					 .eagain = p->eagain,
					 .compacted = p->compacted,
					 .forced = c->force};
	uint64_t r0 = trim_reclaimable(&p->before), r1 = trim_reclaimable(after);
	rec->reclaimed_bytes = r0 > r1 ? r0 - r1 : 0;
	rec->freed_bytes = after->free > p->before.free ? after->free - p->before.free : 0;
	snprintf(rec->method, sizeof rec->method, "%s", trim_method_name(p->method));
	snprintf(rec->format, sizeof rec->format, "%s",
		 p->method == TRIM_METHOD_DROP_CACHES ? "1" : trim_format_name(p->format));
}

static json_t *run(struct trim_call *c, struct trim_pass *p, char *err, size_t errsize)
{
	p->step_log = json_array();
	int rc = trim_pass_run(p, &c->pass.io, err, errsize);
	if (rc == 0) {
		json_object_set_new(c->doc, "compacted", json_boolean(p->compacted));
		json_object_set_new(c->doc, "compact_note", json_string(p->compact_note));
	}
	json_object_set_new(c->doc, "steps", p->step_log);
	if (rc < 0)
		return failed(c, p);

	struct vmc_meminfo after;
	if (vmc_meminfo_read(&after) < 0)
		after = p->before;
	struct agent_state_trim rec;
	record_trim(c, p, &after, &rec);
	result_json(c->doc, p, &rec, &after);
	char reason[256], r[32];
	snprintf(reason, sizeof reason, "reclaimed %s via %s in %u step%s%s",
		 vmc_format_bytes(rec.reclaimed_bytes, r, sizeof r), rec.method, p->steps,
		 p->steps == 1 ? "" : "s", p->eagain ? " (EAGAIN: the cold cache is gone)" : "");
	set_reason(c->doc, "trimmed", reason);

	/* The baseline restarts after our own work, so the reclaim is not counted as busy. */
	struct trim_idle_sample s;
	trim_sample_idle(&s, c->pass.io.now(c->pass.io.ctx));
	struct agent_state_pass_end end = {.outcome = AGENT_STATE_OUTCOME_TRIMMED,
					   .reason = reason,
					   .rebase = &s,
					   .trim = &rec,
					   .format = p->format};
	agent_state_end_pass(c->st, &end);
	return c->doc;
}

json_t *agent_trim(struct agent_state *st, const struct agent_config *cfg, bool dry_run, bool force,
		   char *err, size_t errsize)
{
	if (!st || !cfg) {
		snprintf(err, errsize, "internal error: trim without state or config");
		errno = EINVAL;
		return NULL;
	}
	struct trim_call c = {.st = st, .cfg = cfg, .dry_run = dry_run, .force = force};
	if (!agent_state_begin_pass(st, &c.pass))
		return new_doc("skipped", "another trim pass is running", dry_run, force);
	c.start = c.pass.io.now(c.pass.io.ctx);
	char reason[256];
	if (!force && too_soon(&c, reason, sizeof reason)) {
		c.doc = new_doc("skipped", reason, dry_run, force);
		return decided(&c, AGENT_STATE_OUTCOME_SKIPPED, reason, NULL);
	}
	struct trim_idle_sample now;
	struct trim_idle_verdict verdict;
	judge(&c, &now, &verdict);
	if (!force && !verdict.idle)
		return decided(&c, AGENT_STATE_OUTCOME_SKIPPED, verdict.reason,
			       c.full_window ? &now : NULL);
	struct trim_pass p;
	if (trim_pass_plan(&p, cfg, c.pass.format, err, errsize) < 0)
		return failed(&c, &p);
	plan_json(c.doc, &p);
	if (p.target == 0)
		return nothing_to_do(&c, &p);
	if (dry_run)
		return dry_run_reply(&c, &p);
	return run(&c, &p, err, errsize);
}

/* ---- human output ------------------------------------------------------------------------ */

static uint64_t get_u64(const json_t *doc, const char *key)
{
	uint64_t v = 0;
	vmc_json_get_u64(doc, key, &v);
	return v;
}

void trim_print(FILE *f, const json_t *doc)
{
	const char *decision = vmc_json_get_str_or(doc, "decision", "?");
	const char *reason = vmc_json_get_str_or(doc, "reason", "");
	char a[32], b[32], c[32], d[32];
	if (strcmp(decision, "trimmed") == 0) {
		fprintf(f, "trimmed: %s\n", reason);
		fprintf(f, "  file cache   %s -> %s (kept with reclaimable slab: %s, floor %s)\n",
			vmc_format_bytes(get_u64(doc, "file_cache_before"), a, sizeof a),
			vmc_format_bytes(get_u64(doc, "file_cache_after"), b, sizeof b),
			vmc_format_bytes(get_u64(doc, "reclaimable_after"), d, sizeof d),
			vmc_format_bytes(get_u64(doc, "floor_bytes"), c, sizeof c));
		fprintf(f, "  MemFree      %s -> %s (+%s)\n",
			vmc_format_bytes(get_u64(doc, "mem_free_before"), a, sizeof a),
			vmc_format_bytes(get_u64(doc, "mem_free_after"), b, sizeof b),
			vmc_format_bytes(get_u64(doc, "freed_bytes"), d, sizeof d));
		fprintf(f, "  written as   %s\n", vmc_json_get_str_or(doc, "reclaim_format", "?"));
		const char *fallback = vmc_json_get_str(doc, "fallback");
		if (fallback)
			fprintf(f, "  fallback     %s\n", fallback);
		fprintf(f, "  compaction   %s\n", vmc_json_get_str_or(doc, "compact_note", "?"));
	} else {
		fprintf(f, "%s: %s\n", decision, reason);
		const char *fallback = vmc_json_get_str(doc, "fallback");
		if (fallback)
			fprintf(f, "  fallback     %s\n", fallback);
	}
	const json_t *idle = json_object_get(doc, "idle");
	const char *idle_reason = vmc_json_get_str(idle, "reason");
	if (idle_reason && strcmp(reason, idle_reason) != 0)
		fprintf(f, "  %s%s\n", idle_reason,
			json_is_true(json_object_get(doc, "forced")) ? " (forced)" : "");
}
