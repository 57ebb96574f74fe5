/* SPDX-License-Identifier: Apache-2.0 */
/*
 * macOS (docs/macos.md). Everything here works unprivileged on the caller's own processes:
 * proc_pid_rusage for the VM helper's footprint, CPU, disk writes and wakeups; proc_pidpath
 * to find the helper (proc_name truncates its 39-character name); sysctl and
 * host_statistics64 for the host. This file cannot run on the machines vmcost is developed
 * on: tests/darwin-compile checks it against declarations written from Apple's prototypes.
 */
#include "platform/platform.h"

#include "clock.h"
#include "platform/timebase.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <launch.h>
#include <libproc.h>
#include <mach/mach.h>
#include <mach/mach_time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysctl.h>
#include <time.h>
#include <unistd.h>

#define VZ_HELPER_NAME "com.apple.Virtualization.VirtualMachine"

const char *platform_os_name(void)
{
	return "darwin";
}

/* ri_user_time/ri_system_time are Mach ticks: 125/3 ns each on Apple Silicon. */
static const struct timebase *ticks_timebase(void)
{
	static struct timebase tb;
	static int ready;
	if (ready)
		return &tb;
	mach_timebase_info_data_t info = {0, 0};
	if (mach_timebase_info(&info) != KERN_SUCCESS)
		info.numer = info.denom = 0;
	int translated = 0;
	size_t size = sizeof translated;
	if (sysctlbyname("sysctl.proc_translated", &translated, &size, NULL, 0) < 0)
		translated = 0; /* ENOENT on Intel Macs: never translated */
	int64_t hz = 0;
	size = sizeof hz;
	if (sysctlbyname("hw.tbfrequency", &hz, &size, NULL, 0) < 0 || hz < 0)
		hz = 0;
	tb = timebase_choose(info.numer, info.denom, translated == 1, (uint64_t)hz);
	ready = 1;
	return &tb;
}

int platform_proc_sample(pid_t pid, struct platform_proc_sample *out)
{
	memset(out, 0, sizeof *out);
	/* proc_pid_rusage has no size argument: the buffer must be a whole rusage_info_v4. */
	struct rusage_info_v4 ri;
	memset(&ri, 0, sizeof ri);
	out->taken_at = vmc_monotonic_s();
	if (proc_pid_rusage(pid, RUSAGE_INFO_V4, (rusage_info_t *)&ri) != 0)
		return -1; /* errno: ESRCH gone, EPERM another user's process */
	const struct timebase *tb = ticks_timebase();
	out->footprint = ri.ri_phys_footprint;
	out->resident = ri.ri_resident_size;
	out->peak_footprint = ri.ri_lifetime_max_phys_footprint;
	out->cpu_ns = timebase_ticks_to_ns(tb, ri.ri_user_time + ri.ri_system_time);
	out->disk_written = ri.ri_diskio_byteswritten;
	out->logical_written = ri.ri_logical_writes;
	out->idle_wakeups = ri.ri_pkg_idle_wkups;
	out->interrupt_wakeups = ri.ri_interrupt_wkups;
	out->has_logical_writes = true;
	out->has_wakeups = true;
	return 0;
}

int platform_proc_detail(pid_t pid, struct platform_proc_detail *out)
{
	(void)pid;
	memset(out, 0, sizeof *out);
	errno = ENOTSUP;
	return -1;
}

static uint64_t kernel_page_size(void)
{
	/* 16 KiB on Apple Silicon; vm_page_size may say 4 KiB under Rosetta. */
	return vm_kernel_page_size ? (uint64_t)vm_kernel_page_size : 4096;
}

/*
 * mach_host_self() returns a send right the caller owns: asking for it at every sample leaks a
 * user reference each time. One right for the life of the process.
 */
static host_t host_port(void)
{
	static host_t port = MACH_PORT_NULL;
	if (port == MACH_PORT_NULL)
		port = mach_host_self();
	return port;
}

/*
 * The compressor's figures. The kernel writes up to count integers and says how many it wrote: a
 * kernel that knows an older, shorter vm_statistics64 leaves the tail (compressor fields
 * included) untouched, so the struct starts zeroed and a short answer counts as none.
 */
static bool host_vm_statistics(vm_statistics64_data_t *vs)
{
	memset(vs, 0, sizeof *vs);
	mach_msg_type_number_t count = HOST_VM_INFO64_COUNT;
	if (host_statistics64(host_port(), HOST_VM_INFO64, (host_info64_t)vs, &count) !=
	    KERN_SUCCESS)
		return false;
	return count >= HOST_VM_INFO64_COUNT;
}

int platform_host_memory(struct platform_host_memory *out)
{
	memset(out, 0, sizeof *out);
	uint64_t memsize = 0;
	uint32_t free_pages = 0;
	size_t size = sizeof memsize;
	if (sysctlbyname("hw.memsize", &memsize, &size, NULL, 0) < 0)
		return -1;
	size = sizeof free_pages;
	if (sysctlbyname("vm.page_free_count", &free_pages, &size, NULL, 0) < 0)
		return -1;
	uint64_t pg = kernel_page_size();
	out->total = memsize;
	out->free = (uint64_t)free_pages * pg;
	out->available = out->free;
	out->page_size = pg;
	/* Rate-limited and cached for third-party callers (2-10 calls/s): fine at 1 Hz. */
	vm_statistics64_data_t vs;
	if (host_vm_statistics(&vs)) {
		/* free_count already includes speculative pages. */
		out->available = ((uint64_t)vs.free_count + vs.inactive_count) * pg;
		out->compressor_used = (uint64_t)vs.compressor_page_count * pg;
		out->compressor_stored = vs.total_uncompressed_pages_in_compressor * pg;
		out->has_compressor = true;
	}
	return 0;
}

bool platform_pid_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

int platform_proc_path(pid_t pid, char *buf, size_t size)
{
	/* proc_pidpath wants a buffer between MAXPATHLEN and 4 * MAXPATHLEN bytes. */
	char path[PROC_PIDPATHINFO_MAXSIZE];
	int n = proc_pidpath(pid, path, sizeof path);
	if (n <= 0)
		return -1;
	if ((size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, (size_t)n);
	buf[n] = '\0';
	return 0;
}

int platform_proc_uid(pid_t pid, uid_t *uid)
{
	/* The short BSD info needs no same-user right, unlike PROC_PIDTBSDINFO. */
	struct proc_bsdshortinfo info;
	int n = proc_pidinfo(pid, PROC_PIDT_SHORTBSDINFO, 0, &info, (int)sizeof info);
	if (n <= 0)
		return -1; /* 0 on failure, errno set */
	if (n != (int)sizeof info) {
		errno = EIO;
		return -1;
	}
	*uid = info.pbsi_uid;
	return 0;
}

static bool is_vz_helper(pid_t pid)
{
	char path[PROC_PIDPATHINFO_MAXSIZE];
	if (proc_pidpath(pid, path, sizeof path) <= 0)
		return false;
	const char *base = strrchr(path, '/');
	return strcmp(base ? base + 1 : path, VZ_HELPER_NAME) == 0;
}

int platform_vz_helpers(pid_t *pids, size_t max, size_t *n)
{
	*n = 0;
	/* With no buffer it returns a count with room to spare for processes started meanwhile. */
	int estimate = proc_listallpids(NULL, 0);
	if (estimate <= 0)
		return -1;
	size_t cap = (size_t)estimate + 64;
	pid_t *all = calloc(cap, sizeof *all);
	if (!all)
		return -1;
	int count = proc_listallpids(all, (int)(cap * sizeof *all));
	if (count <= 0) {
		free(all);
		return -1;
	}
	for (int i = 0; i < count && *n < max; i++)
		if (all[i] > 0 && is_vz_helper(all[i]))
			pids[(*n)++] = all[i];
	free(all);
	return 0;
}

typedef pid_t (*responsible_fn)(pid_t);

/* Private, no header: looked up at run time so a macOS without it still works. */
static responsible_fn responsibility(void)
{
	static responsible_fn fn;
	static int looked;
	if (!looked) {
		void *sym = dlsym(RTLD_DEFAULT, "responsibility_get_pid_responsible_for_pid");
		memcpy(&fn, &sym, sizeof fn);
		looked = 1;
	}
	return fn;
}

bool platform_has_responsibility(void)
{
	return responsibility() != NULL;
}

pid_t platform_responsible_pid(pid_t pid)
{
	responsible_fn fn = responsibility();
	if (!fn)
		return -1;
	pid_t r = fn(pid);
	return r > 0 ? r : -1;
}

int platform_proc_switches(pid_t pid, uint64_t *voluntary, uint64_t *involuntary)
{
	/* macOS counts wakeups per process instead (platform_proc_sample). */
	(void)pid;
	*voluntary = *involuntary = 0;
	errno = ENOTSUP;
	return -1;
}

/*
 * launchd hands the sockets of the plist's Sockets entry to launch_activate_socket(3): 0 and a
 * malloc'd array of descriptors, else an errno value (ESRCH: not started by launchd; ENOENT: no
 * such entry; EALREADY: already taken).
 */
int platform_activated_socket(const char *name)
{
	int *fds = NULL;
	size_t count = 0;
	int rc = launch_activate_socket(name, &fds, &count);
	if (rc != 0 || count == 0) {
		free(fds);
		errno = rc == ESRCH || rc == ENOENT || rc == 0 ? ENOENT : rc;
		return -1;
	}
	int fd = fds[0];
	for (size_t i = 1; i < count; i++)
		close(fds[i]);
	free(fds);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

int platform_memory_limit(struct platform_memory_limit *out)
{
	/* No cgroups; jetsam acts on pressure, not on a per-process cap. */
	memset(out, 0, sizeof *out);
	return 0;
}

int platform_release_pages(void *addr, size_t len)
{
	/* MADV_FREE_REUSABLE moves phys_footprint at once; MADV_FREE waits for pressure. */
	return madvise(addr, len, MADV_FREE_REUSABLE);
}

const char *platform_release_method(void)
{
	return "MADV_FREE_REUSABLE";
}

int platform_tick_clock_check(double seconds, struct platform_clock_check *out)
{
	memset(out, 0, sizeof *out);
	const struct timebase *tb = ticks_timebase();
	snprintf(out->source, sizeof out->source, "%s", tb->source);
	struct timespec w0, w1;
	/* CLOCK_MONOTONIC_RAW is the kernel's own conversion of the same counter: an independent
	 * reading of how long the ticks took. */
	if (clock_gettime(CLOCK_MONOTONIC_RAW, &w0) < 0)
		return -1;
	uint64_t t0 = mach_absolute_time();
	vmc_sleep_s(seconds);
	uint64_t t1 = mach_absolute_time();
	if (clock_gettime(CLOCK_MONOTONIC_RAW, &w1) < 0)
		return -1;
	double wall_ns = (double)(w1.tv_sec - w0.tv_sec) * 1e9 + (double)(w1.tv_nsec - w0.tv_nsec);
	if (wall_ns <= 0) {
		errno = EIO;
		return -1;
	}
	out->ratio = (double)timebase_ticks_to_ns(tb, t1 - t0) / wall_ns;
	return 0;
}
