/* SPDX-License-Identifier: Apache-2.0 */
#include "trim_pass.h"

#include "balloon.h"
#include "clock.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"
#include "procfs.h"
#include "psi.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int default_write(void *ctx, const char *abs_path, const char *data)
{
	(void)ctx;
	return vmc_fs_write(abs_path, data);
}

/* CLOCK_BOOTTIME: one clock for every process of this boot (daemon and CLI compare times). */
static double default_now(void *ctx)
{
	(void)ctx;
	return vmc_boottime_s();
}

static void default_sleep(void *ctx, double seconds)
{
	(void)ctx;
	vmc_sleep_s(seconds);
}

const struct trim_io trim_io_default = {default_write, default_now, default_sleep, NULL};

void trim_sample_idle(struct trim_idle_sample *s, double t)
{
	static const char *const resources[3] = {"cpu", "io", "memory"};
	memset(s, 0, sizeof *s);
	s->t = t;
	struct vmc_procstat ps;
	s->cpu_ok = vmc_procstat_read(&ps) == 0;
	if (s->cpu_ok)
		s->cpu = ps.cpu;
	s->psi_ok = true;
	for (int i = 0; i < 3; i++) {
		struct vmc_psi psi;
		if (vmc_psi_read(resources[i], &psi) < 0) {
			s->psi_ok = false;
			break;
		}
		s->psi_total_us[i] = psi.some.total_us;
	}
}

int trim_pass_plan(struct trim_pass *p, const struct agent_config *cfg,
		   enum trim_reclaim_format format, char *err, size_t errsize)
{
	memset(p, 0, sizeof *p);
	if (vmc_meminfo_read(&p->before) < 0) {
		p->errnum = errno;
		vmc_errorf(err, errsize, "cannot read /proc/meminfo:");
		return -1;
	}
	p->floor = cfg->floor_bytes;
	p->step = trim_step_bytes(cfg, p->before.total);
	p->target = trim_target_bytes(&p->before, p->floor);
	p->swap_on = p->before.swap_total > 0;
	struct balloon_info b;
	balloon_read(&b);
	p->reporting = balloon_reporting_active(&b);
	p->auto_method = cfg->method == TRIM_METHOD_AUTO;
	p->format = format;
	struct trim_method_choice choice;
	trim_choose_method(cfg->method, vmc_fs_exists(TRIM_RECLAIM_PATH), format, p->swap_on,
			   &choice);
	p->method = choice.method;
	snprintf(p->fallback, sizeof p->fallback, "%s", choice.fallback);
	return 0;
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
		vmc_debug("cannot switch the trim pass to SCHED_IDLE");
	saved->ioprio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		    IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT) < 0)
		vmc_debug("cannot set idle I/O priority for the trim pass:");
}

static void restore_priority(const struct saved_priority *saved)
{
	if (saved->sched_saved && saved->policy != SCHED_IDLE)
		pthread_setschedparam(pthread_self(), saved->policy, &saved->param);
	if (saved->ioprio >= 0)
		syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, (int)saved->ioprio);
}

/* ---- the kernel writes -------------------------------------------------------------------- */

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

static void log_step(struct trim_pass *p, const char *data, int rc, int err, uint64_t reclaimed)
{
	json_t *s = json_object();
	json_object_set_new(s, "wrote", json_string(data));
	json_object_set_new(s, "result", json_string(rc == 0 ? "ok" : errno_name(err)));
	json_object_set_new(s, "reclaimed_bytes", vmc_json_u64(reclaimed));
	json_array_append_new(p->step_log, s);
}

/*
 * What a failed memory.reclaim write means. 1: drop_caches takes over; -1: the pass fails; 0:
 * stop here (some cache is gone already; the next pass tries again).
 */
static int reclaim_failed(struct trim_pass *p, int e, char *err, size_t errsize)
{
	if (p->steps > 1)
		return 0;
	errno = e;
	if (p->auto_method) {
		vmc_errorf(p->fallback, sizeof p->fallback, "%s:", TRIM_RECLAIM_PATH);
		return 1;
	}
	p->errnum = e;
	vmc_errorf(err, errsize,
		   "cannot write %s (set method: auto in the agent config to fall back to "
		   "drop_caches):",
		   TRIM_RECLAIM_PATH);
	return -1;
}

/*
 * memory.reclaim in steps of at most p->step until the floor is reached, the kernel says
 * EAGAIN (it reclaimed less than asked: the cold cache is gone) or a step frees nothing.
 * Returns 0, 1 when drop_caches must take over (p->fallback says why), -1 on a hard error.
 */
static int reclaim_steps(struct trim_pass *p, const struct trim_io *io, char *err, size_t errsize)
{
	struct vmc_meminfo cur = p->before;
	uint64_t remaining = p->target;
	/* Full steps, then about log2(step / TRIM_MIN_ASK) halving ones, one EINVAL probe. */
	unsigned max_steps = (unsigned)(p->target / p->step) + 14;
	if (max_steps > TRIM_MAX_STEPS)
		max_steps = TRIM_MAX_STEPS;
	while (remaining >= 2 * TRIM_MIN_ASK && p->steps < max_steps) {
		uint64_t ask = trim_next_ask(remaining, p->step);
		char data[64];
		if (p->format == TRIM_FORMAT_BYTES)
			snprintf(data, sizeof data, "%" PRIu64, ask);
		else
			snprintf(data, sizeof data, "%" PRIu64 " swappiness=0", ask);
		uint64_t before = trim_reclaimable(&cur);
		int rc = io->write(io->ctx, TRIM_RECLAIM_PATH, data);
		int e = errno;
		p->steps++;
		if (rc < 0 && e == EINVAL && p->format != TRIM_FORMAT_BYTES) {
			/* 6.1 parses the whole string as a size: no nested keys there. */
			log_step(p, data, rc, e, 0);
			p->format = TRIM_FORMAT_BYTES;
			if (p->swap_on && p->auto_method) {
				snprintf(p->fallback, sizeof p->fallback,
					 "memory.reclaim takes no swappiness= on this kernel and "
					 "swap is on: drop_caches never swaps");
				return 1;
			}
			continue;
		}
		if (rc == 0 && p->format == TRIM_FORMAT_UNKNOWN)
			p->format = TRIM_FORMAT_SWAPPINESS;
		if (vmc_meminfo_read(&cur) < 0) {
			p->errnum = errno;
			vmc_errorf(err, errsize, "cannot read /proc/meminfo after reclaim:");
			return -1;
		}
		uint64_t now = trim_reclaimable(&cur);
		uint64_t got = before > now ? before - now : 0;
		log_step(p, data, rc, e, got);
		if (rc < 0 && e == EAGAIN) {
			p->eagain = true;
			break;
		}
		if (rc < 0)
			return reclaim_failed(p, e, err, errsize);
		if (got == 0)
			break;
		remaining = trim_target_bytes(&cur, p->floor);
	}
	return 0;
}

static int drop_caches(struct trim_pass *p, const struct trim_io *io, char *err, size_t errsize)
{
	/* 1 = page cache only: dentries and inodes are small and costly to rebuild. */
	if (io->write(io->ctx, TRIM_DROP_CACHES_PATH, "1") < 0) {
		p->errnum = errno;
		vmc_errorf(err, errsize,
			   errno == EACCES || errno == EPERM ? "cannot write %s (run as root):"
							     : "cannot write %s:",
			   TRIM_DROP_CACHES_PATH);
		return -1;
	}
	p->steps++;
	return 0;
}

/* Compaction only helps when free-page reporting hands whole blocks to the host. */
static void compact(struct trim_pass *p, const struct trim_io *io)
{
	const char *note;
	if (!p->reporting) {
		note = "free-page reporting is not active: compaction would be work for nothing";
	} else if (io->write(io->ctx, TRIM_COMPACT_PATH, "1") == 0) {
		p->compacted = true;
		note = "free-page reporting is active: compacted so it returns whole blocks";
	} else {
		note = errno == ENOENT ? "no compact_memory: kernel without CONFIG_COMPACTION"
				       : strerror(errno);
	}
	snprintf(p->compact_note, sizeof p->compact_note, "%s", note);
}

int trim_pass_run(struct trim_pass *p, const struct trim_io *io, char *err, size_t errsize)
{
	struct saved_priority prio;
	lower_priority(&prio);
	int rc = 0;
	if (p->method == TRIM_METHOD_RECLAIM) {
		rc = reclaim_steps(p, io, err, errsize);
		if (rc == 1)
			p->method = TRIM_METHOD_DROP_CACHES;
	}
	if (rc >= 0 && p->method == TRIM_METHOD_DROP_CACHES)
		rc = drop_caches(p, io, err, errsize);
	if (rc >= 0)
		compact(p, io);
	restore_priority(&prio);
	return rc < 0 ? -1 : 0;
}
