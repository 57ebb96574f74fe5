/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cache-trim policy and the agent's shared state (struct agent_state of agent.h).
 *
 * Idle is judged over the whole window since the previous decision: /proc/stat busy share AND
 * load1 AND (when PSI is on) the stall share of cpu, io and memory from PSI's cumulative totals.
 * Only then is file cache above the floor reclaimed through the root cgroup's memory.reclaim in
 * bounded steps ("<bytes> swappiness=0" where the kernel takes it, bytes only on 6.1), falling
 * back to drop_caches=1; compact_memory follows only when free-page reporting is active. Trims
 * never run more often than the interval unless forced, and run at SCHED_IDLE / idle I/O
 * priority. Every kernel write goes through struct agent_io, so tests see what was written and
 * inject EAGAIN or EINVAL.
 */
#ifndef VMC_AGENT_TRIM_H
#define VMC_AGENT_TRIM_H

#include "agent.h"
#include "loadavg.h"
#include "meminfo.h"
#include "procstat.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TRIM_RECLAIM_PATH     "/sys/fs/cgroup/memory.reclaim"
#define TRIM_DROP_CACHES_PATH "/proc/sys/vm/drop_caches"
#define TRIM_COMPACT_PATH     "/proc/sys/vm/compact_memory"
/* Trim history shared by the daemon and CLI runs; /run is tmpfs, so this is no disk write. */
#define TRIM_STATE_DIR	 "/run/vmcost-agent"
#define TRIM_STATE_FILE	 "/run/vmcost-agent/trim.json"
#define TRIM_HISTORY_MAX 8
/* A fresh process (the CLI) watches the CPU this long before it may call the guest idle. */
#define TRIM_MIN_WINDOW_S 5.0
/* Smallest memory.reclaim request; closer than twice this to the floor is close enough. */
#define TRIM_MIN_ASK (2ull << 20)
/* Upper bound on memory.reclaim writes in one pass, whatever floor and step say. */
#define TRIM_MAX_STEPS 64
/* A decision over at least this share of the interval counts as a full interval. */
#define TRIM_FULL_WINDOW_SHARE 0.95

/* Seam for every kernel write and for time, so tests control both. */
struct agent_io {
	/* Write data to an absolute path below the fs root: 0, or -1 with errno. */
	int (*write)(void *ctx, const char *abs_path, const char *data);
	/* Seconds on a clock shared by all processes (CLOCK_BOOTTIME). */
	double (*now)(void *ctx);
	void (*sleep)(void *ctx, double seconds);
	void *ctx;
};

/* Replaces the default io (vmc_fs_write, CLOCK_BOOTTIME, nanosleep); io is copied. */
void agent_state_set_io(struct agent_state *st, const struct agent_io *io);
/* Takes a new idle baseline now (tests: after rewriting the fake /proc/stat). */
void agent_state_rebase(struct agent_state *st);

/* What the CPU, load and PSI did between two samples. */
struct idle_inputs {
	double window_s;
	double cpu_busy_percent; /* -1: counters unusable */
	double load1;
	bool psi_enabled;
	double psi_cpu, psi_io, psi_memory; /* "some" stall share over the window, percent */
};

struct idle_verdict {
	bool idle;
	bool cpu_busy, load_busy, psi_busy;
	char reason[256]; /* which signals said busy, with their values and limits */
};

void trim_judge_idle(const struct agent_config *cfg, const struct idle_inputs *in,
		     struct idle_verdict *v);
/* The step for one memory.reclaim write: cfg->step_bytes, or MemTotal/32 in [256 MiB, 1 GiB]. */
uint64_t trim_step_bytes(const struct agent_config *cfg, uint64_t mem_total);
/*
 * The next memory.reclaim request when remaining bytes are above the floor: a full step while
 * far away, never more than half of what is left (the kernel reclaims more than asked), never
 * less than TRIM_MIN_ASK.
 */
uint64_t trim_next_ask(uint64_t remaining, uint64_t step);
/* Reclaimable without touching anon memory: Active(file) + Inactive(file) + SReclaimable. */
uint64_t trim_reclaimable(const struct vmc_meminfo *mi);
/* How much to reclaim so that floor bytes stay: reclaimable - floor, or 0. */
uint64_t trim_target_bytes(const struct vmc_meminfo *mi, uint64_t floor);

/* {"last_trim": ..., "last_decision": ..., "history": [...], "reclaim_format": ...}. */
json_t *trim_history_json(struct agent_state *st);
void trim_print(FILE *f, const json_t *doc);

#endif
