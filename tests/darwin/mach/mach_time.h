/* SPDX-License-Identifier: Apache-2.0 */
/* TEST-ONLY stand-in for macOS's <mach/mach_time.h> (osfmk/mach/mach_time.h;
 * docs/macos.md#cpu-time-is-in-mach-ticks). */
#ifndef VMC_TEST_DARWIN_MACH_MACH_TIME_H
#define VMC_TEST_DARWIN_MACH_MACH_TIME_H

#include <mach/mach.h>
#include <stdint.h>

struct mach_timebase_info {
	uint32_t numer;
	uint32_t denom;
};
typedef struct mach_timebase_info *mach_timebase_info_t;
typedef struct mach_timebase_info mach_timebase_info_data_t;

kern_return_t mach_timebase_info(mach_timebase_info_t info);
uint64_t mach_absolute_time(void);

#endif
