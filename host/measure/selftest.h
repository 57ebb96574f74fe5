/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost selftest: every reading vmcost reports, checked on this machine against a workload of
 * known size run by a child process (docs/commands.md#vmcost-selftest). What vmcost reads goes
 * through the hooks below, so a test can plant a wrong unit and see the check fail with its reason.
 */
#ifndef VMC_SELFTEST_H
#define VMC_SELFTEST_H

#include "platform/platform.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How vmcost reads the machine (the platform layer by default) and the workloads' sizes. */
struct selftest_env {
	int (*proc_sample)(pid_t pid, struct platform_proc_sample *out);
	int (*host_memory)(struct platform_host_memory *out);
	int (*release_pages)(void *addr, size_t len);
	const char *release_method;
	int (*tick_clock_check)(double seconds, struct platform_clock_check *out);
	int (*vz_helpers)(pid_t *pids, size_t max, size_t *n);
	uint64_t touch_bytes; /* footprint: the child touches, then releases, this much */
	uint64_t hold_bytes;  /* host free memory: the child holds this much */
	uint64_t write_bytes; /* disk: the child writes and fsyncs this much */
	double spin_seconds;  /* CPU: the child spins for this much CPU time */
	const char *write_dir;
	void (*progress)(const char *what); /* before each check; may be NULL */
	const char *only;		    /* run only this check ("cpu time"); NULL: all */
};

/* The platform layer's readers and the default sizes (64 MiB, 512 MiB, 16 MiB, 0.5 s, $TMPDIR
 * or /var/tmp). */
void selftest_env_defaults(struct selftest_env *env);

enum selftest_verdict { SELFTEST_PASS, SELFTEST_FAIL, SELFTEST_NA };

/* The units a check compares in: how its figures print. */
enum selftest_unit { SELFTEST_BYTES, SELFTEST_NS, SELFTEST_RATIO, SELFTEST_COUNT };

struct selftest_result {
	const char *reading; /* "footprint", "cpu time", ... */
	char workload[128];  /* what the child did: "a child touches 64.0 MiB" */
	enum selftest_unit unit;
	bool change; /* the figures are changes (+64 MiB), not totals */
	double expected, measured;
	enum selftest_verdict verdict;
	char reason[256]; /* why it failed or does not apply; what it found (the vz search) */
};

#define SELFTEST_MAX 8

struct selftest_report {
	size_t n;
	struct selftest_result results[SELFTEST_MAX];
	size_t passed, failed, not_applicable;
};

/*
 * Pure verdict: measured within max(tolerance * |expected|, slack) of expected passes. A reading
 * off by a factor of 2 or more says so in reason ("off by a factor of 1024: a wrong unit?").
 */
enum selftest_verdict selftest_judge(double expected, double measured, double tolerance,
				     double slack, char *reason, size_t size);

/* Runs every check in order; each result says pass, fail (why) or not applicable (why). */
void selftest_run(const struct selftest_env *env, struct selftest_report *report);

json_t *selftest_json(const struct selftest_report *report);
/* The table vmcost selftest prints: one row per reading, why it failed or does not apply, and a
 * count (bold heading when color). */
void selftest_print(FILE *f, const struct selftest_report *report, bool color);

#endif
