/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memtest's judgement of its own numbers, as plain arithmetic on readings so it is tested
 * without a VM: when memory has settled, which of three readings to keep, how much the host
 * moved on its own before the stop, and whether the stop's gain can be trusted.
 */
#ifndef VMC_MEMTEST_NOISE_H
#define VMC_MEMTEST_NOISE_H

#include <stdbool.h>
#include <stdint.h>

/* Quiet time before the stop: how much host memory moves anyway (other processes). */
#define MEMTEST_CONTROL_WINDOW_S 5.0

/* The index (0..2) of the median of three readings: one page-cache hiccup moves nothing. */
int memtest_median_of_three(const double v[3]);

/*
 * Free-page reporting hands memory back in 256 MiB steps every 2 s
 * (docs/lab.md#free-page-reporting-under-tcg): the footprint has settled once it has not fallen
 * by more than 16 MiB for 6 s (and 4 s have passed), or max_s is over. Feed one sample per call.
 */
struct memtest_footprint_settle {
	double start, best_at;
	uint64_t best;
	bool started;
};
bool memtest_footprint_settled(struct memtest_footprint_settle *s, double t, uint64_t footprint,
			       double max_s);

/*
 * How much host free memory moved on its own in the control window: the change in free memory
 * minus what the VM itself returned meanwhile (free-page reporting is not someone else's).
 */
double memtest_control_drift(double free_before, double free_after, double vm_before,
			     double vm_after);

/* The stop's gain with the control window's trend taken out over the stop's own window. */
double memtest_gain_drift_corrected(double gain, double drift, double stop_window_s);

/*
 * The stop can only free what the VM held: a gain well beyond the footprint (by more than a
 * tenth of it, at least 128 MiB), or a host whose free memory drifted by more than a tenth of the
 * gain (at least 64 MiB) in the control window, means someone else changed host memory.
 */
struct memtest_noise {
	bool noisy;
	char reason[200]; /* "" when not noisy */
};
void memtest_judge_noise(double gain, double drift, double footprint, struct memtest_noise *out);

#endif
