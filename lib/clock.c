/* SPDX-License-Identifier: Apache-2.0 */
#include "clock.h"

#include <errno.h>
#include <limits.h>

static double timespec_s(const struct timespec *ts)
{
	return (double)ts->tv_sec + (double)ts->tv_nsec / 1e9;
}

double vmc_monotonic_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return timespec_s(&ts);
}

double vmc_boottime_s(void)
{
	struct timespec ts;
#ifdef CLOCK_BOOTTIME
	/* Older kernels and some sandboxes refuse it: the monotonic clock is the next best. */
	if (clock_gettime(CLOCK_BOOTTIME, &ts) == 0)
		return timespec_s(&ts);
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return timespec_s(&ts);
}

struct timespec vmc_timespec_s(double seconds)
{
	struct timespec ts = {0, 0};
	if (!(seconds > 0))
		return ts;
	/* 68 years: beyond that a 32-bit time_t overflows, and nobody waits that long. */
	if (seconds > (double)INT_MAX)
		seconds = (double)INT_MAX;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec > 999999999L)
		ts.tv_nsec = 999999999L;
	return ts;
}

void vmc_sleep_s(double seconds)
{
	struct timespec ts = vmc_timespec_s(seconds);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
