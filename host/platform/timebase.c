/* SPDX-License-Identifier: Apache-2.0 */
#include "platform/timebase.h"

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

int timebase_from_frequency(uint64_t hz, struct timebase *tb)
{
	if (hz == 0)
		return -1;
	uint64_t g = gcd_u64(1000000000ull, hz);
	tb->numer = 1000000000ull / g;
	tb->denom = hz / g;
	tb->source = "hw.tbfrequency";
	return 0;
}

/* The hardware frequency, or Apple Silicon's 24 MHz when even that is unknown. */
static struct timebase from_hardware(uint64_t tb_hz)
{
	struct timebase tb = {.numer = 1, .denom = 1, .source = "hw.tbfrequency"};
	if (timebase_from_frequency(tb_hz, &tb) == 0)
		return tb;
	timebase_from_frequency(24000000, &tb);
	tb.source = "assumed 24 MHz";
	return tb;
}

struct timebase timebase_choose(uint32_t mach_numer, uint32_t mach_denom, bool translated,
				uint64_t tb_hz)
{
	/* Rosetta normalises mach_timebase_info to 1/1 while the kernel keeps native ticks (htop
	 * #765, psutil #2728): only the hardware frequency tells the truth there. A failed
	 * mach_timebase_info (0/0) natively is no reason to count ticks as nanoseconds either:
	 * 1/1 would read Apple Silicon's CPU times 41.7 times too small. */
	if (translated || mach_numer == 0 || mach_denom == 0)
		return from_hardware(tb_hz);
	uint64_t g = gcd_u64(mach_numer, mach_denom);
	return (struct timebase){
	    .numer = mach_numer / g, .denom = mach_denom / g, .source = "mach_timebase_info"};
}

uint64_t timebase_ticks_to_ns(const struct timebase *tb, uint64_t ticks)
{
	/* Split as htop does: (q * d + r) * n / d == q * n + r * n / d. */
	uint64_t q = ticks / tb->denom, r = ticks % tb->denom;
	return q * tb->numer + r * tb->numer / tb->denom;
}
