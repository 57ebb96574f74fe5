/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cost of one sample of a VM process, for results/host-sample-cost-*.md. Run natively it
 * prints wall-clock microseconds per call (kernel time included); run under callgrind with
 * --toggle-collect=platform_proc_sample (or =idle_reading) it gives the user-space
 * instructions per call. tests/perf/host-sample-cost does both.
 *
 *   host_sample_cost PID [CALLS [sample|idle]]   (both loops when no mode is given)
 */
#include "clock.h"
#include "platform/platform.h"

#include <stdbool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What vmcost idle reads per interval: the sample plus every thread's context switches. */
__attribute__((noinline)) static int idle_reading(pid_t pid, struct platform_proc_sample *s)
{
	uint64_t vol, invol;
	if (platform_proc_sample(pid, s) < 0)
		return -1;
	return platform_proc_switches(pid, &vol, &invol);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: host_sample_cost PID [CALLS]\n");
		return 2;
	}
	pid_t pid = (pid_t)atol(argv[1]);
	long calls = argc > 2 ? atol(argv[2]) : 1000;
	const char *mode = argc > 3 ? argv[3] : "both";
	bool sample = strcmp(mode, "idle") != 0, idle = strcmp(mode, "sample") != 0;
	struct platform_proc_sample s;
	if (calls <= 0 || !platform_pid_alive(pid)) {
		fprintf(stderr, "no process %ld\n", (long)pid);
		return 1;
	}
	double t0 = vmc_monotonic_s();
	for (long i = 0; sample && i < calls; i++)
		if (platform_proc_sample(pid, &s) < 0)
			return 1;
	double t1 = vmc_monotonic_s();
	for (long i = 0; idle && i < calls; i++)
		if (idle_reading(pid, &s) < 0)
			return 1;
	double t2 = vmc_monotonic_s();
	printf("calls %ld\nplatform_proc_sample_us %.2f\nidle_reading_us %.2f\nfootprint %llu\n",
	       calls, (t1 - t0) / (double)calls * 1e6, (t2 - t1) / (double)calls * 1e6,
	       (unsigned long long)s.footprint);
	return 0;
}
