/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Who wakes the guest, like powertop but without debugfs or perf: two samples of
 * /proc/interrupts (summed over CPUs; the tick is LOC on x86, arch_timer on arm64),
 * /proc/softirqs, /proc/stat (intr, softirq, ctxt) and every thread's voluntary and involuntary
 * context switches (/proc/PID/task/TID/status), N seconds apart. The measuring thread just
 * sleeps in between, so it never blocks anything else.
 */
#ifndef VMC_AGENT_WAKEUPS_H
#define VMC_AGENT_WAKEUPS_H

#include "interrupts.h"
#include "procstat.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#define WAKEUPS_TOP 10

struct wakeups_thread {
	pid_t pid, tid;
	char comm[16];	  /* thread name */
	char process[16]; /* the process's (thread group leader's) name */
	uint64_t switches_voluntary, switches_involuntary;
};

struct wakeups_sample {
	double t; /* CLOCK_MONOTONIC seconds */
	bool has_irq, has_softirq, has_stat;
	struct vmc_irq_table irq, softirq;
	struct vmc_procstat stat;
	struct wakeups_thread *threads; /* sorted by tid */
	size_t nthreads;
};

int wakeups_sample_take(struct wakeups_sample *s);
void wakeups_sample_free(struct wakeups_sample *s);
/* The rates between two samples; self is the agent's pid (its own share). */
json_t *wakeups_between(const struct wakeups_sample *a, const struct wakeups_sample *b, pid_t self);
/* Measures for seconds; tick (may be NULL) is called about once a second with the time left. */
json_t *wakeups_measure(double seconds, void (*tick)(double left, void *ctx), void *ctx, char *err,
			size_t errsize);
void wakeups_print(FILE *f, const json_t *doc);

#endif
