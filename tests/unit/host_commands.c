/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every command's exit codes (README table) against fake instance directories: usage errors,
 * unknown, stopped, broken and malformed instances, an unreachable agent, the vz and krunkit
 * answers of balloon, and real measurements of a live stand-in "VM process".
 */
#include "check.h"
#include "commands/commands.h"
#include "host_testlib.h"
#include "log.h"
#include "platform/vmproc.h"

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
	return t_capture(fn, argc, argv);
}

static json_t *stdout_json(void)
{
	json_error_t e;
	return json_loads(t_out, 0, &e);
}

static pid_t vm_child;

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
	t_write_pid(t_dead_pid(), "lima/broken", "qemu.pid");
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
	for (size_t i = 0; i < NCOMMANDS; i++) {
		CHECK_INT(run(commands[i].fn, commands[i].name, "--help", NULL), VMC_EXIT_OK);
		CHECK_CONTAINS(t_out, "usage: vmcost ");
		CHECK_CONTAINS(t_out, "Example: vmcost ");
		CHECK_INT(run(commands[i].fn, commands[i].name, "--frobnicate", NULL),
			  VMC_EXIT_USAGE);
		CHECK_CONTAINS(t_err, "unknown option \"--frobnicate\"");
		if (commands[i].takes_instance) {
			CHECK_INT(run(commands[i].fn, commands[i].name, NULL), VMC_EXIT_USAGE);
			CHECK_CONTAINS(t_err, "missing argument");
		}
		CHECK_INT(run(commands[i].fn, commands[i].name, "a", "b", "c", "d", NULL),
			  VMC_EXIT_USAGE);
	}
	CHECK_INT(run(cmd_footprint, "footprint", "run", "--pid", "x", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_footprint, "footprint", "run", "--watch", "soon", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_idle, "idle", "run", "x", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_idle, "idle", "run", "10", "20", NULL), VMC_EXIT_USAGE);
	CHECK_CONTAINS(t_err, "longer than DURATION");
	CHECK_INT(run(cmd_idle, "idle", "run", "10", "0.01", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_disk, "disk", "run", "-5", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_wakeups, "wakeups", "run", "3000", NULL), VMC_EXIT_USAGE);
	/* Below the agent's 0.1 s: refused here (2), not by the agent after the call (5). */
	CHECK_INT(run(cmd_wakeups, "wakeups", "run", "0.05", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_wakeups, "wakeups", "run", "50ms", NULL), VMC_EXIT_USAGE);
	CHECK_CONTAINS(t_err, "from 0.1 to 300 s");
	CHECK_INT(run(cmd_balloon, "balloon", "run", "lots", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_balloon, "balloon", "run", "64M", NULL), VMC_EXIT_USAGE);
	CHECK_INT(run(cmd_balloon, "balloon", "run", "3GiB", NULL), VMC_EXIT_USAGE);
	CHECK_CONTAINS(t_err, "can only take memory away");
}

TEST(unknown_instance_is_3)
{
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (!commands[i].takes_instance)
			continue;
		CHECK_INT(run(commands[i].fn, commands[i].name, "ghost", NULL),
			  VMC_EXIT_NO_INSTANCE);
		CHECK_CONTAINS(t_err, "unknown instance \"ghost\"");
	}
	/* With --json the error is also a JSON object on stdout. */
	CHECK_INT(run(cmd_footprint, "footprint", "ghost", "--json", NULL), VMC_EXIT_NO_INSTANCE);
	json_t *j = stdout_json();
	CHECK(j != NULL);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(j, "error"), "code")),
		  VMC_EXIT_NO_INSTANCE);
	json_decref(j);
}

TEST(stopped_and_broken_are_4)
{
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (!commands[i].takes_instance || commands[i].fn == cmd_env)
			continue;
		CHECK_INT(run(commands[i].fn, commands[i].name, "stopped", NULL), VMC_EXIT_STOPPED);
		CHECK_CONTAINS(t_err, "start it with limactl start stopped");
		CHECK_INT(run(commands[i].fn, commands[i].name, "broken", NULL), VMC_EXIT_STOPPED);
		CHECK_CONTAINS(t_err, "limactl stop -f broken");
	}
	/* env needs no running instance, and says the socket is not there yet. */
	CHECK_INT(run(cmd_env, "env", "stopped", NULL), VMC_EXIT_OK);
	CHECK_CONTAINS(t_err, "start the instance first");
}

TEST(malformed_lima_yaml_is_8)
{
	CHECK_INT(run(cmd_footprint, "footprint", "bad", NULL), VMC_EXIT_MALFORMED);
	CHECK_CONTAINS(t_err, "bad/lima.yaml: line 2: cpus");
	CHECK_INT(run(cmd_env, "env", "bad", NULL), VMC_EXIT_MALFORMED);
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
	CHECK_INT(run(cmd_wakeups, "wakeups", "run", "1", NULL), VMC_EXIT_AGENT);
	CHECK_CONTAINS(t_err, "rc-service cache-trim status");
	CHECK_INT(run(cmd_trim, "trim", "run", NULL), VMC_EXIT_AGENT);
	/* doctor still prints its host checks before saying so. */
	CHECK_INT(run(cmd_doctor, "doctor", "run", NULL), VMC_EXIT_AGENT);
	CHECK_CONTAINS(t_out, "Lima version: v2.1.4");
	CHECK_CONTAINS(t_out, "fix: upgrade Lima to 2.2.0");
	CHECK_CONTAINS(t_out, "Size of ha.stderr.log");
	CHECK_INT(run(cmd_doctor, "doctor", "run", "--json", NULL), VMC_EXIT_AGENT);
	json_t *j = stdout_json();
	CHECK(j != NULL);
	CHECK(json_is_null(json_object_get(j, "guest")));
	CHECK(json_array_size(json_object_get(j, "host")) == 6); /* 4, and the two forwards */
	json_decref(j);
}

/* An agent answering once with body (HTTP 200) on instance run's socket. */
static pid_t agent_answers(const char *body)
{
	char path[4200], response[4096];
	snprintf(path, sizeof path, "%s/lima/run/sock", t_root);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/lima/run/sock/vmcost-agent.sock", t_root);
	snprintf(response, sizeof response,
		 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
		 "%zu\r\nConnection: close\r\n\r\n%s",
		 strlen(body), body);
	return t_fake_peer(path, response, 1, false);
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
	pid_t agent = agent_answers("{\"vmm\": {}, \"checks\": [{\"id\": \"swap\"}, {}]}");
	run(cmd_doctor, "doctor", "run", NULL);
	agent_gone(agent);
	CHECK(strstr(t_out, "(null)") == NULL);
	CHECK_CONTAINS(t_out, "?     swap: ");
	CHECK_CONTAINS(t_out, "?     ?: ");

	agent =
	    agent_answers("{\"seconds\": 1, \"cpus\": 2, \"totals\": {\"timer\": {\"per_s\": 5}},"
			  " \"interrupts\": [{\"per_s\": 3}], \"processes\": [{\"pid\": 7}]}");
	CHECK_INT(run(cmd_wakeups, "wakeups", "run", "1", NULL), VMC_EXIT_OK);
	agent_gone(agent);
	CHECK(strstr(t_out, "(null)") == NULL);
	CHECK_CONTAINS(t_out, "(timer ? 5.0/s");
}

TEST(helper_problems_are_6_and_unsupported_is_9)
{
	char dead[32];
	snprintf(dead, sizeof dead, "%ld", (long)t_dead_pid());
	CHECK_INT(run(cmd_footprint, "footprint", "run", "--pid", dead, NULL), VMC_EXIT_HELPER);
	CHECK_CONTAINS(t_err, "no such process");
	/* A vz instance on Linux: no Virtualization helpers exist here. */
	CHECK_INT(run(cmd_footprint, "footprint", "mac", NULL), VMC_EXIT_UNSUPPORTED);
	CHECK_CONTAINS(t_err, "only on macOS");
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
	struct vmproc_ops ops = {.vz_helpers = one_helper, .pid_alive = alive};
	vmproc_set_ops(&ops);
	CHECK_INT(run(cmd_balloon, "balloon", "mac", NULL), VMC_EXIT_UNSUPPORTED);
	CHECK_CONTAINS(t_err, "releases nothing");
	CHECK_INT(run(cmd_balloon, "balloon", "mac", "2GiB", NULL), VMC_EXIT_UNSUPPORTED);
	vmproc_set_ops(NULL);
	CHECK_INT(run(cmd_balloon, "balloon", "kr", NULL), VMC_EXIT_UNSUPPORTED);
	CHECK_CONTAINS(t_err, "free-page reporting by itself");
	/* qemu without a QMP socket: the VM is not (fully) there. */
	CHECK_INT(run(cmd_balloon, "balloon", "run", NULL), VMC_EXIT_STOPPED);
	CHECK_CONTAINS(t_err, "qmp.sock");
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

	CHECK_INT(run(cmd_env, "env", "run", NULL), VMC_EXIT_OK);
	CHECK_CONTAINS(t_out, "export DOCKER_HOST='unix://");
	CHECK_CONTAINS(t_out, "/lima/run/sock/docker.sock'");
	CHECK_CONTAINS(t_out, "TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE='/var/run/docker.sock'");
	CHECK_CONTAINS(t_out, "TESTCONTAINERS_HOST_OVERRIDE='127.0.0.1'");
	CHECK_CONTAINS(t_out, "docker context create lima-run");
	CHECK_INT(run(cmd_env, "env", "run", "--json", NULL), VMC_EXIT_OK);
	j = stdout_json();
	CHECK(j != NULL);
	CHECK_CONTAINS(json_string_value(json_object_get(json_object_get(j, "env"), "DOCKER_HOST")),
		       "unix:///");
	json_decref(j);
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
	RUN(another_users_vm_is_7);
	t_kill(vm_child);
	t_cleanup();
	return check_done();
}
