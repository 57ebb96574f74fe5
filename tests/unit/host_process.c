/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host/clients/process.c, the one process runner: output and exit status, PATH lookup, the
 * environment it removes, bounded output, a timeout and a stop flag that reach the whole
 * process group, and the first/last-line helpers the error messages use.
 */
#include "check.h"
#include "clients/process.h"
#include "clock.h"
#include "host_testlib.h"

/* bin/NAME: a shell script with body, on PATH (t_setup puts only bin/ there, plus /bin). */
static void script(const char *name, const char *body)
{
	char text[2048], path[4200];
	snprintf(text, sizeof text, "#!/bin/sh\n%s\n", body);
	snprintf(path, sizeof path, "bin/%s", name);
	t_write(text, "%s", path);
	t_chmod(path, 0755);
}

TEST(captures_output_and_status)
{
	script("limactl", "echo \"out $*\"; echo 'level=fatal msg=\"boom\"' >&2; exit 3");
	const char *argv[] = {"limactl", "shell", "dev", "cat", "/proc/meminfo", NULL};
	struct process_result r;
	CHECK_INT(process_run(argv, NULL, &r), 0);
	CHECK_INT(r.exit_code, 3);
	CHECK_STR(r.out, "out shell dev cat /proc/meminfo\n");
	char last[128];
	process_last_line(r.err, last, sizeof last);
	CHECK_STR(last, "level=fatal msg=\"boom\"");
	CHECK(!r.timed_out && !r.interrupted && !r.truncated);
	process_result_free(&r);
}

TEST(not_on_path_is_enoent)
{
	const char *argv[] = {"no-such-program-here", NULL};
	struct process_result r;
	errno = 0;
	CHECK_INT(process_run(argv, NULL, &r), -1);
	CHECK_INT(errno, ENOENT);
	char path[64];
	CHECK(!process_find_on_path("no-such-program-here", path, sizeof path));
}

TEST(unset_env_is_removed_from_the_child)
{
	script("showenv", "echo \"a=${VMC_A-unset} b=${VMC_B-unset}\"");
	setenv("VMC_A", "1", 1);
	setenv("VMC_B", "2", 1);
	static const char *const unset[] = {"VMC_A", NULL};
	const char *argv[] = {"showenv", NULL};
	struct process_result r;
	CHECK_INT(process_run(argv, &(struct process_options){.unset_env = unset}, &r), 0);
	CHECK_STR(r.out, "a=unset b=2\n");
	process_result_free(&r);
	unsetenv("VMC_A");
	unsetenv("VMC_B");
}

TEST(output_beyond_the_bound_is_dropped_and_said)
{
	script("chatty",
	       "i=0; while [ $i -lt 300 ]; do echo 0123456789; i=$((i + 1)); done; exit 0");
	const char *argv[] = {"chatty", NULL};
	struct process_result r;
	CHECK_INT(process_run(argv, &(struct process_options){.max_output = 1000}, &r), 0);
	CHECK_INT(r.exit_code, 0); /* it was read to the end, not killed */
	CHECK_INT(r.out_len, 1000);
	CHECK_INT(strlen(r.out), 1000);
	CHECK(r.truncated);
	process_result_free(&r);
}

TEST(timeout_terminates_the_whole_group)
{
	/* A grandchild holding the pipes open must not keep us waiting. */
	script("limactl", "sleep 30 & sleep 30");
	const char *argv[] = {"limactl", "shell", "dev", NULL};
	struct process_result r;
	double t0 = vmc_monotonic_s();
	CHECK_INT(process_run(argv, &(struct process_options){.timeout_ms = 300}, &r), 0);
	CHECK(r.timed_out);
	CHECK_INT(r.exit_code, 128 + SIGTERM);
	CHECK(vmc_monotonic_s() - t0 < 5);
	process_result_free(&r);
}

TEST(stop_flag_interrupts)
{
	script("limactl", "sleep 30");
	volatile sig_atomic_t stop = 1;
	const char *argv[] = {"limactl", "shell", "dev", NULL};
	struct process_result r;
	double t0 = vmc_monotonic_s();
	CHECK_INT(process_run(argv, &(struct process_options){.stop = &stop}, &r), 0);
	CHECK(r.interrupted);
	CHECK(vmc_monotonic_s() - t0 < 5);
	process_result_free(&r);
}

TEST(first_and_last_lines)
{
	script("version",
	       "[ \"$1\" = --version ] && printf 'tool version 2.2.0\\r\\nmore\\n' && exit 0;"
	       " echo nope; exit 1");
	char line[64];
	const char *ok[] = {"version", "--version", NULL};
	CHECK_INT(process_first_line(ok, 5000, line, sizeof line), 0);
	CHECK_STR(line, "tool version 2.2.0");
	const char *bad[] = {"version", "--help", NULL};
	CHECK_INT(process_first_line(bad, 5000, line, sizeof line), -1);
	CHECK_STR(line, "");
	const char *missing[] = {"no-such-program-here", NULL};
	CHECK_INT(process_first_line(missing, 5000, line, sizeof line), -1);

	process_last_line("first\nsecond \n\t\n", line, sizeof line);
	CHECK_STR(line, "second");
	process_last_line("", line, sizeof line);
	CHECK_STR(line, "");
	process_last_line(NULL, line, sizeof line);
	CHECK_STR(line, "");
	char small[4];
	process_last_line("abcdefgh", small, sizeof small);
	CHECK_STR(small, "abc");
}

int main(void)
{
	t_setup("host-process");
	/* The scripts need sh, sleep and printf besides bin/. */
	char path[4300];
	snprintf(path, sizeof path, "%s/bin:/usr/bin:/bin", t_root);
	setenv("PATH", path, 1);
	RUN(captures_output_and_status);
	RUN(not_on_path_is_enoent);
	RUN(unset_env_is_removed_from_the_child);
	RUN(output_beyond_the_bound_is_dropped_and_said);
	RUN(timeout_terminates_the_whole_group);
	RUN(stop_flag_interrupts);
	RUN(first_and_last_lines);
	t_cleanup();
	return check_done();
}
