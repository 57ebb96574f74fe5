/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host/measure/timeline.c: the sampler thread memtest runs. It must keep its interval on the
 * monotonic clock whatever the wall clock does, and stop at once when asked. The wall clock is
 * moved by interposing clock_gettime() in this test program (CLOCK_REALTIME only; the other
 * clocks are the kernel's), so nothing on the machine changes.
 */
#include "check.h"
#include "clock.h"
#include "measure/timeline.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long wall_clock_offset_s;

/* The program's own definition wins over libc's for every caller in this executable. */
int clock_gettime(clockid_t id, struct timespec *ts)
{
	long rc = syscall(SYS_clock_gettime, id, ts);
	if (rc == 0 && id == CLOCK_REALTIME)
		ts->tv_sec += wall_clock_offset_s;
	return (int)rc;
}

static double last_stop_s;

static size_t samples_during(double run_s, double interval_s)
{
	struct timeline tl;
	timeline_init(&tl, vmc_monotonic_s());
	struct tl_sampler s = {.tl = &tl, .pid = getpid(), .interval = interval_s};
	CHECK_INT(timeline_sampler_start(&s), 0);
	vmc_sleep_s(run_s);
	double t = vmc_monotonic_s();
	timeline_sampler_stop(&s);
	last_stop_s = vmc_monotonic_s() - t;
	size_t n = tl.n;
	CHECK(n > 0 && tl.samples[0].has_vm);
	timeline_free(&tl);
	return n;
}

TEST(samples_at_its_interval)
{
	/* Lower bounds only: a busy machine may sample less often, never more. */
	size_t n = samples_during(1.0, 0.1);
	CHECK(n >= 3 && n <= 11);
}

/* A wall clock an hour ahead of the time the sampler read (a clock set back, NTP): a sampler
 * waiting on CLOCK_REALTIME would sleep an hour after its first sample. */
TEST(a_wall_clock_jump_changes_nothing)
{
	wall_clock_offset_s = 3600;
	size_t n = samples_during(1.0, 0.1);
	CHECK(n >= 3 && n <= 11);
	wall_clock_offset_s = -3600;
	n = samples_during(1.0, 0.1);
	CHECK(n >= 3 && n <= 11);
	wall_clock_offset_s = 0;
}

TEST(stops_at_once_in_a_long_interval)
{
	size_t n = samples_during(0.2, 60);
	CHECK_INT(n, 1);
	/* Far above any scheduling noise, far below the interval it must not wait out. */
	CHECK(last_stop_s < 5);
}

int main(void)
{
	RUN(samples_at_its_interval);
	RUN(a_wall_clock_jump_changes_nothing);
	RUN(stops_at_once_in_a_long_interval);
	return check_done();
}
