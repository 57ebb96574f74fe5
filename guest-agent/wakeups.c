/* SPDX-License-Identifier: Apache-2.0 */
#include "wakeups.h"

#include "agent.h"
#include "clock.h"
#include "jsonutil.h"
#include "message.h"
#include "procfs.h"
#include "proclist.h"
#include "procpid.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int compare_tid(const void *a, const void *b)
{
	pid_t x = ((const struct wakeups_thread *)a)->tid,
	      y = ((const struct wakeups_thread *)b)->tid;
	return (x > y) - (x < y);
}

static bool read_thread(pid_t pid, pid_t tid, struct wakeups_thread *t)
{
	char path[96], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
	struct vmc_proc_status st;
	if (vmc_fs_read_buf(path, buf, sizeof buf, NULL) < 0 ||
	    vmc_proc_status_parse(buf, &st) < 0 || !st.has_ctxt)
		return false;
	t->pid = pid;
	t->tid = tid;
	snprintf(t->comm, sizeof t->comm, "%.15s", st.name);
	t->switches_voluntary = st.voluntary_ctxt_switches;
	t->switches_involuntary = st.nonvoluntary_ctxt_switches;
	return true;
}

static int grow(struct wakeups_sample *s, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t grown_cap = *cap ? *cap * 2 : 256;
	while (grown_cap < need)
		grown_cap *= 2;
	struct wakeups_thread *grown = realloc(s->threads, grown_cap * sizeof *grown);
	if (!grown)
		return -1;
	s->threads = grown;
	*cap = grown_cap;
	return 0;
}

static int take_threads(struct wakeups_sample *s)
{
	pid_t *pids;
	size_t npids, cap = 0;
	if (vmc_proc_list(&pids, &npids) < 0)
		return -1;
	for (size_t i = 0; i < npids; i++) {
		pid_t *tids;
		size_t ntids;
		if (vmc_proc_tasks(pids[i], &tids, &ntids) < 0)
			continue; /* exited meanwhile */
		if (grow(s, &cap, s->nthreads + ntids) < 0) {
			free(tids);
			free(pids);
			errno = ENOMEM;
			return -1;
		}
		char process[16] = "";
		size_t first = s->nthreads;
		for (size_t j = 0; j < ntids; j++) {
			struct wakeups_thread *t = &s->threads[s->nthreads];
			if (!read_thread(pids[i], tids[j], t))
				continue;
			if (tids[j] == pids[i])
				snprintf(process, sizeof process, "%s", t->comm);
			s->nthreads++;
		}
		for (size_t j = first; j < s->nthreads; j++)
			snprintf(s->threads[j].process, sizeof s->threads[j].process, "%s",
				 process[0] ? process : s->threads[j].comm);
		free(tids);
	}
	free(pids);
	if (s->nthreads > 1)
		qsort(s->threads, s->nthreads, sizeof *s->threads, compare_tid);
	return 0;
}

int wakeups_sample_take(struct wakeups_sample *s)
{
	memset(s, 0, sizeof *s);
	s->t = vmc_monotonic_s();
	s->has_irq = vmc_irq_table_read("/proc/interrupts", &s->irq) == 0;
	s->has_softirq = vmc_irq_table_read("/proc/softirqs", &s->softirq) == 0;
	s->has_stat = vmc_procstat_read(&s->stat) == 0;
	if (take_threads(s) < 0 && errno == ENOMEM) {
		wakeups_sample_free(s);
		return -1;
	}
	return 0;
}

void wakeups_sample_free(struct wakeups_sample *s)
{
	vmc_irq_table_free(&s->irq);
	vmc_irq_table_free(&s->softirq);
	free(s->threads);
	memset(s, 0, sizeof *s);
}

/* ---- rates ------------------------------------------------------------------------------------
 */

struct rate {
	double per_s;
	size_t index; /* into the b sample's array */
	double voluntary, involuntary;
};

static int compare_rate(const void *a, const void *b)
{
	double x = ((const struct rate *)a)->per_s, y = ((const struct rate *)b)->per_s;
	return (x < y) - (x > y);
}

static double delta(uint64_t a, uint64_t b, double window)
{
	return b >= a ? (double)(b - a) / window : 0;
}

/* Rows of b with a positive rate, highest first. */
static json_t *table_rates(const struct vmc_irq_table *a, const struct vmc_irq_table *b,
			   double window, const struct vmc_irq_row *timer, double *sum)
{
	json_t *list = json_array();
	struct rate *r = calloc(b->n ? b->n : 1, sizeof *r);
	size_t n = 0;
	*sum = 0;
	if (!r)
		return list;
	for (size_t i = 0; i < b->n; i++) {
		const struct vmc_irq_row *old = vmc_irq_table_find(a, b->rows[i].name);
		double rate = delta(old ? old->total : 0, b->rows[i].total, window);
		*sum += rate;
		if (rate > 0)
			r[n++] = (struct rate){.per_s = rate, .index = i};
	}
	qsort(r, n, sizeof *r, compare_rate);
	for (size_t i = 0; i < n; i++) {
		const struct vmc_irq_row *row = &b->rows[r[i].index];
		json_t *j = json_object();
		json_object_set_new(j, "name", json_string(row->name));
		json_object_set_new(j, "description", json_string(row->desc));
		json_object_set_new(j, "per_s", json_real(r[i].per_s));
		if (timer)
			json_object_set_new(j, "timer", json_boolean(row == timer));
		json_array_append_new(list, j);
	}
	free(r);
	return list;
}

static const struct wakeups_thread *find_thread(const struct wakeups_sample *s, pid_t tid)
{
	struct wakeups_thread key = {.tid = tid};
	return bsearch(&key, s->threads, s->nthreads, sizeof key, compare_tid);
}

static json_t *thread_json(const struct wakeups_thread *t, const struct rate *r)
{
	json_t *j = json_object();
	json_object_set_new(j, "pid", json_integer(t->pid));
	json_object_set_new(j, "tid", json_integer(t->tid));
	json_object_set_new(j, "process", json_string(t->process));
	json_object_set_new(j, "thread", json_string(t->comm));
	json_object_set_new(j, "per_s", json_real(r->per_s));
	json_object_set_new(j, "voluntary_per_s", json_real(r->voluntary));
	json_object_set_new(j, "involuntary_per_s", json_real(r->involuntary));
	return j;
}

struct ctxsw {
	json_t *threads, *processes;
	double sum, self;
};

/* Per thread, then summed per process (threads of b are sorted by tid, not by pid). */
static void thread_rates(const struct wakeups_sample *a, const struct wakeups_sample *b,
			 double window, pid_t self, struct ctxsw *out)
{
	out->threads = json_array();
	out->processes = json_array();
	out->sum = out->self = 0;
	struct rate *r = calloc(b->nthreads ? b->nthreads : 1, sizeof *r);
	struct rate *per_proc = calloc(b->nthreads ? b->nthreads : 1, sizeof *per_proc);
	if (!r || !per_proc) {
		free(r);
		free(per_proc);
		return;
	}
	size_t n = 0, nproc = 0;
	for (size_t i = 0; i < b->nthreads; i++) {
		const struct wakeups_thread *t = &b->threads[i];
		const struct wakeups_thread *old = find_thread(a, t->tid);
		if (old && old->pid != t->pid)
			old = NULL; /* tid reused by another process */
		/* A thread born in the window: all its switches happened in it. */
		double vol =
		    delta(old ? old->switches_voluntary : 0, t->switches_voluntary, window);
		double inv =
		    delta(old ? old->switches_involuntary : 0, t->switches_involuntary, window);
		if (t->pid == self)
			out->self += vol + inv;
		out->sum += vol + inv;
		if (vol + inv <= 0)
			continue;
		r[n++] = (struct rate){vol + inv, i, vol, inv};
		size_t p = 0;
		while (p < nproc && b->threads[per_proc[p].index].pid != t->pid)
			p++;
		if (p == nproc)
			per_proc[nproc++] = (struct rate){0, i, 0, 0};
		per_proc[p].per_s += vol + inv;
		per_proc[p].voluntary += vol;
		per_proc[p].involuntary += inv;
	}
	qsort(r, n, sizeof *r, compare_rate);
	qsort(per_proc, nproc, sizeof *per_proc, compare_rate);
	for (size_t i = 0; i < n && i < WAKEUPS_TOP; i++)
		json_array_append_new(out->threads, thread_json(&b->threads[r[i].index], &r[i]));
	for (size_t i = 0; i < nproc && i < WAKEUPS_TOP; i++) {
		json_t *j = thread_json(&b->threads[per_proc[i].index], &per_proc[i]);
		json_object_del(j, "tid");
		json_object_del(j, "thread");
		json_array_append_new(out->processes, j);
	}
	free(r);
	free(per_proc);
}

/* The tick's row (LOC on x86, arch_timer on arm64) with its rate per CPU. */
static json_t *timer_json(const struct wakeups_sample *a, const struct wakeups_sample *b,
			  const struct vmc_irq_row *timer, double window)
{
	const struct vmc_irq_row *old = vmc_irq_table_find(&a->irq, timer->name);
	double rate = delta(old ? old->total : 0, timer->total, window);
	json_t *t = json_object();
	json_object_set_new(t, "name", json_string(timer->name));
	json_object_set_new(t, "description", json_string(timer->desc));
	json_object_set_new(t, "per_s", json_real(rate));
	json_object_set_new(t, "per_cpu_per_s",
			    json_real(b->irq.ncpu ? rate / (double)b->irq.ncpu : rate));
	return t;
}

json_t *wakeups_between(const struct wakeups_sample *a, const struct wakeups_sample *b, pid_t self)
{
	double window = b->t - a->t;
	if (window <= 0)
		window = 1e-9;
	json_t *doc = json_object();
	json_object_set_new(doc, "seconds", json_real(window));
	json_object_set_new(doc, "cpus", json_integer((json_int_t)b->irq.ncpu));

	const struct vmc_irq_row *timer = b->has_irq ? vmc_irq_timer_row(&b->irq) : NULL;
	double irq_sum = 0, softirq_sum = 0;
	json_t *irqs = b->has_irq && a->has_irq
			   ? table_rates(&a->irq, &b->irq, window, timer, &irq_sum)
			   : json_null();
	json_t *softirqs = b->has_softirq && a->has_softirq
			       ? table_rates(&a->softirq, &b->softirq, window, NULL, &softirq_sum)
			       : json_null();
	struct ctxsw cs;
	thread_rates(a, b, window, self, &cs);

	json_object_set_new(doc, "interrupts", irqs);
	json_object_set_new(doc, "softirqs", softirqs);
	json_object_set_new(doc, "processes", cs.processes);
	json_object_set_new(doc, "threads", cs.threads);

	json_t *totals = json_object();
	bool stat = a->has_stat && b->has_stat;
	/* /proc/stat's intr also counts arch interrupts without a column; prefer it. */
	json_object_set_new(totals, "interrupts_per_s",
			    json_real(stat && b->stat.has_intr
					  ? delta(a->stat.intr_total, b->stat.intr_total, window)
					  : irq_sum));
	json_object_set_new(
	    totals, "softirqs_per_s",
	    json_real(stat && b->stat.has_softirq
			  ? delta(a->stat.softirq_total, b->stat.softirq_total, window)
			  : softirq_sum));
	double ctxt = stat ? delta(a->stat.ctxt, b->stat.ctxt, window) : cs.sum;
	json_object_set_new(totals, "context_switches_per_s", json_real(ctxt));
	json_object_set_new(totals, "timer", timer ? timer_json(a, b, timer, window) : json_null());
	json_t *agent = json_object();
	json_object_set_new(agent, "pid", json_integer(self));
	json_object_set_new(agent, "context_switches_per_s", json_real(cs.self));
	json_object_set_new(agent, "share_percent",
			    json_real(ctxt > 0 ? 100.0 * cs.self / ctxt : 0));
	json_object_set_new(totals, "agent", agent);
	json_object_set_new(doc, "totals", totals);
	return doc;
}

json_t *wakeups_measure(double seconds, void (*tick)(double left, void *ctx), void *ctx, char *err,
			size_t errsize)
{
	if (!(seconds > 0) || seconds > 86400) {
		snprintf(err, errsize, "seconds must be in (0, 86400], not %g", seconds);
		return NULL;
	}
	struct wakeups_sample a, b;
	if (wakeups_sample_take(&a) < 0) {
		vmc_errorf(err, errsize, "cannot sample /proc:");
		return NULL;
	}
	if (!a.has_irq && !a.has_stat) {
		wakeups_sample_free(&a);
		snprintf(err, errsize,
			 "neither /proc/interrupts nor /proc/stat is readable: is /proc "
			 "mounted?");
		return NULL;
	}
	/* One sleep when nobody watches: the profiler must not add wakeups of its own. */
	double end = a.t + seconds;
	for (double left = seconds; left > 0; left = end - vmc_monotonic_s()) {
		if (tick)
			tick(left, ctx);
		vmc_sleep_s(tick && left > 1 ? 1 : left);
	}
	if (wakeups_sample_take(&b) < 0) {
		int saved = errno;
		wakeups_sample_free(&a);
		errno = saved;
		vmc_errorf(err, errsize, "cannot sample /proc:");
		return NULL;
	}
	json_t *doc = wakeups_between(&a, &b, getpid());
	wakeups_sample_free(&a);
	wakeups_sample_free(&b);
	return doc;
}

json_t *agent_wakeups(double seconds, char *err, size_t errsize)
{
	return wakeups_measure(seconds, NULL, NULL, err, errsize);
}

/* ---- human output -----------------------------------------------------------------------------
 */

static double num(const json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

static void print_table(FILE *f, const json_t *list, const char *heading, size_t max)
{
	size_t i;
	const json_t *row;
	fprintf(f, "%10s  %s\n", heading, "SOURCE");
	json_array_foreach(list, i, row)
	{
		if (i >= max)
			break;
		const char *desc = vmc_json_get_str_or(row, "description", "");
		fprintf(f, "%10.1f  %s%s%s%s\n", num(row, "per_s"),
			vmc_json_get_str_or(row, "name", "?"), desc[0] ? "  " : "", desc,
			json_is_true(json_object_get(row, "timer")) ? "  [tick]" : "");
	}
	if (json_array_size(list) == 0)
		fprintf(f, "%10s  (none)\n", "-");
}

void wakeups_print(FILE *f, const json_t *doc)
{
	const json_t *totals = json_object_get(doc, "totals");
	fprintf(f, "who woke the guest over %.0f s (%lld CPUs)\n\n", num(doc, "seconds"),
		(long long)json_integer_value(json_object_get(doc, "cpus")));
	print_table(f, json_object_get(doc, "interrupts"), "IRQ/s", WAKEUPS_TOP);
	fputc('\n', f);
	print_table(f, json_object_get(doc, "softirqs"), "SOFTIRQ/s", WAKEUPS_TOP);
	fprintf(f, "\n%10s %8s %8s %8s %8s  %s\n", "CTXSW/s", "VOL/s", "INVOL/s", "PID", "TID",
		"PROCESS/THREAD");
	size_t i;
	const json_t *t;
	json_array_foreach(json_object_get(doc, "threads"), i, t)
	{
		const char *process = vmc_json_get_str_or(t, "process", "?");
		const char *thread = vmc_json_get_str_or(t, "thread", "?");
		bool same = strcmp(process, thread) == 0;
		fprintf(f, "%10.1f %8.1f %8.1f %8lld %8lld  %s%s%s\n", num(t, "per_s"),
			num(t, "voluntary_per_s"), num(t, "involuntary_per_s"),
			(long long)json_integer_value(json_object_get(t, "pid")),
			(long long)json_integer_value(json_object_get(t, "tid")), process,
			same ? "" : "/", same ? "" : thread);
	}
	const json_t *timer = json_object_get(totals, "timer");
	const json_t *agent = json_object_get(totals, "agent");
	char tick[96] = "";
	if (json_is_object(timer))
		snprintf(tick, sizeof tick, " (tick %s %.1f/s, %.1f/s per CPU)",
			 vmc_json_get_str_or(timer, "name", "?"), num(timer, "per_s"),
			 num(timer, "per_cpu_per_s"));
	fprintf(f,
		"\ntotal: %.1f interrupts/s%s, %.1f softirqs/s, %.1f context switches/s; "
		"vmcost-agent %.2f/s (%.1f %%)\n",
		num(totals, "interrupts_per_s"), tick, num(totals, "softirqs_per_s"),
		num(totals, "context_switches_per_s"), num(agent, "context_switches_per_s"),
		num(agent, "share_percent"));
}
