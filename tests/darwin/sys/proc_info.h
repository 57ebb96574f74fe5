/* SPDX-License-Identifier: Apache-2.0 */
/* TEST-ONLY stand-in for macOS's <sys/proc_info.h> (xnu bsd/sys/proc_info.h;
 * docs/macos.md#finding-the-virtualization-helper). */
#ifndef VMC_TEST_DARWIN_SYS_PROC_INFO_H
#define VMC_TEST_DARWIN_SYS_PROC_INFO_H

#include <stdint.h>
#include <sys/types.h>

#define PROC_ALL_PIDS  1
#define PROC_PGRP_ONLY 2
#define PROC_TTY_ONLY  3
#define PROC_UID_ONLY  4
#define PROC_RUID_ONLY 5
#define PROC_PPID_ONLY 6

#define PROC_PIDTBSDINFO       3
#define PROC_PIDTASKINFO       4
#define PROC_PIDPATHINFO       11
#define PROC_PIDT_SHORTBSDINFO 13

/* macOS's MAXPATHLEN is 1024 (Linux's is 4096: not the one that matters here). */
#define VMC_DARWIN_MAXPATHLEN	 1024
#define PROC_PIDPATHINFO_SIZE	 (VMC_DARWIN_MAXPATHLEN)
#define PROC_PIDPATHINFO_MAXSIZE (4 * VMC_DARWIN_MAXPATHLEN)

#define VMC_DARWIN_MAXCOMLEN 16

/* Readable for any pid (no same-user check). */
struct proc_bsdshortinfo {
	uint32_t pbsi_pid;
	uint32_t pbsi_ppid;
	uint32_t pbsi_pgid;
	uint32_t pbsi_status;
	char pbsi_comm[VMC_DARWIN_MAXCOMLEN];
	uint32_t pbsi_flags;
	uid_t pbsi_uid;
	gid_t pbsi_gid;
	uid_t pbsi_ruid;
	gid_t pbsi_rgid;
	uid_t pbsi_svuid;
	gid_t pbsi_svgid;
	uint32_t pbsi_rfu;
};

#endif
