/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which process really holds an instance's RAM: qemu -> qemu.pid; krunkit -> krunkit.pid;
 * vz -> Apple's com.apple.Virtualization.VirtualMachine XPC helper (by proc_pidpath basename),
 * matched by responsibility when available, else the only helper, else an error naming the
 * candidates and --pid. The hostagent is accounted too.
 */
#ifndef VMC_VMPROC_H
#define VMC_VMPROC_H

#include "clients/lima.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct vmproc {
	pid_t pid;	     /* the process holding guest RAM */
	pid_t hostagent_pid; /* limactl hostagent (0 if unknown) */
	const char *method;  /* how pid was chosen: "qemu.pid", "krunkit.pid", "responsibility",
				"only helper", "--pid" */
};

/*
 * pid_override > 0 skips discovery (method "--pid"). Returns VMC_EXIT_OK or an exit code
 * (VMC_EXIT_STOPPED, VMC_EXIT_HELPER, VMC_EXIT_PERMISSION) with a message in err.
 */
int vmproc_find(const struct lima_instance *inst, pid_t pid_override, struct vmproc *out, char *err,
		size_t errsize);

/*
 * The seam between the vz helper choice and macOS: tests install fakes to cover zero, one and
 * several helpers with and without the responsibility function. NULL restores the platform's.
 */
struct vmproc_ops {
	int (*vz_helpers)(pid_t *pids, size_t max, size_t *n);
	pid_t (*responsible_pid)(pid_t pid); /* NULL: the function is not available */
	bool (*pid_alive)(pid_t pid);
};
void vmproc_set_ops(const struct vmproc_ops *ops);

/* Most helpers vmproc_find looks at; more means something else is going on. */
#define VMPROC_MAX_HELPERS 64

#endif
