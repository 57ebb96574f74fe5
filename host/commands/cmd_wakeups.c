/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost wakeups NAME [SECONDS]: who wakes the guest (vmcost-agent's profile: interrupts,
 * softirqs, context switches per process), next to what the host saw of the VM process in
 * the same window, ranking first and totals in one summary.
 */
#include "clients/agent_client.h"
#include "commands/cli.h"
#include "commands/commands.h"
#include "commands/table.h"
#include "jsonutil.h"
#include "log.h"
#include "measure/vm_sample.h"
#include "message.h"
#include "units.h"

#include <string.h>

#define WAKEUPS_DEFAULT_SECONDS 30.0
#define WAKEUPS_MIN_SECONDS	0.1 /* the agent's own limits */
#define WAKEUPS_MAX_SECONDS	300.0
#define WAKEUPS_TOP		10

static const struct cli_spec spec = {
    .name = "wakeups",
    .synopsis = "NAME [SECONDS] [--pid PID] [--json]",
    .help = "Profiles for SECONDS (default 30; from 0.1 to 300) who wakes instance NAME's guest:\n"
	    "interrupts per second by source (the timer named: LOC on x86, arch_timer on arm64),\n"
	    "softirqs, and context switches per process, ranked, with vmcost-agent's own share;\n"
	    "and, over the same window, the VM process's CPU and wakeups on the host.\n\n"
	    "  --pid PID  host-side process to watch (when several vz helpers run)\n"
	    "  --json     machine-readable output\n\n"
	    "Example: vmcost wakeups dev 30\n",
    .flags = CLI_PID,
    .min_args = 1,
    .max_args = 2,
};

static double num(const json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

static void print_rates(const char *title, const json_t *list)
{
	if (!json_is_array(list) || json_array_size(list) == 0)
		return;
	const char *headers[] = {title, "PER S", "WHAT"};
	struct table t;
	table_init(&t, 3, headers, "lrl");
	size_t i;
	const json_t *row;
	json_array_foreach(list, i, row)
	{
		if (i >= WAKEUPS_TOP)
			break;
		char rate[32];
		const char *what = vmc_json_get_str(row, "description");
		const char *cells[3] = {vmc_json_get_str(row, "name"),
					vmc_textf(rate, sizeof rate, "%.1f", num(row, "per_s")),
					what && *what ? what : NULL};
		table_add(&t, cells);
	}
	table_print(&t, stdout);
	table_free(&t);
	printf("\n");
}

static void print_processes(const json_t *list)
{
	if (!json_is_array(list) || json_array_size(list) == 0)
		return;
	const char *headers[] = {"PROCESS", "PID", "SWITCHES/s", "VOLUNTARY", "INVOLUNTARY"};
	struct table t;
	table_init(&t, 5, headers, "lrrrr");
	size_t i;
	const json_t *row;
	json_array_foreach(list, i, row)
	{
		char pid[16], a[32], b[32], c[32];
		const char *cells[5] = {
		    vmc_json_get_str(row, "process"),
		    vmc_textf(pid, sizeof pid, "%lld",
			      (long long)json_integer_value(json_object_get(row, "pid"))),
		    vmc_textf(a, sizeof a, "%.1f", num(row, "per_s")),
		    vmc_textf(b, sizeof b, "%.1f", num(row, "voluntary_per_s")),
		    vmc_textf(c, sizeof c, "%.1f", num(row, "involuntary_per_s"))};
		table_add(&t, cells);
	}
	table_print(&t, stdout);
	table_free(&t);
	printf("\n");
}

struct host_view {
	bool ok;
	double cpu_percent, switches_per_s, idle_wakeups_per_s, interrupt_wakeups_per_s;
	bool has_switches, has_wakeups;
};

static void print_human(const struct lima_instance *inst, const struct vmproc *vp,
			const json_t *doc, const struct host_view *hv)
{
	const json_t *totals = json_object_get(doc, "totals");
	const json_t *timer = json_object_get(totals, "timer");
	const json_t *agent = json_object_get(totals, "agent");
	printf("Wakeups of %s's guest over %.1f s (%lld CPUs)\n\n", inst->name, num(doc, "seconds"),
	       (long long)json_integer_value(json_object_get(doc, "cpus")));
	print_rates("INTERRUPT", json_object_get(doc, "interrupts"));
	print_rates("SOFTIRQ", json_object_get(doc, "softirqs"));
	print_processes(json_object_get(doc, "processes"));
	printf("%sguest%s  %.1f interrupts/s", cli_bold(), cli_reset(),
	       num(totals, "interrupts_per_s"));
	if (json_is_object(timer))
		printf(" (timer %s %.1f/s, %.1f per CPU)", vmc_json_get_str_or(timer, "name", "?"),
		       num(timer, "per_s"), num(timer, "per_cpu_per_s"));
	printf(", %.1f softirqs/s, %.1f context switches/s; vmcost-agent %.2f %% of them\n",
	       num(totals, "softirqs_per_s"), num(totals, "context_switches_per_s"),
	       num(agent, "share_percent"));
	if (!hv->ok)
		return;
	printf("%shost%s   VM process (pid %ld) %.2f %% of one core", cli_bold(), cli_reset(),
	       (long)vp->pid, hv->cpu_percent);
	if (hv->has_wakeups)
		printf(", %.1f package-idle and %.1f interrupt wakeups/s", hv->idle_wakeups_per_s,
		       hv->interrupt_wakeups_per_s);
	else if (hv->has_switches)
		printf(", %.1f context switches/s over its threads", hv->switches_per_s);
	printf("\n");
}

static void host_view_between(const struct vm_sample *a, const struct vm_sample *b, uint64_t sw_a,
			      uint64_t sw_b, bool has_sw, struct host_view *hv)
{
	double t = b->vm.taken_at - a->vm.taken_at;
	if (t <= 0)
		return;
	hv->ok = true;
	hv->cpu_percent = measure_cpu_percent(&a->vm, &b->vm);
	hv->has_wakeups = b->vm.has_wakeups;
	if (hv->has_wakeups) {
		hv->idle_wakeups_per_s = measure_rate(a->vm.idle_wakeups, b->vm.idle_wakeups, t);
		hv->interrupt_wakeups_per_s =
		    measure_rate(a->vm.interrupt_wakeups, b->vm.interrupt_wakeups, t);
	}
	hv->has_switches = has_sw && sw_b >= sw_a;
	if (hv->has_switches)
		hv->switches_per_s = measure_rate(sw_a, sw_b, t);
}

static json_t *host_json(const struct vmproc *vp, const struct host_view *hv)
{
	if (!hv->ok)
		return json_null();
	json_t *j =
	    json_pack("{s:i,s:f}", "pid", (json_int_t)vp->pid, "cpu_percent", hv->cpu_percent);
	if (hv->has_wakeups) {
		json_object_set_new(j, "idle_wakeups_per_s", json_real(hv->idle_wakeups_per_s));
		json_object_set_new(j, "interrupt_wakeups_per_s",
				    json_real(hv->interrupt_wakeups_per_s));
	}
	if (hv->has_switches)
		json_object_set_new(j, "context_switches_per_s", json_real(hv->switches_per_s));
	return j;
}

int cmd_wakeups(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse(&spec, argc, argv, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	double seconds = WAKEUPS_DEFAULT_SECONDS;
	if (o.nargs >= 2 && (cli_duration(o.args[1], &seconds) < 0 ||
			     seconds < WAKEUPS_MIN_SECONDS || seconds > WAKEUPS_MAX_SECONDS))
		return cli_fail(&o, VMC_EXIT_USAGE,
				"SECONDS \"%s\" must be a duration from %.1f to %.0f s (30, 2m, "
				"500ms)",
				o.args[1], WAKEUPS_MIN_SECONDS, WAKEUPS_MAX_SECONDS);
	struct lima_instance inst;
	struct vmproc vp;
	if ((rc = cli_vm_process(&o, o.args[0], &inst, &vp)) != VMC_EXIT_OK)
		return rc;
	char err[1024], path[64];
	struct vm_sample a, b;
	uint64_t vol, invol, sw_a = 0, sw_b = 0;
	bool has_sw = platform_proc_switches(vp.pid, &vol, &invol) == 0;
	sw_a = vol + invol;
	bool host_ok = measure_vm(&vp, &a, err, sizeof err) == VMC_EXIT_OK;
	vmc_textf(path, sizeof path, "/v1/wakeups?seconds=%g", seconds);
	cli_progress("profiling the guest for %.0f s", seconds);
	json_t *doc;
	rc = agent_call(&inst, "GET", path, NULL, (long)(seconds * 1000) + 30000, &doc, err,
			sizeof err);
	cli_progress_done();
	if (rc != VMC_EXIT_OK)
		return cli_fail(&o, rc, "%s", err);
	struct host_view hv = {.ok = false};
	if (host_ok && measure_vm(&vp, &b, err, sizeof err) == VMC_EXIT_OK) {
		has_sw = has_sw && platform_proc_switches(vp.pid, &vol, &invol) == 0;
		sw_b = vol + invol;
		host_view_between(&a, &b, sw_a, sw_b, has_sw, &hv);
	}
	if (o.json) {
		json_t *j =
		    json_pack("{s:s,s:f,s:O,s:o}", "instance", inst.name, "seconds",
			      num(doc, "seconds"), "guest", doc, "host", host_json(&vp, &hv));
		rc = cli_print_json(j);
	} else {
		print_human(&inst, &vp, doc, &hv);
	}
	json_decref(doc);
	return rc;
}
