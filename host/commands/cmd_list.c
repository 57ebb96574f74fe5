/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost list: every instance with what it costs now. The ratchet gap is the memory the host
 * still holds for the VM although the guest has it free: footprint - (MemTotal - MemFree).
 */
#include "autostop/status.h"
#include "clients/guest_memory.h"
#include "commands/cli.h"
#include "commands/commands.h"
#include "commands/table.h"
#include "jsonutil.h"
#include "log.h"
#include "measure/vm_sample.h"
#include "message.h"
#include "units.h"

#include <stdlib.h>
#include <string.h>

/* The agent answers status in milliseconds; a list must not hang on one broken forward. */
#define LIST_AGENT_TIMEOUT_MS 2000

static const struct cli_spec spec = {
    .name = "list",
    .synopsis = "[--json]",
    .help =
	"Every Lima instance in $LIMA_HOME with its status, vmType, configured memory, the\n"
	"process holding its RAM (and how it was chosen), its footprint now, its peak, and the\n"
	"ratchet gap: footprint minus what the guest uses (MemTotal - MemFree, from\n"
	"vmcost-agent). A large gap is memory the guest freed but the host never got back.\n"
	"Where vmcost autostop serves an instance, an AUTOSTOP column says what it sees: idle\n"
	"time, stopped (and the RAM the stop gave back), starting.\n\n"
	"  --json  machine-readable output\n\n"
	"Example: vmcost list\n",
    .min_args = 0,
    .max_args = 0,
};

struct row {
	const struct lima_instance *inst;
	struct vmproc vp;
	struct vm_sample s;
	struct guest_memory gm;
	json_t *autostop; /* vmcost autostop's status document, NULL when none serves it */
	bool measured, guest_known;
	char problem[512];
};

static void measure_row(struct row *r)
{
	char err[1024];
	const struct lima_instance *inst = r->inst;
	if (autostop_status_fetch(inst->dir, &r->autostop, err, sizeof err) != 0)
		r->autostop = NULL;
	if (inst->status != LIMA_STATUS_RUNNING) {
		if (inst->problem[0])
			vmc_textf(r->problem, sizeof r->problem, "%s", inst->problem);
		return;
	}
	if (vmproc_find(inst, 0, &r->vp, err, sizeof err) != VMC_EXIT_OK) {
		vmc_textf(r->problem, sizeof r->problem, "%s", err);
		return;
	}
	if (measure_vm(&r->vp, &r->s, err, sizeof err) != VMC_EXIT_OK) {
		vmc_textf(r->problem, sizeof r->problem, "%s", err);
		return;
	}
	r->measured = true;
	r->guest_known =
	    guest_status(inst, LIST_AGENT_TIMEOUT_MS, &r->gm, NULL, err, sizeof err) == VMC_EXIT_OK;
}

static int64_t gap_of(const struct row *r)
{
	return (int64_t)r->s.vm.footprint - (int64_t)guest_used(&r->gm);
}

static json_t *row_json(const struct row *r)
{
	const struct lima_instance *inst = r->inst;
	json_t *j = json_object();
	json_object_set_new(j, "name", json_string(inst->name));
	json_object_set_new(j, "status", json_string(lima_status_name(inst->status)));
	json_object_set_new(j, "vm_type", json_string(inst->vm_type));
	json_object_set_new(j, "configured_memory",
			    inst->memory ? vmc_json_u64(inst->memory) : json_null());
	json_object_set_new(j, "dir", json_string(inst->dir));
	json_object_set_new(j, "pid", r->measured ? json_integer(r->vp.pid) : json_null());
	json_object_set_new(j, "method", r->measured ? json_string(r->vp.method) : json_null());
	json_object_set_new(j, "footprint",
			    r->measured ? vmc_json_u64(r->s.vm.footprint) : json_null());
	json_object_set_new(j, "peak_footprint",
			    r->measured ? vmc_json_u64(r->s.vm.peak_footprint) : json_null());
	json_object_set_new(j, "guest_used",
			    r->guest_known ? vmc_json_u64(guest_used(&r->gm)) : json_null());
	json_object_set_new(j, "ratchet_gap",
			    r->measured && r->guest_known ? json_integer(gap_of(r)) : json_null());
	json_object_set_new(j, "problem", r->problem[0] ? json_string(r->problem) : json_null());
	json_object_set_new(j, "footprint_overstates",
			    json_boolean(measure_footprint_caveat(inst->vm_type) != NULL));
	json_object_set(j, "autostop", r->autostop ? r->autostop : json_null());
	return j;
}

static void print_table(const struct row *rows, size_t n)
{
	static const char *const headers[] = {"NAME",	   "STATUS", "VMTYPE", "MEMORY",  "PID",
					      "FOOTPRINT", "PEAK",   "GAP",    "AUTOSTOP"};
	bool any_autostop = false;
	for (size_t i = 0; i < n; i++)
		any_autostop |= rows[i].autostop != NULL;
	size_t ncols = any_autostop ? 9 : 8;
	struct table t;
	table_init(&t, ncols, headers, "lllrlrrrl");
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		char mem[32], pid[64], fp[32], peak[32], gap[32], autostop[96];
		const char *cells[9] = {r->inst->name, lima_status_name(r->inst->status),
					r->inst->vm_type};
		cells[3] =
		    r->inst->memory ? vmc_format_bytes(r->inst->memory, mem, sizeof mem) : NULL;
		if (r->measured) {
			cells[4] =
			    vmc_textf(pid, sizeof pid, "%ld (%s)", (long)r->vp.pid, r->vp.method);
			cells[5] = vmc_format_bytes(r->s.vm.footprint, fp, sizeof fp);
			/* A mark, and the reason under the table. */
			if (measure_footprint_caveat(r->inst->vm_type))
				strncat(fp, "*", sizeof fp - strlen(fp) - 1);
			cells[6] = vmc_format_bytes(r->s.vm.peak_footprint, peak, sizeof peak);
			if (r->guest_known)
				cells[7] = vmc_format_bytes_delta(gap_of(r), gap, sizeof gap);
		}
		if (r->autostop) {
			autostop_status_cell(r->autostop, autostop, sizeof autostop);
			cells[8] = autostop;
		}
		table_add(&t, cells);
	}
	table_print(&t, stdout);
	table_free(&t);
	for (size_t i = 0; i < n; i++)
		if (rows[i].problem[0])
			printf("%s: %s\n", rows[i].inst->name, rows[i].problem);
	for (size_t i = 0; i < n; i++)
		if (rows[i].measured && measure_footprint_caveat(rows[i].inst->vm_type)) {
			printf("* %s\n", measure_footprint_caveat(rows[i].inst->vm_type));
			break;
		}
	bool any_gap_missing = false;
	for (size_t i = 0; i < n; i++)
		any_gap_missing |= rows[i].measured && !rows[i].guest_known;
	if (any_gap_missing)
		printf("GAP needs vmcost-agent in the guest; \"-\" where it did not answer.\n");
}

int cmd_list(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse(&spec, argc, argv, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	struct lima_instance *list;
	size_t n;
	char err[1024];
	if ((rc = lima_instance_list(&list, &n, err, sizeof err)) != VMC_EXIT_OK)
		return cli_fail(&o, rc, "%s", err);
	struct row *rows = calloc(n ? n : 1, sizeof *rows);
	if (!rows) {
		free(list);
		return cli_fail(&o, VMC_EXIT_FAILURE, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		rows[i].inst = &list[i];
		if (n > 1)
			cli_progress("measuring %s (%zu/%zu)", list[i].name, i + 1, n);
		measure_row(&rows[i]);
	}
	cli_progress_done();
	if (o.json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, row_json(&rows[i]));
		rc = cli_print_json(json_pack("{s:o}", "instances", arr));
	} else if (n == 0) {
		char home[4096] = "";
		lima_home(home, sizeof home);
		printf("No instances in %s (create one with limactl start).\n", home);
	} else {
		print_table(rows, n);
	}
	for (size_t i = 0; i < n; i++)
		json_decref(rows[i].autostop);
	free(rows);
	free(list);
	return rc;
}
