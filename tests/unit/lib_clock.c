/* SPDX-License-Identifier: Apache-2.0 */
/* lib/clock.c and lib/color.c: the shared clocks, timespec conversion, status colours. */
#include "check.h"
#include "clock.h"
#include "color.h"

#include <limits.h>
#include <math.h>

TEST(timespec_conversion)
{
	struct timespec ts = vmc_timespec_s(1.25);
	CHECK_INT(ts.tv_sec, 1);
	CHECK_INT(ts.tv_nsec, 250000000);
	ts = vmc_timespec_s(0.000000001);
	CHECK_INT(ts.tv_sec, 0);
	CHECK(ts.tv_nsec >= 0 && ts.tv_nsec <= 1);
	ts = vmc_timespec_s(-3);
	CHECK_INT(ts.tv_sec, 0);
	CHECK_INT(ts.tv_nsec, 0);
	ts = vmc_timespec_s(NAN);
	CHECK_INT(ts.tv_sec, 0);
	CHECK_INT(ts.tv_nsec, 0);
	ts = vmc_timespec_s(1e300);
	CHECK_INT(ts.tv_sec, INT_MAX);
	CHECK(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
}

/* Lower bounds only: the machine is shared, an upper bound would be a flaky timing test. */
TEST(clocks_move_forward_by_at_least_the_sleep)
{
	double m0 = vmc_monotonic_s(), b0 = vmc_boottime_s();
	vmc_sleep_s(0.05);
	double m1 = vmc_monotonic_s(), b1 = vmc_boottime_s();
	CHECK(m1 - m0 >= 0.05);
	CHECK(b1 - b0 >= 0.05);
	/* Boot time also counts suspend, so it is never behind the monotonic clock. */
	CHECK(b1 + 1e-3 >= m1);
	vmc_sleep_s(-1);
	vmc_sleep_s(0);
	CHECK(vmc_monotonic_s() >= m1);
}

TEST(status_colours)
{
	CHECK_STR(vmc_status_color("ok", true), "\033[32m");
	CHECK_STR(vmc_status_color("warn", true), "\033[33m");
	CHECK_STR(vmc_status_color("fail", true), "\033[31m");
	CHECK_STR(vmc_status_color("n/a", true), "\033[2m");
	CHECK_STR(vmc_status_color(NULL, true), "\033[2m");
	CHECK_STR(vmc_status_color("fail", false), "");
	CHECK_STR(vmc_status_color(NULL, false), "");
	CHECK_STR(vmc_color_reset(true), "\033[0m");
	CHECK_STR(vmc_color_reset(false), "");
}

int main(void)
{
	RUN(timespec_conversion);
	RUN(clocks_move_forward_by_at_least_the_sleep);
	RUN(status_colours);
	return check_done();
}
