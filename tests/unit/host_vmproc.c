/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host/clients/vmproc.c: which pid holds guest RAM. The vz helper choice runs through the seam
 * with zero, one and several helpers, with and without the responsibility function; qemu and
 * krunkit use their pid files; the tick -> ns conversion the macOS layer relies on.
 */
#include "check.h"
#include "clients/vmproc.h"
#include "host_testlib.h"
#include "log.h"
#include "platform/timebase.h"

#include <string.h>

static char err[1024];

/* The fake Mac: helper pids and who is responsible for each. */
static pid_t fake_helpers[8];
static pid_t fake_resp[8];
static size_t fake_n;
static bool fake_list_fails;

static int fake_vz_helpers(pid_t *pids, size_t max, size_t *n)
{
	if (fake_list_fails) {
		errno = ENOTSUP;
		return -1;
	}
	*n = fake_n < max ? fake_n : max;
	memcpy(pids, fake_helpers, *n * sizeof *pids);
	return 0;
}

static pid_t fake_responsible(pid_t pid)
{
	for (size_t i = 0; i < fake_n; i++)
		if (fake_helpers[i] == pid)
			return fake_resp[i];
	return -1;
}

static bool fake_alive(pid_t pid)
{
	return pid > 0 && pid != 666;
}

static void use_fake(bool with_responsibility)
{
	struct vmproc_ops ops = {
	    .vz_helpers = fake_vz_helpers,
	    .responsible_pid = with_responsibility ? fake_responsible : NULL,
	    .pid_alive = fake_alive,
	};
	vmproc_set_ops(&ops);
	fake_list_fails = false;
}

static struct lima_instance vz_instance(void)
{
	struct lima_instance inst;
	memset(&inst, 0, sizeof inst);
	strcpy(inst.name, "dev");
	strcpy(inst.vm_type, "vz");
	inst.status = LIMA_STATUS_RUNNING;
	inst.ha_pid = 100; /* vz.pid == ha.pid */
	inst.driver_pid = 100;
	return inst;
}

static void set_helpers(size_t n, const pid_t *pids, const pid_t *resp)
{
	fake_n = n;
	for (size_t i = 0; i < n; i++) {
		fake_helpers[i] = pids[i];
		fake_resp[i] = resp ? resp[i] : -1;
	}
}

TEST(vz_zero_helpers)
{
	struct lima_instance inst = vz_instance();
	struct vmproc vp;
	for (int with = 0; with < 2; with++) {
		use_fake(with);
		set_helpers(0, NULL, NULL);
		CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_HELPER);
		CHECK_CONTAINS(err, "no com.apple.Virtualization.VirtualMachine process");
		CHECK_CONTAINS(err, "--pid");
	}
}

TEST(vz_one_helper)
{
	struct lima_instance inst = vz_instance();
	struct vmproc vp;
	/* Without the function: the only helper. */
	use_fake(false);
	set_helpers(1, (pid_t[]){300}, NULL);
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(vp.pid, 300);
	CHECK_STR(vp.method, "only helper");
	CHECK_INT(vp.hostagent_pid, 100);
	/* With it, naming our hostagent: responsibility. */
	use_fake(true);
	set_helpers(1, (pid_t[]){300}, (pid_t[]){100});
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(vp.pid, 300);
	CHECK_STR(vp.method, "responsibility");
	/* With it, but it names someone else (Terminal, say): still the only helper. */
	set_helpers(1, (pid_t[]){300}, (pid_t[]){55});
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_OK);
	CHECK_STR(vp.method, "only helper");
	/* A helper "responsible for itself" tells nothing. */
	set_helpers(1, (pid_t[]){300}, (pid_t[]){300});
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_OK);
	CHECK_STR(vp.method, "only helper");
}

TEST(vz_several_helpers)
{
	struct lima_instance inst = vz_instance();
	struct vmproc vp;
	/* Without the function: ambiguous, candidates listed, --pid suggested. */
	use_fake(false);
	set_helpers(3, (pid_t[]){300, 301, 302}, NULL);
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_HELPER);
	CHECK_CONTAINS(err, "300, 301, 302");
	CHECK_CONTAINS(err, "--pid PID");
	CHECK_CONTAINS(err, "no responsibility lookup");
	/* With it: the one whose responsible pid is our hostagent. */
	use_fake(true);
	set_helpers(3, (pid_t[]){300, 301, 302}, (pid_t[]){7, 100, 9});
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(vp.pid, 301);
	CHECK_STR(vp.method, "responsibility");
	/* External vz driver: lima-driver-vz (driver pid) is the responsible one. */
	inst.driver_pid = 150;
	set_helpers(2, (pid_t[]){300, 301}, (pid_t[]){150, 9});
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(vp.pid, 300);
	/* With it, none matching: ambiguous, responsible pids shown. */
	set_helpers(2, (pid_t[]){300, 301}, (pid_t[]){7, 9});
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_HELPER);
	CHECK_CONTAINS(err, "300 (responsible: 7), 301 (responsible: 9)");
	CHECK_CONTAINS(err, "none names the hostagent");
	/* Two matching: ambiguous too. */
	set_helpers(2, (pid_t[]){300, 301}, (pid_t[]){100, 100});
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_HELPER);
	CHECK_CONTAINS(err, "2 Virtualization helpers name the hostagent");
	/* --pid settles it. */
	CHECK_INT(vmproc_find(&inst, 301, &vp, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(vp.pid, 301);
	CHECK_STR(vp.method, "--pid");
	CHECK_INT(vmproc_find(&inst, 666, &vp, err, sizeof err), VMC_EXIT_HELPER);
	CHECK_CONTAINS(err, "--pid 666: no such process");
}

TEST(vz_on_a_host_without_helpers)
{
	struct lima_instance inst = vz_instance();
	struct vmproc vp;
	use_fake(false);
	fake_list_fails = true;
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_UNSUPPORTED);
	CHECK_CONTAINS(err, "only on macOS");
}

TEST(qemu_and_krunkit_use_pid_files)
{
	use_fake(false);
	struct lima_instance inst = vz_instance();
	struct vmproc vp;
	strcpy(inst.vm_type, "qemu");
	inst.driver_pid = 4242;
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(vp.pid, 4242);
	CHECK_STR(vp.method, "qemu.pid");
	strcpy(inst.vm_type, "krunkit");
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_OK);
	CHECK_STR(vp.method, "krunkit.pid");
	inst.driver_pid = 666;
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_HELPER);
	CHECK_CONTAINS(err, "krunkit.pid of \"dev\" names pid 666, which is not running");
	inst.driver_pid = 0;
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_HELPER);
	inst.status = LIMA_STATUS_STOPPED;
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_STOPPED);
	CHECK_CONTAINS(err, "start it with limactl start dev");
	inst.status = LIMA_STATUS_RUNNING;
	strcpy(inst.vm_type, "wsl2");
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_UNSUPPORTED);
}

TEST(real_platform_ops_on_linux)
{
	vmproc_set_ops(NULL);
	struct lima_instance inst = vz_instance();
	struct vmproc vp;
	inst.ha_pid = getpid();
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_UNSUPPORTED);
	strcpy(inst.vm_type, "qemu");
	inst.driver_pid = getpid();
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(vp.pid, getpid());
	CHECK_INT(vp.hostagent_pid, getpid());
	inst.driver_pid = t_dead_pid();
	CHECK_INT(vmproc_find(&inst, 0, &vp, err, sizeof err), VMC_EXIT_HELPER);
}

TEST(ticks_apple_silicon_125_over_3)
{
	struct timebase tb = timebase_choose(125, 3, false, 0);
	CHECK_U64(tb.numer, 125);
	CHECK_U64(tb.denom, 3);
	CHECK_STR(tb.source, "mach_timebase_info");
	/* 24 ticks of a 24 MHz clock = 1 µs. */
	CHECK_U64(timebase_ticks_to_ns(&tb, 24), 1000);
	CHECK_U64(timebase_ticks_to_ns(&tb, 24000000), 1000000000ull);
	CHECK_U64(timebase_ticks_to_ns(&tb, 1), 41);
	/* A month of CPU time in ticks does not overflow: 2.6e6 s * 24e6 = 6.2e13 ticks. */
	CHECK_U64(timebase_ticks_to_ns(&tb, 62208000000000ull), 2592000000000000ull);
	/* Unreduced ratios reduce. */
	tb = timebase_choose(1000000000u, 24000000u, false, 0);
	CHECK_U64(tb.numer, 125);
	CHECK_U64(tb.denom, 3);
}

TEST(ticks_intel_1_over_1)
{
	struct timebase tb = timebase_choose(1, 1, false, 1000000000ull);
	CHECK_U64(timebase_ticks_to_ns(&tb, 123456789), 123456789);
}

TEST(ticks_failed_mach_timebase_uses_the_hardware_frequency)
{
	/* mach_timebase_info failed (0/0) on Apple Silicon: hw.tbfrequency, not 1/1. */
	struct timebase tb = timebase_choose(0, 0, false, 24000000);
	CHECK_STR(tb.source, "hw.tbfrequency");
	CHECK_U64(timebase_ticks_to_ns(&tb, 24), 1000);
	/* Neither answered: Apple Silicon's 24 MHz, never a silent 1/1. */
	tb = timebase_choose(0, 0, false, 0);
	CHECK_STR(tb.source, "assumed 24 MHz");
	CHECK_U64(timebase_ticks_to_ns(&tb, 24), 1000);
	/* A half-broken ratio is as broken. */
	tb = timebase_choose(125, 0, false, 1000000000ull);
	CHECK_STR(tb.source, "hw.tbfrequency");
	CHECK_U64(timebase_ticks_to_ns(&tb, 5), 5);
}

TEST(ticks_translated_rosetta)
{
	/* Rosetta: mach_timebase_info says 1/1 but the kernel counts 24 MHz ticks. */
	struct timebase tb = timebase_choose(1, 1, true, 24000000);
	CHECK_STR(tb.source, "hw.tbfrequency");
	CHECK_U64(timebase_ticks_to_ns(&tb, 24), 1000);
	/* hw.tbfrequency unreadable: assume Apple Silicon's 24 MHz. */
	tb = timebase_choose(1, 1, true, 0);
	CHECK_STR(tb.source, "assumed 24 MHz");
	CHECK_U64(timebase_ticks_to_ns(&tb, 24), 1000);
	/* A 1 GHz timebase (what hw.tbfrequency says on Intel) is 1/1. */
	tb = timebase_choose(1, 1, true, 1000000000ull);
	CHECK_U64(tb.numer, 1);
	CHECK_U64(tb.denom, 1);
	struct timebase f;
	CHECK_INT(timebase_from_frequency(0, &f), -1);
}

int main(void)
{
	t_setup("host-vmproc");
	RUN(vz_zero_helpers);
	RUN(vz_one_helper);
	RUN(vz_several_helpers);
	RUN(vz_on_a_host_without_helpers);
	RUN(qemu_and_krunkit_use_pid_files);
	RUN(real_platform_ops_on_linux);
	RUN(ticks_apple_silicon_125_over_3);
	RUN(ticks_intel_1_over_1);
	RUN(ticks_translated_rosetta);
	RUN(ticks_failed_mach_timebase_uses_the_hardware_frequency);
	t_cleanup();
	return check_done();
}
