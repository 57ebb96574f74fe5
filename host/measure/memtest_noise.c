/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/memtest_noise.h"

#include "units.h"

#include <stdio.h>

/* Each candidate is the median when it lies between the other two (ties included). */
static bool between(double lo, double x, double hi)
{
	return (lo <= x && x <= hi) || (hi <= x && x <= lo);
}

int memtest_median_of_three(const double v[3])
{
	if (between(v[0], v[1], v[2]))
		return 1;
	return between(v[1], v[0], v[2]) ? 0 : 2;
}

bool memtest_footprint_settled(struct memtest_footprint_settle *s, double t, uint64_t footprint,
			       double max_s)
{
	if (!s->started) {
		*s = (struct memtest_footprint_settle){
		    .start = t, .best_at = t, .best = footprint, .started = true};
	} else if (footprint + 16 * VMC_MIB < s->best) {
		s->best = footprint;
		s->best_at = t;
	}
	return (t - s->best_at >= 6 && t - s->start >= 4) || t - s->start >= max_s;
}

double memtest_control_drift(double free_before, double free_after, double vm_before,
			     double vm_after)
{
	return (free_after - free_before) + (vm_after - vm_before);
}

double memtest_gain_drift_corrected(double gain, double drift, double stop_window_s)
{
	return gain - drift / MEMTEST_CONTROL_WINDOW_S * stop_window_s;
}

void memtest_judge_noise(double gain, double drift, double footprint, struct memtest_noise *out)
{
	double slack = footprint / 10 > 128.0 * VMC_MIB ? footprint / 10 : 128.0 * VMC_MIB;
	double tolerance = gain / 10 > 64.0 * VMC_MIB ? gain / 10 : 64.0 * VMC_MIB;
	out->noisy = false;
	out->reason[0] = '\0';
	if (gain > footprint + slack) {
		snprintf(out->reason, sizeof out->reason,
			 "the host gained %.0f MiB more than the VM held",
			 (gain - footprint) / (double)VMC_MIB);
		out->noisy = true;
	} else if (drift > tolerance || -drift > tolerance) {
		snprintf(out->reason, sizeof out->reason,
			 "host free memory moved by %+.0f MiB in the %.0f s before the stop",
			 drift / (double)VMC_MIB, MEMTEST_CONTROL_WINDOW_S);
		out->noisy = true;
	}
}
