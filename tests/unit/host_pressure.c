/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host memory pressure and its MADV_FREE canary. The pressure runs in a child process inside a
 * small memory cgroup, so a test can never push this machine: with a limit below canary +
 * pressure the kernel must reclaim inside the cgroup and discards the canary (conclusive); with
 * too little pressure the canary survives (INCONCLUSIVE). SIGINT releases everything.
 */
#include "check.h"
#include "log.h"
#include "measure/pressure.h"
#include "memcg.h"

#include <signal.h>
#include <sys/wait.h>

#define MiB (1024ull * 1024)

TEST(default_size_linux_leaves_half_the_canary)
{
	struct platform_host_memory hm = {.total = 24 * 1024 * MiB, .available = 20 * 1024 * MiB};
	CHECK_U64(pressure_default_size(&hm, 1024 * MiB), 20 * 1024 * MiB - 512 * MiB);
	hm.available = 23 * 1024 * MiB + 900 * MiB; /* capped at 7/8 of RAM */
	CHECK_U64(pressure_default_size(&hm, 1024 * MiB), 21 * 1024 * MiB);
	hm.available = 300 * MiB; /* no room at all */
	CHECK_U64(pressure_default_size(&hm, 1024 * MiB), 0);
}

TEST(default_size_macos_pushes_past_available)
{
	struct platform_host_memory hm = {
	    .total = 16 * 1024 * MiB, .available = 6 * 1024 * MiB, .has_compressor = true};
	CHECK_U64(pressure_default_size(&hm, 1024 * MiB), 8 * 1024 * MiB);
	hm.available = 14 * 1024 * MiB; /* capped at 3/4 of RAM */
	CHECK_U64(pressure_default_size(&hm, 1024 * MiB), 12 * 1024 * MiB);
}

TEST(stage_names)
{
	CHECK_STR(pressure_stage_name(PRESSURE_HOLDING), "holding");
	CHECK_STR(pressure_stage_name(PRESSURE_RELEASED), "released");
}

struct child_report {
	int rc;
	struct pressure_result res;
	int ticks;
	bool saw_holding;
};

static int child_ticks;
static bool child_saw_holding;

static void count_tick(const struct pressure_status *st, void *ctx)
{
	(void)ctx;
	child_ticks++;
	if (st->stage == PRESSURE_HOLDING)
		child_saw_holding = true;
}

static volatile sig_atomic_t child_stop;
static void on_signal(int sig)
{
	(void)sig;
	child_stop = 1;
}

/*
 * Runs the plan in a child (inside cg when given); the parent gets the result over a pipe.
 * signal_after_ms > 0: the parent sends SIGINT that long after the fork.
 */
static int run_in_child(const struct memcg *cg, const struct pressure_plan *plan,
			int signal_after_ms, struct child_report *out, int *wstatus)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	/* The child waits for the go byte until the parent has moved it into the cgroup. */
	int go[2];
	if (pipe(go) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		close(go[1]);
		char byte;
		if (read(go[0], &byte, 1) != 1)
			_exit(3);
		struct sigaction sa = {.sa_handler = on_signal};
		sigaction(SIGINT, &sa, NULL);
		struct child_report rep = {0};
		char err[256] = "";
		rep.rc =
		    pressure_run(plan, count_tick, NULL, &child_stop, &rep.res, err, sizeof err);
		rep.ticks = child_ticks;
		rep.saw_holding = child_saw_holding;
		if (rep.rc != 0)
			fprintf(stderr, "pressure_run: %s\n", err);
		ssize_t w = write(fds[1], &rep, sizeof rep);
		_exit(w == (ssize_t)sizeof rep ? 0 : 4);
	}
	close(fds[1]);
	close(go[0]);
	if (cg && memcg_enter(cg, pid) != 0) {
		kill(pid, SIGKILL);
		waitpid(pid, wstatus, 0);
		return -1;
	}
	if (write(go[1], "g", 1) != 1)
		return -1;
	close(go[1]);
	if (signal_after_ms > 0) {
		usleep((useconds_t)signal_after_ms * 1000);
		kill(pid, SIGINT);
	}
	ssize_t got = read(fds[0], out, sizeof *out);
	close(fds[0]);
	waitpid(pid, wstatus, 0);
	return got == (ssize_t)sizeof *out ? 0 : -1;
}

/* Root on Linux: a memory cgroup must work. Elsewhere the bounded tests are skipped. */
static bool cgroup_expected(void)
{
	return access("/sys/fs/cgroup", F_OK) == 0 && geteuid() == 0;
}

TEST(enough_pressure_discards_the_canary_conclusive)
{
	struct memcg cg;
	if (memcg_create(&cg, "vmcost-pressure", 384 * MiB) != 0) {
		CHECK(!cgroup_expected());
		SKIP("no memory cgroup here (needs root and cgroup2)");
	}
	struct pressure_plan plan = {
	    .size = 288 * MiB, .canary_size = 128 * MiB, .hold_seconds = 1.0};
	struct child_report rep;
	int ws = 0;
	CHECK_INT(run_in_child(&cg, &plan, 0, &rep, &ws), 0);
	memcg_remove(&cg);
	CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	CHECK_INT(rep.rc, 0);
	CHECK_U64(rep.res.touched, 288 * MiB);
	CHECK(rep.res.canary_pages > 0);
	CHECK(rep.res.canary_discarded > 0);
	CHECK(rep.res.canary_min_resident < rep.res.canary_pages);
	CHECK(rep.res.conclusive);
	CHECK(!rep.res.interrupted);
	CHECK(rep.saw_holding);
	printf("  canary discarded %llu of %llu pages\n",
	       (unsigned long long)rep.res.canary_discarded,
	       (unsigned long long)rep.res.canary_pages);
}

TEST(too_little_pressure_is_inconclusive)
{
	struct memcg cg;
	if (memcg_create(&cg, "vmcost-pressure", 384 * MiB) != 0) {
		CHECK(!cgroup_expected());
		SKIP("no memory cgroup here (needs root and cgroup2)");
	}
	struct pressure_plan plan = {
	    .size = 32 * MiB, .canary_size = 64 * MiB, .hold_seconds = 1.0};
	struct child_report rep;
	int ws = 0;
	CHECK_INT(run_in_child(&cg, &plan, 0, &rep, &ws), 0);
	memcg_remove(&cg);
	CHECK_INT(rep.rc, 0);
	CHECK_U64(rep.res.touched, 32 * MiB);
	CHECK(rep.res.canary_pages > 0);
	CHECK_U64(rep.res.canary_discarded, 0);
	CHECK(!rep.res.conclusive);
	CHECK(rep.res.hold_seconds >= 1.0);
}

TEST(sigint_releases_everything_early)
{
	struct memcg cg;
	bool bounded = memcg_create(&cg, "vmcost-pressure", 256 * MiB) == 0;
	if (!bounded)
		CHECK(!cgroup_expected());
	struct pressure_plan plan = {.size = 64 * MiB, .canary_size = 16 * MiB, .hold_seconds = 60};
	struct child_report rep;
	int ws = 0;
	CHECK_INT(run_in_child(bounded ? &cg : NULL, &plan, 1500, &rep, &ws), 0);
	if (bounded)
		memcg_remove(&cg);
	CHECK_INT(rep.rc, 0);
	CHECK(rep.res.interrupted);
	CHECK(!rep.res.conclusive);
	CHECK(rep.res.total_seconds < 10);
	CHECK(rep.ticks > 0);
}

static volatile sig_atomic_t stop_now;
static void stop_when_half(const struct pressure_status *st, void *ctx)
{
	(void)ctx;
	if (st->stage == PRESSURE_TOUCHING && st->touched >= 16 * MiB)
		stop_now = 1;
}

/* Resident set of this process in bytes, from /proc/self/statm; 0 where there is no /proc. */
static uint64_t self_rss(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return 0;
	unsigned long long size = 0, rss = 0;
	int n = fscanf(f, "%llu %llu", &size, &rss);
	fclose(f);
	return n == 2 ? rss * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

TEST(stop_while_touching_unmaps_in_process)
{
	struct pressure_plan plan = {.size = 96 * MiB, .canary_size = 8 * MiB, .hold_seconds = 60};
	struct pressure_result res;
	char err[256];
	uint64_t before = self_rss();
	stop_now = 0;
	CHECK_INT(pressure_run(&plan, stop_when_half, NULL, &stop_now, &res, err, sizeof err), 0);
	uint64_t after = self_rss();
	CHECK(res.interrupted);
	CHECK_U64(res.touched, 16 * MiB);
	CHECK(res.hold_seconds == 0);
	if (!before || !after)
		SKIP("no /proc/self/statm here to see the touched memory go");
	CHECK(after < before + 8 * MiB); /* the touched 16 MiB are gone again */
}

TEST(zero_pressure_zero_canary_is_a_no_op)
{
	struct pressure_plan plan = {.size = 0, .canary_size = 0, .hold_seconds = 0};
	struct pressure_result res;
	char err[256];
	CHECK_INT(pressure_run(&plan, NULL, NULL, NULL, &res, err, sizeof err), 0);
	CHECK_U64(res.canary_pages, 0);
	CHECK(!res.conclusive);
}

int main(void)
{
	vmc_log_init("host_pressure");
	RUN(default_size_linux_leaves_half_the_canary);
	RUN(default_size_macos_pushes_past_available);
	RUN(stage_names);
	RUN(enough_pressure_discards_the_canary_conclusive);
	RUN(too_little_pressure_is_inconclusive);
	RUN(sigint_releases_everything_early);
	RUN(stop_while_touching_unmaps_in_process);
	RUN(zero_pressure_zero_canary_is_a_no_op);
	return check_done();
}
