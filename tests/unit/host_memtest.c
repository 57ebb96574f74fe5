/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memtest and load without a VM: pgbench output (recorded from pgbench 15), the fill script run
 * on this machine in a temp dir, the report rendered from recorded lab documents, results file
 * naming, limactl --version through a fake limactl, and the commands' exit codes on fake
 * instances.
 */
#include "check.h"
#include "clients/lima.h"
#include "commands/commands.h"
#include "golden.h"
#include "log.h"
#include "measure/memtest_noise.h"
#include "measure/memtest_report.h"
#include "measure/results.h"
#include "measure/workload.h"
#include "print_capture.h"
#include "units.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FIX "tests/unit/fixtures/memtest"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	size_t got = fread(buf, 1, (size_t)n, f);
	buf[got] = '\0';
	fclose(f);
	return buf;
}

static int write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	fclose(f);
	return chmod(path, mode);
}

/* ---- pgbench -------------------------------------------------------------------------------- */

TEST(pgbench_summary_8_clients)
{
	char *out = slurp(FIX "/pgbench-15-c8.out");
	struct workload_pg_run run = {0};
	CHECK_INT(workload_pgbench_parse(out, &run), 0);
	CHECK_DBL(run.tps, 313.340186, 1e-6);
	CHECK(run.has_latency);
	CHECK_DBL(run.latency_ms, 25.060, 1e-9);
	CHECK_U64(run.transactions, 1554);
	free(out);
}

TEST(pgbench_summary_1_client)
{
	char *out = slurp(FIX "/pgbench-15-c1.out");
	struct workload_pg_run run = {0};
	CHECK_INT(workload_pgbench_parse(out, &run), 0);
	CHECK_DBL(run.tps, 216.516107, 1e-6);
	CHECK_DBL(run.latency_ms, 4.619, 1e-9);
	CHECK_U64(run.transactions, 638);
	free(out);
}

TEST(pgbench_init_output_has_no_tps)
{
	char *out = slurp(FIX "/pgbench-15-init.out");
	struct workload_pg_run run = {0};
	CHECK_INT(workload_pgbench_parse(out, &run), -1);
	CHECK_INT(workload_pgbench_parse(NULL, &run), -1);
	/* "tps =" only counts at a line start, not inside a progress line. */
	CHECK_INT(workload_pgbench_parse("progress: 5.0 s, 812.4 tps = nothing\n", &run), -1);
	free(out);
}

/* ---- fill ----------------------------------------------------------------------------------- */

TEST(fill_parse)
{
	struct workload_fill_result r = {0};
	CHECK_INT(workload_fill_parse("noise\nvmcost-fill tmpfs_mib=1024 cache_mib=1024\n", &r), 0);
	CHECK_U64(r.tmpfs_bytes, 1024ull << 20);
	CHECK_U64(r.cache_bytes, 1024ull << 20);
	CHECK_INT(workload_fill_parse("vmcost-fill tmpfs_mib=x\n", &r), -1);
	CHECK_INT(workload_fill_parse("", &r), -1);
}

/* The guest script is plain sh: run it here on a temp "tmpfs" and files dir. */
TEST(fill_script_runs_and_cleans_up)
{
	char root[] = "/tmp/vmcost-fill-XXXXXX";
	CHECK(mkdtemp(root) != NULL);
	char shm[128], dir[128], script[128], cmd[512];
	snprintf(shm, sizeof shm, "%s/shm", root);
	snprintf(dir, sizeof dir, "%s/files", root);
	mkdir(shm, 0755);
	snprintf(script, sizeof script, "%s/fill.sh", root);
	CHECK_INT(write_file(script, workload_fill_script, 0644), 0);
	snprintf(cmd, sizeof cmd, "sh %s 3 %s %s 77 > %s/out 2>&1", script, shm, dir, root);
	CHECK_INT(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/out", root);
	char *out = slurp(cmd);
	struct workload_fill_result r = {0};
	CHECK_INT(workload_fill_parse(out, &r), 0);
	CHECK_U64(r.tmpfs_bytes, 3ull << 20);
	free(out);
	struct stat st;
	snprintf(cmd, sizeof cmd, "%s/vmcost-fill.77.0", dir);
	CHECK_INT(stat(cmd, &st), 0);
	CHECK_INT(st.st_size, 3 << 20);
	snprintf(cmd, sizeof cmd, "%s/vmcost-fill.77.tmp", shm);
	CHECK(stat(cmd, &st) != 0); /* the tmpfs file was deleted again */
	snprintf(cmd, sizeof cmd, "%s/vmcost-fill.77.seed", shm);
	CHECK(stat(cmd, &st) != 0);

	snprintf(script, sizeof script, "%s/clean.sh", root);
	CHECK_INT(write_file(script, workload_fill_cleanup_script, 0644), 0);
	snprintf(cmd, sizeof cmd, "sh %s %s %s 77", script, shm, dir);
	CHECK_INT(system(cmd), 0);
	CHECK(stat(dir, &st) != 0);
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
}

/*
 * An interrupted run's script outlives its cleanup in the guest: once its seed is gone it stops,
 * writes nothing more, and never touches another run's files (here: dd "loses" the seed, as
 * when the cleanup removed it meanwhile).
 */
TEST(fill_script_without_its_seed_stops_and_spares_other_runs)
{
	char root[] = "/tmp/vmcost-fill-XXXXXX";
	CHECK(mkdtemp(root) != NULL);
	char script[128], cmd[1024], path[256];
	snprintf(script, sizeof script, "%s/fill.sh", root);
	CHECK_INT(write_file(script, workload_fill_script, 0644), 0);
	snprintf(path, sizeof path, "%s/bin/dd", root);
	snprintf(cmd, sizeof cmd,
		 "mkdir -p %s/bin %s/shm %s/files && echo next >%s/shm/vmcost-fill.2.seed && "
		 "echo next >%s/files/vmcost-fill.2.0",
		 root, root, root, root, root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(write_file(path, "#!/bin/sh\nexit 0\n", 0755), 0);
	snprintf(cmd, sizeof cmd, "PATH=%s/bin:$PATH sh %s 3 %s/shm %s/files 1 >/dev/null 2>&1",
		 root, script, root, root);
	CHECK(system(cmd) != 0);
	snprintf(cmd, sizeof cmd, "(ls %s/shm; ls %s/files) > %s/left", root, root, root);
	CHECK_INT(system(cmd), 0);
	snprintf(path, sizeof path, "%s/left", root);
	char *left = slurp(path);
	CHECK_STR(left, "vmcost-fill.2.seed\nvmcost-fill.2.0\n");
	free(left);
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
}

TEST(fill_script_rounds_to_whole_blocks)
{
	char root[] = "/tmp/vmcost-fill-XXXXXX";
	CHECK(mkdtemp(root) != NULL);
	char script[128], cmd[512];
	snprintf(script, sizeof script, "%s/fill.sh", root);
	CHECK_INT(write_file(script, workload_fill_script, 0644), 0);
	snprintf(cmd, sizeof cmd, "mkdir %s/shm && sh %s 70 %s/shm %s/files 1 > %s/out", root,
		 script, root, root, root);
	CHECK_INT(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/out", root);
	char *out = slurp(cmd);
	CHECK_CONTAINS(out, "vmcost-fill tmpfs_mib=128 cache_mib=128");
	free(out);
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
}

/* ---- report ------------------------------------------------------------------------------------
 */

static json_t *load_doc(const char *name)
{
	char path[256];
	snprintf(path, sizeof path, FIX "/%s", name);
	json_error_t e;
	json_t *doc = json_load_file(path, 0, &e);
	CHECK(doc != NULL);
	return doc;
}

static char *render(const json_t *doc, bool markdown)
{
	struct capture cap;
	FILE *f = capture_open(&cap);
	if (markdown)
		CHECK_INT(memtest_report_markdown(f, doc), 0);
	else
		memtest_report_human(f, doc, false);
	return capture_close(&cap);
}

TEST(report_human_from_recorded_lab_run)
{
	json_t *doc = load_doc("doc-fill-pressure.json");
	char *out = render(doc, false);
	CHECK(strstr(out, "\033[") == NULL); /* no escapes without color */
	CHECK_GOLDEN(out, "vmcost-memtest-report");
	free(out);
	json_decref(doc);
}

TEST(report_markdown_names_machine_versions_and_svg)
{
	json_t *doc = load_doc("doc-fill-noballoon.json");
	char *md = render(doc, true);
	CHECK_CONTAINS(md, "- Lima: limactl version 2.2.0 (vmcost lab stand-in); vmType qemu");
	CHECK_GOLDEN(md, "vmcost-memtest-report-md");
	free(md);
	json_decref(doc);
}

TEST(pressure_text_variants)
{
	json_t *doc = json_pack("{s:{s:s, s:i, s:i}, s:{s:i, s:f}}", "result", "pressure",
				"INCONCLUSIVE", "canary_pages", 262144, "canary_discarded", 0,
				"settings", "pressure", 64 << 20, "pressure_hold_s", 40.0);
	char buf[400];
	memtest_pressure_text(doc, buf, sizeof buf);
	CHECK_CONTAINS(buf, "INCONCLUSIVE: 64.0 MiB held 40 s never made the host discard");
	CHECK_CONTAINS(buf, "raise --pressure");
	json_object_set_new(json_object_get(doc, "result"), "pressure", json_string("skipped"));
	memtest_pressure_text(doc, buf, sizeof buf);
	CHECK_STR(buf, "skipped (--pressure none)");
	json_decref(doc);
}

/* Whole sentences longer than CHECK_STR's message buffer. */
static void check_sentence(const char *got, const char *want)
{
	CHECK(strcmp(got, want) == 0);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "     got:  %s\n     want: %s\n", got, want);
}

TEST(pressure_text_says_what_the_footprint_gave_back)
{
	json_t *doc = json_pack(
	    "{s:{s:s, s:i, s:i, s:I}, s:{s:I, s:f}, s:{s:s}}", "result", "pressure", "conclusive",
	    "canary_pages", 262144, "canary_discarded", 131072, "footprint_fell_under_pressure",
	    (json_int_t)(1200ll << 20), "settings", "pressure", (json_int_t)(8ll << 30),
	    "pressure_hold_s", 40.0, "instance", "vm_type", "vz");
	char buf[400];
	memtest_pressure_text(doc, buf, sizeof buf);
	check_sentence(buf, "conclusive: 8.00 GiB held 40 s, canary 131072 of 262144 pages "
			    "discarded; the VM's footprint fell by 1.17 GiB under it");
	/* On krunkit that fall is free-page reporting's return, which nothing else shows. */
	json_object_set_new(json_object_get(doc, "instance"), "vm_type", json_string("krunkit"));
	memtest_pressure_text(doc, buf, sizeof buf);
	check_sentence(buf,
		       "conclusive: 8.00 GiB held 40 s, canary 131072 of 262144 pages "
		       "discarded; the VM's footprint fell by 1.17 GiB under it (krunkit: what "
		       "free-page reporting gave back, MADV_FREE'd pages the footprint counts "
		       "until pressure)");
	json_decref(doc);
}

TEST(doc_paths)
{
	json_t *doc = load_doc("doc-fill-pressure.json");
	double v = 0;
	CHECK(memtest_num(doc, "result.ram_freed_by_stop", &v));
	CHECK_DBL(v, 358100992, 0.5);
	CHECK(!memtest_num(doc, "result.nothing", &v));
	CHECK(!memtest_num(doc, "instance.name", &v)); /* a string is not a number */
	CHECK_STR(memtest_str(doc, "instance.vm_type"), "qemu");
	json_decref(doc);
}

/* ---- results -----------------------------------------------------------------------------------
 */

TEST(results_names_and_atomic_write)
{
	char dir[] = "/tmp/vmcost-results-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char sub[128], err[256], base[256];
	snprintf(sub, sizeof sub, "%s/a/b", dir);
	CHECK_INT(results_ensure_dir(sub, err, sizeof err), VMC_EXIT_OK);
	struct tm tm = {.tm_year = 126,
			.tm_mon = 11,
			.tm_mday = 2,
			.tm_hour = 11,
			.tm_min = 5,
			.tm_sec = 9,
			.tm_isdst = -1};
	time_t when = mktime(&tm);
	CHECK_INT(results_base(sub, "memtest", "dev", when, base, sizeof base), 0);
	char expect[256];
	snprintf(expect, sizeof expect, "%s/memtest-dev-20261202-110509", sub);
	CHECK(strcmp(base, expect) == 0);
	char path[300];
	snprintf(path, sizeof path, "%s.json", base);
	json_t *doc = json_pack("{s:i}", "x", 1);
	CHECK_INT(results_write_json(path, doc), 0);
	json_decref(doc);
	char *text = slurp(path);
	CHECK_STR(text, "{\n  \"x\": 1\n}\n");
	free(text);
	snprintf(path, sizeof path, "%s.json.tmp", base);
	CHECK(access(path, F_OK) != 0);
	char small[8];
	CHECK_INT(results_base(sub, "memtest", "dev", when, small, sizeof small), -1);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(results_ensure_dir("/proc/vmcost-cannot", err, sizeof err), VMC_EXIT_FAILURE);
	CHECK_CONTAINS(err, "--results DIR");
}

TEST(machine_description)
{
	json_t *m = results_machine();
	CHECK(json_is_string(json_object_get(m, "kernel")));
	CHECK(json_integer_value(json_object_get(m, "cpus")) > 0);
	CHECK(json_integer_value(json_object_get(m, "memory")) > 0);
	char line[512];
	results_machine_line(m, line, sizeof line);
	CHECK_CONTAINS(line, "RAM");
	json_decref(m);
}

/* ---- limactl and the commands, with a fake limactl on PATH ----------------------------------
 */

static char fake_bin[64];
static char fake_home[64];

static void fake_limactl(const char *body)
{
	char path[128];
	snprintf(path, sizeof path, "%s/limactl", fake_bin);
	char script[2048];
	snprintf(script, sizeof script, "#!/bin/sh\n%s\n", body);
	CHECK_INT(write_file(path, script, 0755), 0);
}

TEST(version_line_of_limactl)
{
	fake_limactl("[ \"$1\" = --version ] && echo 'limactl version 2.2.0' && exit 0; exit 1");
	char v[64];
	lima_limactl_version(v, sizeof v);
	CHECK_STR(v, "limactl version 2.2.0");
	fake_limactl("exit 1");
	lima_limactl_version(v, sizeof v);
	CHECK_STR(v, "limactl version unknown");
}

/* An instance directory as Lima leaves it; running = pid files of live processes. */
static void fake_instance(const char *name, pid_t pid)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", fake_home, name);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/%s/lima.yaml", fake_home, name);
	write_file(path, "vmType: qemu\narch: x86_64\ncpus: 2\nmemory: 2GiB\n", 0644);
	char pidtext[32];
	snprintf(pidtext, sizeof pidtext, "%d\n", (int)pid);
	snprintf(path, sizeof path, "%s/%s/qemu.pid", fake_home, name);
	if (pid)
		write_file(path, pidtext, 0644);
	snprintf(path, sizeof path, "%s/%s/ha.pid", fake_home, name);
	if (pid)
		write_file(path, pidtext, 0644);
}

/* Runs a command in a child with stdin from /dev/null and no limactl on PATH. */
static int run_command(int (*cmd)(int, char **), const char *const *args)
{
	pid_t child = fork();
	if (child == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		setenv("PATH", "/usr/bin:/bin", 1);
		setenv("LIMA_HOME", fake_home, 1);
		int argc = 0;
		char *argv[32];
		while (args[argc]) {
			argv[argc] = (char *)args[argc];
			argc++;
		}
		argv[argc] = NULL;
		_exit(cmd(argc, argv));
	}
	int status = 0;
	waitpid(child, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(memtest_exit_codes)
{
	fake_instance("stopped", 0);
	fake_instance("running", getpid());
	const char *help[] = {"memtest", "--help", NULL};
	CHECK_INT(run_command(cmd_memtest, help), VMC_EXIT_OK);
	const char *none[] = {"memtest", NULL};
	CHECK_INT(run_command(cmd_memtest, none), VMC_EXIT_USAGE);
	const char *bad[] = {"memtest", "running", "--workload", "nope", NULL};
	CHECK_INT(run_command(cmd_memtest, bad), VMC_EXIT_USAGE);
	const char *badsize[] = {"memtest", "running", "--size", "lots", NULL};
	CHECK_INT(run_command(cmd_memtest, badsize), VMC_EXIT_USAGE);
	const char *pgsize[] = {"memtest", "running", "--workload", "pgbench",
				"--size",  "1G",      NULL};
	CHECK_INT(run_command(cmd_memtest, pgsize), VMC_EXIT_USAGE);
	const char *unknown[] = {"memtest", "nosuch", "--yes", NULL};
	CHECK_INT(run_command(cmd_memtest, unknown), VMC_EXIT_NO_INSTANCE);
	const char *stopped[] = {"memtest", "stopped", "--yes", NULL};
	CHECK_INT(run_command(cmd_memtest, stopped), VMC_EXIT_STOPPED);
	/* Running, but stdin is no terminal and --yes is missing: refuse before doing anything. */
	const char *noyes[] = {"memtest", "running", "--pressure", "none", NULL};
	CHECK_INT(run_command(cmd_memtest, noyes), VMC_EXIT_USAGE);
	const char *toobig[] = {"memtest", "running", "--workload", "fill",
				"--size",  "1900M",   "--yes",	    NULL};
	CHECK_INT(run_command(cmd_memtest, toobig), VMC_EXIT_USAGE);
}

TEST(load_exit_codes)
{
	const char *help[] = {"load", "--help", NULL};
	CHECK_INT(run_command(cmd_load, help), VMC_EXIT_OK);
	const char *stopped[] = {"load", "stopped", NULL};
	CHECK_INT(run_command(cmd_load, stopped), VMC_EXIT_STOPPED);
	const char *bad[] = {"load", "running", "--clients", "0", NULL};
	CHECK_INT(run_command(cmd_load, bad), VMC_EXIT_USAGE);
	const char *interval[] = {"load", "running", "--idle", "10", "--interval", "20", NULL};
	CHECK_INT(run_command(cmd_load, interval), VMC_EXIT_USAGE);
	/* Running, but no docker.sock: the Docker error, with its exit code. */
	const char *nodocker[] = {"load", "running", "--results", "none", NULL};
	CHECK_INT(run_command(cmd_load, nodocker), VMC_EXIT_DOCKER);
}

/* ---- memtest's verdicts on its own numbers ------------------------------------------------ */

TEST(median_of_three_readings)
{
	const double sorted[3] = {1, 2, 3}, high_first[3] = {9, 2, 5}, low_last[3] = {4, 7, 1};
	CHECK_INT(memtest_median_of_three(sorted), 1);
	CHECK_INT(memtest_median_of_three(high_first), 2);
	CHECK_INT(memtest_median_of_three(low_last), 0);
	/* Two equal readings (an idle host): the median is their value, not the odd one out (the
	 * inline formula memtest had picked 1 here). */
	const double ties[3] = {5, 5, 1}, ties2[3] = {1, 5, 5}, ties3[3] = {5, 1, 5};
	CHECK(ties[memtest_median_of_three(ties)] == 5);
	CHECK(ties2[memtest_median_of_three(ties2)] == 5);
	CHECK(ties3[memtest_median_of_three(ties3)] == 5);
}

/* Free-page reporting's 256 MiB steps every 2 s: not settled while they come. */
TEST(footprint_settles_after_6_quiet_seconds)
{
	struct memtest_footprint_settle s = {.started = false};
	uint64_t fp = 1500 * VMC_MIB;
	double t = 100;
	CHECK(!memtest_footprint_settled(&s, t, fp, 30));
	for (int i = 0; i < 3; i++) { /* three steps down, 2 s apart */
		t += 2;
		fp -= 256 * VMC_MIB;
		CHECK(!memtest_footprint_settled(&s, t, fp, 30));
	}
	/* Then only small wobbles (< 16 MiB): settled 6 s after the last real fall. */
	double last_fall = t;
	bool settled = false;
	while (!settled && t < last_fall + 10) {
		t += 1;
		settled = memtest_footprint_settled(&s, t, fp + 8 * VMC_MIB, 30);
	}
	CHECK(settled);
	CHECK_DBL(t - last_fall, 6, 1e-9);
	/* The limit ends a wait that never settles. */
	struct memtest_footprint_settle limit = {.started = false};
	fp = 4000 * VMC_MIB;
	for (t = 0; t < 10; t += 1) {
		bool done = memtest_footprint_settled(&limit, t, fp, 5);
		CHECK(done == (t >= 5));
		fp -= 100 * VMC_MIB;
	}
}

TEST(drift_excludes_what_the_vm_returned)
{
	/* Free memory rose 300 MiB while the VM's footprint fell 280 MiB: 20 MiB of drift. */
	CHECK_DBL(memtest_control_drift(1000.0 * VMC_MIB, 1300.0 * VMC_MIB, 900.0 * VMC_MIB,
					620.0 * VMC_MIB),
		  20.0 * VMC_MIB, 1);
	/* 50 MiB of drift in the 5 s window, over a 12 s stop window: 120 MiB less gain. */
	CHECK_DBL(memtest_gain_drift_corrected(1000.0 * VMC_MIB, 50.0 * VMC_MIB, 12),
		  880.0 * VMC_MIB, 1);
}

TEST(noise_verdicts)
{
	struct memtest_noise n;
	/* A clean stop: gain about the footprint, little drift. */
	memtest_judge_noise(1000.0 * VMC_MIB, 10.0 * VMC_MIB, 1024.0 * VMC_MIB, &n);
	CHECK(!n.noisy);
	CHECK_STR(n.reason, "");
	/* The host gained far more than the VM held: someone else freed memory. */
	memtest_judge_noise(2000.0 * VMC_MIB, 0, 1024.0 * VMC_MIB, &n);
	CHECK(n.noisy);
	CHECK_CONTAINS(n.reason, "gained 976 MiB more than the VM held");
	/* Within the slack (a tenth of the footprint, at least 128 MiB): fine. */
	memtest_judge_noise(1100.0 * VMC_MIB, 0, 1024.0 * VMC_MIB, &n);
	CHECK(!n.noisy);
	/* Drift beyond a tenth of the gain (at least 64 MiB), either way. */
	memtest_judge_noise(1000.0 * VMC_MIB, -269.0 * VMC_MIB, 1024.0 * VMC_MIB, &n);
	CHECK(n.noisy);
	CHECK_CONTAINS(n.reason, "moved by -269 MiB in the 5 s before the stop");
	memtest_judge_noise(100.0 * VMC_MIB, 60.0 * VMC_MIB, 1024.0 * VMC_MIB, &n);
	CHECK(!n.noisy);
}

int main(void)
{
	vmc_log_init("host_memtest");
	snprintf(fake_bin, sizeof fake_bin, "/tmp/vmcost-bin-XXXXXX");
	snprintf(fake_home, sizeof fake_home, "/tmp/vmcost-home-XXXXXX");
	if (!mkdtemp(fake_bin) || !mkdtemp(fake_home))
		return 1;
	char path[4096];
	snprintf(path, sizeof path, "%s:%s", fake_bin, getenv("PATH") ? getenv("PATH") : "/bin");
	setenv("PATH", path, 1);
	RUN(median_of_three_readings);
	RUN(footprint_settles_after_6_quiet_seconds);
	RUN(drift_excludes_what_the_vm_returned);
	RUN(noise_verdicts);
	RUN(pgbench_summary_8_clients);
	RUN(pgbench_summary_1_client);
	RUN(pgbench_init_output_has_no_tps);
	RUN(fill_parse);
	RUN(fill_script_runs_and_cleans_up);
	RUN(fill_script_without_its_seed_stops_and_spares_other_runs);
	RUN(fill_script_rounds_to_whole_blocks);
	RUN(report_human_from_recorded_lab_run);
	RUN(report_markdown_names_machine_versions_and_svg);
	RUN(pressure_text_variants);
	RUN(pressure_text_says_what_the_footprint_gave_back);
	RUN(doc_paths);
	RUN(results_names_and_atomic_write);
	RUN(machine_description);
	RUN(version_line_of_limactl);
	RUN(memtest_exit_codes);
	RUN(load_exit_codes);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s %s", fake_bin, fake_home);
	if (system(cmd) != 0)
		return 1;
	return check_done();
}
