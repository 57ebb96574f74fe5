/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/darwin/platform_link.c SCENARIO: host/platform/platform_darwin.c linked on Linux against
 * stubs of the Apple calls it makes, and run. The stubs answer as docs/macos.md says the kernel
 * does (host_statistics64 writes at most *count integers and says how many; mach_host_self hands
 * out a send right per call) and record how they were called, so the tests check what the file
 * does with an answer, not just that it compiles. What a real Mac answers is not tested here.
 *
 * The timebase is chosen once per process, so each SCENARIO is its own run:
 *   native          mach_timebase_info says 125/3 (Apple Silicon)
 *   rosetta         translated: mach_timebase_info says 1/1, hw.tbfrequency 24 MHz
 *   no-timebase     mach_timebase_info and hw.tbfrequency both fail
 *   wrong-timebase  a native 1/1 over 24 MHz ticks: selftest's tick clock must catch it
 *
 * host/measure/selftest.c is linked in for its macOS paths (the vz helper search as a dry run,
 * the Mach timebase against wall time). It was compiled against tests/darwin/sys/mman.h, whose
 * mmap flags are macOS's, so its checks that map memory are never run here.
 */
#include "check.h"
#include "measure/selftest.h"
#include "platform/platform.h"

#include <errno.h>
#include <launch.h>
#include <libproc.h>
#include <mach/mach.h>
#include <mach/mach_time.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysctl.h>
#include <time.h>

#define PAGE	      16384u
#define HOST_PORT     ((mach_port_t)0x1103)
#define KERN_FAILURE  5
#define REV0_COUNT    24 /* vm_statistics64 up to speculative_count: before "added for rev1" */
#define VZ_HELPER_DIR "/System/Library/Frameworks/Virtualization.framework/Versions/A/XPCServices/"
#define VZ_HELPER                                                                                  \
	VZ_HELPER_DIR "com.apple.Virtualization.VirtualMachine.xpc/Contents/MacOS/"                \
		      "com.apple.Virtualization.VirtualMachine"

/* ---- the stubs: what each call answers, and how it was called ---------------------------- */

enum host_stats_mode { HS_WHOLE, HS_SHORT, HS_FAIL };

static struct {
	const char *scenario;
	/* host_statistics64 */
	enum host_stats_mode mode;
	vm_statistics64_data_t stats;
	int host_stats_calls;
	int host_self_calls;
	mach_port_t last_host;
	host_flavor_t last_flavor;
	mach_msg_type_number_t count_in;
	bool buffer_was_zero;
	/* sysctlbyname */
	uint64_t memsize;
	uint32_t page_free_count;
	int bad_sizes; /* a sysctl asked with a buffer of the wrong size */
	char bad_size_name[64];
	/* proc_pid_rusage */
	struct rusage_info_v4 rusage;
	int rusage_flavor;
	/* proc_pidinfo */
	int pidinfo_return; /* bytes it says it filled; 0: failed */
	uid_t uid;
	/* proc_listallpids / proc_pidpath */
	int listall_buffersize;
	pid_t responsible_for; /* what responsibility_get_pid_responsible_for_pid answers */
} stub;

vm_size_t vm_kernel_page_size = PAGE;
vm_size_t vm_page_size = PAGE;

mach_port_t mach_host_self(void)
{
	stub.host_self_calls++;
	return HOST_PORT;
}

kern_return_t host_statistics64(host_t host_priv, host_flavor_t flavor,
				host_info64_t host_info64_out,
				mach_msg_type_number_t *host_info64_outCnt)
{
	stub.host_stats_calls++;
	stub.last_host = host_priv;
	stub.last_flavor = flavor;
	stub.count_in = *host_info64_outCnt;
	const unsigned char *b = (const unsigned char *)host_info64_out;
	stub.buffer_was_zero = true;
	for (size_t i = 0; i < sizeof(vm_statistics64_data_t); i++)
		if (b[i] != 0)
			stub.buffer_was_zero = false;
	if (stub.mode == HS_FAIL)
		return KERN_FAILURE;
	/* The kernel writes at most *count integers, and no more than it knows of. */
	mach_msg_type_number_t n = stub.mode == HS_SHORT ? REV0_COUNT : HOST_VM_INFO64_COUNT;
	if (n > *host_info64_outCnt)
		n = *host_info64_outCnt;
	memcpy(host_info64_out, &stub.stats, n * sizeof(integer_t));
	*host_info64_outCnt = n;
	return KERN_SUCCESS;
}

static int sysctl_answer(const char *name, size_t want, void *oldp, size_t *oldlenp,
			 const void *value)
{
	if (*oldlenp != want) {
		stub.bad_sizes++;
		snprintf(stub.bad_size_name, sizeof stub.bad_size_name, "%s", name);
		errno = ENOMEM;
		return -1;
	}
	memcpy(oldp, value, want);
	return 0;
}

int sysctlbyname(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
{
	(void)newp;
	(void)newlen;
	bool rosetta = strcmp(stub.scenario, "rosetta") == 0;
	if (strcmp(name, "hw.memsize") == 0)
		return sysctl_answer(name, sizeof(uint64_t), oldp, oldlenp, &stub.memsize);
	if (strcmp(name, "vm.page_free_count") == 0)
		return sysctl_answer(name, sizeof(uint32_t), oldp, oldlenp, &stub.page_free_count);
	if (strcmp(name, "sysctl.proc_translated") == 0 && rosetta) {
		int one = 1;
		return sysctl_answer(name, sizeof one, oldp, oldlenp, &one);
	}
	if (strcmp(name, "hw.tbfrequency") == 0 && strcmp(stub.scenario, "no-timebase") != 0) {
		int64_t hz = 24000000;
		return sysctl_answer(name, sizeof hz, oldp, oldlenp, &hz);
	}
	errno = ENOENT; /* sysctl.proc_translated on an Intel Mac, for one */
	return -1;
}

kern_return_t mach_timebase_info(mach_timebase_info_t info)
{
	if (strcmp(stub.scenario, "no-timebase") == 0)
		return KERN_FAILURE;
	bool one_to_one =
	    strcmp(stub.scenario, "rosetta") == 0 || strcmp(stub.scenario, "wrong-timebase") == 0;
	info->numer = one_to_one ? 1 : 125;
	info->denom = one_to_one ? 1 : 3;
	return KERN_SUCCESS;
}

/* Apple Silicon's counter: 24 MHz, read here from the kernel's raw monotonic clock. */
uint64_t mach_absolute_time(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return ns / 125 * 3;
}

int proc_pid_rusage(int pid, int flavor, rusage_info_t *buffer)
{
	stub.rusage_flavor = flavor;
	if (pid == 4242) {
		errno = ESRCH;
		return -1;
	}
	memcpy(buffer, &stub.rusage, sizeof stub.rusage);
	return 0;
}

static const pid_t all_pids[] = {1, 100, 200, 300, 400};

int proc_listallpids(void *buffer, int buffersize)
{
	int n = (int)(sizeof all_pids / sizeof all_pids[0]);
	if (!buffer)
		return n;
	stub.listall_buffersize = buffersize;
	if ((size_t)buffersize < sizeof all_pids) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(buffer, all_pids, sizeof all_pids);
	return n;
}

int proc_pidpath(int pid, void *buffer, uint32_t buffersize)
{
	const char *path = pid == 100	? VZ_HELPER
			   : pid == 200 ? "/usr/libexec/com.apple.Virtualization.VirtualMachineX"
			   : pid == 300 ? VZ_HELPER_DIR "com.apple.Virtualization.Installation"
			   : pid == 400 ? VZ_HELPER /* a second VM */
					: NULL;
	if (!path || strlen(path) >= buffersize) {
		errno = path ? ENOMEM : ESRCH;
		return 0;
	}
	strcpy(buffer, path);
	return (int)strlen(path);
}

int proc_pidinfo(int pid, int flavor, uint64_t arg, void *buffer, int buffersize)
{
	(void)pid;
	(void)arg;
	if (flavor != PROC_PIDT_SHORTBSDINFO ||
	    buffersize < (int)sizeof(struct proc_bsdshortinfo)) {
		errno = EINVAL;
		return 0;
	}
	struct proc_bsdshortinfo info;
	memset(&info, 0, sizeof info);
	info.pbsi_uid = stub.uid;
	memcpy(buffer, &info, sizeof info);
	if (stub.pidinfo_return == 0)
		errno = ESRCH;
	return stub.pidinfo_return;
}

int proc_listpids(uint32_t type, uint32_t typeinfo, void *buffer, int buffersize)
{
	(void)type, (void)typeinfo, (void)buffer, (void)buffersize;
	errno = ENOTSUP;
	return 0;
}

int launch_activate_socket(const char *name, int **fds, size_t *cnt)
{
	(void)name, (void)fds, (void)cnt;
	return ESRCH; /* not started by launchd */
}

/* Private, no header: platform_darwin.c finds it with dlsym (the binary exports it). */
pid_t responsibility_get_pid_responsible_for_pid(pid_t pid);
pid_t responsibility_get_pid_responsible_for_pid(pid_t pid)
{
	return pid == 100 ? stub.responsible_for : -1;
}

/* ---- the tests --------------------------------------------------------------------------- */

static void whole_statistics(void)
{
	memset(&stub.stats, 0, sizeof stub.stats);
	stub.stats.free_count = 1000; /* includes speculative */
	stub.stats.inactive_count = 500;
	stub.stats.speculative_count = 100;
	stub.stats.compressor_page_count = 2000;
	stub.stats.total_uncompressed_pages_in_compressor = 6000;
	stub.memsize = 16ull << 30;
	stub.page_free_count = 900; /* vm.page_free_count: free minus speculative */
}

/* Leaves a non-zero pattern where the next call's locals will be, so a struct that is not
 * zeroed before the kernel fills it shows as garbage. */
__attribute__((noinline)) static void dirty_stack(void)
{
	volatile unsigned char junk[8192];
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = 0xa5;
}

TEST(a_whole_answer_gives_the_compressor_figures)
{
	whole_statistics();
	stub.mode = HS_WHOLE;
	struct platform_host_memory m;
	CHECK_INT(platform_host_memory(&m), 0);
	CHECK_INT(stub.last_flavor, HOST_VM_INFO64);
	CHECK_INT(stub.count_in, 38);
	CHECK_INT(stub.last_host, HOST_PORT);
	CHECK(m.has_compressor);
	CHECK_U64(m.page_size, PAGE);
	CHECK_U64(m.total, 16ull << 30);
	CHECK_U64(m.free, 900ull * PAGE);
	CHECK_U64(m.available, (1000ull + 500) * PAGE);
	CHECK_U64(m.compressor_used, 2000ull * PAGE);
	CHECK_U64(m.compressor_stored, 6000ull * PAGE);
}

TEST(a_short_count_means_no_compressor_figures)
{
	/* A kernel that knows only the rev0 struct writes 24 integers and says so: the compressor
	 * fields are not its answer, whatever the buffer held. */
	whole_statistics();
	stub.mode = HS_SHORT;
	struct platform_host_memory m;
	CHECK_INT(platform_host_memory(&m), 0);
	CHECK_INT(stub.count_in, 38);
	CHECK(!m.has_compressor);
	CHECK_U64(m.compressor_used, 0);
	CHECK_U64(m.compressor_stored, 0);
	CHECK_U64(m.free, 900ull * PAGE);
	CHECK_U64(m.available, m.free);
}

TEST(a_failed_call_means_no_compressor_figures)
{
	whole_statistics();
	stub.mode = HS_FAIL;
	struct platform_host_memory m;
	CHECK_INT(platform_host_memory(&m), 0);
	CHECK(!m.has_compressor);
	CHECK_U64(m.compressor_used, 0);
	CHECK_U64(m.available, m.free);
	CHECK_U64(m.free, 900ull * PAGE);
}

TEST(the_struct_is_zeroed_before_the_kernel_fills_it)
{
	whole_statistics();
	stub.mode = HS_SHORT;
	dirty_stack();
	struct platform_host_memory m;
	CHECK_INT(platform_host_memory(&m), 0);
	CHECK(stub.buffer_was_zero);
}

TEST(the_host_port_is_taken_once)
{
	whole_statistics();
	stub.mode = HS_WHOLE;
	int before = stub.host_stats_calls;
	for (int i = 0; i < 5; i++) {
		struct platform_host_memory m;
		CHECK_INT(platform_host_memory(&m), 0);
		CHECK_INT(stub.last_host, HOST_PORT);
	}
	CHECK_INT(stub.host_stats_calls - before, 5);
	/* Every sample of this process so far, the earlier tests' too. */
	CHECK(stub.host_stats_calls >= 8);
	CHECK_INT(stub.host_self_calls, 1);
}

TEST(every_sysctl_is_asked_with_its_own_size)
{
	CHECK_INT(stub.bad_sizes, 0);
	if (stub.bad_sizes)
		fprintf(stderr, "     wrong size for %s\n", stub.bad_size_name);
}

TEST(a_sample_reads_rusage_v4_in_nanoseconds)
{
	memset(&stub.rusage, 0, sizeof stub.rusage);
	stub.rusage.ri_phys_footprint = 3ull << 30;
	stub.rusage.ri_resident_size = 2ull << 30;
	stub.rusage.ri_lifetime_max_phys_footprint = 5ull << 30;
	stub.rusage.ri_user_time = 24000000; /* one second of 24 MHz ticks */
	stub.rusage.ri_system_time = 12000000;
	stub.rusage.ri_diskio_byteswritten = 4096;
	stub.rusage.ri_logical_writes = 8192;
	stub.rusage.ri_pkg_idle_wkups = 7;
	stub.rusage.ri_interrupt_wkups = 9;
	struct platform_proc_sample s;
	CHECK_INT(platform_proc_sample(1234, &s), 0);
	CHECK_INT(stub.rusage_flavor, RUSAGE_INFO_V4);
	CHECK_U64(s.footprint, 3ull << 30);
	CHECK_U64(s.resident, 2ull << 30);
	CHECK_U64(s.peak_footprint, 5ull << 30);
	CHECK_U64(s.disk_written, 4096);
	CHECK_U64(s.logical_written, 8192);
	CHECK_U64(s.idle_wakeups, 7);
	CHECK_U64(s.interrupt_wakeups, 9);
	CHECK(s.has_logical_writes && s.has_wakeups);
	/* 1.5 s of ticks, in nanoseconds: 125/3 each whichever way the timebase was found. */
	if (strcmp(stub.scenario, "wrong-timebase") == 0)
		CHECK_U64(s.cpu_ns, 36000000); /* the planted 1/1: 41.7 times too small */
	else
		CHECK_U64(s.cpu_ns, 1500000000);
	errno = 0;
	CHECK_INT(platform_proc_sample(4242, &s), -1);
	CHECK_INT(errno, ESRCH);
}

TEST(the_tick_clock_agrees_with_wall_time)
{
	struct platform_clock_check cc;
	CHECK_INT(platform_tick_clock_check(0.05, &cc), 0);
	const char *source =
	    strcmp(stub.scenario, "native") == 0 || strcmp(stub.scenario, "wrong-timebase") == 0
		? "mach_timebase_info"
	    : strcmp(stub.scenario, "rosetta") == 0 ? "hw.tbfrequency"
						    : "assumed 24 MHz";
	CHECK_STR(cc.source, source);
	if (strcmp(stub.scenario, "wrong-timebase") == 0)
		CHECK_DBL(cc.ratio, 3.0 / 125, 0.002);
	else
		CHECK_DBL(cc.ratio, 1.0, 0.02);
}

static const struct selftest_result *selftest_one(const char *what, struct selftest_report *rep)
{
	struct selftest_env env;
	selftest_env_defaults(&env);
	env.only = what;
	selftest_run(&env, rep);
	return rep->n == 1 ? &rep->results[0] : NULL;
}

TEST(selftest_checks_the_mach_timebase)
{
	struct selftest_report rep;
	const struct selftest_result *r = selftest_one("tick clock", &rep);
	CHECK(r != NULL);
	if (!r)
		return;
	if (strcmp(stub.scenario, "wrong-timebase") == 0) {
		CHECK_INT(r->verdict, SELFTEST_FAIL);
		CHECK_CONTAINS(r->reason, "off by a factor of 41.");
	} else {
		CHECK_INT(r->verdict, SELFTEST_PASS);
		CHECK_CONTAINS(r->reason, "timebase from ");
	}
}

TEST(the_vz_helper_search_matches_the_whole_name)
{
	pid_t pids[8];
	size_t n = 99;
	CHECK_INT(platform_vz_helpers(pids, 8, &n), 0);
	/* 1 has no path for us, 200 a longer name, 300 another Virtualization service; 100 and
	 * 400 are two VMs' helpers. */
	CHECK_INT(n, 2);
	CHECK_INT(pids[0], 100);
	CHECK_INT(pids[1], 400);
	CHECK(stub.listall_buffersize >= (int)sizeof all_pids);
	n = 99;
	CHECK_INT(platform_vz_helpers(pids, 1, &n), 0);
	CHECK_INT(n, 1);
}

TEST(selftest_lists_the_vz_helpers_as_a_dry_run)
{
	stub.responsible_for = 777;
	CHECK(platform_has_responsibility());
	CHECK_INT(platform_responsible_pid(100), 777);
	CHECK_INT(platform_responsible_pid(400), -1);
	struct selftest_report rep;
	const struct selftest_result *r = selftest_one("vz helper search", &rep);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_INT(r->verdict, SELFTEST_PASS);
	CHECK_DBL(r->measured, 2, 0);
	CHECK_STR(r->reason, "found 2: pid 100 (for pid 777), pid 400");
}

TEST(the_owner_uid_needs_a_whole_answer)
{
	uid_t uid = 0;
	stub.uid = 501;
	stub.pidinfo_return = (int)sizeof(struct proc_bsdshortinfo);
	CHECK_INT(platform_proc_uid(100, &uid), 0);
	CHECK_INT(uid, 501);
	stub.pidinfo_return = 40;
	errno = 0;
	CHECK_INT(platform_proc_uid(100, &uid), -1);
	CHECK_INT(errno, EIO);
	stub.pidinfo_return = 0;
	CHECK_INT(platform_proc_uid(100, &uid), -1);
}

TEST(release_is_madv_free_reusable)
{
	CHECK_STR(platform_release_method(), "MADV_FREE_REUSABLE");
	CHECK_STR(platform_os_name(), "darwin");
	errno = 0;
	CHECK_INT(platform_activated_socket("Listeners"), -1);
	CHECK_INT(errno, ENOENT);
}

/* platform_release_pages calls madvise: this one stands in for macOS's, which takes advice 7. */
static int madvise_advice = -1;
int madvise(void *addr, size_t len, int advice)
{
	(void)addr, (void)len;
	madvise_advice = advice;
	return 0;
}

TEST(release_pages_asks_for_reusable)
{
	static unsigned char page[PAGE];
	CHECK_INT(platform_release_pages(page, sizeof page), 0);
	CHECK_INT(madvise_advice, 7);
}

int main(int argc, char **argv)
{
	stub.scenario = argc > 1 ? argv[1] : "native";
	if (strcmp(stub.scenario, "native") != 0 && strcmp(stub.scenario, "rosetta") != 0 &&
	    strcmp(stub.scenario, "no-timebase") != 0 &&
	    strcmp(stub.scenario, "wrong-timebase") != 0) {
		fprintf(stderr, "usage: %s [native|rosetta|no-timebase|wrong-timebase]\n", argv[0]);
		return 2;
	}
	if (strcmp(stub.scenario, "native") == 0) {
		RUN(a_whole_answer_gives_the_compressor_figures);
		RUN(a_short_count_means_no_compressor_figures);
		RUN(a_failed_call_means_no_compressor_figures);
		RUN(the_struct_is_zeroed_before_the_kernel_fills_it);
		RUN(the_host_port_is_taken_once);
		RUN(every_sysctl_is_asked_with_its_own_size);
		RUN(the_vz_helper_search_matches_the_whole_name);
		RUN(selftest_lists_the_vz_helpers_as_a_dry_run);
		RUN(the_owner_uid_needs_a_whole_answer);
		RUN(release_is_madv_free_reusable);
		RUN(release_pages_asks_for_reusable);
	}
	RUN(a_sample_reads_rusage_v4_in_nanoseconds);
	RUN(the_tick_clock_agrees_with_wall_time);
	RUN(selftest_checks_the_mach_timebase);
	RUN(every_sysctl_is_asked_with_its_own_size);
	return check_done();
}
