/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one contract per OS (htop's model): platform_linux.c, platform_darwin.c and
 * platform_unsupported.c (host/platform/) each implement all of it; logic files never #ifdef on
 * the OS.
 * Unavailable figures return -1 with errno ENOTSUP (or leave has_* false).
 */
#ifndef VMC_PLATFORM_H
#define VMC_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct platform_proc_sample {
	double taken_at;	    /* monotonic seconds when sampled */
	uint64_t footprint;	    /* macOS phys_footprint; Linux RSS + swap of the process */
	uint64_t resident;	    /* bytes resident now */
	uint64_t peak_footprint;    /* macOS lifetime max footprint; Linux VmHWM */
	uint64_t cpu_ns;	    /* user + system, nanoseconds */
	uint64_t disk_written;	    /* bytes the process wrote to block devices (cumulative) */
	uint64_t logical_written;   /* macOS ri_logical_writes (has_logical_writes) */
	uint64_t idle_wakeups;	    /* macOS ri_pkg_idle_wkups (has_wakeups) */
	uint64_t interrupt_wakeups; /* macOS ri_interrupt_wkups (has_wakeups) */
	uint64_t anon, file, shmem, swap; /* Linux smaps_rollup split (has_split) */
	bool has_logical_writes, has_wakeups, has_split;
};

struct platform_host_memory {
	uint64_t total;		    /* physical RAM */
	uint64_t free;		    /* Linux MemFree + per-CPU lists; macOS vm.page_free_count */
	uint64_t available;	    /* Linux MemAvailable; macOS free + inactive + speculative */
	uint64_t compressor_used;   /* macOS: bytes the compressor occupies */
	uint64_t compressor_stored; /* macOS: uncompressed bytes it holds */
	uint64_t page_size;	    /* kernel page size (16 KiB on Apple Silicon) */
	bool has_compressor;
};

const char *platform_os_name(void); /* "linux", "darwin", "unsupported" */
int platform_proc_sample(pid_t pid, struct platform_proc_sample *out);
int platform_host_memory(struct platform_host_memory *out);
/* kill(pid, 0) semantics: true if the process exists (EPERM counts as existing). */
bool platform_pid_alive(pid_t pid);
/* Full executable path (proc_pidpath on macOS, /proc/PID/exe on Linux). */
int platform_proc_path(pid_t pid, char *buf, size_t size);
/* Pids of com.apple.Virtualization.VirtualMachine helpers (macOS); ENOTSUP elsewhere. */
int platform_vz_helpers(pid_t *pids, size_t max, size_t *n);
/* responsibility_get_pid_responsible_for_pid via dlsym; -1 when unknown/unavailable. */
pid_t platform_responsible_pid(pid_t pid);

/*
 * One-shot detail that costs more than a sample (Linux: smaps_rollup walks every page table,
 * milliseconds for GiBs of guest RAM), so samplers never call it in a loop.
 */
struct platform_proc_detail {
	uint64_t rss;	    /* exact resident bytes (Linux smaps_rollup Rss) */
	uint64_t pss;	    /* proportional share (shared pages divided among their users) */
	uint64_t anon_huge; /* anonymous memory in transparent huge pages */
	uint64_t swap;
	bool has_pss;
};
int platform_proc_detail(pid_t pid, struct platform_proc_detail *out);
/* True when platform_responsible_pid can answer at all (macOS: the dlsym found the function). */
bool platform_has_responsibility(void);
/* Owner (effective uid) of a process, for "another user's VM" messages; -1 if unknown. */
int platform_proc_uid(pid_t pid, uid_t *uid);
/*
 * Context switches summed over every thread of the process (Linux: /proc/PID/task/N/status),
 * the Linux stand-in for macOS's wakeup counters: each voluntary switch is a sleep and a wakeup.
 * ENOTSUP where the OS does not expose them.
 */
int platform_proc_switches(pid_t pid, uint64_t *voluntary, uint64_t *involuntary);
/*
 * The listening socket a service manager made for this process (socket activation): systemd's
 * LISTEN_PID/LISTEN_FDS (fd 3; the variables are then removed so children do not see them), or
 * launchd's launch_activate_socket(name) for the plist's Sockets entry `name`. Returns the fd
 * (close-on-exec), or -1 with errno ENOENT when none was passed (started by hand), EINVAL when
 * what was passed is not a listening unix stream socket, ENOTSUP where there is no such manager.
 */
int platform_activated_socket(const char *name);

/*
 * A cap on this process's memory below the host's (Linux: its memory cgroups, v1 or v2, as in a
 * container or a systemd slice with MemoryMax=): allocating beyond room ends in that cgroup's
 * OOM killer even when the host has memory available. limited false when nothing caps it (and
 * on macOS, which has no such limit). 0, or -1 with errno.
 */
struct platform_memory_limit {
	bool limited;
	uint64_t limit;	 /* the tightest limit, bytes */
	uint64_t room;	 /* what this process may still add: min of limit - usage on the way up */
	char where[256]; /* the cgroup whose room is smallest */
};
int platform_memory_limit(struct platform_memory_limit *out);

/*
 * Gives len bytes of this process's anonymous memory back the way the OS's footprint counts it
 * (vmcost selftest's release step): Linux MADV_DONTNEED, RSS falls at once; macOS
 * MADV_FREE_REUSABLE, which lowers phys_footprint at once, where plain MADV_FREE leaves it until
 * memory pressure (docs/macos.md#footprint-counts-compressed-memory). 0, or -1 with errno.
 */
int platform_release_pages(void *addr, size_t len);
/* The name of what platform_release_pages uses ("MADV_DONTNEED"), for reports. */
const char *platform_release_method(void);

/*
 * The tick clock behind CPU times, against wall time (vmcost selftest): over `seconds`, the
 * nanoseconds that the OS's absolute ticks convert to through the same timebase the CPU times
 * use (macOS: mach_absolute_time, host/platform/timebase.h), divided by the nanoseconds a
 * monotonic clock saw pass. 1.0 when the conversion is right; 0.024 is Apple Silicon's ticks read
 * as nanoseconds. ENOTSUP where CPU times are not read in ticks of a negotiated rate (Linux:
 * /proc's USER_HZ, a constant the kernel exports).
 */
struct platform_clock_check {
	double ratio;
	char source[64]; /* where the timebase came from ("mach_timebase_info") */
};
int platform_tick_clock_check(double seconds, struct platform_clock_check *out);

#endif
