/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Each check runs a child that does one thing of known size (touch N MiB, spin T seconds of CPU,
 * write and fsync N MiB, hold N MiB) and reads it back through the same calls vmcost's commands
 * use. A child, not vmcost itself, because vmcost measures other processes: the VM's helper or
 * QEMU. The parent and the child take turns over two pipes, so each sample is taken while the
 * child waits between its steps.
 */
#include "measure/selftest.h"

#include "message.h"
#include "readfile.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MiB (1024.0 * 1024.0)
/* A child's step never takes this long unless the machine is stuck. */
#define STEP_TIMEOUT_MS 120000

void selftest_env_defaults(struct selftest_env *env)
{
	memset(env, 0, sizeof *env);
	env->proc_sample = platform_proc_sample;
	env->host_memory = platform_host_memory;
	env->release_pages = platform_release_pages;
	env->release_method = platform_release_method();
	env->tick_clock_check = platform_tick_clock_check;
	env->vz_helpers = platform_vz_helpers;
	env->touch_bytes = 64ull << 20;
	env->hold_bytes = 512ull << 20;
	env->write_bytes = 16ull << 20;
	env->spin_seconds = 0.5;
	const char *tmp = getenv("TMPDIR");
	env->write_dir = tmp && *tmp ? tmp : "/var/tmp";
}

static const char *verdict_name(enum selftest_verdict v)
{
	return v == SELFTEST_PASS ? "pass" : v == SELFTEST_FAIL ? "fail" : "n/a";
}

enum selftest_verdict selftest_judge(double expected, double measured, double tolerance,
				     double slack, char *reason, size_t size)
{
	double allowed = fmax(tolerance * fabs(expected), slack);
	if (fabs(measured - expected) <= allowed) {
		vmc_textf(reason, size, "within %.0f %% of what the workload did", tolerance * 100);
		return SELFTEST_PASS;
	}
	double big = fmax(fabs(expected), fabs(measured)),
	       small = fmin(fabs(expected), fabs(measured));
	if (small > 0 && big / small >= 2 && (expected > 0) == (measured > 0))
		vmc_textf(reason, size,
			  "off by a factor of %.3g (read %s the workload): a wrong unit?",
			  big / small, fabs(measured) > fabs(expected) ? "more than" : "less than");
	else if (measured == 0 || (expected > 0) != (measured > 0))
		vmc_textf(reason, size, "the reading did not move the way the workload did");
	else
		vmc_textf(reason, size, "%.1f %% away from what the workload did (allowed %.0f %%)",
			  100 * fabs(measured - expected) / fabs(expected), tolerance * 100);
	return SELFTEST_FAIL;
}

/* ---- the child and its turns ------------------------------------------------------------- */

struct child_reply {
	uint64_t value;
	int err; /* errno of a failed step, 0 when it worked */
};

struct child {
	pid_t pid;
	int to_child, from_child;
};

typedef void (*child_job)(const struct selftest_env *env, int in, int out);

/* Waits for the parent's turn byte; false when the parent is gone. */
static bool child_await(int in)
{
	char c;
	return read(in, &c, 1) == 1;
}

static void child_reply(int out, uint64_t value, int err)
{
	struct child_reply r = {value, err};
	if (write(out, &r, sizeof r) != (ssize_t)sizeof r)
		_exit(1);
}

static int child_start(struct child *c, child_job job, const struct selftest_env *env)
{
	int down[2], up[2];
	if (pipe(down) < 0)
		return -1;
	if (pipe(up) < 0) {
		close(down[0]);
		close(down[1]);
		return -1;
	}
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		int e = errno;
		close(down[0]), close(down[1]), close(up[0]), close(up[1]);
		errno = e;
		return -1;
	}
	if (c->pid == 0) {
		close(down[1]);
		close(up[0]);
		job(env, down[0], up[1]);
		_exit(0);
	}
	close(down[0]);
	close(up[1]);
	c->to_child = down[1];
	c->from_child = up[0];
	return 0;
}

/* One turn: the child does its next step and says what it did. -1 (errno) if it died or hung. */
static int child_step(struct child *c, struct child_reply *r)
{
	if (write(c->to_child, "g", 1) != 1)
		return -1;
	struct pollfd p = {.fd = c->from_child, .events = POLLIN};
	int ready = poll(&p, 1, STEP_TIMEOUT_MS);
	if (ready <= 0) {
		errno = ready == 0 ? ETIMEDOUT : errno;
		return -1;
	}
	if (read(c->from_child, r, sizeof *r) != (ssize_t)sizeof *r) {
		errno = ECHILD;
		return -1;
	}
	return 0;
}

static void child_end(struct child *c)
{
	close(c->to_child);
	close(c->from_child);
	int status;
	/* Closing its pipe ends a waiting child; a stuck one is killed. */
	for (int i = 0; i < 100; i++) {
		if (waitpid(c->pid, &status, WNOHANG) == c->pid)
			return;
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	kill(c->pid, SIGKILL);
	waitpid(c->pid, &status, 0);
}

/*
 * Plain stores, one per 4 KiB (a page on Linux, a quarter of one on Apple Silicon), not memset:
 * in a sanitizer build ASan checks every store against its shadow memory and so faults in an
 * eighth as much again, which is not the workload's.
 */
__attribute__((no_sanitize_address)) static void touch_pages(unsigned char *p, size_t len)
{
	volatile unsigned char *v = p;
	for (size_t i = 0; i < len; i += 4096)
		v[i] = 0x5a;
}

/* Anonymous memory the kernel must really give: every page written. */
static unsigned char *touched_mapping(size_t len)
{
	unsigned char *p =
	    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	touch_pages(p, len);
	return p;
}

static void job_touch_release(const struct selftest_env *env, int in, int out)
{
	if (!child_await(in))
		return;
	unsigned char *p = touched_mapping(env->touch_bytes);
	child_reply(out, p ? env->touch_bytes : 0, p ? 0 : errno);
	if (!p || !child_await(in))
		return;
	int rc = env->release_pages(p, env->touch_bytes);
	child_reply(out, env->touch_bytes, rc == 0 ? 0 : errno);
	child_await(in);
}

static void job_hold(const struct selftest_env *env, int in, int out)
{
	if (!child_await(in))
		return;
	unsigned char *p = touched_mapping(env->hold_bytes);
	child_reply(out, p ? env->hold_bytes : 0, p ? 0 : errno);
	child_await(in);
}

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* File scope so no compiler can call the spin loop's sum unused and fold the loop away. */
static volatile uint64_t spin_sink;

static void job_spin(const struct selftest_env *env, int in, int out)
{
	if (!child_await(in))
		return;
	uint64_t start = process_cpu_ns(), want = (uint64_t)(env->spin_seconds * 1e9), now;
	do {
		for (int i = 0; i < 100000; i++)
			spin_sink += (uint64_t)i;
		now = process_cpu_ns();
	} while (now - start < want);
	child_reply(out, now - start, 0);
	child_await(in);
}

static void job_write(const struct selftest_env *env, int in, int out)
{
	if (!child_await(in))
		return;
	char path[4096];
	vmc_textf(path, sizeof path, "%s/vmcost-selftest-XXXXXX", env->write_dir);
	int fd = mkstemp(path);
	if (fd < 0) {
		child_reply(out, 0, errno);
		return;
	}
	unlink(path); /* the blocks stay until close: nothing is left behind if we die */
	static unsigned char chunk[1 << 20];
	memset(chunk, 0xa5, sizeof chunk);
	uint64_t done = 0;
	int err = 0;
	while (done < env->write_bytes && !err) {
		size_t n = (size_t)fmin((double)sizeof chunk, (double)(env->write_bytes - done));
		if (vmc_write_all(fd, chunk, n) < 0)
			err = errno;
		else
			done += n;
	}
	if (!err && fsync(fd) < 0)
		err = errno;
	close(fd);
	child_reply(out, done, err);
	child_await(in);
}

/* ---- the checks -------------------------------------------------------------------------- */

static struct selftest_result *next_result(struct selftest_report *rep, const char *reading,
					   enum selftest_unit unit)
{
	struct selftest_result *r = &rep->results[rep->n++];
	memset(r, 0, sizeof *r);
	r->reading = reading;
	r->unit = unit;
	return r;
}

static void could_not_run(struct selftest_result *r, const char *what)
{
	r->verdict = SELFTEST_FAIL;
	vmc_errorf(r->reason, sizeof r->reason, "could not run: %s:", what);
}

static void check_footprint(const struct selftest_env *env, struct selftest_report *rep)
{
	char size[32];
	vmc_format_bytes(env->touch_bytes, size, sizeof size);
	struct selftest_result *rise = next_result(rep, "footprint", SELFTEST_BYTES);
	struct selftest_result *fall = next_result(rep, "footprint", SELFTEST_BYTES);
	vmc_textf(rise->workload, sizeof rise->workload, "a child touches %s", size);
	vmc_textf(fall->workload, sizeof fall->workload, "the child releases it (%s)",
		  env->release_method);
	rise->expected = (double)env->touch_bytes;
	fall->expected = -(double)env->touch_bytes;
	rise->change = fall->change = true;
	struct child c;
	if (child_start(&c, job_touch_release, env) < 0) {
		could_not_run(rise, "fork");
		could_not_run(fall, "fork");
		return;
	}
	struct platform_proc_sample s0, s1, s2;
	struct child_reply r;
	if (env->proc_sample(c.pid, &s0) < 0 || child_step(&c, &r) < 0 || r.err ||
	    env->proc_sample(c.pid, &s1) < 0) {
		if (r.err)
			errno = r.err;
		could_not_run(rise, "touching or sampling the child");
		could_not_run(fall, "the child never touched its memory");
		child_end(&c);
		return;
	}
	rise->measured = (double)s1.footprint - (double)s0.footprint;
	rise->verdict = selftest_judge(rise->expected, rise->measured, 0.05, MiB, rise->reason,
				       sizeof rise->reason);
	if (child_step(&c, &r) < 0 || r.err || env->proc_sample(c.pid, &s2) < 0) {
		if (r.err)
			errno = r.err;
		could_not_run(fall, env->release_method);
	} else {
		fall->measured = (double)s2.footprint - (double)s1.footprint;
		fall->verdict = selftest_judge(fall->expected, fall->measured, 0.05, MiB,
					       fall->reason, sizeof fall->reason);
	}
	child_end(&c);
}

static void check_cpu(const struct selftest_env *env, struct selftest_report *rep)
{
	struct selftest_result *r = next_result(rep, "cpu time", SELFTEST_NS);
	vmc_textf(r->workload, sizeof r->workload, "a child spins for %.2f s of CPU",
		  env->spin_seconds);
	struct child c;
	if (child_start(&c, job_spin, env) < 0) {
		could_not_run(r, "fork");
		return;
	}
	struct platform_proc_sample s0, s1;
	struct child_reply reply;
	if (env->proc_sample(c.pid, &s0) < 0 || child_step(&c, &reply) < 0 ||
	    env->proc_sample(c.pid, &s1) < 0) {
		could_not_run(r, "spinning or sampling the child");
	} else {
		/* The child's own clock is the reference; /proc or proc_pid_rusage is the reading.
		 */
		r->expected = (double)reply.value;
		r->measured = (double)s1.cpu_ns - (double)s0.cpu_ns;
		/* Linux counts in 10 ms ticks: two readings are each up to a tick off. */
		r->verdict = selftest_judge(r->expected, r->measured, 0.05, 20e6, r->reason,
					    sizeof r->reason);
	}
	child_end(&c);
}

static void check_disk(const struct selftest_env *env, struct selftest_report *rep)
{
	char size[32];
	struct selftest_result *r = next_result(rep, "disk written", SELFTEST_BYTES);
	vmc_textf(r->workload, sizeof r->workload, "a child writes and fsyncs %s in %s",
		  vmc_format_bytes(env->write_bytes, size, sizeof size), env->write_dir);
	r->expected = (double)env->write_bytes;
	struct child c;
	if (child_start(&c, job_write, env) < 0) {
		could_not_run(r, "fork");
		return;
	}
	struct platform_proc_sample s0, s1;
	struct child_reply reply = {0, 0};
	if (env->proc_sample(c.pid, &s0) < 0 || child_step(&c, &reply) < 0 || reply.err ||
	    env->proc_sample(c.pid, &s1) < 0) {
		if (reply.err)
			errno = reply.err;
		char what[4200];
		vmc_textf(what, sizeof what, "writing in %s (choose another directory with --dir)",
			  env->write_dir);
		could_not_run(r, what);
	} else {
		r->measured = (double)s1.disk_written - (double)s0.disk_written;
		r->verdict = selftest_judge(r->expected, r->measured, 0.05, MiB, r->reason,
					    sizeof r->reason);
		if (r->measured == 0)
			vmc_textf(r->reason, sizeof r->reason,
				  "0 bytes counted: is %s on a RAM file system (tmpfs)? Choose a "
				  "directory on disk with --dir",
				  env->write_dir);
	}
	child_end(&c);
}

/*
 * One try: how much host free memory the child's hold took. Free memory is read before the hold,
 * during it and after the child's exit; half of (rise at the exit - fall at the hold) cancels
 * whatever else moved free memory at a steady rate meanwhile (page cache growing, another
 * process starting), which a single difference would count as ours.
 */
static int host_free_taken(const struct selftest_env *env, double *taken)
{
	struct child c;
	if (child_start(&c, job_hold, env) < 0)
		return -1;
	struct platform_host_memory h0, h1, h2;
	struct child_reply reply = {0, 0};
	bool held = env->host_memory(&h0) == 0 && child_step(&c, &reply) == 0 && !reply.err &&
		    env->host_memory(&h1) == 0;
	int e = reply.err ? reply.err : errno;
	child_end(&c);
	if (!held || env->host_memory(&h2) < 0) {
		errno = held ? errno : e;
		return -1;
	}
	double fall = (double)h0.free - (double)h1.free, rise = (double)h2.free - (double)h1.free;
	*taken = (fall + rise) / 2;
	return 0;
}

static void check_host_free(const struct selftest_env *env, struct selftest_report *rep)
{
	char size[32];
	struct selftest_result *r = next_result(rep, "host free memory", SELFTEST_BYTES);
	vmc_textf(r->workload, sizeof r->workload, "a child holds %s, then exits",
		  vmc_format_bytes(env->hold_bytes, size, sizeof size));
	r->expected = -(double)env->hold_bytes;
	r->change = true;
	/* Other processes move host free memory too: five tries, the first close one counts. */
	for (int attempt = 1; attempt <= 5; attempt++) {
		double taken;
		if (host_free_taken(env, &taken) < 0) {
			could_not_run(r, "holding memory or reading host memory");
			return;
		}
		r->measured = -taken;
		r->verdict = selftest_judge(r->expected, r->measured, 0.25, 16 * MiB, r->reason,
					    sizeof r->reason);
		if (r->verdict == SELFTEST_PASS)
			return;
	}
	size_t len = strlen(r->reason);
	vmc_textf(
	    r->reason + len, sizeof r->reason - len,
	    " (5 tries; other processes move host free memory too: retry on a quiet machine)");
}

static void check_tick_clock(const struct selftest_env *env, struct selftest_report *rep)
{
	struct selftest_result *r = next_result(rep, "tick clock", SELFTEST_RATIO);
	vmc_textf(r->workload, sizeof r->workload, "0.25 s of wall time in CPU-time ticks");
	r->expected = 1.0;
	struct platform_clock_check cc;
	if (env->tick_clock_check(0.25, &cc) < 0) {
		if (errno == ENOTSUP) {
			r->verdict = SELFTEST_NA;
			vmc_textf(
			    r->reason, sizeof r->reason,
			    "%s states its CPU-time tick rate (USER_HZ): nothing to calibrate",
			    platform_os_name());
		} else {
			could_not_run(r, "reading the tick clock");
		}
		return;
	}
	r->measured = cc.ratio;
	r->verdict = selftest_judge(1.0, cc.ratio, 0.02, 0, r->reason, sizeof r->reason);
	size_t len = strlen(r->reason);
	vmc_textf(r->reason + len, sizeof r->reason - len, "; timebase from %s", cc.source);
}

static void check_vz_search(const struct selftest_env *env, struct selftest_report *rep)
{
	struct selftest_result *r = next_result(rep, "vz helper search", SELFTEST_COUNT);
	vmc_textf(r->workload, sizeof r->workload, "a dry run: list every Virtualization helper");
	pid_t pids[32];
	size_t n = 0;
	if (env->vz_helpers(pids, sizeof pids / sizeof pids[0], &n) < 0) {
		if (errno == ENOTSUP) {
			r->verdict = SELFTEST_NA;
			vmc_textf(r->reason, sizeof r->reason,
				  "no Virtualization.framework on %s: a qemu instance's pid is its "
				  "qemu.pid",
				  platform_os_name());
		} else {
			could_not_run(r, "listing processes");
		}
		return;
	}
	r->measured = (double)n;
	r->expected = (double)n;
	r->verdict = SELFTEST_PASS;
	vmc_textf(r->reason, sizeof r->reason, "found %zu", n);
	size_t len = strlen(r->reason);
	for (size_t i = 0; i < n && len + 48 < sizeof r->reason; i++) {
		pid_t owner = platform_responsible_pid(pids[i]);
		if (owner > 0)
			vmc_textf(r->reason + len, sizeof r->reason - len,
				  "%s pid %ld (for pid %ld)", i ? "," : ":", (long)pids[i],
				  (long)owner);
		else
			vmc_textf(r->reason + len, sizeof r->reason - len, "%s pid %ld",
				  i ? "," : ":", (long)pids[i]);
		len = strlen(r->reason);
	}
}

void selftest_run(const struct selftest_env *env, struct selftest_report *rep)
{
	memset(rep, 0, sizeof *rep);
	static const struct {
		const char *what;
		void (*run)(const struct selftest_env *, struct selftest_report *);
	} checks[] = {
	    {"footprint", check_footprint},   {"cpu time", check_cpu},
	    {"disk written", check_disk},     {"host free memory", check_host_free},
	    {"tick clock", check_tick_clock}, {"vz helper search", check_vz_search},
	};
	for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
		if (env->only && strcmp(env->only, checks[i].what) != 0)
			continue;
		if (env->progress)
			env->progress(checks[i].what);
		checks[i].run(env, rep);
	}
	for (size_t i = 0; i < rep->n; i++) {
		enum selftest_verdict v = rep->results[i].verdict;
		rep->passed += v == SELFTEST_PASS;
		rep->failed += v == SELFTEST_FAIL;
		rep->not_applicable += v == SELFTEST_NA;
	}
}

static const char *unit_name(enum selftest_unit u)
{
	static const char *const names[] = {"bytes", "ns", "ratio", "count"};
	return names[u];
}

json_t *selftest_json(const struct selftest_report *rep)
{
	json_t *list = json_array();
	for (size_t i = 0; i < rep->n; i++) {
		const struct selftest_result *r = &rep->results[i];
		json_t *j = json_object();
		json_object_set_new(j, "reading", json_string(r->reading));
		json_object_set_new(j, "workload", json_string(r->workload));
		json_object_set_new(j, "unit", json_string(unit_name(r->unit)));
		json_object_set_new(j, "expected", json_real(r->expected));
		json_object_set_new(j, "measured",
				    r->verdict == SELFTEST_NA ? json_null()
							      : json_real(r->measured));
		json_object_set_new(j, "verdict", json_string(verdict_name(r->verdict)));
		json_object_set_new(j, "reason", json_string(r->reason));
		json_array_append_new(list, j);
	}
	json_t *j = json_object();
	json_object_set_new(j, "os", json_string(platform_os_name()));
	json_object_set_new(j, "results", list);
	json_object_set_new(j, "passed", json_integer((json_int_t)rep->passed));
	json_object_set_new(j, "failed", json_integer((json_int_t)rep->failed));
	json_object_set_new(j, "not_applicable", json_integer((json_int_t)rep->not_applicable));
	return j;
}

static void format_figure(enum selftest_unit unit, double v, bool signed_bytes, char *buf,
			  size_t size)
{
	switch (unit) {
	case SELFTEST_BYTES:
		if (signed_bytes)
			vmc_format_bytes_delta((int64_t)llround(v), buf, size);
		else
			vmc_format_bytes((uint64_t)llround(fmax(v, 0)), buf, size);
		break;
	case SELFTEST_NS:
		snprintf(buf, size, "%.0f ms", v / 1e6);
		break;
	case SELFTEST_RATIO:
		snprintf(buf, size, "%.3f", v);
		break;
	case SELFTEST_COUNT:
		snprintf(buf, size, "%.0f", v);
		break;
	}
}

void selftest_print(FILE *f, const struct selftest_report *rep, bool color)
{
	fprintf(f, "%s%-17s %-44s %10s %10s  %s%s\n", color ? "\033[1m" : "", "reading", "workload",
		"expected", "measured", "verdict", color ? "\033[0m" : "");
	for (size_t i = 0; i < rep->n; i++) {
		const struct selftest_result *r = &rep->results[i];
		char e[32] = "-", m[32] = "-";
		bool delta = r->change;
		if (r->verdict != SELFTEST_NA) {
			format_figure(r->unit, r->expected, delta, e, sizeof e);
			format_figure(r->unit, r->measured, delta, m, sizeof m);
		}
		fprintf(f, "%-17s %-44s %10s %10s  %s\n", r->reading, r->workload, e, m,
			verdict_name(r->verdict));
		if (r->verdict != SELFTEST_PASS || r->unit == SELFTEST_COUNT)
			fprintf(f, "%17s   %s\n", "", r->reason);
	}
	fprintf(f, "%zu readings: %zu passed, %zu failed, %zu not applicable on %s\n", rep->n,
		rep->passed, rep->failed, rep->not_applicable, platform_os_name());
}
