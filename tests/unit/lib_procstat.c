/* SPDX-License-Identifier: Apache-2.0 */
/* /proc/stat, /proc/loadavg and /proc/pressure readers on buffers and a fake root. */
#include "check.h"
#include "fakeroot.h"
#include "loadavg.h"
#include "procstat.h"
#include "psi.h"

/* Shape of a 2-CPU 6.1 guest (intr line shortened). */
static const char stat_61[] = "cpu  1000 20 300 50000 80 5 7 2 0 0\n"
			      "cpu0 500 10 150 25000 40 3 4 1 0 0\n"
			      "cpu1 500 10 150 25000 40 2 3 1 0 0\n"
			      "intr 123456 35 9 0 0 0 0 0 0 0 1 0\n"
			      "ctxt 987654\n"
			      "btime 1700000000\n"
			      "processes 4321\n"
			      "procs_running 2\n"
			      "procs_blocked 1\n"
			      "softirq 55555 1 2 3 4 5 6 7 8 9 10\n";

TEST(procstat_parses_cpu_line_not_cpu0)
{
	struct vmc_procstat ps;
	CHECK_INT(vmc_procstat_parse(stat_61, &ps), 0);
	CHECK_U64(ps.cpu.user, 1000);
	CHECK_U64(ps.cpu.nice, 20);
	CHECK_U64(ps.cpu.system, 300);
	CHECK_U64(ps.cpu.idle, 50000);
	CHECK_U64(ps.cpu.iowait, 80);
	CHECK_U64(ps.cpu.irq, 5);
	CHECK_U64(ps.cpu.softirq, 7);
	CHECK_U64(ps.cpu.steal, 2);
	CHECK_U64(ps.ctxt, 987654);
	CHECK(ps.has_intr);
	CHECK_U64(ps.intr_total, 123456);
	CHECK(ps.has_softirq);
	CHECK_U64(ps.softirq_total, 55555);
	CHECK_U64(ps.procs_running, 2);
	CHECK_U64(ps.procs_blocked, 1);
	CHECK_U64(vmc_cpu_busy(&ps.cpu), 1000 + 20 + 300 + 5 + 7 + 2);
	CHECK_U64(vmc_cpu_total(&ps.cpu), 1334 + 50000 + 80);
}

TEST(procstat_old_kernel_and_garbage)
{
	struct vmc_procstat ps;
	/* Four columns only (pre-2.6), no intr/softirq lines: still usable. */
	CHECK_INT(vmc_procstat_parse("cpu  1 2 3 4\nctxt 5\n", &ps), 0);
	CHECK_U64(ps.cpu.idle, 4);
	CHECK(!ps.has_intr);
	CHECK(!ps.has_softirq);
	CHECK_INT(vmc_procstat_parse("cpu  1 2 3\nctxt 5\n", &ps), -1);
	CHECK_INT(vmc_procstat_parse("cpu0 1 2 3 4\nctxt 5\n", &ps), -1);
	CHECK_INT(vmc_procstat_parse("cpu  1 2 3 4\n", &ps), -1);
	CHECK_INT(vmc_procstat_parse("", &ps), -1);
}

TEST(busy_percent_between_samples)
{
	struct vmc_cpu_times a = {.user = 100, .idle = 1000};
	struct vmc_cpu_times b = a;
	b.user += 1;   /* 1 busy tick */
	b.steal += 1;  /* steal counts as busy (WSL) */
	b.idle += 396; /* 396 idle */
	b.iowait += 2; /* iowait counts as idle */
	CHECK_DBL(vmc_cpu_busy_percent(&a, &b), 0.5, 1e-9);
	CHECK_DBL(vmc_cpu_busy_percent(&a, &a), -1, 0);
	/* Counters going backwards (CPU unplugged) cannot be judged. */
	CHECK_DBL(vmc_cpu_busy_percent(&b, &a), -1, 0);
}

TEST(procstat_from_fake_root)
{
	struct vmc_procstat ps;
	fakeroot_write("/proc/stat", stat_61);
	CHECK_INT(vmc_procstat_read(&ps), 0);
	CHECK_U64(ps.ctxt, 987654);
	fakeroot_write("/proc/stat", "nonsense\n");
	errno = 0;
	CHECK_INT(vmc_procstat_read(&ps), -1);
	CHECK_INT(errno, EINVAL);
	fakeroot_remove("/proc/stat");
	CHECK_INT(vmc_procstat_read(&ps), -1);
	CHECK_INT(errno, ENOENT);
}

TEST(loadavg_parses)
{
	struct vmc_loadavg la;
	CHECK_INT(vmc_loadavg_parse("0.15 1.02 12.50 3/456 7890\n", &la), 0);
	CHECK_DBL(la.load1, 0.15, 1e-9);
	CHECK_DBL(la.load5, 1.02, 1e-9);
	CHECK_DBL(la.load15, 12.5, 1e-9);
	CHECK_U64(la.running, 3);
	CHECK_U64(la.total, 456);
	CHECK_INT(vmc_loadavg_parse("0.15 1.02\n", &la), -1);
	CHECK_INT(vmc_loadavg_parse("-1.0 1.02 1.0 1/2 3\n", &la), -1);
	CHECK_INT(vmc_loadavg_parse("0.1 0.2 0.3 1 3\n", &la), -1);
	fakeroot_write("/proc/loadavg", "0.20 0.10 0.05 1/99 123\n");
	CHECK_INT(vmc_loadavg_read(&la), 0);
	CHECK_DBL(la.load1, 0.2, 1e-9);
	fakeroot_remove("/proc/loadavg");
	CHECK_INT(vmc_loadavg_read(&la), -1);
}

TEST(psi_parses_some_and_full)
{
	struct vmc_psi psi;
	CHECK_INT(vmc_psi_parse("some avg10=1.50 avg60=0.25 avg300=0.00 total=12345\n"
				"full avg10=0.10 avg60=0.00 avg300=0.00 total=99\n",
				&psi),
		  0);
	CHECK_DBL(psi.some.avg10, 1.5, 1e-9);
	CHECK_DBL(psi.some.avg60, 0.25, 1e-9);
	CHECK_U64(psi.some.total_us, 12345);
	CHECK(psi.has_full);
	CHECK_DBL(psi.full.avg10, 0.1, 1e-9);
	CHECK_U64(psi.full.total_us, 99);
	/* cpu before 5.13 has no full line */
	CHECK_INT(vmc_psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", &psi), 0);
	CHECK(!psi.has_full);
	CHECK_INT(vmc_psi_parse("some avg10=0.00 avg60=0.00 total=0\n", &psi), -1);
	CHECK_INT(vmc_psi_parse("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", &psi), -1);
}

TEST(psi_enabled_only_with_proc_pressure)
{
	struct vmc_psi psi;
	fakeroot_remove("/proc/pressure");
	CHECK(!vmc_psi_enabled());
	CHECK_INT(vmc_psi_read("memory", &psi), -1);
	CHECK_INT(errno, ENOENT);
	fakeroot_write("/proc/pressure/cpu", "some avg10=0.00 avg60=3.00 avg300=0.00 total=7\n");
	fakeroot_write("/proc/pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
						"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
	CHECK(vmc_psi_enabled());
	CHECK_INT(vmc_psi_read("cpu", &psi), 0);
	CHECK_DBL(psi.some.avg60, 3.0, 1e-9);
	CHECK_INT(vmc_psi_read("memory", &psi), 0);
}

int main(void)
{
	fakeroot_init();
	RUN(procstat_parses_cpu_line_not_cpu0);
	RUN(procstat_old_kernel_and_garbage);
	RUN(busy_percent_between_samples);
	RUN(procstat_from_fake_root);
	RUN(loadavg_parses);
	RUN(psi_parses_some_and_full);
	RUN(psi_enabled_only_with_proc_pressure);
	fakeroot_cleanup();
	return check_done();
}
