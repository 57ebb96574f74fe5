/* SPDX-License-Identifier: Apache-2.0 */
/* vmcost footprint NAME [--watch SECONDS]: what the process holding the VM's RAM costs now. */
#include "commands/cli.h"
#include "commands/commands.h"
#include "jsonutil.h"
#include "log.h"
#include "measure/vm_sample.h"
#include "units.h"

#include <string.h>
#include <time.h>

static const struct cli_spec spec = {
    .name = "footprint",
    .synopsis = "NAME [--watch SECONDS] [--pid PID] [--json]",
    .help = "Footprint of the process that holds instance NAME's guest RAM (QEMU on qemu, Apple's\n"
	    "com.apple.Virtualization.VirtualMachine helper on vz, krunkit on krunkit), its peak,\n"
	    "and the hostagent's, next to the host's free memory.\n"
	    "On macOS the footprint is phys_footprint (what Activity Monitor shows; compressed\n"
	    "pages count in full); on Linux it is RSS + swap of the process.\n\n"
	    "  --watch SECONDS  print one line per interval until Ctrl-C (JSON Lines with --json)\n"
	    "  --pid PID        measure this process (when several vz helpers run)\n"
	    "  --json           machine-readable output\n\n"
	    "Example: vmcost footprint dev --watch 2\n",
    .flags = CLI_PID | CLI_WATCH,
    .min_args = 1,
    .max_args = 1,
};

static json_t *footprint_json(const struct lima_instance *inst, const struct vmproc *vp,
			      const struct vm_sample *s, const struct platform_host_memory *hm,
			      const struct platform_proc_detail *detail)
{
	char name[256];
	cli_proc_name(vp->pid, name, sizeof name);
	json_t *proc = measure_proc_json(vp->pid, &s->vm);
	json_object_set_new(proc, "name", json_string(name));
	json_object_set_new(proc, "method", json_string(vp->method));
	if (detail) {
		json_object_set_new(proc, "rss_exact", vmc_json_u64(detail->rss));
		json_object_set_new(proc, "pss", vmc_json_u64(detail->pss));
		json_object_set_new(proc, "anon_huge", vmc_json_u64(detail->anon_huge));
	}
	json_t *j = json_object();
	json_object_set_new(j, "instance", json_string(inst->name));
	json_object_set_new(j, "vm_type", json_string(inst->vm_type));
	json_object_set_new(j, "configured_memory", vmc_json_u64(inst->memory));
	json_object_set_new(j, "process", proc);
	const char *caveat = measure_footprint_caveat(inst->vm_type);
	json_object_set_new(j, "footprint_overstates", json_boolean(caveat != NULL));
	json_object_set_new(j, "footprint_note", caveat ? json_string(caveat) : json_null());
	json_object_set_new(j, "hostagent",
			    s->has_ha ? measure_proc_json(vp->hostagent_pid, &s->ha) : json_null());
	json_object_set_new(j, "host", hm ? measure_host_json(hm) : json_null());
	return j;
}

static void print_human(const struct lima_instance *inst, const struct vmproc *vp,
			const struct vm_sample *s, const struct platform_host_memory *hm,
			const struct platform_proc_detail *detail)
{
	char name[256], a[32], b[32], c[32], d[32];
	cli_proc_name(vp->pid, name, sizeof name);
	printf("%sinstance%s   %s (%s, %s configured)\n", cli_bold(), cli_reset(), inst->name,
	       inst->vm_type, vmc_format_bytes(inst->memory, a, sizeof a));
	printf("%sprocess%s    %s, pid %ld (chosen by %s)\n", cli_bold(), cli_reset(), name,
	       (long)vp->pid, vp->method);
	printf("%sfootprint%s  %s", cli_bold(), cli_reset(),
	       vmc_format_bytes(s->vm.footprint, a, sizeof a));
	if (s->vm.has_split)
		printf("  (resident %s + swap %s)\n", vmc_format_bytes(s->vm.resident, b, sizeof b),
		       vmc_format_bytes(s->vm.swap, c, sizeof c));
	else
		printf("  (resident %s)\n", vmc_format_bytes(s->vm.resident, b, sizeof b));
	const char *caveat = measure_footprint_caveat(inst->vm_type);
	if (caveat)
		printf("%snote%s       %s\n", cli_bold(), cli_reset(), caveat);
	printf("%speak%s       %s\n", cli_bold(), cli_reset(),
	       vmc_format_bytes(s->vm.peak_footprint, a, sizeof a));
	if (s->vm.has_split)
		printf("%ssplit%s      anonymous %s, file %s, shmem %s\n", cli_bold(), cli_reset(),
		       vmc_format_bytes(s->vm.anon, a, sizeof a),
		       vmc_format_bytes(s->vm.file, b, sizeof b),
		       vmc_format_bytes(s->vm.shmem, c, sizeof c));
	if (detail)
		printf("%sexact%s      rss %s, pss %s, of which %s in transparent huge pages\n",
		       cli_bold(), cli_reset(), vmc_format_bytes(detail->rss, a, sizeof a),
		       vmc_format_bytes(detail->pss, b, sizeof b),
		       vmc_format_bytes(detail->anon_huge, c, sizeof c));
	if (s->has_ha)
		printf("%shostagent%s  pid %ld, footprint %s\n", cli_bold(), cli_reset(),
		       (long)vp->hostagent_pid, vmc_format_bytes(s->ha.footprint, a, sizeof a));
	if (hm) {
		printf("%shost%s       %s total, %s free, %s available", cli_bold(), cli_reset(),
		       vmc_format_bytes(hm->total, a, sizeof a),
		       vmc_format_bytes(hm->free, b, sizeof b),
		       vmc_format_bytes(hm->available, c, sizeof c));
		if (hm->has_compressor)
			printf(", compressor %s",
			       vmc_format_bytes(hm->compressor_used, d, sizeof d));
		printf("\n");
	}
}

static int watch(const struct cli_opts *o, const struct lima_instance *inst,
		 const struct vmproc *vp)
{
	cli_catch_signals();
	char err[1024];
	struct vm_sample first, s;
	int rc = measure_vm(vp, &first, err, sizeof err);
	if (rc != VMC_EXIT_OK)
		return cli_fail(o, rc, "%s", err);
	if (!o->json)
		printf("%s%-8s  %10s  %10s  %10s  %10s%s\n", cli_bold(), "time", "footprint",
		       "change", "peak", "host free", cli_reset());
	s = first;
	for (;;) {
		struct platform_host_memory hm;
		bool have_host = platform_host_memory(&hm) == 0;
		time_t now = time(NULL);
		char clock[16];
		strftime(clock, sizeof clock, "%H:%M:%S", localtime(&now));
		if (o->json) {
			json_t *j = footprint_json(inst, vp, &s, have_host ? &hm : NULL, NULL);
			json_object_set_new(j, "time", json_integer((json_int_t)now));
			if (cli_print_json_line(j) != VMC_EXIT_OK)
				return VMC_EXIT_FAILURE;
		} else {
			char a[32], b[32], c[32], d[32];
			printf("%-8s  %10s  %10s  %10s  %10s\n", clock,
			       vmc_format_bytes(s.vm.footprint, a, sizeof a),
			       vmc_format_bytes_delta((int64_t)s.vm.footprint -
							  (int64_t)first.vm.footprint,
						      b, sizeof b),
			       vmc_format_bytes(s.vm.peak_footprint, c, sizeof c),
			       have_host ? vmc_format_bytes(hm.free, d, sizeof d) : "-");
			if (fflush(stdout) != 0)
				return VMC_EXIT_FAILURE;
		}
		if (!cli_sleep(o->watch))
			return VMC_EXIT_INTERRUPTED;
		rc = measure_vm(vp, &s, err, sizeof err);
		if (rc != VMC_EXIT_OK)
			return cli_fail(o, rc, "%s", err);
	}
}

int cmd_footprint(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse(&spec, argc, argv, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	struct lima_instance inst;
	struct vmproc vp;
	if ((rc = cli_vm_process(&o, o.args[0], &inst, &vp)) != VMC_EXIT_OK)
		return rc;
	if (o.watch > 0)
		return watch(&o, &inst, &vp);
	char err[1024];
	struct vm_sample s;
	if ((rc = measure_vm(&vp, &s, err, sizeof err)) != VMC_EXIT_OK)
		return cli_fail(&o, rc, "%s", err);
	struct platform_host_memory hm;
	bool have_host = platform_host_memory(&hm) == 0;
	/* Exact figures cost a page-table walk: fine once, never in a loop. */
	struct platform_proc_detail detail;
	bool have_detail = platform_proc_detail(vp.pid, &detail) == 0;
	if (o.json)
		return cli_print_json(footprint_json(&inst, &vp, &s, have_host ? &hm : NULL,
						     have_detail ? &detail : NULL));
	print_human(&inst, &vp, &s, have_host ? &hm : NULL, have_detail ? &detail : NULL);
	return VMC_EXIT_OK;
}
