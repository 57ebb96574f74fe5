/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every command's exit codes (README table) against fake instance directories: usage errors,
 * unknown, stopped, broken and malformed instances, an unreachable agent, the vz and krunkit
 * answers of balloon, and real measurements of a live stand-in "VM process". What the commands
 * print is compared with golden files (tests/unit/fixtures/output/vmcost-*.txt): one transcript
 * per test, each run's command line, exit code, stdout and stderr.
 */
#include "autostop/state.h"
#include "autostop/status.h"
#include "check.h"
#include "clients/vmproc.h"
#include "commands/commands.h"
#include "golden.h"
#include "host_testlib.h"
#include "log.h"
#include "print_capture.h"
#include "procfs.h"

#include <jansson.h>
#include <sys/socket.h>
#include <sys/un.h>

typedef int (*command_fn)(int, char **);

static const struct {
	const char *name;
	command_fn fn;
	bool takes_instance;
} commands[] = {
    {"list", cmd_list, false}, {"footprint", cmd_footprint, true}, {"idle", cmd_idle, true},
    {"disk", cmd_disk, true},  {"wakeups", cmd_wakeups, true},	   {"doctor", cmd_doctor, true},
    {"trim", cmd_trim, true},  {"balloon", cmd_balloon, true},	   {"env", cmd_env, true},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static pid_t vm_child;
static pid_t dead_pids[4];
static size_t ndead;

/* t_dead_pid, remembered so transcripts can show it as DEADPID. */
static pid_t dead_pid(void)
{
	pid_t p = t_dead_pid();
	if (ndead < sizeof dead_pids / sizeof dead_pids[0])
		dead_pids[ndead++] = p;
	return p;
}

/*
 * The transcript of the runs since transcript_begin, for one golden file, with what changes from
 * run to run as fixed words: the temporary root (ROOT), the stand-in VM process (VMPID), this
 * process (PID), pids that are certainly not running (DEADPID), how long disk and trim watched.
 */
static struct capture transcript;
static FILE *transcript_f;

static void transcript_begin(void)
{
	transcript_f = capture_open(&transcript);
}

static void transcript_add(int argc, char **argv, int rc)
{
	if (!transcript_f)
		return;
	fputs("$ vmcost", transcript_f);
	for (int i = 0; i < argc; i++)
		fprintf(transcript_f, " %s", argv[i]);
	fprintf(transcript_f, "\n[exit %d]\n", rc);
	if (*t_out)
		fprintf(transcript_f, "[stdout]\n%s", t_out);
	if (*t_err)
		fprintf(transcript_f, "[stderr]\n%s", t_err);
}

static void transcript_check(const char *name)
{
	char *text = capture_close(&transcript);
	transcript_f = NULL;
	text = golden_replace(text, t_root, "ROOT");
	/* disk and trim say how long they really measured */
	text = golden_mask(text, "Writes by vm over ", "\n", "INTERVAL");
	text = golden_mask(text, ") after ", " s\n", "N");
	text = golden_replace_number(text, (long)vm_child, "VMPID");
	/* the status of vmcost autostop names the build */
	text = golden_mask(text, "\"version\": \"", "\"", "VERSION");
	text = golden_replace_number(text, (long)getpid(), "PID");
	for (size_t i = 0; i < ndead; i++)
		text = golden_replace_number(text, (long)dead_pids[i], "DEADPID");
	CHECK_GOLDEN(text, name);
	free(text);
}

/* run(fn, "footprint", "dev", "--json", NULL) */
static int run(command_fn fn, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;
	va_start(ap, fn);
	const char *a;
	while ((a = va_arg(ap, const char *)) && argc < 15)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	int rc = t_capture(fn, argc, argv);
	transcript_add(argc, argv, rc);
	return rc;
}

static json_t *stdout_json(void)
{
	json_error_t e;
	return json_loads(t_out, 0, &e);
}

static void make_instances(void)
{
	vm_child = t_live_child();
	t_write("vmType: qemu\narch: x86_64\ncpus: 2\nmemory: 2GiB\n", "lima/run/lima.yaml");
	t_write_pid(getpid(), "lima/run", "ha.pid");
	t_write_pid(vm_child, "lima/run", "qemu.pid");
	t_write("{\"level\":\"debug\",\"msg\":\"Time sync\"}\n", "lima/run/ha.stderr.log");
	t_write("v2.1.4\n", "lima/run/lima-version");
	t_write("vmType: qemu\n", "lima/stopped/lima.yaml");
	t_write("vmType: qemu\n", "lima/broken/lima.yaml");
	t_write_pid(getpid(), "lima/broken", "ha.pid");
	t_write_pid(dead_pid(), "lima/broken", "qemu.pid");
	t_write("vmType: qemu\ncpus: lots\n", "lima/bad/lima.yaml");
	t_write("vmType: vz\nmemory: 4GiB\n", "lima/mac/lima.yaml");
	t_write_pid(getpid(), "lima/mac", "ha.pid");
	t_write_pid(getpid(), "lima/mac", "vz.pid");
	t_write("vmType: krunkit\n", "lima/kr/lima.yaml");
	t_write_pid(getpid(), "lima/kr", "ha.pid");
	t_write_pid(vm_child, "lima/kr", "krunkit.pid");
}

TEST(help_and_usage_errors)
{
	transcript_begin();
	for (size_t i = 0; i < NCOMMANDS; i++) {
		CHECK_INT(run(commands[i].fn, commands[i].name, "--help", NULL), VMC_EXIT_OK);
		CHECK_INT(run(commands[i].fn, commands[i].name, "--frobnicate", NULL),
			  VMC_EXIT_USAGE);
		if (commands[i].takes_instance) {
			CHECK_INT(run(commands[i].fn, commands[i].name, NULL), VMC_EXIT_USAGE);
		}
		CHECK_INT(run(commands[i].fn, commands[i].name, "a", "b", "c", "d", NULL),
			  VMC_EXIT_USAGE);
	}
	CHECK_INT(run(cmd_footprint, "footprint", "run", "--pid", "x", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_footprint, "footprint", "run", "--watch", "soon", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_idle, "idle", "run", "x", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_idle, "idle", "run", "10", "20", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_idle, "idle", "run", "10", "0.01", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_disk, "disk", "run", "-5", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_wakeups, "wakeups", "run", "3000", NULL), VMC_EXIT_USAGE);
	/* Below the agent's 0.1 s: refused here (2), not by the agent after the call (5). */
	CHECK_INT(run(cmd_wakeups, "wakeups", "run", "0.05", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_wakeups, "wakeups", "run", "50ms", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_balloon, "balloon", "run", "lots", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_balloon, "balloon", "run", "64M", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_balloon, "balloon", "run", "3GiB", NULL), VMC_EXIT_USAGE);
	command_fn others[] = {cmd_memtest, cmd_load, cmd_autostop};
	const char *other_names[] = {"memtest", "load", "autostop"};
	for (size_t i = 0; i < 3; i++)
		CHECK_INT(run(others[i], other_names[i], "--help", NULL), VMC_EXIT_OK);
	transcript_check("vmcost-usage");
}

TEST(unknown_instance_is_3)
{
	transcript_begin();
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (!commands[i].takes_instance)
			continue;
		CHECK_INT(run(commands[i].fn, commands[i].name, "ghost", NULL),
			  VMC_EXIT_NO_INSTANCE);
	}
	/* With --json the error is also a JSON object on stdout. */
	CHECK_INT(run(cmd_footprint, "footprint", "ghost", "--json", NULL), VMC_EXIT_NO_INSTANCE);
	json_t *j = stdout_json();
	CHECK(j != NULL);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(j, "error"), "code")),
		  VMC_EXIT_NO_INSTANCE);
	json_decref(j);
	transcript_check("vmcost-unknown-instance");
}

TEST(stopped_and_broken_are_4)
{
	transcript_begin();
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (!commands[i].takes_instance || commands[i].fn == cmd_env)
			continue;
		CHECK_INT(run(commands[i].fn, commands[i].name, "stopped", NULL), VMC_EXIT_STOPPED);
		CHECK_INT(run(commands[i].fn, commands[i].name, "broken", NULL), VMC_EXIT_STOPPED);
	}
	/* env needs no running instance, and says the socket is not there yet. */
	CHECK_INT(run(cmd_env, "env", "stopped", NULL), VMC_EXIT_OK);
	transcript_check("vmcost-stopped-broken");
}

TEST(malformed_lima_yaml_is_8)
{
	transcript_begin();
	CHECK_INT(run(cmd_footprint, "footprint", "bad", NULL), VMC_EXIT_MALFORMED);
	CHECK_INT(run(cmd_env, "env", "bad", NULL), VMC_EXIT_MALFORMED);
	transcript_check("vmcost-malformed");
	/* list shows it Broken with the reason instead of failing as a whole. */
	CHECK_INT(run(cmd_list, "list", "--json", NULL), VMC_EXIT_OK);
	json_t *j = stdout_json();
	CHECK(j != NULL);
	size_t i;
	json_t *row;
	bool seen = false;
	json_array_foreach(json_object_get(j, "instances"), i, row)
	{
		if (strcmp(json_string_value(json_object_get(row, "name")), "bad") != 0)
			continue;
		seen = true;
		CHECK_STR(json_string_value(json_object_get(row, "status")), "Broken");
		CHECK_CONTAINS(json_string_value(json_object_get(row, "problem")), "cpus");
	}
	CHECK(seen);
	json_decref(j);
}

TEST(agent_unreachable_is_5)
{
	transcript_begin();
	CHECK_INT(run(cmd_wakeups, "wakeups", "run", "1", NULL), VMC_EXIT_AGENT);
	CHECK_INT(run(cmd_trim, "trim", "run", NULL), VMC_EXIT_AGENT);
	/* doctor still prints its host checks before saying so. */
	CHECK_INT(run(cmd_doctor, "doctor", "run", NULL), VMC_EXIT_AGENT);
	CHECK_INT(run(cmd_doctor, "doctor", "run", "--json", NULL), VMC_EXIT_AGENT);
	json_t *j = stdout_json();
	CHECK(j != NULL);
	CHECK(json_is_null(json_object_get(j, "guest")));
	CHECK(json_array_size(json_object_get(j, "host")) == 6); /* 4, and the two forwards */
	json_decref(j);
	transcript_check("vmcost-agent-unreachable");
}

/* An agent answering count requests with body (HTTP 200) on the socket of the instance in dir
 * (below the root). */
static pid_t agent_answers_in(const char *dir, const char *body, int count)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s/sock", t_root, dir);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/%s/sock/vmcost-agent.sock", t_root, dir);
	char *response = NULL;
	if (asprintf(&response,
		     "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
		     "%zu\r\nConnection: close\r\n\r\n%s",
		     strlen(body), body) < 0)
		return -1;
	pid_t peer = t_fake_peer(path, response, count, false);
	free(response);
	return peer;
}

/*
 * What a vmcost autostop serving instance NAME in DIR says on its status socket: idle since
 * t = 1000 with a 5 min period, its engine frozen at 1030.5 (--freeze-after 30 s), asked at
 * 1072.5. count connections are answered.
 */
static pid_t autostop_answers_in(const char *dir, const char *name, int count)
{
	struct autostop a;
	autostop_init(&a, name, 300, true, 999);
	autostop_set_freeze_after(&a, 30);
	struct autostop_check c = {.api_ok = true};
	autostop_check_done(&a, 1000, &c);
	autostop_check_done(&a, 1030, &c);
	autostop_freeze_done(&a, 1030.5, AUTOSTOP_FREEZE_OK, "");
	char listen[4200], upstream[4200], path[4200];
	snprintf(listen, sizeof listen, "%s/%s/sock/docker-autostop.sock", t_root, dir);
	snprintf(upstream, sizeof upstream, "%s/%s/sock/docker.sock", t_root, dir);
	json_t *doc = autostop_status_document(&a, listen, upstream, 1072.5);
	char *text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	snprintf(path, sizeof path, "%s/%s/sock", t_root, dir);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/%s/sock/%s", t_root, dir, AUTOSTOP_STATUS_SOCKET_NAME);
	pid_t peer = t_fake_peer(path, text, count, true);
	free(text);
	return peer;
}

/* An agent answering once with body (HTTP 200) on instance run's socket. */
static pid_t agent_answers(const char *body)
{
	return agent_answers_in("lima/run", body, 1);
}

static void agent_gone(pid_t agent)
{
	waitpid(agent, NULL, 0);
	char path[4200];
	snprintf(path, sizeof path, "%s/lima/run/sock/vmcost-agent.sock", t_root);
	unlink(path);
}

/* An agent older or newer than vmcost may leave out any field: never "(null)" (or a crash). */
TEST(missing_guest_fields_print_as_placeholders)
{
	transcript_begin();
	pid_t agent = agent_answers("{\"vmm\": {}, \"checks\": [{\"id\": \"swap\"}, {}]}");
	run(cmd_doctor, "doctor", "run", NULL);
	agent_gone(agent);
	CHECK(strstr(t_out, "(null)") == NULL);

	agent =
	    agent_answers("{\"seconds\": 1, \"cpus\": 2, \"totals\": {\"timer\": {\"per_s\": 5}},"
			  " \"interrupts\": [{\"per_s\": 3}], \"processes\": [{\"pid\": 7}]}");
	CHECK_INT(run(cmd_wakeups, "wakeups", "run", "1", NULL), VMC_EXIT_OK);
	agent_gone(agent);
	CHECK(strstr(t_out, "(null)") == NULL);
	transcript_check("vmcost-missing-guest-fields");
}

TEST(helper_problems_are_6_and_unsupported_is_9)
{
	transcript_begin();
	char dead[32];
	snprintf(dead, sizeof dead, "%ld", (long)dead_pid());
	CHECK_INT(run(cmd_footprint, "footprint", "run", "--pid", dead, NULL), VMC_EXIT_HELPER);
	/* A vz instance on Linux: no Virtualization helpers exist here. */
	CHECK_INT(run(cmd_footprint, "footprint", "mac", NULL), VMC_EXIT_UNSUPPORTED);
	transcript_check("vmcost-helper-unsupported");
}

/* The fake Mac for balloon's vz answer: one helper, our stand-in child. */
static int one_helper(pid_t *pids, size_t max, size_t *n)
{
	(void)max;
	pids[0] = vm_child;
	*n = 1;
	return 0;
}

static bool alive(pid_t pid)
{
	return pid > 0 && kill(pid, 0) == 0;
}

TEST(balloon_says_why_on_vz_and_krunkit)
{
	transcript_begin();
	struct vmproc_ops ops = {.vz_helpers = one_helper, .pid_alive = alive};
	vmproc_set_ops(&ops);
	CHECK_INT(run(cmd_balloon, "balloon", "mac", NULL), VMC_EXIT_UNSUPPORTED);
	CHECK_INT(run(cmd_balloon, "balloon", "mac", "2GiB", NULL), VMC_EXIT_UNSUPPORTED);
	vmproc_set_ops(NULL);
	CHECK_INT(run(cmd_balloon, "balloon", "kr", NULL), VMC_EXIT_UNSUPPORTED);
	/* qemu without a QMP socket: the VM is not (fully) there. */
	CHECK_INT(run(cmd_balloon, "balloon", "run", NULL), VMC_EXIT_STOPPED);
	transcript_check("vmcost-balloon-vz-krunkit");
}

TEST(measurements_of_a_live_process)
{
	CHECK_INT(run(cmd_footprint, "footprint", "run", "--json", NULL), VMC_EXIT_OK);
	json_t *j = stdout_json();
	CHECK(j != NULL);
	json_t *proc = json_object_get(j, "process");
	CHECK_INT(json_integer_value(json_object_get(proc, "pid")), vm_child);
	CHECK(json_integer_value(json_object_get(proc, "footprint")) > 0);
	CHECK_STR(json_string_value(json_object_get(proc, "method")), "qemu.pid");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(j, "hostagent"), "pid")),
		  getpid());
	CHECK(json_integer_value(json_object_get(json_object_get(j, "host"), "total")) > 0);
	json_decref(j);
	CHECK_INT(run(cmd_footprint, "footprint", "run", NULL), VMC_EXIT_OK);
	CHECK_CONTAINS(t_out, "chosen by qemu.pid");

	CHECK_INT(run(cmd_idle, "idle", "run", "0.6", "0.2", "--json", NULL), VMC_EXIT_OK);
	j = stdout_json();
	CHECK(j != NULL);
	CHECK_INT(json_array_size(json_object_get(j, "samples")), 3);
	CHECK(json_is_true(json_object_get(j, "complete")));
	/* A sleeping child uses no CPU. */
	CHECK(json_real_value(json_object_get(
		  json_object_get(json_object_get(j, "summary"), "cpu_percent"), "max")) < 5.0);
	json_decref(j);

	CHECK_INT(run(cmd_disk, "disk", "run", "0.3", "--json", NULL), VMC_EXIT_OK);
	j = stdout_json();
	CHECK(j != NULL);
	CHECK_INT(json_integer_value(json_object_get(
		      json_object_get(json_object_get(j, "host"), "vm_process"), "bytes")),
		  0);
	CHECK(json_is_string(json_object_get(json_object_get(j, "guest"), "error")));
	CHECK(json_is_object(json_object_get(j, "ha_stderr_log")));
	json_decref(j);

	CHECK_INT(run(cmd_list, "list", NULL), VMC_EXIT_OK);
	CHECK_CONTAINS(t_out, "(qemu.pid)");
	CHECK_CONTAINS(t_out, "broken");

	transcript_begin();
	CHECK_INT(run(cmd_env, "env", "run", NULL), VMC_EXIT_OK);
	transcript_check("vmcost-env");
	CHECK_INT(run(cmd_env, "env", "run", "--json", NULL), VMC_EXIT_OK);
	j = stdout_json();
	CHECK(j != NULL);
	CHECK_CONTAINS(json_string_value(json_object_get(json_object_get(j, "env"), "DOCKER_HOST")),
		       "unix:///");
	json_decref(j);
}

/* A /proc/PID of a VM process (and its hostagent) whose figures never move. */
static void fake_proc(pid_t pid, const char *name, uint64_t rss_kb)
{
	char text[2048];
	snprintf(text, sizeof text,
		 "Name:\t%s\nState:\tS (sleeping)\nPPid:\t1\nUid:\t%u\t%u\t%u\t%u\n"
		 "VmHWM:\t%llu kB\nVmRSS:\t%llu kB\nRssAnon:\t%llu kB\nRssFile:\t%llu kB\n"
		 "RssShmem:\t1024 kB\nVmSwap:\t2048 kB\nvoluntary_ctxt_switches:\t100\n"
		 "nonvoluntary_ctxt_switches:\t5\n",
		 name, (unsigned)getuid(), (unsigned)getuid(), (unsigned)getuid(),
		 (unsigned)getuid(), (unsigned long long)rss_kb * 2, (unsigned long long)rss_kb,
		 (unsigned long long)rss_kb - 9216, 8192ull);
	t_write(text, "proc/%ld/status", (long)pid);
	t_write(text, "proc/%ld/task/%ld/status", (long)pid, (long)pid);
	snprintf(text, sizeof text,
		 "%ld (%s) S 1 1 1 0 -1 4194560 500 0 0 0 1200 300 0 0 20 0 4 0 1000 3000000000 "
		 "%llu 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n",
		 (long)pid, name, (unsigned long long)rss_kb / 4);
	t_write(text, "proc/%ld/stat", (long)pid);
	t_write("rchar: 1000\nwchar: 2000\nsyscr: 10\nsyscw: 20\nread_bytes: 4096\n"
		"write_bytes: 81920\ncancelled_write_bytes: 0\n",
		"proc/%ld/io", (long)pid);
	snprintf(text, sizeof text,
		 "55d000000000-7ffc00000000 ---p 00000000 00:00 0 [rollup]\nRss: %llu kB\n"
		 "Pss: %llu kB\nPss_Anon: %llu kB\nPss_File: 8192 kB\nPss_Shmem: 1024 kB\n"
		 "Shared_Clean: 0 kB\nShared_Dirty: 0 kB\nPrivate_Clean: 0 kB\n"
		 "Private_Dirty: %llu kB\nReferenced: %llu kB\nAnonymous: %llu kB\n"
		 "LazyFree: 0 kB\nAnonHugePages: 2048 kB\nShmemPmdMapped: 0 kB\nSwap: 2048 kB\n"
		 "SwapPss: 2048 kB\nLocked: 0 kB\n",
		 (unsigned long long)rss_kb, (unsigned long long)rss_kb,
		 (unsigned long long)rss_kb - 9216, (unsigned long long)rss_kb,
		 (unsigned long long)rss_kb, (unsigned long long)rss_kb - 9216);
	t_write(text, "proc/%ld/smaps_rollup", (long)pid);
	char exe[4300];
	snprintf(exe, sizeof exe, "%s/proc/%ld/exe", t_root, (long)pid);
	unlink(exe); /* made again for each suite that uses it */
	CHECK(symlink(strcmp(name, "limactl") == 0 ? "/usr/local/bin/limactl"
						   : "/usr/bin/qemu-system-x86_64",
		      exe) == 0);
}

/*
 * The human output of the measuring commands, on a fake /proc whose figures never move. The
 * instance's own LIMA_HOME holds it alone, and both its pid files name pid 1, which is always
 * running, so no pid of this run (whose width would move the columns) reaches the output.
 */
/* Instance "vm" on that fake /proc, alone in LIMA_HOME=ROOT/fixed, until fixed_vm_end. */
static void fixed_vm_begin(void)
{
	fake_proc(1, "qemu-system-x86", 1048576);
	t_write("MemTotal: 16777216 kB\nMemFree: 8388608 kB\nMemAvailable: 12582912 kB\n"
		"Buffers: 0 kB\nCached: 2097152 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
		"proc/meminfo");
	t_write("vmType: qemu\narch: x86_64\ncpus: 2\nmemory: 2GiB\n", "fixed/vm/lima.yaml");
	t_write("1\n", "fixed/vm/ha.pid");
	t_write("1\n", "fixed/vm/qemu.pid");
	t_write("v2.2.0\n", "fixed/vm/lima-version");
	t_write("{\"level\":\"debug\",\"msg\":\"Time sync\"}\n", "fixed/vm/ha.stderr.log");
	char home[4200];
	snprintf(home, sizeof home, "%s/fixed", t_root);
	setenv("LIMA_HOME", home, 1);
	vmc_fs_set_root(t_root);
}

static void fixed_vm_end(void)
{
	char home[4200];
	vmc_fs_set_root("");
	snprintf(home, sizeof home, "%s/lima", t_root);
	setenv("LIMA_HOME", home, 1);
}

TEST(measurements_print_on_a_fake_proc)
{
	fixed_vm_begin();
	transcript_begin();
	CHECK_INT(run(cmd_footprint, "footprint", "vm", NULL), VMC_EXIT_OK);
	CHECK_INT(run(cmd_idle, "idle", "vm", "0.4", "0.2", NULL), VMC_EXIT_OK);
	CHECK_INT(run(cmd_disk, "disk", "vm", "0.2", NULL), VMC_EXIT_OK);
	CHECK_INT(run(cmd_list, "list", NULL), VMC_EXIT_OK);
	transcript_check("vmcost-measurements");

	/* What the agent says, as doctor and wakeups print it. */
	transcript_begin();
	char *doc = golden_read("tests/unit/fixtures/agent/checks.json");
	CHECK(doc != NULL);
	pid_t agent = agent_answers_in("fixed/vm", doc ? doc : "{}", 1);
	CHECK_INT(run(cmd_doctor, "doctor", "vm", NULL), VMC_EXIT_OK);
	waitpid(agent, NULL, 0);
	free(doc);
	doc = golden_read("tests/unit/fixtures/agent/wakeups.json");
	CHECK(doc != NULL);
	agent = agent_answers_in("fixed/vm", doc ? doc : "{}", 1);
	CHECK_INT(run(cmd_wakeups, "wakeups", "vm", "1", NULL), VMC_EXIT_OK);
	waitpid(agent, NULL, 0);
	free(doc);
	transcript_check("vmcost-agent-answers");

	/*
	 * trim asks GET /v1/status, then POST /v1/trim: one document answers both, as the fake
	 * agent gives the same answer twice. Without reporting, the footprint is watched 3 s.
	 */
	static const char *const trims[] = {
	    "{\"memory\": {\"total\": 2147483648, \"free\": 1073741824}, \"page_reporting\": "
	    "{\"active\": false}, \"ran\": true, \"decision\": \"trimmed\", \"method\": "
	    "\"memory.reclaim\", \"freed_bytes\": 838860800, \"file_cache_before\": 954204160, "
	    "\"file_cache_after\": 115343360, \"compacted\": false}",
	    "{\"memory\": {\"total\": 2147483648, \"free\": 1073741824}, \"ran\": false, "
	    "\"decision\": \"nothing-to-do\", \"reason\": \"file cache 100 MiB is within the "
	    "128 MiB floor\"}",
	    "{\"memory\": {\"total\": 2147483648, \"free\": 1073741824}, \"ran\": false, "
	    "\"decision\": \"failed\", \"reason\": \"memory.reclaim: Permission denied\"}",
	};
	transcript_begin();
	for (size_t i = 0; i < sizeof trims / sizeof trims[0]; i++) {
		agent = agent_answers_in("fixed/vm", trims[i], 2);
		run(cmd_trim, "trim", "vm", NULL);
		kill(agent, SIGKILL);
		waitpid(agent, NULL, 0);
	}
	transcript_check("vmcost-trim");

	/* issue 21: the engine autostop froze, in --status, in its JSON and in the list. */
	transcript_begin();
	pid_t daemon = autostop_answers_in("fixed/vm", "vm", 3);
	CHECK_INT(run(cmd_autostop, "autostop", "vm", "--status", NULL), VMC_EXIT_OK);
	CHECK_CONTAINS(t_out, "engine:      frozen for 42.0 s (deep idle after 30.0 s idle; 1 "
			      "freeze, 42.0 s frozen in all)");
	CHECK_INT(run(cmd_autostop, "autostop", "vm", "--status", "--json", NULL), VMC_EXIT_OK);
	json_t *st = stdout_json();
	CHECK_STR(json_string_value(json_object_get(st, "engine")), "frozen");
	CHECK_INT(json_integer_value(json_object_get(st, "engine_freezes")), 1);
	CHECK_DBL(json_number_value(json_object_get(st, "engine_frozen_for_s")), 42, 0.001);
	json_decref(st);
	CHECK_INT(run(cmd_list, "list", NULL), VMC_EXIT_OK);
	CHECK_CONTAINS(t_out, "idle 1 min 13 s, engine frozen");
	waitpid(daemon, NULL, 0);
	transcript_check("vmcost-autostop-status-engine");
	/* The fake daemon's socket file stays behind: gone, for the suites' "no daemon" cases. */
	char status_sock[4200];
	snprintf(status_sock, sizeof status_sock, "%s/fixed/vm/sock/%s", t_root,
		 AUTOSTOP_STATUS_SOCKET_NAME);
	unlink(status_sock);
	fixed_vm_end();
}

/*
 * balloon on a qemu instance: a fake QEMU on its qmp.sock (t_fake_qemu: the balloon at 2 GiB,
 * moving at once), the agent for the guest's MemTotal, the fake /proc for the footprint. One QMP
 * connection per run. Inflating to 1 GiB waits a second for the footprint to follow.
 */
TEST(balloon_on_qemu_over_qmp)
{
	fixed_vm_begin();
	char qmp[4200];
	snprintf(qmp, sizeof qmp, "%s/fixed/vm/qmp.sock", t_root);
	const char *status = "{\"memory\": {\"total\": 2062548992, \"free\": 1610612736}}";
	transcript_begin();
	pid_t qemu = t_fake_qemu(qmp, true);
	pid_t agent = agent_answers_in("fixed/vm", status, 1);
	CHECK_INT(run(cmd_balloon, "balloon", "vm", NULL), VMC_EXIT_OK);
	waitpid(qemu, NULL, 0);
	waitpid(agent, NULL, 0);
	qemu = t_fake_qemu(qmp, true);
	agent = agent_answers_in("fixed/vm", status, 2);
	CHECK_INT(run(cmd_balloon, "balloon", "vm", "1GiB", NULL), VMC_EXIT_OK);
	waitpid(qemu, NULL, 0);
	waitpid(agent, NULL, 0);
	/* Lima's qemu driver adds no balloon device: vmcost says how to add one. */
	qemu = t_fake_qemu(qmp, false);
	CHECK_INT(run(cmd_balloon, "balloon", "vm", "1GiB", NULL), VMC_EXIT_UNSUPPORTED);
	waitpid(qemu, NULL, 0);
	transcript_check("vmcost-balloon-qemu");
	unlink(qmp);
	fixed_vm_end();
}

/*
 * autostop NAME --status: what a running daemon answers on its status socket (a fake one,
 * answering once with a document in the daemon's shape), and the errors when none answers.
 */
TEST(autostop_status_asks_the_daemon)
{
	fixed_vm_begin();
	char sock[4200];
	snprintf(sock, sizeof sock, "%s/fixed/vm/sock", t_root);
	mkdir(sock, 0755);
	snprintf(sock, sizeof sock, "%s/fixed/vm/sock/autostop-status.sock", t_root);
	static const char *const docs[] = {
	    /* running, idle for a while, one start and one stop behind it */
	    "{\"instance\": \"vm\", \"pid\": 4242, \"listen\": "
	    "\"/home/me/.lima/vm/sock/docker-autostop.sock\", \"upstream\": "
	    "\"/home/me/.lima/vm/sock/docker.sock\", \"state\": \"running\", \"state_for_s\": "
	    "754.2, \"clients\": 1, \"clients_working\": 0, \"clients_polling\": 1, "
	    "\"idle_period_s\": 900, \"idle_for_s\": 312.5, \"containers_running\": 0, "
	    "\"last_start_s\": 21.4, \"last_stop_ram_freed\": 1932735283, \"starts\": 1, "
	    "\"stops\": 1, \"last_decision\": \"idle 312 s of 900 s\", \"version\": \"1.0\"}",
	    /* busy: clients at work, a container running, nothing started or stopped yet */
	    "{\"instance\": \"vm\", \"pid\": 4242, \"listen\": "
	    "\"/home/me/.lima/vm/sock/docker-autostop.sock\", \"state\": \"running\", "
	    "\"state_for_s\": 65, \"clients\": 3, \"clients_working\": 2, \"idle_period_s\": 900, "
	    "\"idle_for_s\": 0, \"containers_running\": 2, \"last_start_s\": null, "
	    "\"last_stop_ram_freed\": null, \"last_decision\": \"2 clients at work\"}",
	    /* running, the last work ended a moment ago: Docker not asked yet */
	    "{\"instance\": \"vm\", \"pid\": 4242, \"listen\": "
	    "\"/home/me/.lima/vm/sock/docker-autostop.sock\", \"state\": \"running\", "
	    "\"state_for_s\": 37.5, \"clients\": 0, \"clients_working\": 0, \"idle_period_s\": "
	    "600, \"idle_for_s\": 0, \"containers_running\": 0, \"last_start_s\": null, "
	    "\"last_stop_ram_freed\": null, \"last_decision\": \"relaying 1 held client\"}",
	    /* stopped by autostop */
	    "{\"instance\": \"vm\", \"pid\": 4242, \"listen\": "
	    "\"/home/me/.lima/vm/sock/docker-autostop.sock\", \"state\": \"stopped by autostop\", "
	    "\"state_for_s\": 7260, \"clients\": 0, \"clients_working\": 0, \"idle_period_s\": "
	    "900, \"idle_for_s\": 0, \"containers_running\": 0, \"last_start_s\": 19.8, "
	    "\"last_stop_ram_freed\": 1932735283, \"last_decision\": \"stopped: idle 900 s\"}",
	    /* not a status document */
	    "HTTP/1.1 200 OK\r\n\r\n",
	};
	transcript_begin();
	/* No daemon: no socket at all. */
	CHECK_INT(run(cmd_autostop, "autostop", "vm", "--status", NULL), VMC_EXIT_FAILURE);
	for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
		pid_t daemon = t_fake_peer(sock, docs[i], 1, true);
		CHECK_INT(run(cmd_autostop, "autostop", "vm", "--status", NULL),
			  i + 1 < sizeof docs / sizeof docs[0] ? VMC_EXIT_OK : VMC_EXIT_FAILURE);
		int st;
		CHECK(waitpid(daemon, &st, 0) == daemon && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	CHECK_CONTAINS(t_err, "the answer is not a status document");
	/* The daemon gone, its socket file left behind: stale. */
	CHECK_INT(run(cmd_autostop, "autostop", "vm", "--status", NULL), VMC_EXIT_FAILURE);
	CHECK_CONTAINS(t_err, "is stale");
	transcript_check("vmcost-autostop-status");
	unlink(sock);
	fixed_vm_end();
}

/* Runs fn as user nobody in a child (we are root in CI); its exit status, -1 if not possible. */
static int as_nobody(command_fn fn, int argc, char **argv)
{
	if (geteuid() != 0)
		return -1;
	chmod(t_root, 0755);
	pid_t child = fork();
	if (child == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(99);
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		dup2(devnull, 2);
		_exit(fn(argc, argv));
	}
	int status;
	waitpid(child, &status, 0);
	chmod(t_root, 0700);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(another_users_vm_is_7)
{
	if (geteuid() != 0)
		SKIP("needs root to become another user (CI runs as root)");
	/* A VM process of another user (root, us): /proc/PID/io is closed to nobody. */
	char pid[32];
	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	char *argv[] = {"footprint", "run", "--pid", pid, NULL};
	CHECK_INT(as_nobody(cmd_footprint, 4, argv), VMC_EXIT_PERMISSION);
	/* An instance directory nobody may read. */
	t_write("vmType: qemu\n", "lima/priv/lima.yaml");
	t_chmod("lima/priv/lima.yaml", 0600);
	char *argv2[] = {"footprint", "priv", NULL};
	CHECK_INT(as_nobody(cmd_footprint, 2, argv2), VMC_EXIT_PERMISSION);
	/* The same as ourselves works: the code is the permission, not the file. */
	CHECK_INT(run(cmd_footprint, "footprint", "priv", NULL), VMC_EXIT_STOPPED);
}

/* issue 22: a dead docker.sock forward made doctor exit 0. */
TEST(doctor_names_a_dead_forward_and_how_to_heal_it)
{
	char sock[4200];
	snprintf(sock, sizeof sock, "%s/lima/run/sock", t_root);
	mkdir(sock, 0755);
	snprintf(sock, sizeof sock, "%s/lima/run/sock/docker.sock", t_root);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	CHECK(strlen(sock) < sizeof sa.sun_path);
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_INT(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	close(fd); /* a stale socket file, as a cancelled forward leaves */
	CHECK(run(cmd_doctor, "doctor", "run", NULL) != VMC_EXIT_OK);
	CHECK_CONTAINS(t_out, "fail  Host socket docker.sock: dead: ");
	CHECK_CONTAINS(t_out, "a stale socket file");
	char fix[9000];
	snprintf(fix, sizeof fix,
		 "fix: rm -f %s && ssh -F %s/lima/run/ssh.config -O forward -L "
		 "%s:/var/run/docker.sock lima-run (or vmcost doctor run --heal)",
		 sock, t_root, sock);
	CHECK(strstr(t_out, fix) != NULL);
	CHECK_CONTAINS(t_out, "n/a   Host socket vmcost-agent.sock: not forwarded");
	unlink(sock);
}

int main(void)
{
	t_setup("host-cmd");
	setenv("NO_COLOR", "1", 1);
	make_instances();
	RUN(help_and_usage_errors);
	RUN(unknown_instance_is_3);
	RUN(stopped_and_broken_are_4);
	RUN(malformed_lima_yaml_is_8);
	RUN(agent_unreachable_is_5);
	RUN(missing_guest_fields_print_as_placeholders);
	RUN(doctor_names_a_dead_forward_and_how_to_heal_it);
	RUN(helper_problems_are_6_and_unsupported_is_9);
	RUN(balloon_says_why_on_vz_and_krunkit);
	RUN(measurements_of_a_live_process);
	RUN(measurements_print_on_a_fake_proc);
	RUN(balloon_on_qemu_over_qmp);
	RUN(autostop_status_asks_the_daemon);
	RUN(another_users_vm_is_7);
	t_kill(vm_child);
	t_cleanup();
	return check_done();
}
