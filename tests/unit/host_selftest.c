/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost selftest: its verdicts, and the whole run against real child workloads with one
 * reading planted in a wrong unit at a time (the KiB, sector, page and Mach-tick mistakes a
 * platform layer can make): that reading must fail and say it is off by a factor, the others
 * must not.
 */
#include "check.h"
#include "golden.h"
#include "measure/selftest.h"
#include "print_capture.h"

#include <errno.h>
#include <string.h>

#define MiB (1024.0 * 1024.0)

static const struct selftest_result *find(const struct selftest_report *rep, const char *reading,
					  size_t nth)
{
	for (size_t i = 0; i < rep->n; i++)
		if (strcmp(rep->results[i].reading, reading) == 0 && nth-- == 0)
			return &rep->results[i];
	return NULL;
}

static enum selftest_verdict verdict_of(const struct selftest_report *rep, const char *reading,
					size_t nth)
{
	const struct selftest_result *r = find(rep, reading, nth);
	return r ? r->verdict : (enum selftest_verdict) - 1;
}

/* Small, quick workloads: the checks are the same at any size. */
static void quick_env(struct selftest_env *env)
{
	selftest_env_defaults(env);
	env->touch_bytes = 64ull << 20;
	env->hold_bytes = 64ull << 20;
	env->write_bytes = 4ull << 20;
	env->spin_seconds = 0.1;
}

TEST(judge_passes_within_tolerance_or_slack)
{
	char why[256];
	CHECK_INT(selftest_judge(64 * MiB, 66 * MiB, 0.05, MiB, why, sizeof why), SELFTEST_PASS);
	CHECK_INT(selftest_judge(64 * MiB, 68 * MiB, 0.05, MiB, why, sizeof why), SELFTEST_FAIL);
	CHECK_CONTAINS(why, "6.2 % away");
	/* The slack covers a reading's own granularity (10 ms CPU ticks). */
	CHECK_INT(selftest_judge(100e6, 115e6, 0.05, 20e6, why, sizeof why), SELFTEST_PASS);
	CHECK_INT(selftest_judge(-64 * MiB, -63 * MiB, 0.05, MiB, why, sizeof why), SELFTEST_PASS);
}

TEST(judge_names_a_factor)
{
	char why[256];
	CHECK_INT(selftest_judge(64 * MiB, 64 * 1024, 0.05, MiB, why, sizeof why), SELFTEST_FAIL);
	CHECK_STR(why, "off by a factor of 1.02e+03 (read less than the workload): a wrong unit?");
	CHECK_INT(selftest_judge(500e6, 500e6 * 125 / 3, 0.05, 20e6, why, sizeof why),
		  SELFTEST_FAIL);
	CHECK_STR(why, "off by a factor of 41.7 (read more than the workload): a wrong unit?");
	CHECK_INT(selftest_judge(-64 * MiB, 2 * MiB, 0.25, 16 * MiB, why, sizeof why),
		  SELFTEST_FAIL);
	CHECK_STR(why, "the reading did not move the way the workload did");
	CHECK_INT(selftest_judge(16 * MiB, 0, 0.05, MiB, why, sizeof why), SELFTEST_FAIL);
	CHECK_STR(why, "the reading did not move the way the workload did");
}

/* ---- planted wrong units --------------------------------------------------------------- */

static int sample_footprint_in_kib(pid_t pid, struct platform_proc_sample *out)
{
	int rc = platform_proc_sample(pid, out);
	out->footprint /= 1024;
	return rc;
}

static int sample_cpu_in_mach_ticks(pid_t pid, struct platform_proc_sample *out)
{
	int rc = platform_proc_sample(pid, out);
	/* Apple Silicon's 24 MHz ticks taken for nanoseconds: 41.7 times too few. */
	out->cpu_ns = out->cpu_ns * 3 / 125;
	return rc;
}

static int sample_disk_in_sectors(pid_t pid, struct platform_proc_sample *out)
{
	int rc = platform_proc_sample(pid, out);
	out->disk_written /= 512;
	return rc;
}

static int host_free_in_pages(struct platform_host_memory *out)
{
	int rc = platform_host_memory(out);
	out->free /= 16384;
	return rc;
}

static int tick_clock_read_as_ns(double seconds, struct platform_clock_check *out)
{
	(void)seconds;
	memset(out, 0, sizeof *out);
	out->ratio = 3.0 / 125.0;
	strcpy(out->source, "mach_timebase_info");
	return 0;
}

static int tick_clock_right(double seconds, struct platform_clock_check *out)
{
	(void)seconds;
	memset(out, 0, sizeof *out);
	out->ratio = 1.003;
	strcpy(out->source, "hw.tbfrequency");
	return 0;
}

static int two_vz_helpers(pid_t *pids, size_t max, size_t *n)
{
	(void)max;
	pids[0] = 4242;
	pids[1] = 4343;
	*n = 2;
	return 0;
}

TEST(the_real_readings_pass_here)
{
	struct selftest_env env;
	quick_env(&env);
	struct selftest_report rep;
	selftest_run(&env, &rep);
	CHECK_INT(rep.n, 7);
	CHECK_INT(verdict_of(&rep, "footprint", 0), SELFTEST_PASS);
	CHECK_INT(verdict_of(&rep, "footprint", 1), SELFTEST_PASS);
	CHECK_INT(verdict_of(&rep, "cpu time", 0), SELFTEST_PASS);
	CHECK_INT(verdict_of(&rep, "disk written", 0), SELFTEST_PASS);
	/* Not on Linux: Mach ticks and Virtualization helpers. */
	CHECK_INT(verdict_of(&rep, "tick clock", 0), SELFTEST_NA);
	CHECK_INT(verdict_of(&rep, "vz helper search", 0), SELFTEST_NA);
	CHECK_CONTAINS(find(&rep, "vz helper search", 0)->reason, "no Virtualization.framework");
}

TEST(footprint_in_kib_fails_both_footprint_checks)
{
	struct selftest_env env;
	quick_env(&env);
	env.proc_sample = sample_footprint_in_kib;
	env.only = "footprint";
	struct selftest_report rep;
	selftest_run(&env, &rep);
	CHECK_INT(rep.n, 2);
	CHECK_INT(verdict_of(&rep, "footprint", 0), SELFTEST_FAIL);
	CHECK_INT(verdict_of(&rep, "footprint", 1), SELFTEST_FAIL);
	CHECK_CONTAINS(find(&rep, "footprint", 0)->reason, "a wrong unit?");
	CHECK_INT(rep.failed, 2);
	/* The other readings of the same sample are still right. */
	env.only = "cpu time";
	selftest_run(&env, &rep);
	CHECK_INT(verdict_of(&rep, "cpu time", 0), SELFTEST_PASS);
}

TEST(cpu_in_mach_ticks_fails_cpu_time)
{
	struct selftest_env env;
	quick_env(&env);
	env.proc_sample = sample_cpu_in_mach_ticks;
	env.only = "cpu time";
	struct selftest_report rep;
	selftest_run(&env, &rep);
	CHECK_INT(verdict_of(&rep, "cpu time", 0), SELFTEST_FAIL);
	CHECK_CONTAINS(find(&rep, "cpu time", 0)->reason, "off by a factor of 4");
	env.only = "footprint";
	selftest_run(&env, &rep);
	CHECK_INT(verdict_of(&rep, "footprint", 0), SELFTEST_PASS);
}

TEST(disk_in_sectors_fails_disk_written)
{
	struct selftest_env env;
	quick_env(&env);
	env.proc_sample = sample_disk_in_sectors;
	env.only = "disk written";
	struct selftest_report rep;
	selftest_run(&env, &rep);
	CHECK_INT(rep.n, 1);
	CHECK_INT(verdict_of(&rep, "disk written", 0), SELFTEST_FAIL);
	CHECK_CONTAINS(find(&rep, "disk written", 0)->reason, "off by a factor of 512");
}

TEST(host_free_in_pages_fails_host_free_memory)
{
	struct selftest_env env;
	quick_env(&env);
	env.host_memory = host_free_in_pages;
	env.only = "host free memory";
	struct selftest_report rep;
	selftest_run(&env, &rep);
	CHECK_INT(verdict_of(&rep, "host free memory", 0), SELFTEST_FAIL);
	CHECK_CONTAINS(find(&rep, "host free memory", 0)->reason, "retry on a quiet machine");
}

TEST(tick_clock_read_as_nanoseconds_fails)
{
	struct selftest_env env;
	quick_env(&env);
	env.tick_clock_check = tick_clock_read_as_ns;
	env.only = "tick clock";
	struct selftest_report rep;
	selftest_run(&env, &rep);
	const struct selftest_result *r = find(&rep, "tick clock", 0);
	CHECK_INT(r->verdict, SELFTEST_FAIL);
	CHECK_STR(r->reason,
		  "off by a factor of 41.7 (read less than the workload): a wrong unit?; "
		  "timebase from mach_timebase_info");
	env.tick_clock_check = tick_clock_right;
	selftest_run(&env, &rep);
	CHECK_INT(verdict_of(&rep, "tick clock", 0), SELFTEST_PASS);
}

TEST(vz_search_lists_what_it_finds)
{
	struct selftest_env env;
	quick_env(&env);
	env.vz_helpers = two_vz_helpers;
	env.only = "vz helper search";
	struct selftest_report rep;
	selftest_run(&env, &rep);
	const struct selftest_result *r = find(&rep, "vz helper search", 0);
	CHECK_INT(r->verdict, SELFTEST_PASS);
	CHECK_DBL(r->measured, 2, 0);
	CHECK_STR(r->reason, "found 2: pid 4242, pid 4343");
}

TEST(an_unwritable_directory_fails_with_what_to_do)
{
	struct selftest_env env;
	quick_env(&env);
	env.write_dir = "/nonexistent/vmcost";
	env.only = "disk written";
	struct selftest_report rep;
	selftest_run(&env, &rep);
	const struct selftest_result *r = find(&rep, "disk written", 0);
	CHECK_INT(r->verdict, SELFTEST_FAIL);
	CHECK_STR(r->reason, "could not run: writing in /nonexistent/vmcost (choose another "
			     "directory with --dir): No such file or directory");
}

TEST(json_carries_every_result)
{
	struct selftest_env env;
	quick_env(&env);
	env.tick_clock_check = tick_clock_right;
	struct selftest_report rep;
	selftest_run(&env, &rep);
	json_t *j = selftest_json(&rep);
	CHECK_STR(json_string_value(json_object_get(j, "os")), "linux");
	CHECK_INT(json_array_size(json_object_get(j, "results")), 7);
	json_t *first = json_array_get(json_object_get(j, "results"), 0);
	CHECK_STR(json_string_value(json_object_get(first, "reading")), "footprint");
	CHECK_STR(json_string_value(json_object_get(first, "unit")), "bytes");
	CHECK(json_is_real(json_object_get(first, "measured")));
	json_t *vz = json_array_get(json_object_get(j, "results"), 6);
	CHECK_STR(json_string_value(json_object_get(vz, "verdict")), "n/a");
	CHECK(json_is_null(json_object_get(vz, "measured")));
	CHECK_INT(json_integer_value(json_object_get(j, "passed")) +
		      json_integer_value(json_object_get(j, "failed")) +
		      json_integer_value(json_object_get(j, "not_applicable")),
		  7);
	json_decref(j);
}

static void add(struct selftest_report *rep, const char *reading, const char *workload,
		enum selftest_unit unit, bool change, double expected, double measured,
		enum selftest_verdict verdict, const char *reason)
{
	struct selftest_result *r = &rep->results[rep->n++];
	*r = (struct selftest_result){.reading = reading,
				      .unit = unit,
				      .change = change,
				      .expected = expected,
				      .measured = measured,
				      .verdict = verdict};
	snprintf(r->workload, sizeof r->workload, "%s", workload);
	snprintf(r->reason, sizeof r->reason, "%s", reason);
	rep->passed += verdict == SELFTEST_PASS;
	rep->failed += verdict == SELFTEST_FAIL;
	rep->not_applicable += verdict == SELFTEST_NA;
}

/* What vmcost selftest prints, for a fixed report with every kind of row (not a live run). */
TEST(the_table_prints_every_kind_of_row)
{
	struct selftest_report rep = {0};
	add(&rep, "footprint", "a child touches 64.0 MiB", SELFTEST_BYTES, true, 64 * MiB,
	    65.5 * MiB, SELFTEST_PASS, "");
	add(&rep, "footprint", "the child releases it (MADV_DONTNEED)", SELFTEST_BYTES, true,
	    -64 * MiB, -64 * 1024, SELFTEST_FAIL,
	    "off by a factor of 1.02e+03 (read less than the workload): a wrong unit?");
	add(&rep, "cpu time", "a child spins for 0.50 s of CPU", SELFTEST_NS, false, 500e6, 512e6,
	    SELFTEST_PASS, "");
	add(&rep, "disk written", "a child writes and fsyncs 16.0 MiB in /var/tmp", SELFTEST_BYTES,
	    false, 16 * MiB, 0, SELFTEST_FAIL,
	    "could not run: writing in /var/tmp (choose another directory with --dir): "
	    "Read-only file system");
	add(&rep, "host free memory", "a child holds 512 MiB, then exits", SELFTEST_BYTES, true,
	    512 * MiB, 498 * MiB, SELFTEST_PASS, "");
	add(&rep, "tick clock", "0.25 s of wall time in CPU-time ticks", SELFTEST_RATIO, false, 1,
	    0, SELFTEST_NA, "not on this OS: Mach ticks are macOS's");
	add(&rep, "vz helper search", "a dry run: list every Virtualization helper", SELFTEST_COUNT,
	    false, 0, 2, SELFTEST_PASS, "found 2: pid 4242, pid 4343");
	struct capture cap;
	selftest_print(capture_open(&cap), &rep, false);
	char *text = capture_close(&cap);
	/* The last line names this OS. */
	text = golden_replace(text, platform_os_name(), "OS");
	CHECK_GOLDEN(text, "vmcost-selftest");
	free(text);
}

int main(void)
{
	RUN(judge_passes_within_tolerance_or_slack);
	RUN(judge_names_a_factor);
	RUN(the_real_readings_pass_here);
	RUN(footprint_in_kib_fails_both_footprint_checks);
	RUN(cpu_in_mach_ticks_fails_cpu_time);
	RUN(disk_in_sectors_fails_disk_written);
	RUN(host_free_in_pages_fails_host_free_memory);
	RUN(tick_clock_read_as_nanoseconds_fails);
	RUN(vz_search_lists_what_it_finds);
	RUN(an_unwritable_directory_fails_with_what_to_do);
	RUN(json_carries_every_result);
	RUN(the_table_prints_every_kind_of_row);
	return check_done();
}
