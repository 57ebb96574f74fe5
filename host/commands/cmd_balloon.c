/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost balloon NAME [SIZE]: on qemu instances, the balloon target over QMP (query-balloon,
 * balloon), with the guest's MemTotal and the host footprint before and after. vz and krunkit
 * have nothing to drive, and the command says why instead of pretending.
 */
#include "clients/guest_memory.h"
#include "clients/qmp.h"
#include "clock.h"
#include "commands/cli.h"
#include "commands/commands.h"
#include "jsonutil.h"
#include "log.h"
#include "measure/vm_sample.h"
#include "message.h"
#include "units.h"

#include <string.h>
#include <strings.h>

#define QMP_TIMEOUT_MS 5000
/* Inflating 1 GiB took 0.8-1.8 s under TCG, deflating up to 5.3 s
 * (docs/lab.md#qmp-balloon-in-the-lab). */
#define BALLOON_WAIT_MAX_S 30.0
/* Below this the guest kernel cannot work at all: refuse rather than hang it. */
#define BALLOON_MIN_TARGET (256 * VMC_MIB)

static const struct cli_spec spec = {
    .name = "balloon",
    .synopsis = "NAME [SIZE|max] [--pid PID] [--json]",
    .help = "Without SIZE: the balloon's current target (the guest's logical RAM size) of a qemu\n"
	    "instance, read over $LIMA_HOME/NAME/qmp.sock, with the guest's MemTotal and the host\n"
	    "footprint. With SIZE (2GiB, 1536M) the balloon inflates or deflates to it and vmcost\n"
	    "waits until the guest got there; \"max\" deflates it fully (the configured memory).\n"
	    "QEMU needs a virtio-balloon device, which Lima's qemu driver does not add: vmcost\n"
	    "says how to add one. On vz and krunkit there is nothing to drive; vmcost says why.\n\n"
	    "  --pid PID  measure this process\n"
	    "  --json     machine-readable output\n\n"
	    "Example: vmcost balloon dev 3GiB\n",
    .flags = CLI_PID,
    .min_args = 1,
    .max_args = 2,
};

static int nothing_to_drive(const struct cli_opts *o, const struct lima_instance *inst)
{
	if (strcmp(inst->vm_type, "vz") == 0)
		return cli_fail(
		    o, VMC_EXIT_UNSUPPORTED,
		    "instance \"%s\" runs on vz: Lima attaches a balloon but "
		    "Virtualization.framework releases nothing to macOS when it inflates (the "
		    "footprint stays), so there is nothing to drive; memory comes back only "
		    "when the VM stops",
		    inst->name);
	if (strcmp(inst->vm_type, "krunkit") == 0)
		return cli_fail(
		    o, VMC_EXIT_UNSUPPORTED,
		    "instance \"%s\" runs on krunkit: libkrun's balloon does free-page "
		    "reporting by itself (freed guest pages go back with MADV_FREE) and takes "
		    "no target, so there is nothing to drive; reporting is lost if the guest "
		    "boots with init_on_free=1 (vmcost doctor %s checks it)",
		    inst->name, inst->name);
	return cli_fail(o, VMC_EXIT_UNSUPPORTED,
			"instance \"%s\" uses vmType %s: balloon control exists for qemu only",
			inst->name, inst->vm_type);
}

struct reading {
	uint64_t actual;
	struct guest_memory gm;
	bool has_guest;
	uint64_t footprint;
	bool has_footprint;
};

static void read_state(struct qmp *q, const struct lima_instance *inst, const struct vmproc *vp,
		       struct reading *r)
{
	char err[512], cls[64];
	struct vm_sample s;
	r->has_guest = guest_status(inst, 5000, &r->gm, NULL, err, sizeof err) == VMC_EXIT_OK;
	r->has_footprint = measure_vm(vp, &s, err, sizeof err) == VMC_EXIT_OK;
	r->footprint = s.vm.footprint;
	if (q)
		qmp_query_balloon(q, &r->actual, cls, sizeof cls, err, sizeof err);
}

static json_t *reading_json(const struct reading *r)
{
	return json_pack("{s:o,s:o,s:o}", "actual", vmc_json_u64(r->actual), "guest_mem_total",
			 r->has_guest ? vmc_json_u64(r->gm.total) : json_null(), "footprint",
			 r->has_footprint ? vmc_json_u64(r->footprint) : json_null());
}

static void print_reading(const char *label, const struct reading *r)
{
	char a[32], b[32], c[32];
	printf("%s%-7s%s  balloon target %s, guest MemTotal %s, host footprint %s\n", cli_bold(),
	       label, cli_reset(), vmc_format_bytes(r->actual, a, sizeof a),
	       r->has_guest ? vmc_format_bytes(r->gm.total, b, sizeof b) : "unknown (agent)",
	       r->has_footprint ? vmc_format_bytes(r->footprint, c, sizeof c) : "unknown");
}

/* Waits until query-balloon reports the target (within one MiB) or the time is up. */
static int wait_for_target(const struct cli_opts *o, struct qmp *q, uint64_t target,
			   uint64_t *actual, bool *reached)
{
	char err[512], cls[64], a[32], b[32];
	double start = vmc_monotonic_s();
	*reached = false;
	for (;;) {
		int rc = qmp_query_balloon(q, actual, cls, sizeof cls, err, sizeof err);
		if (rc != VMC_EXIT_OK)
			return cli_fail(o, rc, "%s", err);
		uint64_t diff = *actual > target ? *actual - target : target - *actual;
		if (diff <= VMC_MIB) {
			*reached = true;
			break;
		}
		if (vmc_monotonic_s() - start >= BALLOON_WAIT_MAX_S)
			break;
		cli_progress("balloon: guest at %s, target %s (%.0f s)",
			     vmc_format_bytes(*actual, a, sizeof a),
			     vmc_format_bytes(target, b, sizeof b), vmc_monotonic_s() - start);
		if (!cli_sleep(0.25))
			return cli_fail(
			    o, VMC_EXIT_INTERRUPTED,
			    "interrupted; the balloon keeps moving to its target in the guest");
	}
	cli_progress_done();
	return VMC_EXIT_OK;
}

static int parse_target(const struct cli_opts *o, const struct lima_instance *inst,
			uint64_t *target)
{
	const char *arg = o->args[1];
	if (strcasecmp(arg, "max") == 0) {
		*target = inst->memory;
		if (!*target)
			return cli_fail(o, VMC_EXIT_FAILURE,
					"the configured memory of \"%s\" is unknown: give a SIZE",
					inst->name);
		return CLI_CONTINUE;
	}
	char a[32], b[32];
	if (vmc_parse_size(arg, target) < 0)
		return cli_fail(o, VMC_EXIT_USAGE,
				"SIZE \"%s\" is not a size such as 2GiB or 1536M", arg);
	if (*target < BALLOON_MIN_TARGET)
		return cli_fail(o, VMC_EXIT_USAGE,
				"SIZE %s is below %s: the guest could not run; choose more",
				vmc_format_bytes(*target, a, sizeof a),
				vmc_format_bytes(BALLOON_MIN_TARGET, b, sizeof b));
	if (inst->memory && *target > inst->memory)
		return cli_fail(
		    o, VMC_EXIT_USAGE,
		    "SIZE %s is more than the instance's %s: a balloon can only take memory "
		    "away (use max to give it all back)",
		    vmc_format_bytes(*target, a, sizeof a),
		    vmc_format_bytes(inst->memory, b, sizeof b));
	return CLI_CONTINUE;
}

static int open_qmp(const struct cli_opts *o, const struct lima_instance *inst, struct qmp *q)
{
	char path[4200], err[1024], cls[64];
	lima_instance_path(inst, "qmp.sock", path, sizeof path);
	int rc = qmp_open(q, path, QMP_TIMEOUT_MS, err, sizeof err);
	if (rc != VMC_EXIT_OK)
		return cli_fail(o, rc, "%s", err);
	uint64_t actual;
	rc = qmp_query_balloon(q, &actual, cls, sizeof cls, err, sizeof err);
	if (rc != VMC_EXIT_OK && strcmp(cls, "DeviceNotActive") == 0) {
		qmp_close(q);
		return cli_fail(
		    o, VMC_EXIT_UNSUPPORTED,
		    "instance \"%s\" has no balloon device: Lima's qemu driver adds none; "
		    "start it with QEMU_SYSTEM_%s=\"qemu-system-%s -device "
		    "virtio-balloon-pci,free-page-reporting=on\"",
		    inst->name, strcmp(inst->arch, "aarch64") == 0 ? "AARCH64" : "X86_64",
		    inst->arch[0] ? inst->arch : "x86_64");
	}
	if (rc != VMC_EXIT_OK) {
		qmp_close(q);
		return cli_fail(o, rc, "%s", err);
	}
	return VMC_EXIT_OK;
}

int cmd_balloon(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse(&spec, argc, argv, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	struct lima_instance inst;
	struct vmproc vp;
	if ((rc = cli_vm_process(&o, o.args[0], &inst, &vp)) != VMC_EXIT_OK)
		return rc;
	if (strcmp(inst.vm_type, "qemu") != 0)
		return nothing_to_drive(&o, &inst);
	uint64_t target = 0;
	if (o.nargs == 2 && (rc = parse_target(&o, &inst, &target)) != CLI_CONTINUE)
		return rc;
	cli_catch_signals();
	struct qmp q;
	if ((rc = open_qmp(&o, &inst, &q)) != VMC_EXIT_OK)
		return rc;
	struct reading before, after;
	read_state(&q, &inst, &vp, &before);
	if (o.nargs < 2) {
		qmp_close(&q);
		if (o.json)
			return cli_print_json(json_pack("{s:s,s:s,s:o,s:o}", "instance", inst.name,
							"qemu", q.version, "configured_memory",
							vmc_json_u64(inst.memory), "now",
							reading_json(&before)));
		print_reading("now", &before);
		return VMC_EXIT_OK;
	}
	char err[1024], cls[64];
	if ((rc = qmp_balloon(&q, target, cls, sizeof cls, err, sizeof err)) != VMC_EXIT_OK) {
		qmp_close(&q);
		return cli_fail(&o, rc, "%s", err);
	}
	bool reached;
	uint64_t actual;
	rc = wait_for_target(&o, &q, target, &actual, &reached);
	if (rc == VMC_EXIT_OK) {
		/* The guest has its new size; give the footprint a moment to follow. */
		cli_sleep(1.0);
		read_state(&q, &inst, &vp, &after);
	}
	qmp_close(&q);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (o.json)
		return cli_print_json(
		    json_pack("{s:s,s:s,s:o,s:o,s:b,s:o,s:o}", "instance", inst.name, "qemu",
			      q.version, "target", vmc_json_u64(target), "configured_memory",
			      vmc_json_u64(inst.memory), "reached", reached, "before",
			      reading_json(&before), "after", reading_json(&after)));
	print_reading("before", &before);
	print_reading("after", &after);
	if (!reached) {
		char a[32];
		printf("the guest is still moving towards %s (it may be short of free memory)\n",
		       vmc_format_bytes(target, a, sizeof a));
	}
	return VMC_EXIT_OK;
}
