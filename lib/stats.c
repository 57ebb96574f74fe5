/* SPDX-License-Identifier: Apache-2.0 */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct vmc_summary vmc_summarize(const double *samples, size_t n)
{
	struct vmc_summary s = {0};
	if (n == 0)
		return s;
	double *sorted = malloc(n * sizeof *sorted);
	if (!sorted)
		return s;
	memcpy(sorted, samples, n * sizeof *sorted);
	qsort(sorted, n, sizeof *sorted, cmp_double);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += sorted[i];
	s.n = n;
	s.min = sorted[0];
	s.max = sorted[n - 1];
	s.mean = sum / (double)n;
	s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
	free(sorted);
	return s;
}
