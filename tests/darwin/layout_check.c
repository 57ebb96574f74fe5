/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The test-only headers must say what docs/macos.md#field-offsets-of-rusage_info_v4 says Apple's
 * do: sizes and offsets of the structures the kernel copies out (proc_pid_rusage takes no size,
 * so a wrong size is a buffer overflow on a real Mac).
 */
#include <libproc.h>
#include <mach/mach.h>
#include <mach/mach_time.h>
#include <stddef.h>
#include <sys/mman.h>

_Static_assert(sizeof(struct rusage_info_v4) == 296, "rusage_info_v4 is 296 bytes");
_Static_assert(offsetof(struct rusage_info_v4, ri_user_time) == 16, "ri_user_time at 16");
_Static_assert(offsetof(struct rusage_info_v4, ri_system_time) == 24, "ri_system_time at 24");
_Static_assert(offsetof(struct rusage_info_v4, ri_pkg_idle_wkups) == 32, "pkg_idle at 32");
_Static_assert(offsetof(struct rusage_info_v4, ri_interrupt_wkups) == 40, "interrupt at 40");
_Static_assert(offsetof(struct rusage_info_v4, ri_resident_size) == 64, "resident at 64");
_Static_assert(offsetof(struct rusage_info_v4, ri_phys_footprint) == 72, "footprint at 72");
_Static_assert(offsetof(struct rusage_info_v4, ri_diskio_byteswritten) == 152, "written at 152");
_Static_assert(offsetof(struct rusage_info_v4, ri_logical_writes) == 232, "logical at 232");
_Static_assert(offsetof(struct rusage_info_v4, ri_lifetime_max_phys_footprint) == 240,
	       "lifetime max at 240");
_Static_assert(offsetof(struct rusage_info_v4, ri_interval_max_phys_footprint) == 280,
	       "interval max at 280");
_Static_assert(offsetof(struct rusage_info_v4, ri_runnable_time) == 288, "runnable at 288");
_Static_assert(sizeof(struct mach_timebase_info) == 8, "two uint32_t");
_Static_assert(PROC_PIDPATHINFO_MAXSIZE == 4096, "4 * MAXPATHLEN (1024 on macOS)");
_Static_assert(offsetof(struct proc_bsdshortinfo, pbsi_comm) == 16, "pbsi_comm after 4 u32");
_Static_assert(offsetof(struct proc_bsdshortinfo, pbsi_uid) == 36, "pbsi_uid after flags");
_Static_assert(sizeof(struct proc_bsdshortinfo) == 64, "proc_bsdshortinfo is 64 bytes");
_Static_assert(sizeof(vm_statistics64_data_t) == 152, "vm_statistics64 is 152 bytes");
_Static_assert(HOST_VM_INFO64_COUNT == 38, "HOST_VM_INFO64_COUNT is 38 integers");
_Static_assert(offsetof(struct vm_statistics64, compressor_page_count) == 128,
	       "compressor_page_count at 128");
_Static_assert(offsetof(struct vm_statistics64, total_uncompressed_pages_in_compressor) == 144,
	       "total_uncompressed_pages_in_compressor at 144");
_Static_assert(HOST_VM_INFO64 == 4, "HOST_VM_INFO64 is 4");
_Static_assert(RUSAGE_INFO_V4 == 4, "RUSAGE_INFO_V4 is 4");
_Static_assert(MADV_FREE_REUSABLE == 7, "MADV_FREE_REUSABLE is 7 (bsd/sys/mman.h)");
_Static_assert(MAP_ANON == 0x1000 && MAP_ANONYMOUS == MAP_ANON,
	       "MAP_ANON is 0x1000 (bsd/sys/mman.h)");

int layout_check_anchor(void);
int layout_check_anchor(void)
{
	return 0;
}
