/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host/measure/vm_sample.c: rates between two samples. A counter that went backwards (the pid was
 * reused, a counter reset) or no elapsed time gives 0, never an unsigned wrap of ~1.8e19/s; idle,
 * wakeups, list and load all compute through these.
 */
#include "check.h"
#include "measure/vm_sample.h"

TEST(rates_between_two_readings)
{
	CHECK_DBL(measure_rate(100, 400, 2), 150, 1e-9);
	CHECK_DBL(measure_rate(400, 100, 2), 0, 0);
	CHECK_DBL(measure_rate(100, 400, 0), 0, 0);
	CHECK_DBL(measure_rate(100, 400, -1), 0, 0);
	CHECK_DBL(measure_rate(0, UINT64_MAX, 1), (double)UINT64_MAX, 1);
}

TEST(cpu_percent_of_one_core)
{
	struct platform_proc_sample a = {.cpu_ns = 1000000000, .taken_at = 10};
	struct platform_proc_sample b = {.cpu_ns = 1500000000, .taken_at = 12};
	CHECK_DBL(measure_cpu_percent(&a, &b), 25, 1e-9);
	/* The process was replaced between the two samples: its CPU time started again. */
	b.cpu_ns = 1000;
	CHECK_DBL(measure_cpu_percent(&a, &b), 0, 0);
	b = a;
	CHECK_DBL(measure_cpu_percent(&a, &b), 0, 0);
}

int main(void)
{
	RUN(rates_between_two_readings);
	RUN(cpu_percent_of_one_core);
	return check_done();
}
