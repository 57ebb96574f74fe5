/* SPDX-License-Identifier: Apache-2.0 */
/* guest-agent/config.c: defaults, every key, and errors that name file, line and key. */
#include "check.h"
#include "config.h"
#include "log.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char err[256];

static int parse(const char *text, struct agent_config *cfg)
{
	err[0] = '\0';
	return agent_config_parse(text, strlen(text), "agent.yaml", cfg, err, sizeof err);
}

static bool same_config(const struct agent_config *a, const struct agent_config *b)
{
	return a->interval_s == b->interval_s && a->idle_cpu_percent == b->idle_cpu_percent &&
	       a->idle_load1 == b->idle_load1 && a->idle_psi_percent == b->idle_psi_percent &&
	       a->floor_bytes == b->floor_bytes && a->step_bytes == b->step_bytes &&
	       a->method == b->method && strcmp(a->socket_path, b->socket_path) == 0 &&
	       strcmp(a->socket_owner, b->socket_owner) == 0 &&
	       strcmp(a->socket_group, b->socket_group) == 0 && a->socket_mode == b->socket_mode &&
	       a->log_level == b->log_level && a->trim_enabled == b->trim_enabled &&
	       a->max_request_bytes == b->max_request_bytes &&
	       strcmp(a->engine_cgroups, b->engine_cgroups) == 0 &&
	       a->engine_freeze_lima_agent == b->engine_freeze_lima_agent &&
	       a->engine_freeze_timeout_s == b->engine_freeze_timeout_s &&
	       strcmp(a->docker_socket, b->docker_socket) == 0;
}

TEST(defaults_match_the_documentation)
{
	struct agent_config cfg;
	agent_config_defaults(&cfg);
	CHECK_DBL(cfg.interval_s, 600, 0);
	CHECK_DBL(cfg.idle_cpu_percent, 0.5, 0);
	CHECK_DBL(cfg.idle_load1, 0.2, 0);
	CHECK_DBL(cfg.idle_psi_percent, 1.0, 0);
	CHECK_U64(cfg.floor_bytes, 128 * VMC_MIB);
	CHECK_U64(cfg.step_bytes, 0);
	CHECK_INT(cfg.method, TRIM_METHOD_AUTO);
	CHECK_STR(cfg.socket_path, "/run/vmcost-agent.sock");
	CHECK_STR(cfg.socket_owner, "root");
	CHECK_STR(cfg.socket_group, "docker");
	CHECK_INT(cfg.socket_mode, 0660);
	CHECK_INT(cfg.log_level, VMC_LOG_INFO);
	CHECK(cfg.trim_enabled);
	CHECK_U64(cfg.max_request_bytes, 64 * 1024);
	CHECK(strcmp(cfg.engine_cgroups, "auto") == 0);
	CHECK(!cfg.engine_freeze_lima_agent);
	CHECK_DBL(cfg.engine_freeze_timeout_s, 5, 0);
	CHECK_STR(cfg.docker_socket, "/var/run/docker.sock");
}

TEST(empty_and_comment_only_files_give_defaults)
{
	struct agent_config cfg, def;
	agent_config_defaults(&def);
	CHECK_INT(parse("", &cfg), 0);
	CHECK(same_config(&cfg, &def));
	CHECK_INT(parse("# nothing here\n\n# interval: 5\n", &cfg), 0);
	CHECK(same_config(&cfg, &def));
	CHECK_INT(parse("---\n", &cfg), 0);
	CHECK(same_config(&cfg, &def));
}

TEST(every_key_is_read)
{
	struct agent_config cfg;
	const char *text = "interval: 2m\n"
			   "idle-cpu-percent: 1.5\n"
			   "idle-load1: 0.75\n"
			   "idle-psi-percent: 3%\n"
			   "floor: 256MiB\n"
			   "step: 64M\n"
			   "method: drop-caches\n"
			   "socket: /run/test/agent.sock\n"
			   "socket-owner: alice\n"
			   "socket-group: lima\n"
			   "socket-mode: 0600\n"
			   "log-level: debug\n"
			   "trim: false\n"
			   "max-request: 4KiB\n"
			   "engine-cgroups: openrc.docker,openrc.containerd\n"
			   "engine-freeze-lima-agent: yes\n"
			   "engine-freeze-timeout: 500ms\n"
			   "docker-socket: /run/docker.sock\n";
	CHECK_INT(parse(text, &cfg), 0);
	CHECK_STR(err, "");
	CHECK_DBL(cfg.interval_s, 120, 0);
	CHECK_DBL(cfg.idle_cpu_percent, 1.5, 0);
	CHECK_DBL(cfg.idle_load1, 0.75, 0);
	CHECK_DBL(cfg.idle_psi_percent, 3, 0);
	CHECK_U64(cfg.floor_bytes, 256 * VMC_MIB);
	CHECK_U64(cfg.step_bytes, 64 * VMC_MIB);
	CHECK_INT(cfg.method, TRIM_METHOD_DROP_CACHES);
	CHECK_STR(cfg.socket_path, "/run/test/agent.sock");
	CHECK_STR(cfg.socket_owner, "alice");
	CHECK_STR(cfg.socket_group, "lima");
	CHECK_INT(cfg.socket_mode, 0600);
	CHECK_INT(cfg.log_level, VMC_LOG_DEBUG);
	CHECK(!cfg.trim_enabled);
	CHECK_U64(cfg.max_request_bytes, 4096);
	CHECK(strcmp(cfg.engine_cgroups, "openrc.docker,openrc.containerd") == 0);
	CHECK(cfg.engine_freeze_lima_agent);
	CHECK_DBL(cfg.engine_freeze_timeout_s, 0.5, 1e-9);
	CHECK_STR(cfg.docker_socket, "/run/docker.sock");
}

TEST(value_spellings)
{
	struct agent_config cfg;
	CHECK_INT(parse("interval: 90\n", &cfg), 0);
	CHECK_DBL(cfg.interval_s, 90, 0);
	CHECK_INT(parse("interval: 1h\n", &cfg), 0);
	CHECK_DBL(cfg.interval_s, 3600, 0);
	CHECK_INT(parse("method: reclaim\n", &cfg), 0);
	CHECK_INT(cfg.method, TRIM_METHOD_RECLAIM);
	CHECK_INT(parse("method: auto\n", &cfg), 0);
	CHECK_INT(cfg.method, TRIM_METHOD_AUTO);
	CHECK_INT(parse("step: auto\n", &cfg), 0);
	CHECK_U64(cfg.step_bytes, 0);
	CHECK_INT(parse("step: 0\n", &cfg), 0);
	CHECK_U64(cfg.step_bytes, 0);
	CHECK_INT(parse("socket-mode: 0o640\n", &cfg), 0);
	CHECK_INT(cfg.socket_mode, 0640);
	CHECK_INT(parse("socket-mode: 666\n", &cfg), 0);
	CHECK_INT(cfg.socket_mode, 0666);
	CHECK_INT(parse("socket-mode: \"0660\"\n", &cfg), 0);
	CHECK_INT(cfg.socket_mode, 0660);
	CHECK_INT(parse("trim: off\n", &cfg), 0);
	CHECK(!cfg.trim_enabled);
	CHECK_INT(parse("trim: Yes\n", &cfg), 0);
	CHECK(cfg.trim_enabled);
	CHECK_INT(parse("floor: 0\n", &cfg), 0);
	CHECK_U64(cfg.floor_bytes, 0);
	CHECK_INT(parse("socket-group: 999\n", &cfg), 0);
	CHECK_STR(cfg.socket_group, "999");
	CHECK_INT(parse("socket-owner: 501\n", &cfg), 0);
	CHECK_STR(cfg.socket_owner, "501");
	CHECK_INT(parse("idle-cpu-percent: 0\n", &cfg), 0);
	CHECK_DBL(cfg.idle_cpu_percent, 0, 0);
}

TEST(unknown_key_names_file_line_and_key)
{
	struct agent_config cfg;
	CHECK_INT(parse("interval: 60\n# a comment\nfloorr: 1G\n", &cfg), -1);
	CHECK_CONTAINS(err, "agent.yaml:3: key \"floorr\": unknown key");
}

/* Each key with a value it must refuse, and the line the value is on. */
TEST(bad_values_are_refused_with_line_and_key)
{
	static const struct {
		const char *text, *expect;
	} cases[] = {
	    {"interval: soon\n", "agent.yaml:1: key \"interval\": \"soon\" is not a duration"},
	    {"\ninterval: 0\n", "agent.yaml:2: key \"interval\": 0 is out of range"},
	    {"interval: 8000h\n", "key \"interval\": 8000h is out of range"},
	    {"idle-cpu-percent: -1\n", "key \"idle-cpu-percent\": \"-1\" is not a percentage"},
	    {"idle-cpu-percent: 101\n", "key \"idle-cpu-percent\": 101 is more than 100 %"},
	    {"idle-cpu-percent: nan\n", "key \"idle-cpu-percent\": \"nan\" is not a percentage"},
	    {"idle-cpu-percent: 0x10\n", "key \"idle-cpu-percent\": \"0x10\" is not a percentage"},
	    {"idle-load1: lots\n", "key \"idle-load1\": \"lots\" is not a load average"},
	    {"idle-load1: 0.2%\n", "key \"idle-load1\": \"0.2%\" is not a load average"},
	    {"idle-psi-percent: 1e3\n", "key \"idle-psi-percent\": \"1e3\" is not a percentage"},
	    {"floor: 12 apples\n", "key \"floor\": \"12 apples\" is not a size"},
	    {"floor: -1\n", "key \"floor\": \"-1\" is not a size"},
	    {"step: 4k\n", "key \"step\": 4k is below 1 MiB"},
	    {"method: sometimes\n", "key \"method\": \"sometimes\" is not one of auto"},
	    {"socket: run/agent.sock\n", "key \"socket\": \"run/agent.sock\" is not an absolute"},
	    {"socket: "
	     "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.sock\n",
	     "key \"socket\": path is longer than 107 bytes"},
	    {"socket-group: \"a b\"\n", "key \"socket-group\": \"a b\" is not a valid group"},
	    {"socket-group: \"\"\n", "key \"socket-group\": needs a group name"},
	    {"socket-owner: \"a:b\"\n", "key \"socket-owner\": \"a:b\" is not a valid user name"},
	    {"socket-owner: \"\"\n", "key \"socket-owner\": needs a user name of 1 to 63"},
	    {"socket-mode: 0680\n", "key \"socket-mode\": \"0680\" is not an octal mode"},
	    {"socket-mode: 01777\n", "key \"socket-mode\": 01777 has bits beyond 0777"},
	    {"socket-mode: 0060\n", "key \"socket-mode\": 0060 does not let the owner"},
	    {"log-level: verbose\n", "key \"log-level\": \"verbose\" is not one of error"},
	    {"trim: maybe\n", "key \"trim\": \"maybe\" is not true or false"},
	    {"max-request: 10\n", "key \"max-request\": 10 is out of range"},
	    {"max-request: 1G\n", "key \"max-request\": 1G is out of range"},
	    {"engine-cgroups: ../etc\n",
	     "key \"engine-cgroups\": \"../etc\" is not auto or a list"},
	    {"engine-cgroups: /sys/fs/cgroup/x\n",
	     "key \"engine-cgroups\": \"/sys/fs/cgroup/x\" is not"},
	    {"engine-cgroups: a,,b\n", "key \"engine-cgroups\": \"a,,b\" is not auto"},
	    {"engine-cgroups: a,b,c,d,e\n", "key \"engine-cgroups\": more than 4 cgroups"},
	    /* empty, quoted or as a folded block (found by fuzz_agent_config: it read before the
	       string) */
	    {"engine-cgroups: \"\"\n", "key \"engine-cgroups\": needs auto or a list"},
	    {"engine-cgroups: >3\n", "key \"engine-cgroups\": needs auto or a list"},
	    {"engine-freeze-lima-agent: sometimes\n", "\"sometimes\" is not true or false"},
	    {"engine-freeze-timeout: 10ms\n",
	     "key \"engine-freeze-timeout\": 10ms is out of range"},
	    {"docker-socket: docker.sock\n",
	     "key \"docker-socket\": \"docker.sock\" is not an absolute"},
	    {"floor:\n", "key \"floor\": needs a value"},
	    {"floor: [1, 2]\n", "key \"floor\": needs a single value"},
	    {"method:\n  name: auto\n", "key \"method\": needs a single value"},
	    {"interval: 60\ninterval: 70\n", "agent.yaml:2: key \"interval\": given twice"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct agent_config cfg;
		CHECK_INT(parse(cases[i].text, &cfg), -1);
		CHECK_CONTAINS(err, cases[i].expect);
	}
}

TEST(value_line_is_reported_for_multiline_documents)
{
	struct agent_config cfg;
	const char *text = "# vmcost-agent\n"
			   "interval: 10m\n"
			   "\n"
			   "floor:\n"
			   "  3 parsecs\n";
	CHECK_INT(parse(text, &cfg), -1);
	CHECK_CONTAINS(err, "agent.yaml:5: key \"floor\"");
}

TEST(a_failed_parse_leaves_defaults_not_half_a_config)
{
	struct agent_config cfg, def;
	agent_config_defaults(&def);
	CHECK_INT(parse("interval: 60\nfloor: 1G\nmethod: nope\n", &cfg), -1);
	CHECK(same_config(&cfg, &def));
}

TEST(document_shape_errors)
{
	struct agent_config cfg;
	CHECK_INT(parse("- interval\n- floor\n", &cfg), -1);
	CHECK_CONTAINS(err, "agent.yaml:1: expected a mapping");
	CHECK_INT(parse("just text\n", &cfg), -1);
	CHECK_CONTAINS(err, "expected a mapping");
	CHECK_INT(parse("? [a, b]\n: 1\n", &cfg), -1);
	CHECK_CONTAINS(err, "agent.yaml:1: keys must be plain names");
	CHECK_INT(parse("interval: 60\n  floor: 1G\n", &cfg), -1);
	CHECK_CONTAINS(err, "agent.yaml: line 2");
	CHECK_INT(parse("interval: [60\n", &cfg), -1);
	CHECK_CONTAINS(err, "agent.yaml: line");
}

TEST(aliases_resolve_to_their_anchor)
{
	struct agent_config cfg;
	CHECK_INT(parse("floor: &f 200MiB\nstep: *f\n", &cfg), 0);
	CHECK_U64(cfg.step_bytes, 200 * VMC_MIB);
}

static char tmpdir[] = "/tmp/agent-config-XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

TEST(load_reads_a_file_and_names_it_in_errors)
{
	char path[256];
	struct agent_config cfg;
	snprintf(path, sizeof path, "%s/agent.yaml", tmpdir);
	write_file(path, "interval: 30s\nfloor: 64MiB\n");
	CHECK_INT(agent_config_load(path, true, &cfg, err, sizeof err), 0);
	CHECK_DBL(cfg.interval_s, 30, 0);
	CHECK_U64(cfg.floor_bytes, 64 * VMC_MIB);

	write_file(path, "interval: 30s\nsocket-mode: rw\n");
	CHECK_INT(agent_config_load(path, true, &cfg, err, sizeof err), VMC_EXIT_MALFORMED);
	char expect[300];
	snprintf(expect, sizeof expect, "%s:2: key \"socket-mode\"", path);
	CHECK_CONTAINS(err, expect);
	unlink(path);
}

TEST(missing_file_is_fine_only_when_optional)
{
	char path[256];
	struct agent_config cfg, def;
	agent_config_defaults(&def);
	snprintf(path, sizeof path, "%s/absent.yaml", tmpdir);
	CHECK_INT(agent_config_load(path, false, &cfg, err, sizeof err), 0);
	CHECK(same_config(&cfg, &def));
	err[0] = '\0';
	CHECK_INT(agent_config_load(path, true, &cfg, err, sizeof err), VMC_EXIT_USAGE);
	CHECK_CONTAINS(
	    err, "absent.yaml: cannot read (check the --config path): No such file or directory");
}

/* Root reads mode-000 files: load in a child that is nobody (65534), err copied back. */
static int load_as_nobody(const char *path)
{
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		struct agent_config cfg;
		close(fds[0]);
		if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(100);
		int rc = agent_config_load(path, true, &cfg, err, sizeof err);
		if (write(fds[1], err, strlen(err) + 1) < 0)
			_exit(101);
		_exit(rc);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], err, sizeof err - 1);
	err[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Each way a read fails has its own exit code and keeps its reason (issue 10 items 3 and 5). */
TEST(read_failures_have_their_own_exit_codes)
{
	struct agent_config cfg;
	char path[256];
	CHECK_INT(agent_config_load(tmpdir, true, &cfg, err, sizeof err), VMC_EXIT_USAGE);
	CHECK_CONTAINS(err, "cannot read (check the --config path): Is a directory");
	CHECK_INT(agent_config_load(tmpdir, false, &cfg, err, sizeof err), VMC_EXIT_FAILURE);
	CHECK_CONTAINS(err, "cannot read: Is a directory");
	snprintf(path, sizeof path, "%s/file", tmpdir);
	write_file(path, "interval: 1m\n");
	snprintf(path, sizeof path, "%s/file/agent.yaml", tmpdir);
	CHECK_INT(agent_config_load(path, true, &cfg, err, sizeof err), VMC_EXIT_USAGE);
	CHECK_CONTAINS(err, "cannot read (check the --config path): Not a directory");
	snprintf(path, sizeof path, "%s/file", tmpdir);
	unlink(path);
	snprintf(path, sizeof path, "%s/locked.yaml", tmpdir);
	write_file(path, "interval: 1m\n");
	chmod(path, 0);
	chmod(tmpdir, 0755);
	CHECK_INT(load_as_nobody(path), VMC_EXIT_PERMISSION);
	CHECK_CONTAINS(err, "locked.yaml: cannot read (run as root): Permission denied");
	chmod(tmpdir, 0700);
	unlink(path);
}

TEST(oversized_file_is_refused)
{
	char path[256];
	struct agent_config cfg;
	snprintf(path, sizeof path, "%s/big.yaml", tmpdir);
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	for (int i = 0; i < 40000; i++)
		fputs("# padding\n", f);
	fclose(f);
	CHECK_INT(agent_config_load(path, true, &cfg, err, sizeof err), VMC_EXIT_MALFORMED);
	CHECK_CONTAINS(err, "larger than 256 KiB");
	unlink(path);
}

/* The documented default config that the templates install must say exactly the defaults. */
TEST(shipped_default_config_equals_the_built_in_defaults)
{
	struct agent_config cfg, def;
	agent_config_defaults(&def);
	err[0] = '\0';
	CHECK_INT(agent_config_load("provision/vmcost-agent.yaml", true, &cfg, err, sizeof err), 0);
	CHECK_STR(err, "");
	CHECK(same_config(&cfg, &def));
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(defaults_match_the_documentation);
	RUN(empty_and_comment_only_files_give_defaults);
	RUN(every_key_is_read);
	RUN(value_spellings);
	RUN(unknown_key_names_file_line_and_key);
	RUN(bad_values_are_refused_with_line_and_key);
	RUN(value_line_is_reported_for_multiline_documents);
	RUN(a_failed_parse_leaves_defaults_not_half_a_config);
	RUN(document_shape_errors);
	RUN(aliases_resolve_to_their_anchor);
	RUN(load_reads_a_file_and_names_it_in_errors);
	RUN(missing_file_is_fine_only_when_optional);
	RUN(read_failures_have_their_own_exit_codes);
	RUN(oversized_file_is_refused);
	RUN(shipped_default_config_equals_the_built_in_defaults);
	rmdir(tmpdir);
	return check_done();
}
