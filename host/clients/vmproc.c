/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which pid holds the guest's RAM. On qemu and krunkit the driver's pid file says it. On vz the
 * VM runs inside the hostagent, but its memory is charged to Apple's XPC helper
 * com.apple.Virtualization.VirtualMachine (one per running VM), which nothing in Lima records.
 */
#include "clients/vmproc.h"

#include "log.h"
#include "message.h"
#include "platform/platform.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static struct vmproc_ops ops;
static bool ops_set;

void vmproc_set_ops(const struct vmproc_ops *o)
{
	ops_set = o != NULL;
	if (o)
		ops = *o;
}

static struct vmproc_ops current_ops(void)
{
	if (ops_set)
		return ops;
	struct vmproc_ops p = {
	    .vz_helpers = platform_vz_helpers,
	    .responsible_pid = platform_has_responsibility() ? platform_responsible_pid : NULL,
	    .pid_alive = platform_pid_alive,
	};
	return p;
}

/* "4321 (responsible: 1200), 4400" for messages. */
static void describe_helpers(const pid_t *pids, const pid_t *resp, size_t n, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used + 1 < size; i++) {
		int w;
		if (resp[i] > 0)
			w = snprintf(buf + used, size - used, "%s%ld (responsible: %ld)",
				     i ? ", " : "", (long)pids[i], (long)resp[i]);
		else
			w = snprintf(buf + used, size - used, "%s%ld", i ? ", " : "",
				     (long)pids[i]);
		if (w < 0 || (size_t)w >= size - used)
			break;
		used += (size_t)w;
	}
}

static int find_vz_helper(const struct lima_instance *inst, const struct vmproc_ops *o,
			  struct vmproc *out, char *err, size_t errsize)
{
	pid_t helpers[VMPROC_MAX_HELPERS], resp[VMPROC_MAX_HELPERS];
	size_t n = 0;
	if (o->vz_helpers(helpers, VMPROC_MAX_HELPERS, &n) < 0) {
		if (errno == ENOTSUP) {
			vmc_textf(err, errsize,
				  "instance \"%s\" is a vz instance, and vz helpers exist only on "
				  "macOS: run vmcost on the Mac that runs it",
				  inst->name);
			return VMC_EXIT_UNSUPPORTED;
		}
		vmc_errorf(err, errsize, "cannot list processes:");
		return VMC_EXIT_FAILURE;
	}
	if (n > VMPROC_MAX_HELPERS)
		n = VMPROC_MAX_HELPERS;
	if (n == 0) {
		vmc_textf(err, errsize,
			  "no com.apple.Virtualization.VirtualMachine process is running although "
			  "instance \"%s\" is %s: check limactl list, or pass --pid PID",
			  inst->name, lima_status_name(inst->status));
		return VMC_EXIT_HELPER;
	}
	size_t matches = 0, match = 0;
	for (size_t i = 0; i < n; i++) {
		resp[i] = o->responsible_pid ? o->responsible_pid(helpers[i]) : -1;
		/* The VM lives in the hostagent (vz.pid == ha.pid), or in lima-driver-vz when vz is
		 * an external driver: either one may be the responsible process. */
		if (resp[i] > 0 && resp[i] != helpers[i] &&
		    (resp[i] == inst->ha_pid || resp[i] == inst->driver_pid)) {
			matches++;
			match = i;
		}
	}
	char list[512];
	describe_helpers(helpers, resp, n, list, sizeof list);
	if (matches == 1) {
		out->pid = helpers[match];
		out->method = "responsibility";
		return VMC_EXIT_OK;
	}
	if (matches > 1) {
		vmc_textf(err, errsize,
			  "%zu Virtualization helpers name the hostagent of \"%s\" as responsible "
			  "(pids %s): pick one with --pid PID",
			  matches, inst->name, list);
		return VMC_EXIT_HELPER;
	}
	if (n == 1) {
		out->pid = helpers[0];
		out->method = "only helper";
		return VMC_EXIT_OK;
	}
	vmc_textf(
	    err, errsize,
	    "%zu Virtualization helpers are running (pids %s) and %s: pick the one of \"%s\" "
	    "with --pid PID (Activity Monitor calls it \"Virtual Machine Service for limactl\")",
	    n, list,
	    o->responsible_pid ? "none names the hostagent as responsible"
			       : "this macOS offers no responsibility lookup to tell them apart",
	    inst->name);
	return VMC_EXIT_HELPER;
}

static int from_pid_file(const struct lima_instance *inst, const struct vmproc_ops *o,
			 struct vmproc *out, char *err, size_t errsize)
{
	if (inst->driver_pid <= 0) {
		vmc_textf(err, errsize,
			  "instance \"%s\" has no live %s.pid, so the process holding its RAM is "
			  "unknown: check limactl list, or pass --pid PID",
			  inst->name, inst->vm_type);
		return VMC_EXIT_HELPER;
	}
	if (!o->pid_alive(inst->driver_pid)) {
		vmc_textf(
		    err, errsize,
		    "%s.pid of \"%s\" names pid %ld, which is not running: check limactl list",
		    inst->vm_type, inst->name, (long)inst->driver_pid);
		return VMC_EXIT_HELPER;
	}
	out->pid = inst->driver_pid;
	out->method = strcmp(inst->vm_type, "krunkit") == 0 ? "krunkit.pid" : "qemu.pid";
	return VMC_EXIT_OK;
}

int vmproc_find(const struct lima_instance *inst, pid_t pid_override, struct vmproc *out, char *err,
		size_t errsize)
{
	memset(out, 0, sizeof *out);
	struct vmproc_ops o = current_ops();
	out->hostagent_pid = inst->ha_pid > 0 && o.pid_alive(inst->ha_pid) ? inst->ha_pid : 0;
	if (pid_override > 0) {
		if (!o.pid_alive(pid_override)) {
			vmc_textf(err, errsize, "--pid %ld: no such process", (long)pid_override);
			return VMC_EXIT_HELPER;
		}
		out->pid = pid_override;
		out->method = "--pid";
		return VMC_EXIT_OK;
	}
	if (inst->status != LIMA_STATUS_RUNNING) {
		vmc_textf(err, errsize, "instance \"%s\" is %s: start it with limactl start %s",
			  inst->name, lima_status_name(inst->status), inst->name);
		return VMC_EXIT_STOPPED;
	}
	if (strcmp(inst->vm_type, "qemu") == 0 || strcmp(inst->vm_type, "krunkit") == 0)
		return from_pid_file(inst, &o, out, err, errsize);
	if (strcmp(inst->vm_type, "vz") == 0)
		return find_vz_helper(inst, &o, out, err, errsize);
	vmc_textf(
	    err, errsize,
	    "instance \"%s\" uses vmType %s, which vmcost cannot measure (qemu, vz and krunkit "
	    "only)",
	    inst->name, inst->vm_type);
	return VMC_EXIT_UNSUPPORTED;
}
