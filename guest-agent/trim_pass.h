/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One trim pass: the plan (how much cache is above the floor, which method), then the kernel
 * writes: memory.reclaim in bounded steps or drop_caches, then compact_memory when free-page
 * reporting is active, all at SCHED_IDLE and idle I/O priority. Every kernel write and every
 * clock read goes through struct trim_io, so tests see what was written and inject EAGAIN or
 * EINVAL. Whether a pass runs at all is trim.c's decision (trim_policy.h).
 */
#ifndef VMC_AGENT_TRIM_PASS_H
#define VMC_AGENT_TRIM_PASS_H

#include "config.h"
#include "meminfo.h"
#include "trim_policy.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Seam for every kernel write and for time, so tests control both. */
struct trim_io {
	/* Write data to an absolute path below the fs root: 0, or -1 with errno. */
	int (*write)(void *ctx, const char *abs_path, const char *data);
	/* Seconds on a clock shared by all processes (CLOCK_BOOTTIME). */
	double (*now)(void *ctx);
	void (*sleep)(void *ctx, double seconds);
	void *ctx;
};

/* vmc_fs_write, CLOCK_BOOTTIME and nanosleep. */
extern const struct trim_io trim_io_default;

struct trim_pass {
	/* The plan (trim_pass_plan). */
	struct vmc_meminfo before;
	uint64_t floor, step, target;
	bool swap_on;
	bool reporting;		 /* free-page reporting is active: compact after the trim */
	bool auto_method;	 /* a memory.reclaim that fails at once falls back to drop_caches */
	enum trim_method method; /* TRIM_METHOD_RECLAIM or TRIM_METHOD_DROP_CACHES */
	char fallback[192];	 /* why drop_caches although memory.reclaim was wanted, or "" */
	enum trim_reclaim_format format; /* known before the pass, learned by its first write */
	/* What the run did (trim_pass_run). */
	unsigned steps;
	bool eagain; /* memory.reclaim said it could not get all: the cold cache is gone */
	bool compacted;
	char compact_note[128];
	json_t *step_log; /* [{"wrote", "result", "reclaimed_bytes"}], memory.reclaim only */
	int errnum;	  /* why the pass failed */
};

/* CPU and PSI counters now (t from the caller's clock); parts that cannot be read say so. */
void trim_sample_idle(struct trim_idle_sample *s, double t);
/*
 * Reads /proc/meminfo and the balloon, and fills the plan with format the reclaim format known
 * so far. Returns 0, or -1 with err and errno.
 */
int trim_pass_plan(struct trim_pass *p, const struct agent_config *cfg,
		   enum trim_reclaim_format format, char *err, size_t errsize);
/* Runs the planned pass. Returns 0, or -1 with err and p->errnum; p->step_log is the caller's. */
int trim_pass_run(struct trim_pass *p, const struct trim_io *io, char *err, size_t errsize);

#endif
