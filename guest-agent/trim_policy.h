/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cache-trim policy, as pure functions of their inputs (tests/unit/agent_trim.c).
 *
 * Idle is judged over the whole window since the previous decision: /proc/stat busy share AND
 * load1 AND (when PSI is on) the stall share of cpu, io and memory from PSI's cumulative totals.
 * Only then is file cache above the floor reclaimed through the root cgroup's memory.reclaim in
 * bounded steps ("<bytes> swappiness=0" where the kernel takes it, bytes only on 6.1), falling
 * back to drop_caches=1; compact_memory follows only when free-page reporting is active. Trims
 * never run more often than the interval unless forced. The pass itself is trim_pass.h.
 */
#ifndef VMC_AGENT_TRIM_POLICY_H
#define VMC_AGENT_TRIM_POLICY_H

#include "config.h"
#include "meminfo.h"
#include "procstat.h"

#include <stdbool.h>
#include <stdint.h>

#define TRIM_RECLAIM_PATH     "/sys/fs/cgroup/memory.reclaim"
#define TRIM_DROP_CACHES_PATH "/proc/sys/vm/drop_caches"
#define TRIM_COMPACT_PATH     "/proc/sys/vm/compact_memory"
/* A fresh process (the CLI) watches the CPU this long before it may call the guest idle. */
#define TRIM_MIN_WINDOW_S 5.0
/* Smallest memory.reclaim request; closer than twice this to the floor is close enough. */
#define TRIM_MIN_ASK (2ull << 20)
/* Upper bound on memory.reclaim writes in one pass, whatever floor and step say. */
#define TRIM_MAX_STEPS 64
/* A decision over at least this share of the interval counts as a full interval. */
#define TRIM_FULL_WINDOW_SHARE 0.95

/* What memory.reclaim accepts on this kernel, learned by the first write. */
enum trim_reclaim_format {
	TRIM_FORMAT_UNKNOWN,	/* not tried yet: try "<bytes> swappiness=0" first */
	TRIM_FORMAT_SWAPPINESS, /* "<bytes> swappiness=0" accepted */
	TRIM_FORMAT_BYTES,	/* EINVAL for swappiness=: bytes only (6.1) */
};

/* The CPU and PSI counters at one moment; two of them make a window. */
struct trim_idle_sample {
	double t;
	bool cpu_ok;
	struct vmc_cpu_times cpu;
	bool psi_ok;
	uint64_t psi_total_us[3]; /* cpu, io, memory "some" */
};

/* What the CPU, load and PSI did between two samples. */
struct trim_idle_inputs {
	double window_s;
	double cpu_busy_percent; /* -1: counters unusable */
	double load1;
	bool psi_enabled;
	double psi_cpu, psi_io, psi_memory; /* "some" stall share over the window, percent */
};

struct trim_idle_verdict {
	bool idle;
	bool cpu_busy, load_busy, psi_busy;
	char reason[256]; /* which signals said busy, with their values and limits */
};

/* What the pass will do, decided before it writes anything. */
struct trim_method_choice {
	enum trim_method method; /* TRIM_METHOD_RECLAIM or TRIM_METHOD_DROP_CACHES */
	char fallback[192];	 /* why drop_caches although memory.reclaim was wanted, or "" */
};

/* The window between two samples; load1 < 0 when unknown. */
void trim_idle_inputs(const struct trim_idle_sample *a, const struct trim_idle_sample *b,
		      double load1, struct trim_idle_inputs *in);
void trim_judge_idle(const struct agent_config *cfg, const struct trim_idle_inputs *in,
		     struct trim_idle_verdict *v);
/*
 * Which write frees the cache: the configured method, or for auto memory.reclaim unless the
 * kernel has none (reclaim_exists) or takes no swappiness= while swap is on.
 */
void trim_choose_method(enum trim_method configured, bool reclaim_exists,
			enum trim_reclaim_format known, bool swap_on,
			struct trim_method_choice *choice);
/* "memory.reclaim" or "drop_caches", as the documents and the history name them. */
const char *trim_method_name(enum trim_method m);
const char *trim_format_name(enum trim_reclaim_format f);
/* The step for one memory.reclaim write: cfg->step_bytes, or MemTotal/32 in [256 MiB, 1 GiB]. */
uint64_t trim_step_bytes(const struct agent_config *cfg, uint64_t mem_total);
/*
 * The next memory.reclaim request when remaining bytes are above the floor: a full step while
 * far away, never more than half of what is left (the kernel reclaims more than asked), never
 * less than TRIM_MIN_ASK.
 */
uint64_t trim_next_ask(uint64_t remaining, uint64_t step);
/* How many memory.reclaim writes a pass would plan for target bytes (a dry run says so). */
unsigned trim_planned_steps(uint64_t target, uint64_t step);
/* Reclaimable without touching anon memory: Active(file) + Inactive(file) + SReclaimable. */
uint64_t trim_reclaimable(const struct vmc_meminfo *mi);
/* How much to reclaim so that floor bytes stay: reclaimable - floor, or 0. */
uint64_t trim_target_bytes(const struct vmc_meminfo *mi, uint64_t floor);

#endif
