/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which process really holds an instance's RAM: qemu -> qemu.pid; krunkit -> krunkit.pid;
 * vz -> Apple's com.apple.Virtualization.VirtualMachine XPC helper (by proc_pidpath basename),
 * matched by responsibility when available, else the only helper, else an error naming the
 * candidates and --pid. The hostagent is accounted too.
 * CONTRACT shared by host/ files: extend, do not break.
 */
#ifndef VMC_VMPROC_H
#define VMC_VMPROC_H

#include "lima.h"

#include <stddef.h>
#include <sys/types.h>

struct vmproc {
	pid_t pid;           /* the process holding guest RAM */
	pid_t hostagent_pid; /* limactl hostagent (0 if unknown) */
	const char *method;  /* how pid was chosen: "qemu.pid", "krunkit.pid", "responsibility",
	                        "only helper", "--pid" */
};

/*
 * pid_override > 0 skips discovery (method "--pid"). Returns VMC_EXIT_OK or an exit code
 * (VMC_EXIT_STOPPED, VMC_EXIT_HELPER, VMC_EXIT_PERMISSION) with a message in err.
 */
int vmproc_find(const struct lima_instance *inst, pid_t pid_override, struct vmproc *out,
                char *err, size_t errsize);

#endif
