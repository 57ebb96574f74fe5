/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The clocks vmcost measures with, as seconds in a double (nanosecond resolution for about 100
 * days of uptime; every interval we time is far shorter than that).
 */
#ifndef VMC_CLOCK_H
#define VMC_CLOCK_H

#include <time.h>

/* CLOCK_MONOTONIC: intervals and deadlines inside one process; never jumps with the wall clock. */
double vmc_monotonic_s(void);
/*
 * CLOCK_BOOTTIME where the OS has it (Linux), else CLOCK_MONOTONIC: one clock that every process
 * of this boot reads alike, so a time one process stored can be compared by another.
 */
double vmc_boottime_s(void);
/* seconds as a timespec for nanosleep() or sigtimedwait(); negative and NaN become zero. */
struct timespec vmc_timespec_s(double seconds);
/* Sleeps the whole duration, resuming after signal handlers that interrupt it. */
void vmc_sleep_s(double seconds);

#endif
