/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The wakeup profiler between two fake /proc states 10 s apart: interrupt and softirq rates
 * summed over CPUs, the tick named (LOC / arch_timer), per-thread and per-process context
 * switches (voluntary + involuntary), threads born in the window, the agent's own share.
 */
#include "agent.h"
#include "check.h"
#include "fakeroot.h"
#include "golden.h"
#include "jsonutil.h"
#include "print_capture.h"
#include "wakeups.h"

static void thread(int pid, int tid, const char *name, unsigned vol, unsigned invol)
{
	char rel[96], text[256];
	snprintf(rel, sizeof rel, "/proc/%d/task/%d/status", pid, tid);
	snprintf(text, sizeof text,
		 "Name:\t%s\nState:\tS (sleeping)\nPPid:\t1\nvoluntary_ctxt_switches:\t%u\n"
		 "nonvoluntary_ctxt_switches:\t%u\n",
		 name, vol, invol);
	fakeroot_write(rel, text);
}

static void state_a(void)
{
	fakeroot_remove("/proc");
	fakeroot_write("/proc/interrupts",
		       "           CPU0       CPU1\n"
		       "  0:         35          0   IO-APIC   2-edge      timer\n"
		       " 24:        100        100   PCI-MSI 65536-edge virtio0\n"
		       "LOC:      10000      10000   Local timer interrupts\n"
		       "RES:         10         10   Rescheduling interrupts\n");
	fakeroot_write("/proc/softirqs", "          CPU0   CPU1\n"
					 "   TIMER:   1000   1000\n"
					 "     RCU:    500    500\n"
					 "  NET_RX:      1      1\n");
	fakeroot_write("/proc/stat", "cpu  1 0 1 100 0 0 0 0\nintr 30000 35\nctxt 50000\n"
				     "softirq 3002 0\n");
	thread(1, 1, "init", 100, 1);
	thread(500, 500, "containerd", 1000, 10);
	thread(500, 501, "containerd", 2000, 20);
	thread(700, 700, "lima-guestagen", 5000, 0);
	thread(42, 42, "vmcost-agent", 7, 0);
}

static void state_b(void)
{
	fakeroot_write("/proc/interrupts",
		       "           CPU0       CPU1\n"
		       "  0:         35          0   IO-APIC   2-edge      timer\n"
		       " 24:        110        100   PCI-MSI 65536-edge virtio0\n"
		       "LOC:      10600      10420   Local timer interrupts\n"
		       "RES:         12         10   Rescheduling interrupts\n");
	fakeroot_write("/proc/softirqs", "          CPU0   CPU1\n"
					 "   TIMER:   1300   1100\n"
					 "     RCU:    510    500\n"
					 "  NET_RX:      1      1\n");
	fakeroot_write("/proc/stat", "cpu  1 0 1 200 0 0 0 0\nintr 31100 35\nctxt 53000\n"
				     "softirq 3412 0\n");
	thread(1, 1, "init", 100, 1);		     /* asleep the whole window */
	thread(500, 500, "containerd", 1100, 10);    /* +100 */
	thread(500, 501, "containerd", 2150, 70);    /* +150 +50 */
	thread(500, 510, "containerd", 30, 0);	     /* born in the window: +30 */
	thread(700, 700, "lima-guestagen", 5220, 0); /* +220 */
	thread(42, 42, "vmcost-agent", 8, 0);	     /* +1: the sleep */
	fakeroot_remove("/proc/1/task/1");	     /* init's thread gone: not an error */
	thread(1, 1, "init", 100, 1);
}

static double num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

TEST(rates_between_two_states)
{
	struct wakeups_sample a, b;
	state_a();
	CHECK_INT(wakeups_sample_take(&a), 0);
	state_b();
	CHECK_INT(wakeups_sample_take(&b), 0);
	a.t = 100;
	b.t = 110;
	CHECK_U64(b.nthreads, 6);
	json_t *doc = wakeups_between(&a, &b, 42);
	CHECK_DBL(num(doc, "seconds"), 10, 1e-9);
	CHECK_INT(json_integer_value(json_object_get(doc, "cpus")), 2);

	const json_t *irqs = json_object_get(doc, "interrupts");
	CHECK_U64(json_array_size(irqs), 3); /* IRQ 0 did not fire: not listed */
	const json_t *first = json_array_get(irqs, 0);
	CHECK_STR(vmc_json_get_str(first, "name"), "LOC");
	CHECK_DBL(num(first, "per_s"), 102.0, 1e-9);
	CHECK(json_is_true(json_object_get(first, "timer")));
	CHECK_STR(vmc_json_get_str(json_array_get(irqs, 1), "name"), "24");
	CHECK_DBL(num(json_array_get(irqs, 1), "per_s"), 1.0, 1e-9);

	const json_t *soft = json_object_get(doc, "softirqs");
	CHECK_STR(vmc_json_get_str(json_array_get(soft, 0), "name"), "TIMER");
	CHECK_DBL(num(json_array_get(soft, 0), "per_s"), 40.0, 1e-9);
	CHECK_U64(json_array_size(soft), 2);

	const json_t *threads = json_object_get(doc, "threads");
	const json_t *top = json_array_get(threads, 0);
	CHECK_STR(vmc_json_get_str(top, "thread"), "lima-guestagen");
	CHECK_DBL(num(top, "per_s"), 22.0, 1e-9);
	const json_t *second = json_array_get(threads, 1);
	CHECK_INT(json_integer_value(json_object_get(second, "tid")), 501);
	CHECK_DBL(num(second, "voluntary_per_s"), 15.0, 1e-9);
	CHECK_DBL(num(second, "involuntary_per_s"), 5.0, 1e-9);
	/* a thread born in the window counts fully; a sleeping one is not listed */
	bool born = false, init = false;
	size_t i;
	const json_t *t;
	json_array_foreach(threads, i, t)
	{
		if (json_integer_value(json_object_get(t, "tid")) == 510)
			born = num(t, "per_s") == 3.0;
		if (json_integer_value(json_object_get(t, "tid")) == 1)
			init = true;
	}
	CHECK(born);
	CHECK(!init);

	const json_t *procs = json_object_get(doc, "processes");
	const json_t *p0 = json_array_get(procs, 0);
	CHECK_STR(vmc_json_get_str(p0, "process"), "containerd");
	CHECK_DBL(num(p0, "per_s"), 33.0, 1e-9); /* 10 + 20 + 3 */

	const json_t *totals = json_object_get(doc, "totals");
	CHECK_DBL(num(totals, "interrupts_per_s"), 110.0, 1e-9); /* /proc/stat intr */
	CHECK_DBL(num(totals, "softirqs_per_s"), 41.0, 1e-9);
	CHECK_DBL(num(totals, "context_switches_per_s"), 300.0, 1e-9);
	const json_t *timer = json_object_get(totals, "timer");
	CHECK_STR(vmc_json_get_str(timer, "name"), "LOC");
	CHECK_DBL(num(timer, "per_cpu_per_s"), 51.0, 1e-9);
	const json_t *agent = json_object_get(totals, "agent");
	CHECK_DBL(num(agent, "context_switches_per_s"), 0.1, 1e-9);
	CHECK_DBL(num(agent, "share_percent"), 0.1 / 300.0 * 100.0, 1e-9);

	char *text = print_capture(wakeups_print, doc);
	CHECK_GOLDEN(text, "agent-wakeups");
	free(text);
	json_decref(doc);
	wakeups_sample_free(&a);
	wakeups_sample_free(&b);
}

TEST(top_ten_only)
{
	state_a();
	for (int i = 0; i < 15; i++)
		thread(900 + i, 900 + i, "worker", 0, 0);
	struct wakeups_sample a, b;
	wakeups_sample_take(&a);
	for (int i = 0; i < 15; i++)
		thread(900 + i, 900 + i, "worker", (unsigned)(i + 1), 0);
	wakeups_sample_take(&b);
	a.t = 0;
	b.t = 1;
	json_t *doc = wakeups_between(&a, &b, 1);
	CHECK_U64(json_array_size(json_object_get(doc, "threads")), WAKEUPS_TOP);
	CHECK_DBL(num(json_array_get(json_object_get(doc, "threads"), 0), "per_s"), 15, 1e-9);
	json_decref(doc);
	wakeups_sample_free(&a);
	wakeups_sample_free(&b);
}

TEST(arm64_tick_and_missing_files)
{
	fakeroot_remove("/proc");
	fakeroot_write("/proc/interrupts",
		       "           CPU0       CPU1       CPU2       CPU3\n"
		       " 11:       1000       1000       1000       1000     GICv3  27 Level     "
		       "arch_timer\n");
	struct wakeups_sample a, b;
	wakeups_sample_take(&a);
	fakeroot_write("/proc/interrupts",
		       "           CPU0       CPU1       CPU2       CPU3\n"
		       " 11:       1600       1100       1200       1100     GICv3  27 Level     "
		       "arch_timer\n");
	wakeups_sample_take(&b);
	CHECK(!b.has_stat && !b.has_softirq);
	a.t = 0;
	b.t = 10;
	json_t *doc = wakeups_between(&a, &b, 1);
	const json_t *totals = json_object_get(doc, "totals");
	CHECK_STR(vmc_json_get_str(json_object_get(totals, "timer"), "name"), "11");
	CHECK_DBL(num(json_object_get(totals, "timer"), "per_s"), 100, 1e-9);
	CHECK_DBL(num(json_object_get(totals, "timer"), "per_cpu_per_s"), 25, 1e-9);
	/* without /proc/stat the interrupt total is the sum of the rows */
	CHECK_DBL(num(totals, "interrupts_per_s"), 100, 1e-9);
	CHECK(json_is_null(json_object_get(doc, "softirqs")));
	json_decref(doc);
	wakeups_sample_free(&a);
	wakeups_sample_free(&b);
}

TEST(measure_rejects_bad_durations_and_empty_proc)
{
	char err[128];
	CHECK(wakeups_measure(0, NULL, NULL, err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "seconds must be in (0, 86400]");
	CHECK(wakeups_measure(-1, NULL, NULL, err, sizeof err) == NULL);
	fakeroot_remove("/proc");
	fakeroot_mkdir("/proc");
	CHECK(agent_wakeups(0.01, err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "is /proc mounted?");
	/* a real short measurement on the fake tree sleeps and returns a document */
	state_a();
	json_t *doc = agent_wakeups(0.05, err, sizeof err);
	CHECK(doc != NULL);
	CHECK(num(doc, "seconds") >= 0.05);
	json_decref(doc);
}

/* Missing members never reach %s: glibc printed "(null)", other libcs crash. */
TEST(documents_with_members_missing_print_without_null)
{
	CHECK_INT(print_odd_failures(wakeups_print), 0);
}

int main(void)
{
	fakeroot_init();
	RUN(rates_between_two_states);
	RUN(top_ten_only);
	RUN(arm64_tick_and_missing_files);
	RUN(measure_rejects_bad_durations_and_empty_proc);
	RUN(documents_with_members_missing_print_without_null);
	fakeroot_cleanup();
	return check_done();
}
