/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/vm_sample.h"

#include "jsonutil.h"
#include "log.h"
#include "message.h"

#include <errno.h>
#include <string.h>

/* Exit code and message for a failed platform call on pid (errno in e). */
static int measure_errno(int e, pid_t pid, const char *what, char *err, size_t errsize)
{
	switch (e) {
	case ESRCH:
	case ENOENT:
		vmc_textf(err, errsize,
			  "%s (pid %ld) is gone: the instance stopped; check limactl list", what,
			  (long)pid);
		return VMC_EXIT_STOPPED;
	case EACCES:
	case EPERM: {
		uid_t uid;
		if (platform_proc_uid(pid, &uid) == 0)
			vmc_textf(
			    err, errsize,
			    "cannot read %s (pid %ld): it belongs to uid %ld; run vmcost as that "
			    "user or root",
			    what, (long)pid, (long)uid);
		else
			vmc_textf(err, errsize,
				  "cannot read %s (pid %ld): permission denied; run vmcost as its "
				  "owner or root",
				  what, (long)pid);
		return VMC_EXIT_PERMISSION;
	}
	case ENOTSUP:
		vmc_textf(err, errsize, "measuring processes is not supported on %s",
			  platform_os_name());
		return VMC_EXIT_UNSUPPORTED;
	default:
		errno = e;
		vmc_errorf(err, errsize, "cannot read %s (pid %ld):", what, (long)pid);
		return VMC_EXIT_FAILURE;
	}
}

int measure_vm(const struct vmproc *vp, struct vm_sample *s, char *err, size_t errsize)
{
	memset(s, 0, sizeof *s);
	if (platform_proc_sample(vp->pid, &s->vm) < 0)
		return measure_errno(errno, vp->pid, "the VM process", err, errsize);
	if (vp->hostagent_pid > 0 && vp->hostagent_pid != vp->pid)
		s->has_ha = platform_proc_sample(vp->hostagent_pid, &s->ha) == 0;
	return VMC_EXIT_OK;
}

json_t *measure_proc_json(pid_t pid, const struct platform_proc_sample *s)
{
	json_t *j = json_object();
	json_object_set_new(j, "pid", json_integer(pid));
	json_object_set_new(j, "footprint", vmc_json_u64(s->footprint));
	json_object_set_new(j, "resident", vmc_json_u64(s->resident));
	json_object_set_new(j, "peak_footprint", vmc_json_u64(s->peak_footprint));
	json_object_set_new(j, "cpu_ns", vmc_json_u64(s->cpu_ns));
	json_object_set_new(j, "disk_written", vmc_json_u64(s->disk_written));
	if (s->has_logical_writes)
		json_object_set_new(j, "logical_written", vmc_json_u64(s->logical_written));
	if (s->has_wakeups) {
		json_object_set_new(j, "idle_wakeups", vmc_json_u64(s->idle_wakeups));
		json_object_set_new(j, "interrupt_wakeups", vmc_json_u64(s->interrupt_wakeups));
	}
	if (s->has_split) {
		json_object_set_new(j, "anon", vmc_json_u64(s->anon));
		json_object_set_new(j, "file", vmc_json_u64(s->file));
		json_object_set_new(j, "shmem", vmc_json_u64(s->shmem));
		json_object_set_new(j, "swap", vmc_json_u64(s->swap));
	}
	return j;
}

json_t *measure_host_json(const struct platform_host_memory *hm)
{
	json_t *j = json_object();
	json_object_set_new(j, "os", json_string(platform_os_name()));
	json_object_set_new(j, "total", vmc_json_u64(hm->total));
	json_object_set_new(j, "free", vmc_json_u64(hm->free));
	json_object_set_new(j, "available", vmc_json_u64(hm->available));
	json_object_set_new(j, "page_size", vmc_json_u64(hm->page_size));
	if (hm->has_compressor) {
		json_object_set_new(j, "compressor_used", vmc_json_u64(hm->compressor_used));
		json_object_set_new(j, "compressor_stored", vmc_json_u64(hm->compressor_stored));
	}
	return j;
}

double measure_rate(uint64_t before, uint64_t after, double seconds)
{
	if (seconds <= 0 || after < before)
		return 0;
	return (double)(after - before) / seconds;
}

double measure_cpu_percent(const struct platform_proc_sample *a,
			   const struct platform_proc_sample *b)
{
	return measure_rate(a->cpu_ns, b->cpu_ns, b->taken_at - a->taken_at) / 1e9 * 100.0;
}

const char *measure_footprint_caveat(const char *vm_type)
{
	if (strcmp(vm_type, "krunkit") == 0)
		return "on krunkit the footprint overstates the cost: libkrun hands back the pages "
		       "the guest reports free with MADV_FREE, which the footprint keeps counting "
		       "until the host needs them (vmcost memtest NAME shows what pressure takes "
		       "back)";
	return NULL;
}
