/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Mach absolute-time ticks to nanoseconds (docs/macos.md#cpu-time-is-in-mach-ticks). Portable
 * arithmetic, so the Linux build tests what the macOS build relies on: 125/3 on Apple Silicon
 * (24 MHz), 1/1 on Intel, and the Rosetta trap where mach_timebase_info says 1/1 but the kernel
 * counts 24 MHz.
 */
#ifndef VMC_TIMEBASE_H
#define VMC_TIMEBASE_H

#include <stdbool.h>
#include <stdint.h>

struct timebase {
	uint64_t numer, denom; /* ns = ticks * numer / denom */
	const char *source;    /* "mach_timebase_info", "hw.tbfrequency", "assumed 24 MHz" */
};

/* Ratio 1e9 / hz reduced by the gcd (24 MHz -> 125/3). Returns -1 for hz == 0. */
int timebase_from_frequency(uint64_t hz, struct timebase *tb);

/*
 * The ratio to use: mach_timebase_info's when running native; under Rosetta (translated), or
 * when mach_timebase_info failed (0/0), the hardware frequency from hw.tbfrequency, or 24 MHz
 * when that sysctl failed too (tb_hz == 0). Never 1/1 by default.
 */
struct timebase timebase_choose(uint32_t mach_numer, uint32_t mach_denom, bool translated,
				uint64_t tb_hz);

/* ticks * numer / denom without overflowing for any realistic uptime. */
uint64_t timebase_ticks_to_ns(const struct timebase *tb, uint64_t ticks);

#endif
