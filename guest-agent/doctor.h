/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The facts the idle doctor's checks judge, gathered once (a few /proc and /sys reads, the
 * kernel log once) so that each check is a small function of them.
 */
#ifndef VMC_AGENT_DOCTOR_H
#define VMC_AGENT_DOCTOR_H

#include "balloon.h"
#include "kernel.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Which hypervisor offers the balloon: decides what init_on_free does to reporting. */
enum doctor_vmm {
	DOCTOR_VMM_UNKNOWN,
	DOCTOR_VMM_QEMU,
	DOCTOR_VMM_VZ,
	DOCTOR_VMM_KRUN_OR_FIRECRACKER,
};

struct doctor_proc {
	pid_t pid;
	char comm[64];
	char cmdline[256];
};

/* init_on_free from each source: -1 unknown, 0 off, 1 on. */
struct doctor_init_on_free {
	int cmdline, config, bootlog, effective;
	bool poisoning;	    /* "CONFIG_PAGE_POISONING is on" in the boot log */
	bool reporting_log; /* "Free page reporting enabled" in the boot log */
	bool kmsg_read;
	char source[48]; /* where the effective value came from */
};

struct doctor {
	bool has_kernel;
	struct vmc_kernel_version kernel;
	char cmdline[4096];
	bool has_cmdline;
	struct balloon_info balloon;
	struct doctor_init_on_free iof;
	enum doctor_vmm vmm;
	char vmm_evidence[200];
	struct doctor_proc *procs;
	size_t nprocs;
	char *mounts; /* /proc/mounts, or NULL */
};

void doctor_gather(struct doctor *d);
void doctor_free(struct doctor *d);
/* A process by name: its comm, its argv[0]'s basename, or a script run by sh/ash/bash/... */
const struct doctor_proc *doctor_find_proc(const struct doctor *d, const char *name);
const char *doctor_vmm_name(enum doctor_vmm v);

#endif
