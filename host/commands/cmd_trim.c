/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost trim NAME: one trim pass in the guest now (POST /v1/trim, forced), then the host
 * footprint until free-page reporting has handed the memory back. Reporting returns 256 MiB
 * every 2 s (docs/lab.md#free-page-reporting-under-tcg), so "settled" means no new low for a few
 * of those periods.
 */
#include "clients/agent_client.h"
#include "clients/guest_memory.h"
#include "clock.h"
#include "commands/cli.h"
#include "commands/commands.h"
#include "jsonutil.h"
#include "log.h"
#include "measure/vm_sample.h"
#include "message.h"
#include "units.h"

#include <string.h>

#define TRIM_AGENT_TIMEOUT_MS 300000
#define SETTLE_POLL_S	      1.0
#define SETTLE_QUIET_S	      6.0 /* three reporting periods without a new low */
#define SETTLE_MAX_S	      90.0
#define SETTLE_NOISE	      (1 * VMC_MIB)
/* Without a return path, one look after a short wait shows that nothing came back. */
#define NO_RETURN_WAIT_S 3.0

static const struct cli_spec spec = {
    .name = "trim",
    .synopsis = "NAME [--pid PID] [--json]",
    .help = "Asks vmcost-agent in instance NAME to trim the guest's page cache now (even if the\n"
	    "guest is busy), then watches the host footprint of the VM process until free-page\n"
	    "reporting stops handing memory back (at most 90 s), and prints the guest bytes\n"
	    "freed and the footprint before and after. Without a return path (vz, or qemu\n"
	    "without a reporting balloon) the guest frees memory but the host gets nothing back:\n"
	    "the output says so.\n\n"
	    "  --pid PID  measure this process (when several vz helpers run)\n"
	    "  --json     machine-readable output\n\n"
	    "Example: vmcost trim dev\n",
    .flags = CLI_PID,
    .min_args = 1,
    .max_args = 1,
};

struct settle {
	uint64_t before, after, lowest;
	double waited;
	bool settled, watched;
};

/* Polls the footprint until it stops making new lows. Returns an exit code. */
static int wait_for_return(const struct cli_opts *o, const struct vmproc *vp, bool expect,
			   struct settle *st)
{
	char err[1024], a[32], b[32];
	struct vm_sample s;
	double start = vmc_monotonic_s(), last_low = start;
	st->lowest = st->before;
	st->watched = expect;
	for (;;) {
		double now = vmc_monotonic_s();
		st->waited = now - start;
		if (!expect && st->waited >= NO_RETURN_WAIT_S)
			break;
		if (expect && now - last_low >= SETTLE_QUIET_S) {
			st->settled = true;
			break;
		}
		if (expect && st->waited >= SETTLE_MAX_S)
			break;
		cli_progress(
		    "host footprint %s -> %s, waiting for the host to take memory back (%.0f s)",
		    vmc_format_bytes(st->before, a, sizeof a),
		    vmc_format_bytes(st->lowest, b, sizeof b), st->waited);
		if (!cli_sleep(SETTLE_POLL_S))
			return cli_fail(o, VMC_EXIT_INTERRUPTED, "interrupted while waiting");
		int rc = measure_vm(vp, &s, err, sizeof err);
		if (rc != VMC_EXIT_OK)
			return cli_fail(o, rc, "%s", err);
		if (s.vm.footprint + SETTLE_NOISE < st->lowest) {
			st->lowest = s.vm.footprint;
			last_low = vmc_monotonic_s();
		} else if (s.vm.footprint < st->lowest) {
			st->lowest = s.vm.footprint;
		}
		st->after = s.vm.footprint;
	}
	cli_progress_done();
	return VMC_EXIT_OK;
}

static const char *return_path_note(const struct lima_instance *inst, bool reporting)
{
	if (strcmp(inst->vm_type, "vz") == 0)
		return "vz has no memory-return path: the guest freed memory, the host keeps it "
		       "until "
		       "the VM stops";
	if (!reporting)
		return "no free-page reporting in this guest: the guest freed memory, the host "
		       "keeps "
		       "it (vmcost doctor shows how to add a reporting balloon)";
	return NULL;
}

static json_t *trim_json(const struct lima_instance *inst, const struct vmproc *vp,
			 json_t *agent_doc, const struct settle *st, bool reporting,
			 const char *note)
{
	uint64_t freed = 0;
	vmc_json_get_u64(agent_doc, "freed_bytes", &freed);
	json_t *j = json_object();
	json_object_set_new(j, "instance", json_string(inst->name));
	json_object_set_new(j, "vm_type", json_string(inst->vm_type));
	json_object_set_new(j, "pid", json_integer(vp->pid));
	json_object_set_new(j, "method", json_string(vp->method));
	json_object_set_new(j, "guest_freed", vmc_json_u64(freed));
	json_object_set_new(j, "footprint_before", vmc_json_u64(st->before));
	json_object_set_new(j, "footprint_after", vmc_json_u64(st->after));
	json_object_set_new(j, "host_returned",
			    json_integer((json_int_t)st->before - (json_int_t)st->after));
	json_object_set_new(j, "page_reporting", json_boolean(reporting));
	json_object_set_new(j, "settled", json_boolean(st->settled));
	json_object_set_new(j, "waited_s", json_real(st->waited));
	json_object_set_new(j, "note", note ? json_string(note) : json_null());
	json_object_set_new(j, "trim", json_incref(agent_doc));
	return j;
}

static void print_human(const struct lima_instance *inst, json_t *doc, const struct settle *st,
			const char *note)
{
	char a[32], b[32], c[32];
	uint64_t freed = 0, cache_before = 0, cache_after = 0;
	vmc_json_get_u64(doc, "freed_bytes", &freed);
	vmc_json_get_u64(doc, "file_cache_before", &cache_before);
	vmc_json_get_u64(doc, "file_cache_after", &cache_after);
	const char *method = vmc_json_get_str(doc, "method");
	printf("%sguest%s      freed %s (page cache %s -> %s) via %s%s\n", cli_bold(), cli_reset(),
	       vmc_format_bytes(freed, a, sizeof a), vmc_format_bytes(cache_before, b, sizeof b),
	       vmc_format_bytes(cache_after, c, sizeof c), method ? method : "?",
	       json_is_true(json_object_get(doc, "compacted")) ? ", then compacted" : "");
	printf("%sfootprint%s  %s -> %s (%s) after %.0f s%s\n", cli_bold(), cli_reset(),
	       vmc_format_bytes(st->before, a, sizeof a), vmc_format_bytes(st->after, b, sizeof b),
	       vmc_format_bytes_delta((int64_t)st->after - (int64_t)st->before, c, sizeof c),
	       st->waited,
	       st->watched ? (st->settled ? ", settled" : ", still falling when vmcost stopped")
			   : "");
	if (note)
		printf("%snote%s       %s\n", cli_bold(), cli_reset(), note);
	(void)inst;
}

int cmd_trim(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse(&spec, argc, argv, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	struct lima_instance inst;
	struct vmproc vp;
	if ((rc = cli_vm_process(&o, o.args[0], &inst, &vp)) != VMC_EXIT_OK)
		return rc;
	cli_catch_signals();
	char err[1024];
	struct guest_memory gm;
	if ((rc = guest_status(&inst, 10000, &gm, NULL, err, sizeof err)) != VMC_EXIT_OK)
		return cli_fail(&o, rc, "%s", err);
	bool reporting = gm.page_reporting && strcmp(inst.vm_type, "vz") != 0;
	struct vm_sample s;
	if ((rc = measure_vm(&vp, &s, err, sizeof err)) != VMC_EXIT_OK)
		return cli_fail(&o, rc, "%s", err);
	struct settle st = {.before = s.vm.footprint, .after = s.vm.footprint};
	cli_progress("trimming the guest's page cache");
	json_t *doc;
	rc = agent_call(&inst, "POST", "/v1/trim", "{\"force\": true}", TRIM_AGENT_TIMEOUT_MS, &doc,
			err, sizeof err);
	cli_progress_done();
	if (rc != VMC_EXIT_OK)
		return cli_fail(&o, rc, "%s", err);
	if (!json_is_true(json_object_get(doc, "ran"))) {
		const char *decision = vmc_json_get_str(doc, "decision");
		const char *reason = vmc_json_get_str(doc, "reason");
		/* Cache within the floor is an answer, not a failure: nothing to give back. */
		if (decision && strcmp(decision, "nothing-to-do") == 0) {
			if (o.json)
				rc = cli_print_json(
				    trim_json(&inst, &vp, doc, &st, reporting, reason));
			else
				printf("%sguest%s      nothing to trim: %s\n", cli_bold(),
				       cli_reset(), reason ? reason : "");
			json_decref(doc);
			return rc;
		}
		rc = cli_fail(&o, VMC_EXIT_AGENT, "vmcost-agent did not trim: %s",
			      reason ? reason : "no reason given");
		json_decref(doc);
		return rc;
	}
	if ((rc = wait_for_return(&o, &vp, reporting, &st)) != VMC_EXIT_OK) {
		json_decref(doc);
		return rc;
	}
	const char *note = return_path_note(&inst, reporting);
	if (o.json)
		rc = cli_print_json(trim_json(&inst, &vp, doc, &st, reporting, note));
	else
		print_human(&inst, doc, &st, note);
	json_decref(doc);
	return rc;
}
