/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost idle NAME [DURATION [INTERVAL]]: CPU of the VM process as % of one core per interval,
 * min/median/max (the median shrugs off one wake-up burst), plus wakeups where the OS counts
 * them (macOS) or context switches of every VM thread (Linux).
 */
#include "clock.h"
#include "commands/cli.h"
#include "commands/commands.h"
#include "commands/table.h"
#include "jsonutil.h"
#include "log.h"
#include "measure/vm_sample.h"
#include "message.h"
#include "stats.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define IDLE_DEFAULT_DURATION 60.0
#define IDLE_DEFAULT_INTERVAL 10.0
#define IDLE_MAX_INTERVALS    100000

static const struct cli_spec spec = {
    .name = "idle",
    .synopsis = "NAME [DURATION [INTERVAL]] [--pid PID] [--json]",
    .help = "Samples the CPU time of the process holding NAME's RAM every INTERVAL for DURATION\n"
	    "(defaults 60 s and 10 s; plain numbers are seconds, or 2m, 500ms) and prints the CPU\n"
	    "used per interval as % of one core, with min/median/max, the hostagent's share, and\n"
	    "wakeups per second: package-idle and interrupt wakeups on macOS, context switches of\n"
	    "every VM thread on Linux. Leave the VM alone while it runs.\n\n"
	    "  --pid PID  measure this process (when several vz helpers run)\n"
	    "  --json     machine-readable output\n\n"
	    "Example: vmcost idle dev 120 60   (the published kit's form: 2 minutes, 1-minute "
	    "intervals)\n",
    .flags = CLI_PID,
    .min_args = 1,
    .max_args = 3,
};

struct interval {
	double seconds;
	double vm_percent, ha_percent;
	double idle_wakeups, interrupt_wakeups; /* per second, macOS */
	double switches;			/* per second, Linux (all VM threads) */
};

struct idle_run {
	struct interval *iv;
	size_t n, planned;
	double interval;
	bool has_ha, has_wakeups, has_switches;
};

/* One reading: the process sample plus thread switches where available. */
struct reading {
	struct vm_sample s;
	uint64_t switches;
	bool has_switches;
};

static int take_reading(const struct vmproc *vp, struct reading *r, char *err, size_t errsize)
{
	int rc = measure_vm(vp, &r->s, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	uint64_t vol, invol;
	r->has_switches = platform_proc_switches(vp->pid, &vol, &invol) == 0;
	r->switches = vol + invol;
	return VMC_EXIT_OK;
}

static void fill_interval(const struct reading *a, const struct reading *b, struct interval *iv)
{
	iv->seconds = b->s.vm.taken_at - a->s.vm.taken_at;
	iv->vm_percent = measure_cpu_percent(&a->s.vm, &b->s.vm);
	iv->ha_percent = a->s.has_ha && b->s.has_ha ? measure_cpu_percent(&a->s.ha, &b->s.ha) : 0;
	if (b->s.vm.has_wakeups) {
		iv->idle_wakeups =
		    measure_rate(a->s.vm.idle_wakeups, b->s.vm.idle_wakeups, iv->seconds);
		iv->interrupt_wakeups =
		    measure_rate(a->s.vm.interrupt_wakeups, b->s.vm.interrupt_wakeups, iv->seconds);
	}
	if (a->has_switches && b->has_switches)
		iv->switches = measure_rate(a->switches, b->switches, iv->seconds);
}

static struct vmc_summary summarize(const struct idle_run *run, size_t offset)
{
	double *v = malloc((run->n ? run->n : 1) * sizeof *v);
	if (!v)
		return (struct vmc_summary){0};
	for (size_t i = 0; i < run->n; i++)
		v[i] = *(const double *)((const char *)&run->iv[i] + offset);
	struct vmc_summary s = vmc_summarize(v, run->n);
	free(v);
	return s;
}

static json_t *summary_json(const struct vmc_summary *s)
{
	return json_pack("{s:f,s:f,s:f,s:f}", "min", s->min, "median", s->median, "max", s->max,
			 "mean", s->mean);
}

static json_t *run_json(const struct lima_instance *inst, const struct vmproc *vp,
			const struct idle_run *run, bool interrupted)
{
	json_t *samples = json_array();
	for (size_t i = 0; i < run->n; i++) {
		const struct interval *iv = &run->iv[i];
		json_t *j =
		    json_pack("{s:f,s:f}", "seconds", iv->seconds, "cpu_percent", iv->vm_percent);
		if (run->has_ha)
			json_object_set_new(j, "hostagent_cpu_percent", json_real(iv->ha_percent));
		if (run->has_wakeups) {
			json_object_set_new(j, "idle_wakeups_per_s", json_real(iv->idle_wakeups));
			json_object_set_new(j, "interrupt_wakeups_per_s",
					    json_real(iv->interrupt_wakeups));
		}
		if (run->has_switches)
			json_object_set_new(j, "context_switches_per_s", json_real(iv->switches));
		json_array_append_new(samples, j);
	}
	json_t *summary = json_object();
	struct vmc_summary s = summarize(run, offsetof(struct interval, vm_percent));
	json_object_set_new(summary, "cpu_percent", summary_json(&s));
	if (run->has_ha) {
		s = summarize(run, offsetof(struct interval, ha_percent));
		json_object_set_new(summary, "hostagent_cpu_percent", summary_json(&s));
	}
	if (run->has_wakeups) {
		s = summarize(run, offsetof(struct interval, idle_wakeups));
		json_object_set_new(summary, "idle_wakeups_per_s", summary_json(&s));
		s = summarize(run, offsetof(struct interval, interrupt_wakeups));
		json_object_set_new(summary, "interrupt_wakeups_per_s", summary_json(&s));
	}
	if (run->has_switches) {
		s = summarize(run, offsetof(struct interval, switches));
		json_object_set_new(summary, "context_switches_per_s", summary_json(&s));
	}
	char name[256];
	cli_proc_name(vp->pid, name, sizeof name);
	json_t *j = json_object();
	json_object_set_new(j, "instance", json_string(inst->name));
	json_object_set_new(j, "vm_type", json_string(inst->vm_type));
	json_object_set_new(j, "pid", json_integer(vp->pid));
	json_object_set_new(j, "process", json_string(name));
	json_object_set_new(j, "method", json_string(vp->method));
	json_object_set_new(j, "hostagent_pid",
			    run->has_ha ? json_integer(vp->hostagent_pid) : json_null());
	json_object_set_new(j, "interval_s", json_real(run->interval));
	json_object_set_new(j, "intervals", json_integer((json_int_t)run->n));
	json_object_set_new(j, "complete", json_boolean(!interrupted));
	json_object_set_new(j, "samples", samples);
	json_object_set_new(j, "summary", summary);
	return j;
}

static void print_human(const struct lima_instance *inst, const struct vmproc *vp,
			const struct idle_run *run, bool interrupted)
{
	char name[256], a[32], b[32], c[32], d[32];
	cli_proc_name(vp->pid, name, sizeof name);
	printf("Idle CPU of %s: %s pid %ld (chosen by %s), %zu interval%s of %s%s\n\n", inst->name,
	       name, (long)vp->pid, vp->method, run->n, run->n == 1 ? "" : "s",
	       vmc_format_duration(run->interval, a, sizeof a),
	       interrupted ? " (interrupted)" : "");
	const char *headers[5] = {"#", "VM CPU %"};
	size_t ncols = 2;
	if (run->has_ha)
		headers[ncols++] = "HOSTAGENT %";
	if (run->has_wakeups) {
		headers[ncols++] = "IDLE WAKEUPS/s";
		headers[ncols++] = "INTR WAKEUPS/s";
	} else if (run->has_switches) {
		headers[ncols++] = "SWITCHES/s";
	}
	struct table t;
	table_init(&t, ncols, headers, "rrrrr");
	for (size_t i = 0; i < run->n; i++) {
		const struct interval *iv = &run->iv[i];
		char idx[16];
		const char *cells[5] = {vmc_textf(idx, sizeof idx, "%zu", i + 1),
					vmc_textf(a, sizeof a, "%.2f", iv->vm_percent)};
		size_t k = 2;
		if (run->has_ha)
			cells[k++] = vmc_textf(b, sizeof b, "%.2f", iv->ha_percent);
		if (run->has_wakeups) {
			cells[k++] = vmc_textf(c, sizeof c, "%.1f", iv->idle_wakeups);
			cells[k++] = vmc_textf(d, sizeof d, "%.1f", iv->interrupt_wakeups);
		} else if (run->has_switches) {
			cells[k++] = vmc_textf(c, sizeof c, "%.1f", iv->switches);
		}
		table_add(&t, cells);
	}
	table_print(&t, stdout);
	table_free(&t);
	struct vmc_summary s = summarize(run, offsetof(struct interval, vm_percent));
	printf("\n%sVM process%s  %.2f %% of one core (median; min %.2f, max %.2f)\n", cli_bold(),
	       cli_reset(), s.median, s.min, s.max);
	if (run->has_ha) {
		s = summarize(run, offsetof(struct interval, ha_percent));
		printf("%shostagent%s   %.2f %% of one core (median; min %.2f, max %.2f)\n",
		       cli_bold(), cli_reset(), s.median, s.min, s.max);
	}
	if (run->has_wakeups) {
		s = summarize(run, offsetof(struct interval, idle_wakeups));
		printf("%swakeups%s     %.1f package-idle/s (median)", cli_bold(), cli_reset(),
		       s.median);
		s = summarize(run, offsetof(struct interval, interrupt_wakeups));
		printf(", %.1f interrupt/s\n", s.median);
	} else if (run->has_switches) {
		s = summarize(run, offsetof(struct interval, switches));
		printf("%sswitches%s    %.1f context switches/s over all VM threads (median; "
		       "min %.1f, max %.1f)\n",
		       cli_bold(), cli_reset(), s.median, s.min, s.max);
	}
}

static int parse_times(const struct cli_opts *o, double *duration, double *interval)
{
	*duration = IDLE_DEFAULT_DURATION;
	*interval = IDLE_DEFAULT_INTERVAL;
	if (o->nargs >= 2 && cli_duration(o->args[1], duration) < 0)
		return cli_fail(o, VMC_EXIT_USAGE,
				"DURATION \"%s\" is not a duration such as 120, 2m or 500ms",
				o->args[1]);
	if (o->nargs >= 3) {
		if (cli_duration(o->args[2], interval) < 0)
			return cli_fail(o, VMC_EXIT_USAGE,
					"INTERVAL \"%s\" is not a duration such as 60, 1m or 500ms",
					o->args[2]);
	} else if (*interval > *duration) {
		*interval = *duration;
	}
	if (*interval > *duration)
		return cli_fail(o, VMC_EXIT_USAGE, "INTERVAL (%g s) is longer than DURATION (%g s)",
				*interval, *duration);
	if (*interval < 0.1)
		return cli_fail(o, VMC_EXIT_USAGE,
				"INTERVAL below 100 ms measures the sampler, not the VM");
	if (*duration / *interval > IDLE_MAX_INTERVALS)
		return cli_fail(o, VMC_EXIT_USAGE, "more than %d intervals: use a longer INTERVAL",
				IDLE_MAX_INTERVALS);
	return CLI_CONTINUE;
}

/* Runs the intervals; returns VMC_EXIT_OK, INTERRUPTED, or an error already reported. */
static int sample_loop(const struct cli_opts *o, const struct vmproc *vp, struct idle_run *run)
{
	char err[1024];
	struct reading prev, cur;
	int rc = take_reading(vp, &prev, err, sizeof err);
	if (rc != VMC_EXIT_OK)
		return cli_fail(o, rc, "%s", err);
	run->has_ha = prev.s.has_ha;
	run->has_wakeups = prev.s.vm.has_wakeups;
	run->has_switches = prev.has_switches && !run->has_wakeups;
	double start = prev.s.vm.taken_at;
	for (size_t i = 0; i < run->planned; i++) {
		double due = start + (double)(i + 1) * run->interval;
		cli_progress("interval %zu/%zu, %.0f s left", i + 1, run->planned,
			     due + (double)(run->planned - i - 1) * run->interval -
				 vmc_monotonic_s());
		/* Sleep to a fixed schedule so sampling overhead does not stretch the run. */
		if (!cli_sleep(due - vmc_monotonic_s()))
			return VMC_EXIT_INTERRUPTED;
		rc = take_reading(vp, &cur, err, sizeof err);
		if (rc != VMC_EXIT_OK) {
			cli_progress_done();
			return cli_fail(o, rc, "%s", err);
		}
		fill_interval(&prev, &cur, &run->iv[run->n++]);
		run->has_ha = run->has_ha && cur.s.has_ha;
		prev = cur;
	}
	cli_progress_done();
	return VMC_EXIT_OK;
}

int cmd_idle(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse(&spec, argc, argv, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	double duration, interval;
	if ((rc = parse_times(&o, &duration, &interval)) != CLI_CONTINUE)
		return rc;
	struct lima_instance inst;
	struct vmproc vp;
	if ((rc = cli_vm_process(&o, o.args[0], &inst, &vp)) != VMC_EXIT_OK)
		return rc;
	struct idle_run run = {.interval = interval,
			       .planned = (size_t)floor(duration / interval + 1e-9)};
	run.iv = calloc(run.planned, sizeof *run.iv);
	if (!run.iv)
		return cli_fail(&o, VMC_EXIT_FAILURE, "out of memory");
	cli_catch_signals();
	rc = sample_loop(&o, &vp, &run);
	if (rc == VMC_EXIT_OK || (rc == VMC_EXIT_INTERRUPTED && run.n > 0)) {
		bool interrupted = rc == VMC_EXIT_INTERRUPTED;
		cli_progress_done();
		if (o.json)
			cli_print_json(run_json(&inst, &vp, &run, interrupted));
		else
			print_human(&inst, &vp, &run, interrupted);
	}
	if (rc == VMC_EXIT_INTERRUPTED)
		cli_fail(NULL, rc, "interrupted after %zu of %zu intervals", run.n, run.planned);
	free(run.iv);
	return rc;
}
