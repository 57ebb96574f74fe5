/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TEST-ONLY stand-in for macOS's <libproc.h>, written from the prototypes and structs described
 * in docs/macos.md#proc_pid_rusage (xnu-11417 libsyscall/wrappers/libproc/libproc.h and
 * bsd/sys/resource.h), so host/platform/platform_darwin.c can be compile-checked on Linux.
 * Never used to build a real binary.
 */
#ifndef VMC_TEST_DARWIN_LIBPROC_H
#define VMC_TEST_DARWIN_LIBPROC_H

#include <stdint.h>
#include <sys/types.h>

#include <sys/proc_info.h>

/* From <sys/resource.h>, which Apple's libproc.h includes. */
typedef void *rusage_info_t;

#define RUSAGE_INFO_V0	    0
#define RUSAGE_INFO_V1	    1
#define RUSAGE_INFO_V2	    2
#define RUSAGE_INFO_V3	    3
#define RUSAGE_INFO_V4	    4
#define RUSAGE_INFO_V5	    5
#define RUSAGE_INFO_V6	    6
#define RUSAGE_INFO_CURRENT RUSAGE_INFO_V6

struct rusage_info_v4 {
	uint8_t ri_uuid[16];
	uint64_t ri_user_time;	 /* Mach absolute-time ticks */
	uint64_t ri_system_time; /* Mach absolute-time ticks */
	uint64_t ri_pkg_idle_wkups;
	uint64_t ri_interrupt_wkups;
	uint64_t ri_pageins;
	uint64_t ri_wired_size;
	uint64_t ri_resident_size;
	uint64_t ri_phys_footprint;
	uint64_t ri_proc_start_abstime;
	uint64_t ri_proc_exit_abstime;
	uint64_t ri_child_user_time;
	uint64_t ri_child_system_time;
	uint64_t ri_child_pkg_idle_wkups;
	uint64_t ri_child_interrupt_wkups;
	uint64_t ri_child_pageins;
	uint64_t ri_child_elapsed_abstime;
	uint64_t ri_diskio_bytesread;
	uint64_t ri_diskio_byteswritten;
	uint64_t ri_cpu_time_qos_default;
	uint64_t ri_cpu_time_qos_maintenance;
	uint64_t ri_cpu_time_qos_background;
	uint64_t ri_cpu_time_qos_utility;
	uint64_t ri_cpu_time_qos_legacy;
	uint64_t ri_cpu_time_qos_user_initiated;
	uint64_t ri_cpu_time_qos_user_interactive;
	uint64_t ri_billed_system_time;
	uint64_t ri_serviced_system_time;
	uint64_t ri_logical_writes;
	uint64_t ri_lifetime_max_phys_footprint;
	uint64_t ri_instructions;
	uint64_t ri_cycles;
	uint64_t ri_billed_energy;
	uint64_t ri_serviced_energy;
	uint64_t ri_interval_max_phys_footprint;
	uint64_t ri_runnable_time;
};

/* Returns 0, or -1 with errno (ESRCH, EPERM, EINVAL, EFAULT). No size argument. */
int proc_pid_rusage(int pid, int flavor, rusage_info_t *buffer);

/* Bytes filled, 0 on error. With buffer NULL: (nprocs + 20) * sizeof(int). */
int proc_listpids(uint32_t type, uint32_t typeinfo, void *buffer, int buffersize);
/* A count (proc_listpids / sizeof(int)); <= 0 on error. */
int proc_listallpids(void *buffer, int buffersize);
int proc_listchildpids(pid_t ppid, void *buffer, int buffersize);
/* Bytes filled, 0 on error with errno. */
int proc_pidinfo(int pid, int flavor, uint64_t arg, void *buffer, int buffersize);
/* Length of the path, 0 on error; buffersize between MAXPATHLEN and 4 * MAXPATHLEN. */
int proc_pidpath(int pid, void *buffer, uint32_t buffersize);
/* Truncates to 31 characters: never use it to match the VZ helper. */
int proc_name(int pid, void *buffer, uint32_t buffersize);

#endif
