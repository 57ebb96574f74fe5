/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /proc/stat: the aggregate "cpu" line (idle judgement), ctxt, and the intr/softirq totals
 * (wakeup profiling). Parsed from a buffer; the reader takes its path through the fs root.
 */
#ifndef VMC_PROCSTAT_H
#define VMC_PROCSTAT_H

#include <stdbool.h>
#include <stdint.h>

/* USER_HZ ticks of the "cpu" line, in the kernel's column order. */
struct vmc_cpu_times {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};

struct vmc_procstat {
	struct vmc_cpu_times cpu;
	uint64_t ctxt;		/* context switches since boot, all CPUs */
	uint64_t intr_total;	/* first number of "intr": includes IPIs and LOC (no column) */
	uint64_t softirq_total; /* first number of "softirq" */
	uint64_t procs_running; /* runnable tasks now (includes the reader) */
	uint64_t procs_blocked; /* tasks in uninterruptible sleep now */
	bool has_intr, has_softirq;
};

/* Requires the "cpu " line (at least user nice system idle) and "ctxt"; -1 otherwise. */
int vmc_procstat_parse(const char *buf, struct vmc_procstat *ps);
/* Reads <root>/proc/stat. -1 with errno (EINVAL when malformed). */
int vmc_procstat_read(struct vmc_procstat *ps);

/* Busy = user+nice+system+irq+softirq+steal (WSL's definition); idle = idle+iowait. */
uint64_t vmc_cpu_busy(const struct vmc_cpu_times *t);
uint64_t vmc_cpu_total(const struct vmc_cpu_times *t);
/*
 * Busy share in percent between two samples (a earlier). -1 when no tick passed or the counters
 * went backwards (CPU hot-unplug can do that): the caller cannot judge idleness then.
 */
double vmc_cpu_busy_percent(const struct vmc_cpu_times *a, const struct vmc_cpu_times *b);

#endif
