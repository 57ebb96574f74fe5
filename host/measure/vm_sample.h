/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One sample of the VM process and its hostagent, the rates between two samples, and the JSON
 * of a process and of host memory: shared by list, footprint, idle, disk, trim, wakeups, load and
 * memtest.
 */
#ifndef VMC_VM_SAMPLE_H
#define VMC_VM_SAMPLE_H

#include "clients/vmproc.h"
#include "platform/platform.h"

#include <jansson.h>
#include <stdbool.h>

struct vm_sample {
	struct platform_proc_sample vm; /* the process holding guest RAM */
	struct platform_proc_sample ha; /* the hostagent, when has_ha */
	bool has_ha;			/* a live hostagent that is not the VM process itself */
};

/*
 * Samples vp->pid (required) and the hostagent (best effort). Returns VMC_EXIT_OK or an exit
 * code with a message in err: STOPPED when the VM process vanished, PERMISSION when it belongs
 * to another user, UNSUPPORTED on an OS without a platform layer.
 */
int measure_vm(const struct vmproc *vp, struct vm_sample *s, char *err, size_t errsize);

/* {"pid":…, "footprint":…, …}: the figures the sample has (split and wakeups only when known). */
json_t *measure_proc_json(pid_t pid, const struct platform_proc_sample *s);
/* {"os":…, "total":…, "free":…, "available":…} (+ compressor on macOS). */
json_t *measure_host_json(const struct platform_host_memory *hm);

/*
 * A counter's change per second. 0 when no time passed or the counter went backwards (a pid
 * reused by another process, a counter reset): unsigned subtraction would make that ~1.8e19.
 */
double measure_rate(uint64_t before, uint64_t after, double seconds);
/* CPU % of one core between two samples of the same process; 0 as for measure_rate. */
double measure_cpu_percent(const struct platform_proc_sample *a,
			   const struct platform_proc_sample *b);

/*
 * Why the footprint overstates what the VM costs on this vmType, or NULL when it does not: on
 * krunkit libkrun MADV_FREEs the pages the guest reports free, and they stay in the footprint
 * until the host needs them (docs/memtest.md#krunkit).
 */
const char *measure_footprint_caveat(const char *vm_type);

#endif
