/* SPDX-License-Identifier: Apache-2.0 */
#include "trim.h"

#include "balloon.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"
#include "procfs.h"
#include "state.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- policy (pure functions) ---------------------------------------------------------- */

static void append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t used = strlen(buf);
	if (used >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + used, size - used, fmt, ap);
	va_end(ap);
}

void trim_judge_idle(const struct agent_config *cfg, const struct idle_inputs *in,
		     struct idle_verdict *v)
{
	memset(v, 0, sizeof *v);
	v->cpu_busy = in->cpu_busy_percent < 0 || in->cpu_busy_percent > cfg->idle_cpu_percent;
	v->load_busy = in->load1 < 0 || in->load1 > cfg->idle_load1;
	if (in->psi_enabled)
		v->psi_busy = in->psi_cpu > cfg->idle_psi_percent ||
			      in->psi_io > cfg->idle_psi_percent ||
			      in->psi_memory > cfg->idle_psi_percent;
	v->idle = !v->cpu_busy && !v->load_busy && !v->psi_busy;

	const char *sep = v->idle ? ", " : "; ";
	snprintf(v->reason, sizeof v->reason, "%s", v->idle ? "idle: " : "busy: ");
	bool first = true;
	if (v->idle || v->cpu_busy) {
		if (in->cpu_busy_percent < 0)
			append(v->reason, sizeof v->reason,
			       "cpu share unknown (no /proc/stat delta)");
		else
			append(v->reason, sizeof v->reason, "cpu %.2f %% %s %.2f %% over %.0f s",
			       in->cpu_busy_percent,
			       v->cpu_busy ? ">" : "<=", cfg->idle_cpu_percent, in->window_s);
		first = false;
	}
	if (v->idle || v->load_busy) {
		if (in->load1 < 0)
			append(v->reason, sizeof v->reason, "%sload1 unknown", first ? "" : sep);
		else
			append(v->reason, sizeof v->reason, "%sload1 %.2f %s %.2f",
			       first ? "" : sep, in->load1,
			       v->load_busy ? ">" : "<=", cfg->idle_load1);
		first = false;
	}
	if (in->psi_enabled && (v->idle || v->psi_busy))
		append(v->reason, sizeof v->reason,
		       "%sPSI some cpu/io/memory %.2f/%.2f/%.2f %% %s %.2f %%", first ? "" : sep,
		       in->psi_cpu, in->psi_io, in->psi_memory,
		       v->psi_busy ? "(limit" : "<=", cfg->idle_psi_percent);
	if (in->psi_enabled && v->psi_busy)
		append(v->reason, sizeof v->reason, ")");
}

uint64_t trim_step_bytes(const struct agent_config *cfg, uint64_t mem_total)
{
	if (cfg->step_bytes > 0)
		return cfg->step_bytes;
	uint64_t step = mem_total / 32;
	if (step < 256 * VMC_MIB)
		step = 256 * VMC_MIB;
	if (step > VMC_GIB)
		step = VMC_GIB;
	return step;
}

uint64_t trim_next_ask(uint64_t remaining, uint64_t step)
{
	/* The kernel reclaims in batches and overshoots (6.1 in the lab: asked 128 MiB, got
	 * 212): never ask for more than half of what is left above the floor, so it holds. */
	uint64_t ask = remaining / 2 < step ? remaining / 2 : step;
	return ask > TRIM_MIN_ASK ? ask : TRIM_MIN_ASK;
}

uint64_t trim_reclaimable(const struct vmc_meminfo *mi)
{
	return vmc_meminfo_file_cache(mi) + mi->sreclaimable;
}

uint64_t trim_target_bytes(const struct vmc_meminfo *mi, uint64_t floor)
{
	uint64_t r = trim_reclaimable(mi);
	return r > floor ? r - floor : 0;
}

static void idle_inputs_between(const struct idle_sample *a, const struct idle_sample *b,
				double load1, struct idle_inputs *in)
{
	memset(in, 0, sizeof *in);
	in->window_s = b->t - a->t;
	in->cpu_busy_percent = a->cpu_ok && b->cpu_ok ? vmc_cpu_busy_percent(&a->cpu, &b->cpu) : -1;
	in->load1 = load1;
	in->psi_enabled = a->psi_ok && b->psi_ok;
	if (in->psi_enabled && in->window_s > 0) {
		/* Cumulative stall time over the window: the whole interval, not PSI's 60 s
		 * average. */
		double *out[3] = {&in->psi_cpu, &in->psi_io, &in->psi_memory};
		for (int i = 0; i < 3; i++) {
			uint64_t d = b->psi_total_us[i] >= a->psi_total_us[i]
					 ? b->psi_total_us[i] - a->psi_total_us[i]
					 : 0;
			*out[i] = 100.0 * (double)d / (in->window_s * 1e6);
		}
	}
}

/* ---- priority of the pass --------------------------------------------------------------- */

#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_CLASS_IDLE  3
#define IOPRIO_CLASS_SHIFT 13

struct saved_priority {
	int policy;
	struct sched_param param;
	long ioprio;
	bool sched_saved;
};

/* Per thread: musl's sched_setscheduler() is ENOSYS, pthread_setschedparam() is not. */
static void lower_priority(struct saved_priority *saved)
{
	saved->sched_saved =
	    pthread_getschedparam(pthread_self(), &saved->policy, &saved->param) == 0;
	struct sched_param idle = {0};
	if (saved->sched_saved && saved->policy != SCHED_IDLE &&
	    pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle) != 0)
		debug("cannot switch the trim pass to SCHED_IDLE");
	saved->ioprio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		    IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT) < 0)
		debug("cannot set idle I/O priority for the trim pass:");
}

static void restore_priority(const struct saved_priority *saved)
{
	if (saved->sched_saved && saved->policy != SCHED_IDLE)
		pthread_setschedparam(pthread_self(), saved->policy, &saved->param);
	if (saved->ioprio >= 0)
		syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, (int)saved->ioprio);
}

/* ---- one pass ----------------------------------------------------------------------------- */

struct pass {
	struct agent_state *st;
	const struct agent_config *cfg;
	json_t *doc;
	struct vmc_meminfo before;
	uint64_t floor, step, target;
	bool swap_on;
	bool reporting;
	bool full_window; /* the decision covers the whole interval: restart the window after it */
	const char *method; /* "memory.reclaim" or "drop_caches" */
	char fallback[192]; /* why drop_caches instead of memory.reclaim */
	/* results */
	bool wrote;
	unsigned steps;
	bool eagain;
	enum reclaim_format format;
	json_t *step_log;
	int errnum; /* why the pass failed, for agent_trim's errno */
};

static const char *errno_name(int e)
{
	switch (e) {
	case EAGAIN:
		return "EAGAIN";
	case EINVAL:
		return "EINVAL";
	case ENOENT:
		return "ENOENT";
	case EACCES:
		return "EACCES";
	case EPERM:
		return "EPERM";
	case EBUSY:
		return "EBUSY";
	case EINTR:
		return "EINTR";
	case ENOMEM:
		return "ENOMEM";
	case EROFS:
		return "EROFS";
	default:
		return "error";
	}
}

static int pass_write(struct pass *p, const char *path, const char *data)
{
	struct agent_io *io = &p->st->io;
	int rc = io->write(io->ctx, path, data);
	int saved = errno;
	if (rc == 0 || saved == EAGAIN)
		p->wrote = true;
	errno = saved;
	return rc;
}

static void log_step(struct pass *p, const char *data, int rc, int err, uint64_t reclaimed)
{
	json_t *s = json_object();
	json_object_set_new(s, "wrote", json_string(data));
	json_object_set_new(s, "result", json_string(rc == 0 ? "ok" : errno_name(err)));
	json_object_set_new(s, "reclaimed_bytes", vmc_json_u64(reclaimed));
	json_array_append_new(p->step_log, s);
}

static void set_format(struct pass *p, enum reclaim_format f)
{
	p->format = f;
	pthread_mutex_lock(&p->st->lock);
	p->st->format = f;
	pthread_mutex_unlock(&p->st->lock);
}

/*
 * memory.reclaim in steps of at most p->step until the floor is reached, the kernel says
 * EAGAIN (it reclaimed less than asked: the cold cache is gone) or a step frees nothing.
 * Returns 0, 1 when drop_caches must take over (p->fallback says why), -1 on a hard error.
 */
static int reclaim_steps(struct pass *p, char *err, size_t errsize)
{
	struct vmc_meminfo cur = p->before;
	uint64_t remaining = p->target;
	bool auto_method = p->cfg->method == TRIM_METHOD_AUTO;
	/* Full steps, then about log2(step / TRIM_MIN_ASK) halving ones, one EINVAL probe. */
	unsigned max_steps = (unsigned)(p->target / p->step) + 14;
	if (max_steps > TRIM_MAX_STEPS)
		max_steps = TRIM_MAX_STEPS;
	while (remaining >= 2 * TRIM_MIN_ASK && p->steps < max_steps) {
		uint64_t ask = trim_next_ask(remaining, p->step);
		char data[64];
		if (p->format == RECLAIM_FORMAT_BYTES)
			snprintf(data, sizeof data, "%" PRIu64, ask);
		else
			snprintf(data, sizeof data, "%" PRIu64 " swappiness=0", ask);
		uint64_t before = trim_reclaimable(&cur);
		int rc = pass_write(p, TRIM_RECLAIM_PATH, data);
		int e = errno;
		p->steps++;
		if (rc < 0 && e == EINVAL && p->format != RECLAIM_FORMAT_BYTES) {
			/* 6.1 parses the whole string as a size: no nested keys there. */
			log_step(p, data, rc, e, 0);
			set_format(p, RECLAIM_FORMAT_BYTES);
			if (p->swap_on && auto_method) {
				snprintf(p->fallback, sizeof p->fallback,
					 "memory.reclaim takes no swappiness= on this kernel and "
					 "swap is "
					 "on: drop_caches never swaps");
				return 1;
			}
			continue;
		}
		if (rc == 0 && p->format == RECLAIM_FORMAT_UNKNOWN)
			set_format(p, RECLAIM_FORMAT_SWAPPINESS);
		if (vmc_meminfo_read(&cur) < 0) {
			p->errnum = errno;
			errorf(err, errsize, "cannot read /proc/meminfo after reclaim:");
			return -1;
		}
		uint64_t now = trim_reclaimable(&cur);
		uint64_t got = before > now ? before - now : 0;
		log_step(p, data, rc, e, got);
		if (rc < 0 && e == EAGAIN) {
			p->eagain = true;
			break;
		}
		if (rc < 0) {
			if (auto_method && p->steps == 1) {
				errno = e;
				errorf(p->fallback, sizeof p->fallback, "%s:", TRIM_RECLAIM_PATH);
				return 1;
			}
			if (!auto_method && p->steps == 1) {
				p->errnum = errno = e;
				errorf(
				    err, errsize,
				    "cannot write %s (set method: auto in the agent config to fall "
				    "back to drop_caches):",
				    TRIM_RECLAIM_PATH);
				return -1;
			}
			break; /* some cache is gone already; the next pass tries again */
		}
		if (got == 0)
			break;
		remaining = trim_target_bytes(&cur, p->floor);
	}
	return 0;
}

static int drop_caches(struct pass *p, char *err, size_t errsize)
{
	/* 1 = page cache only: dentries and inodes are small and costly to rebuild. */
	if (pass_write(p, TRIM_DROP_CACHES_PATH, "1") < 0) {
		p->errnum = errno;
		errorf(err, errsize,
		       errno == EACCES || errno == EPERM ? "cannot write %s (run as root):"
							 : "cannot write %s:",
		       TRIM_DROP_CACHES_PATH);
		return -1;
	}
	p->steps++;
	return 0;
}

static void choose_method(struct pass *p)
{
	enum reclaim_format known = p->format;
	switch (p->cfg->method) {
	case TRIM_METHOD_DROP_CACHES:
		p->method = "drop_caches";
		return;
	case TRIM_METHOD_RECLAIM:
		p->method = "memory.reclaim";
		return;
	case TRIM_METHOD_AUTO:
		break;
	}
	p->method = "memory.reclaim";
	if (!vmc_fs_exists(TRIM_RECLAIM_PATH)) {
		p->method = "drop_caches";
		snprintf(p->fallback, sizeof p->fallback,
			 "no %s (cgroup2 with the memory controller is not mounted there)",
			 TRIM_RECLAIM_PATH);
	} else if (known == RECLAIM_FORMAT_BYTES && p->swap_on) {
		p->method = "drop_caches";
		snprintf(p->fallback, sizeof p->fallback,
			 "memory.reclaim takes no swappiness= on this kernel and swap is on: "
			 "drop_caches never swaps");
	}
}

static void set_bytes(json_t *doc, const char *key, uint64_t v)
{
	json_object_set_new(doc, key, vmc_json_u64(v));
}

/* Compaction only helps when free-page reporting hands whole blocks to the host. */
static void compact(struct pass *p)
{
	if (!p->reporting) {
		json_object_set_new(p->doc, "compacted", json_false());
		json_object_set_new(
		    p->doc, "compact_note",
		    json_string("free-page reporting is not active: compaction would "
				"be work for nothing"));
		return;
	}
	int rc = pass_write(p, TRIM_COMPACT_PATH, "1");
	json_object_set_new(p->doc, "compacted", json_boolean(rc == 0));
	if (rc < 0)
		json_object_set_new(
		    p->doc, "compact_note",
		    json_string(errno == ENOENT
				    ? "no compact_memory: kernel without CONFIG_COMPACTION"
				    : strerror(errno)));
	else
		json_object_set_new(p->doc, "compact_note",
				    json_string("free-page reporting is active: compacted so it "
						"returns whole blocks"));
}

static json_t *idle_json(const struct agent_config *cfg, const struct idle_inputs *in,
			 const struct idle_verdict *v)
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

/* Records a decision (and a full-interval baseline) under the lock, then saves. */
static void finish_decision(struct agent_state *st, const char *outcome, const char *reason,
			    const struct idle_sample *rebase_to)
{
	pthread_mutex_lock(&st->lock);
	state_set_decision(st, outcome, reason);
	if (rebase_to)
		st->baseline = *rebase_to;
	st->running = false;
	state_save(st);
	pthread_mutex_unlock(&st->lock);
}

static void release(struct agent_state *st)
{
	pthread_mutex_lock(&st->lock);
	st->running = false;
	pthread_mutex_unlock(&st->lock);
}

/* Rate limit: never more often than the interval unless forced. True (and why) if too soon. */
static bool too_soon(struct agent_state *st, const struct agent_config *cfg, double now,
		     char *reason, size_t size)
{
	pthread_mutex_lock(&st->lock);
	bool soon = st->has_last_trim && now - st->last_trim_at < cfg->interval_s;
	double ago = now - st->last_trim_at;
	pthread_mutex_unlock(&st->lock);
	if (soon) {
		char a[32], i[32];
		snprintf(reason, size, "last trim %s ago, interval %s: force it to trim sooner",
			 vmc_format_duration(ago, a, sizeof a),
			 vmc_format_duration(cfg->interval_s, i, sizeof i));
	}
	return soon;
}

static json_t *run_pass(struct pass *p, bool dry_run, bool force, double start, char *err,
			size_t errsize);

json_t *agent_trim(struct agent_state *st, const struct agent_config *cfg, bool dry_run, bool force,
		   char *err, size_t errsize)
{
	if (!st || !cfg) {
		snprintf(err, errsize, "internal error: trim without state or config");
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&st->lock);
	if (st->running) {
		pthread_mutex_unlock(&st->lock);
		return new_doc("skipped", "another trim pass is running", dry_run, force);
	}
	st->running = true;
	state_refresh(st);
	struct idle_sample baseline = st->baseline;
	pthread_mutex_unlock(&st->lock);

	char reason[256];
	double start = st->io.now(st->io.ctx);
	if (!force && too_soon(st, cfg, start, reason, sizeof reason)) {
		if (dry_run)
			release(st);
		else
			finish_decision(st, "skipped", reason, NULL);
		return new_doc("skipped", reason, dry_run, force);
	}
	/* A fresh process has no history to judge by: watch the CPU for a few seconds first. */
	if (!force && start - baseline.t < TRIM_MIN_WINDOW_S) {
		st->io.sleep(st->io.ctx, TRIM_MIN_WINDOW_S - (start - baseline.t));
		start = st->io.now(st->io.ctx);
	}
	struct idle_sample now_sample;
	idle_sample_take(st, &now_sample);
	struct vmc_loadavg la;
	double load1 = vmc_loadavg_read(&la) == 0 ? la.load1 : -1;
	struct idle_inputs in;
	struct idle_verdict verdict;
	idle_inputs_between(&baseline, &now_sample, load1, &in);
	trim_judge_idle(cfg, &in, &verdict);
	bool full_window = in.window_s >= cfg->interval_s * TRIM_FULL_WINDOW_SHARE;

	json_t *doc = new_doc("skipped", verdict.reason, dry_run, force);
	/* Forced right after start there is no window to judge: say so instead of guessing. */
	if (force && in.window_s < TRIM_MIN_WINDOW_S)
		json_object_set_new(doc, "idle", json_null());
	else
		json_object_set_new(doc, "idle", idle_json(cfg, &in, &verdict));
	if (!force && !verdict.idle) {
		if (dry_run)
			release(st);
		else
			finish_decision(st, "skipped", verdict.reason,
					full_window ? &now_sample : NULL);
		return doc;
	}
	struct pass p = {.st = st, .cfg = cfg, .doc = doc, .full_window = full_window};
	pthread_mutex_lock(&st->lock);
	p.format = st->format;
	pthread_mutex_unlock(&st->lock);
	json_t *result = run_pass(&p, dry_run, force, start, err, errsize);
	if (!result) {
		json_decref(doc);
		release(st);
		errno = p.errnum;
		return NULL;
	}
	return result;
}

static void plan_json(struct pass *p)
{
	json_object_set_new(p->doc, "method", json_string(p->method));
	json_object_set_new(p->doc, "fallback",
			    p->fallback[0] ? json_string(p->fallback) : json_null());
	set_bytes(p->doc, "floor_bytes", p->floor);
	set_bytes(p->doc, "step_bytes", p->step);
	set_bytes(p->doc, "reclaimable_before", trim_reclaimable(&p->before));
	set_bytes(p->doc, "target_bytes", p->target);
	json_object_set_new(p->doc, "page_reporting", json_boolean(p->reporting));
}

static json_t *run_pass(struct pass *p, bool dry_run, bool force, double start, char *err,
			size_t errsize)
{
	struct agent_state *st = p->st;
	char reason[256];
	if (vmc_meminfo_read(&p->before) < 0) {
		p->errnum = errno;
		errorf(err, errsize, "cannot read /proc/meminfo:");
		return NULL;
	}
	p->floor = p->cfg->floor_bytes;
	p->step = trim_step_bytes(p->cfg, p->before.total);
	p->target = trim_target_bytes(&p->before, p->floor);
	p->swap_on = p->before.swap_total > 0;
	struct balloon_info b;
	balloon_read(&b);
	p->reporting = balloon_reporting_active(&b);
	choose_method(p);
	plan_json(p);
	if (p->target == 0) {
		char r[32], f[32];
		snprintf(reason, sizeof reason,
			 "reclaimable cache %s is within the %s floor: nothing to trim",
			 vmc_format_bytes(trim_reclaimable(&p->before), r, sizeof r),
			 vmc_format_bytes(p->floor, f, sizeof f));
		set_reason(p->doc, "nothing-to-do", reason);
		if (dry_run) {
			release(st);
		} else {
			struct idle_sample s;
			idle_sample_take(st, &s);
			finish_decision(st, "nothing-to-do", reason, p->full_window ? &s : NULL);
		}
		return p->doc;
	}
	if (dry_run) {
		char t[32], s[32];
		unsigned steps = 0;
		for (uint64_t left = p->target; left >= 2 * TRIM_MIN_ASK && steps < TRIM_MAX_STEPS;
		     steps++)
			left -= trim_next_ask(left, p->step);
		if (strcmp(p->method, "drop_caches") == 0)
			snprintf(reason, sizeof reason,
				 "would drop all clean page cache (%s above the floor) via "
				 "drop_caches%s",
				 vmc_format_bytes(p->target, t, sizeof t),
				 p->reporting ? ", then compact" : "");
		else
			snprintf(reason, sizeof reason,
				 "would trim %s via memory.reclaim in %u step%s of at most %s%s",
				 vmc_format_bytes(p->target, t, sizeof t), steps,
				 steps == 1 ? "" : "s", vmc_format_bytes(p->step, s, sizeof s),
				 p->reporting ? ", then compact" : "");
		set_reason(p->doc, "dry-run", reason);
		release(st);
		return p->doc;
	}

	p->step_log = json_array();
	struct saved_priority prio;
	lower_priority(&prio);
	int rc = 0;
	if (strcmp(p->method, "memory.reclaim") == 0) {
		rc = reclaim_steps(p, err, errsize);
		if (rc == 1)
			p->method = "drop_caches";
	}
	if (rc >= 0 && strcmp(p->method, "drop_caches") == 0)
		rc = drop_caches(p, err, errsize);
	if (rc >= 0)
		compact(p);
	restore_priority(&prio);
	json_object_set_new(p->doc, "steps", p->step_log);
	if (rc < 0)
		return NULL;

	struct vmc_meminfo after;
	if (vmc_meminfo_read(&after) < 0)
		after = p->before;
	double end = st->io.now(st->io.ctx);
	struct trim_record rec = {.when = time(NULL),
				  .at = start,
				  .duration_s = end - start,
				  .target_bytes = p->target,
				  .steps = p->steps,
				  .eagain = p->eagain,
				  .compacted = json_is_true(json_object_get(p->doc, "compacted")),
				  .forced = force};
	uint64_t r0 = trim_reclaimable(&p->before), r1 = trim_reclaimable(&after);
	rec.reclaimed_bytes = r0 > r1 ? r0 - r1 : 0;
	rec.freed_bytes = after.free > p->before.free ? after.free - p->before.free : 0;
	snprintf(rec.method, sizeof rec.method, "%s", p->method);
	snprintf(rec.format, sizeof rec.format, "%s",
		 strcmp(p->method, "drop_caches") == 0 ? "1" : reclaim_format_name(p->format));

	json_object_set_new(p->doc, "ran", json_true());
	json_object_set_new(p->doc, "method", json_string(p->method));
	json_object_set_new(p->doc, "fallback",
			    p->fallback[0] ? json_string(p->fallback) : json_null());
	json_object_set_new(p->doc, "reclaim_format", json_string(rec.format));
	json_object_set_new(p->doc, "eagain", json_boolean(p->eagain));
	set_bytes(p->doc, "reclaimed_bytes", rec.reclaimed_bytes);
	set_bytes(p->doc, "freed_bytes", rec.freed_bytes);
	set_bytes(p->doc, "file_cache_before", vmc_meminfo_file_cache(&p->before));
	set_bytes(p->doc, "file_cache_after", vmc_meminfo_file_cache(&after));
	set_bytes(p->doc, "reclaimable_after", trim_reclaimable(&after));
	set_bytes(p->doc, "mem_free_before", p->before.free);
	set_bytes(p->doc, "mem_free_after", after.free);
	json_object_set_new(p->doc, "duration_s", json_real(rec.duration_s));
	char r[32];
	snprintf(reason, sizeof reason, "reclaimed %s via %s in %u step%s%s",
		 vmc_format_bytes(rec.reclaimed_bytes, r, sizeof r), p->method, p->steps,
		 p->steps == 1 ? "" : "s", p->eagain ? " (EAGAIN: the cold cache is gone)" : "");
	set_reason(p->doc, "trimmed", reason);

	/* The baseline restarts after our own work, so the reclaim is not counted as busy. */
	struct idle_sample s;
	idle_sample_take(st, &s);
	pthread_mutex_lock(&st->lock);
	state_push_record(st, &rec);
	st->has_last_trim = true;
	st->last_trim_at = start;
	pthread_mutex_unlock(&st->lock);
	finish_decision(st, "trimmed", reason, &s);
	return p->doc;
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
