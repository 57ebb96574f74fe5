/* SPDX-License-Identifier: Apache-2.0 */
/* min / median / max over samples: the median is robust to one wake-up burst (hyperfine). */
#ifndef VMC_STATS_H
#define VMC_STATS_H

#include <stddef.h>

struct vmc_summary {
	size_t n;
	double min, median, max, mean;
};

/* Summarises n samples (not modified). n == 0 gives all zeros. */
struct vmc_summary vmc_summarize(const double *samples, size_t n);

#endif
