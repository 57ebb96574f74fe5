/* SPDX-License-Identifier: Apache-2.0 */
/*
 * guest-agent/engine*.c on fake trees: which cgroups are the engine's (systemd, OpenRC,
 * configured), every refusal (a running container, a shim, processes that are not the engine's,
 * no freezer, no engine), the wait for frozen 1 (a stand-in kernel thread answers the writes to
 * cgroup.freeze), the timeout, the record under /run and the recovery after a killed agent, and
 * the docker.sock guard with real sockets: a client connecting while frozen thaws the engine and
 * is relayed to "dockerd", and freeze/thaw cycles under a client loop lose no request.
 */
#include "check.h"
#include "config.h"
#include "engine.h"
#include "fakeroot.h"
#include "golden.h"
#include "log.h"
#include "print_capture.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static struct agent_config cfg;

static void proc(int pid, const char *name)
{
	char rel[64], text[256];
	snprintf(rel, sizeof rel, "/proc/%d/status", pid);
	snprintf(text, sizeof text, "Name:\t%s\nState:\tS (sleeping)\nPPid:\t1\nUid:\t0\t0\t0\t0\n",
		 name);
	fakeroot_write(rel, text);
}

/* A service cgroup holding the given pids, not frozen. */
static void cgroup(const char *rel, const char *procs)
{
	char path[256];
	snprintf(path, sizeof path, "/sys/fs/cgroup/%s/cgroup.procs", rel);
	fakeroot_write(path, procs);
	snprintf(path, sizeof path, "/sys/fs/cgroup/%s/cgroup.freeze", rel);
	fakeroot_write(path, "0\n");
	snprintf(path, sizeof path, "/sys/fs/cgroup/%s/cgroup.events", rel);
	fakeroot_write(path, "populated 1\nfrozen 0\n");
}

/* "1" or "0": the first byte of cgroup.freeze (the kernel ignores what follows). */
static const char *freeze_value(const char *rel)
{
	char path[256];
	snprintf(path, sizeof path, "/sys/fs/cgroup/%s/cgroup.freeze", rel);
	const char *v = fakeroot_read(path);
	return !v ? "(none)" : v[0] == '1' ? "1" : v[0] == '0' ? "0" : v;
}

/* An Alpine guest: dockerd with its own containerd in openrc.docker. */
static void openrc_guest(void)
{
	fakeroot_remove("/sys");
	fakeroot_remove("/run");
	proc(100, "supervise-daemo"); /* the kernel cuts comm to 15 characters */
	proc(101, "dockerd");
	proc(102, "containerd");
	proc(103, "sshd");
	proc(104, "containerd-shim-runc-v2");
	cgroup("openrc.docker", "100\n101\n102\n");
	cgroup("openrc.containerd", "");
	cgroup("openrc.sshd", "103\n");
	fakeroot_mkdir("/sys/fs/cgroup/docker");
}

/* ---- the kernel's part: cgroup.events follows cgroup.freeze ------------------------------ */

static const char *kernel_cgroups[] = {"openrc.docker", "system.slice/docker.service",
				       "system.slice/containerd.service"};
static atomic_bool kernel_running, kernel_stop;
static pthread_t kernel_thread;

static void *kernel(void *arg)
{
	(void)arg;
	while (!kernel_stop) {
		for (size_t i = 0; i < sizeof kernel_cgroups / sizeof kernel_cgroups[0]; i++) {
			char rel[256], events[64], v[8] = "";
			snprintf(rel, sizeof rel, "%s/sys/fs/cgroup/%s/cgroup.freeze", fakeroot_dir,
				 kernel_cgroups[i]);
			FILE *f = fopen(rel, "r");
			if (!f)
				continue;
			size_t got = fread(v, 1, sizeof v - 1, f);
			fclose(f);
			if (got == 0)
				continue; /* caught between the writer's truncate and its write */
			snprintf(events, sizeof events, "populated 1\nfrozen %c\n",
				 v[0] == '1' ? '1' : '0');
			snprintf(rel, sizeof rel, "/sys/fs/cgroup/%s/cgroup.events",
				 kernel_cgroups[i]);
			char path[512], tmp[520];
			snprintf(path, sizeof path, "%s%s", fakeroot_dir, rel);
			snprintf(tmp, sizeof tmp, "%s.k", path);
			scratch_write(tmp, events);
			rename(tmp, path);
		}
		struct timespec step = {0, 2 * 1000 * 1000};
		nanosleep(&step, NULL);
	}
	return NULL;
}

static void kernel_start(void)
{
	kernel_stop = false;
	pthread_create(&kernel_thread, NULL, kernel, NULL);
	kernel_running = true;
}

static void kernel_end(void)
{
	kernel_stop = true;
	pthread_join(kernel_thread, NULL);
	kernel_running = false;
}

/* ---- parsers ---------------------------------------------------------------------------- */

TEST(cgroup_events_values_are_read_at_line_start)
{
	CHECK_INT(engine_events_value("populated 1\nfrozen 0\n", "frozen"), 0);
	CHECK_INT(engine_events_value("populated 1\nfrozen 1\n", "frozen"), 1);
	CHECK_INT(engine_events_value("populated 0\nfrozen 1", "populated"), 0);
	CHECK_INT(engine_events_value("populated 1\n", "frozen"), -1);
	CHECK_INT(engine_events_value("unfrozen 1\n", "frozen"), -1);
	CHECK_INT(engine_events_value("frozen 7\n", "frozen"), -1);
	CHECK_INT(engine_events_value("", "frozen"), -1);
}

TEST(processes_are_classified_by_name)
{
	CHECK_INT(engine_classify("dockerd"), ENGINE_MEMBER_ENGINE);
	CHECK_INT(engine_classify("containerd"), ENGINE_MEMBER_ENGINE);
	CHECK_INT(engine_classify("supervise-daemo"), ENGINE_MEMBER_ENGINE);
	CHECK_INT(engine_classify("docker-proxy"), ENGINE_MEMBER_ENGINE);
	CHECK_INT(engine_classify("containerd-shim"), ENGINE_MEMBER_SHIM);
	CHECK_INT(engine_classify("lima-guestagent"), ENGINE_MEMBER_LIMA_AGENT);
	CHECK_INT(engine_classify("sshd"), ENGINE_MEMBER_FOREIGN);
	CHECK_INT(engine_classify("vmcost-agent"), ENGINE_MEMBER_FOREIGN);
	CHECK_INT(engine_classify("dockerd2"), ENGINE_MEMBER_FOREIGN);
}

TEST(a_guard_is_known_by_its_arguments_not_its_name)
{
	CHECK(engine_is_guard_cmdline("/usr/bin/vmcost-agent engine guard"));
	CHECK(engine_is_guard_cmdline("vmcost-agent engine guard --config /etc/vmcost/agent.yaml"));
	CHECK(engine_is_guard_cmdline("/proc/self/exe engine guard"));
	CHECK(!engine_is_guard_cmdline("vmcost-agent engine guardian"));
	CHECK(!engine_is_guard_cmdline("vmcost-agent run --config /etc/vmcost/agent.yaml"));
	CHECK(!engine_is_guard_cmdline("sshd: root engine guard"));
	CHECK(!engine_is_guard_cmdline("engine guard"));
	CHECK(!engine_is_guard_cmdline(""));
}

/* ---- which cgroups -------------------------------------------------------------------------- */

TEST(openrc_dockerd_with_its_own_containerd_is_one_cgroup)
{
	openrc_guest();
	struct engine_plan plan;
	char err[512] = "";
	CHECK_INT(engine_find(&cfg, &plan, err, sizeof err), 0);
	CHECK_INT(plan.n, 1);
	CHECK_STR(plan.cg[0].path, "openrc.docker");
}

static void systemd_guest(void)
{
	fakeroot_remove("/sys");
	fakeroot_remove("/run");
	proc(201, "dockerd");
	proc(202, "containerd");
	proc(203, "lima-guestagent");
	cgroup("system.slice/docker.service", "201\n");
	cgroup("system.slice/containerd.service", "202\n");
	cgroup("system.slice/lima-guestagent.service", "203\n");
}

TEST(systemd_dockerd_on_a_standalone_containerd_is_both_services)
{
	systemd_guest();
	struct engine_plan plan;
	char err[512] = "";
	CHECK_INT(engine_find(&cfg, &plan, err, sizeof err), 0);
	CHECK_INT(plan.n, 2);
	CHECK_STR(plan.cg[0].path, "system.slice/docker.service");
	CHECK_STR(plan.cg[1].path, "system.slice/containerd.service");
	/* The Lima guest agent only when configured. */
	cfg.engine_freeze_lima_agent = true;
	CHECK_INT(engine_find(&cfg, &plan, err, sizeof err), 0);
	cfg.engine_freeze_lima_agent = false;
	CHECK_INT(plan.n, 3);
	CHECK_STR(plan.cg[2].path, "system.slice/lima-guestagent.service");
}

TEST(no_engine_and_a_missing_configured_cgroup_are_named)
{
	fakeroot_remove("/sys");
	fakeroot_mkdir("/sys/fs/cgroup");
	struct engine_plan plan;
	char err[512] = "";
	errno = 0;
	CHECK_INT(engine_find(&cfg, &plan, err, sizeof err), -1);
	CHECK_INT(errno, ENOENT);
	CHECK_CONTAINS(err, "openrc.docker");
	CHECK_CONTAINS(err, "engine-cgroups");
	snprintf(cfg.engine_cgroups, sizeof cfg.engine_cgroups, "my.engine");
	CHECK_INT(engine_find(&cfg, &plan, err, sizeof err), -1);
	CHECK_CONTAINS(err, "/sys/fs/cgroup/my.engine does not exist");
	cgroup("my.engine", "");
	CHECK_INT(engine_find(&cfg, &plan, err, sizeof err), 0);
	CHECK_INT(plan.n, 1);
	snprintf(cfg.engine_cgroups, sizeof cfg.engine_cgroups, "auto");
}

/* ---- refusals ------------------------------------------------------------------------------- */

static json_t *freeze(char *err, size_t size)
{
	err[0] = '\0';
	errno = 0;
	return engine_freeze(&cfg, err, size);
}

TEST(a_running_container_refuses_the_freeze)
{
	openrc_guest();
	fakeroot_write("/sys/fs/cgroup/docker/0123456789abcdef0123/cgroup.events",
		       "populated 1\nfrozen 0\n");
	char err[512];
	CHECK(freeze(err, sizeof err) == NULL);
	CHECK_INT(errno, EBUSY);
	CHECK_CONTAINS(err, "container 0123456789ab is running");
	CHECK_STR(freeze_value("openrc.docker"), "0");
	/* A stopped container's cgroup is empty: no longer a reason. */
	fakeroot_write("/sys/fs/cgroup/docker/0123456789abcdef0123/cgroup.events",
		       "populated 0\nfrozen 0\n");
	json_t *st = engine_status(&cfg, err, sizeof err);
	CHECK(json_is_true(json_object_get(st, "can_freeze")));
	json_decref(st);
}

TEST(a_shim_refuses_the_freeze)
{
	openrc_guest();
	cgroup("openrc.docker", "100\n101\n102\n104\n");
	char err[512];
	CHECK(freeze(err, sizeof err) == NULL);
	CHECK_INT(errno, EBUSY);
	CHECK_CONTAINS(err, "containerd-shim-runc-v2 (pid 104)");
}

TEST(processes_that_are_not_the_engine_are_named_and_refuse_the_freeze)
{
	openrc_guest();
	cgroup("openrc.docker", "100\n101\n102\n103\n");
	fakeroot_write("/sys/fs/cgroup/openrc.docker/child/cgroup.procs", "105\n");
	proc(105, "bash");
	char err[512];
	CHECK(freeze(err, sizeof err) == NULL);
	CHECK_INT(errno, EBUSY);
	CHECK_CONTAINS(err, "2 process(es) that are not the engine's");
	CHECK_CONTAINS(err, "103 (sshd) in openrc.docker");
	CHECK_CONTAINS(err, "105 (bash) in openrc.docker/child");
	CHECK_STR(freeze_value("openrc.docker"), "0");
}

TEST(the_agent_itself_and_the_lima_agent_are_never_frozen_by_default)
{
	openrc_guest();
	char procs[64];
	snprintf(procs, sizeof procs, "101\n%d\n", (int)getpid());
	proc((int)getpid(), "vmcost-agent");
	cgroup("openrc.docker", procs);
	char err[512];
	CHECK(freeze(err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "(vmcost-agent, this agent)");
	proc(106, "lima-guestagent");
	cgroup("openrc.docker", "101\n106\n");
	CHECK(freeze(err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "106 (lima-guestagent)");
}

TEST(no_freezer_is_a_refusal)
{
	openrc_guest();
	fakeroot_remove("/sys/fs/cgroup/openrc.docker/cgroup.freeze");
	char err[512];
	CHECK(freeze(err, sizeof err) == NULL);
	CHECK_INT(errno, ENOTSUP);
	CHECK_CONTAINS(err, "no cgroup v2 freezer");
}

/* ---- freeze, thaw, timeout, recovery ------------------------------------------------------------
 */

TEST(freeze_waits_for_frozen_1_and_thaw_undoes_it)
{
	openrc_guest();
	kernel_start();
	char err[512];
	json_t *doc = freeze(err, sizeof err);
	CHECK(doc != NULL);
	if (!doc)
		fprintf(stderr, "freeze: %s\n", err);
	CHECK_STR(json_string_value(json_object_get(doc, "action")), "froze");
	CHECK_STR(json_string_value(json_object_get(doc, "state")), "frozen");
	json_decref(doc);
	CHECK_STR(freeze_value("openrc.docker"), "1");
	CHECK(engine_recorded_frozen());
	/* A second freeze changes nothing. */
	doc = freeze(err, sizeof err);
	CHECK_STR(json_string_value(json_object_get(doc, "action")), "already-frozen");
	json_decref(doc);
	doc = engine_thaw(&cfg, err, sizeof err);
	CHECK_STR(json_string_value(json_object_get(doc, "action")), "thawed");
	json_decref(doc);
	CHECK_STR(freeze_value("openrc.docker"), "0");
	CHECK(!engine_recorded_frozen());
	doc = engine_thaw(&cfg, err, sizeof err);
	CHECK_STR(json_string_value(json_object_get(doc, "action")), "not-frozen");
	json_decref(doc);
	kernel_end();
}

TEST(a_freeze_that_never_completes_times_out_and_thaws)
{
	openrc_guest();
	cfg.engine_freeze_timeout_s = 0.2;
	char err[512];
	json_t *doc = freeze(err, sizeof err);
	CHECK(doc == NULL);
	CHECK_INT(errno, ETIMEDOUT);
	CHECK_CONTAINS(err, "did not report frozen 1");
	CHECK_STR(freeze_value("openrc.docker"), "0");
	CHECK(!engine_recorded_frozen());
	cfg.engine_freeze_timeout_s = 5;
}

TEST(a_freeze_left_by_a_killed_agent_is_undone_at_start)
{
	systemd_guest();
	fakeroot_write("/sys/fs/cgroup/system.slice/docker.service/cgroup.freeze", "1\n");
	fakeroot_write("/sys/fs/cgroup/system.slice/containerd.service/cgroup.freeze", "1\n");
	fakeroot_write(ENGINE_STATE_FILE,
		       "{\"cgroups\": [\"system.slice/docker.service\", "
		       "\"system.slice/containerd.service\"], \"docker_socket\": "
		       "\"/var/run/docker.sock\", \"socket_aside\": true, \"guard_pid\": 0, "
		       "\"since\": 1}");
	/* The guard's socket at the path, dockerd's set aside. */
	fakeroot_write("/var/run/docker.sock", "ours");
	fakeroot_write("/var/run/docker.sock" ENGINE_SET_ASIDE_SUFFIX, "dockerd's");
	engine_recover(&cfg, "start-up");
	CHECK_STR(freeze_value("system.slice/docker.service"), "0");
	CHECK_STR(freeze_value("system.slice/containerd.service"), "0");
	CHECK(!engine_recorded_frozen());
	CHECK_STR(fakeroot_read("/var/run/docker.sock"), "dockerd's");
	CHECK(fakeroot_read("/var/run/docker.sock" ENGINE_SET_ASIDE_SUFFIX) == NULL);
	fakeroot_remove("/var/run");
}

/* ---- what vmcost-agent engine prints -------------------------------------------------------- */

/* The document of one `vmcost-agent engine WHAT`, printed as the command prints it. */
static void print_engine(FILE *f, const char *what, json_t *doc, const char *err)
{
	fprintf(f, "$ vmcost-agent engine %s\n", what);
	if (doc)
		engine_print(f, doc);
	else
		fprintf(f, "[error] %s\n", err);
	json_decref(doc);
}

TEST(the_engine_prints_each_state_and_refusal)
{
	struct capture cap;
	FILE *f = capture_open(&cap);
	char err[512];
	openrc_guest();
	kernel_start();
	print_engine(f, "status", engine_status(&cfg, err, sizeof err), err);
	/* A running container refuses the freeze, and the status says why. */
	fakeroot_write("/sys/fs/cgroup/docker/0123456789abcdef0123/cgroup.events",
		       "populated 1\nfrozen 0\n");
	print_engine(f, "status", engine_status(&cfg, err, sizeof err), err);
	print_engine(f, "freeze", freeze(err, sizeof err), err);
	fakeroot_write("/sys/fs/cgroup/docker/0123456789abcdef0123/cgroup.events",
		       "populated 0\nfrozen 0\n");
	print_engine(f, "freeze", freeze(err, sizeof err), err);
	print_engine(f, "status", engine_status(&cfg, err, sizeof err), err);
	print_engine(f, "freeze", freeze(err, sizeof err), err);
	/*
	 * A kernel thaws at once (cgroup.events says frozen 0 when the write of 0 returns); the
	 * stand-in thread lags by a few milliseconds, so the thaws run without it, the events
	 * already as the kernel will have them.
	 */
	kernel_end();
	fakeroot_write("/sys/fs/cgroup/openrc.docker/cgroup.events", "populated 1\nfrozen 0\n");
	print_engine(f, "thaw", engine_thaw(&cfg, err, sizeof err), err);
	print_engine(f, "thaw", engine_thaw(&cfg, err, sizeof err), err);
	/* A freeze recorded with docker.sock guarded (systemd: dockerd and containerd). */
	systemd_guest();
	fakeroot_write("/sys/fs/cgroup/system.slice/docker.service/cgroup.events",
		       "populated 1\nfrozen 1\n");
	fakeroot_write("/sys/fs/cgroup/system.slice/containerd.service/cgroup.events",
		       "populated 1\nfrozen 1\n");
	fakeroot_write(ENGINE_STATE_FILE,
		       "{\"cgroups\": [\"system.slice/docker.service\", "
		       "\"system.slice/containerd.service\"], \"docker_socket\": "
		       "\"/var/run/docker.sock\", \"socket_aside\": true, \"guard_pid\": 0, "
		       "\"since\": 1}");
	print_engine(f, "status", engine_status(&cfg, err, sizeof err), err);
	fakeroot_remove("/run");
	/* No engine at all. */
	fakeroot_remove("/sys");
	fakeroot_mkdir("/sys/fs/cgroup");
	print_engine(f, "status", engine_status(&cfg, err, sizeof err), err);
	char *text = capture_close(&cap);
	/* How long a freeze or a thaw took. */
	static const char *const actions[] = {"froze in ", "already-frozen in ", "thawed in ",
					      "not-frozen in "};
	for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
		text = golden_mask(text, actions[i], " ms", "T");
	CHECK_GOLDEN(text, "agent-engine");
	free(text);
}

/* ---- the docker.sock guard --------------------------------------------------------------------
 */

/* "dockerd": answers each line with "pong <line>" and closes when the client does. */
static int dockerd_fd = -1;
static atomic_int dockerd_answered;
static atomic_bool dockerd_stop;
static pthread_t dockerd_thread;

static void *dockerd_conn(void *arg)
{
	int c = (int)(intptr_t)arg;
	char buf[256];
	ssize_t n;
	while ((n = read(c, buf, sizeof buf)) > 0) {
		char out[300];
		int len = snprintf(out, sizeof out, "pong %.*s", (int)n, buf);
		if (write(c, out, (size_t)len) != len)
			break;
		dockerd_answered++;
	}
	close(c);
	return NULL;
}

static void *dockerd(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(dockerd_fd, NULL, NULL);
		if (c < 0 || dockerd_stop) {
			if (c >= 0)
				close(c);
			return NULL;
		}
		pthread_t t;
		pthread_create(&t, NULL, dockerd_conn, (void *)(intptr_t)c);
		pthread_detach(t);
	}
}

static char docker_path[100];

static void dockerd_start(void)
{
	fakeroot_mkdir("/var/run");
	snprintf(docker_path, sizeof docker_path, "%s/var/run/docker.sock", fakeroot_dir);
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	memcpy(addr.sun_path, docker_path, sizeof docker_path);
	dockerd_fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (bind(dockerd_fd, (struct sockaddr *)&addr, sizeof addr) < 0 ||
	    listen(dockerd_fd, 64) < 0) {
		perror(docker_path);
		exit(2);
	}
	chmod(docker_path, 0660);
	dockerd_stop = false;
	pthread_create(&dockerd_thread, NULL, dockerd, NULL);
}

static void dockerd_end(void)
{
	dockerd_stop = true;
	int c = scratch_connect(docker_path);
	if (c < 0) {
		c = scratch_connect(docker_path);
	}
	if (c >= 0)
		close(c);
	pthread_join(dockerd_thread, NULL);
	close(dockerd_fd);
	unlink(docker_path);
}

/* The guard as a thread; stop is a write to its wake pipe. */
struct guard_thread {
	pthread_t thread;
	int listen_fd, wake[2];
	atomic_bool running;
};
static struct guard_thread guard;
static atomic_int guards_started;

static void *guard_main(void *arg)
{
	(void)arg;
	engine_guard_run(&cfg, guard.listen_fd, guard.wake[0]);
	return NULL;
}

static pid_t spawn_thread(const struct agent_config *c, int listen_fd, char *err, size_t errsize)
{
	(void)c;
	(void)err;
	(void)errsize;
	guard.listen_fd = listen_fd;
	if (pipe(guard.wake) < 0)
		return -1;
	guard.running = true;
	guards_started++;
	pthread_create(&guard.thread, NULL, guard_main, NULL);
	return 999999;
}

static void stop_thread(pid_t pid)
{
	(void)pid;
	if (write(guard.wake[1], "x", 1) != 1)
		perror("wake");
}

static void guard_join(void)
{
	if (!guard.running)
		return;
	pthread_join(guard.thread, NULL);
	close(guard.wake[0]);
	close(guard.wake[1]);
	guard.running = false;
}

static const struct engine_guard_hooks thread_hooks = {spawn_thread, stop_thread};

static ino_t inode_of(const char *path)
{
	struct stat sb;
	return lstat(path, &sb) == 0 ? sb.st_ino : 0;
}

/* One request: "ping N" answered "pong ping N", within 5 s; false otherwise. */
static bool ping(int n)
{
	int fd = scratch_connect(docker_path);
	if (fd < 0)
		return false;
	struct timeval tv = {5, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	char req[32], want[64], got[64] = "";
	int len = snprintf(req, sizeof req, "ping %d", n);
	snprintf(want, sizeof want, "pong %s", req);
	bool ok = write(fd, req, (size_t)len) == len;
	ssize_t got_n = ok ? read(fd, got, sizeof got - 1) : -1;
	close(fd);
	if (got_n <= 0)
		return false;
	got[got_n] = '\0';
	return strcmp(got, want) == 0;
}

TEST(a_client_on_docker_sock_while_frozen_thaws_the_engine_and_is_answered)
{
	openrc_guest();
	kernel_start();
	dockerd_start();
	ino_t real = inode_of(docker_path);
	char err[512];
	json_t *doc = freeze(err, sizeof err);
	CHECK(doc != NULL);
	if (!doc)
		fprintf(stderr, "freeze: %s\n", err);
	CHECK(json_is_true(json_object_get(doc, "socket_guarded")));
	json_decref(doc);
	CHECK(inode_of(docker_path) != real);
	char aside[128];
	snprintf(aside, sizeof aside, "%s%s", docker_path, ENGINE_SET_ASIDE_SUFFIX);
	CHECK(inode_of(aside) == real);
	/* Same permissions as dockerd's socket. */
	struct stat sb;
	CHECK(lstat(docker_path, &sb) == 0 && (sb.st_mode & 0777) == 0660);

	CHECK(ping(1));
	guard_join();
	CHECK_STR(freeze_value("openrc.docker"), "0");
	CHECK(!engine_recorded_frozen());
	CHECK(inode_of(docker_path) == real);
	CHECK(inode_of(aside) == 0);
	CHECK(ping(2));
	dockerd_end();
	kernel_end();
}

/* With the guard in use, a docker.sock it cannot take over is a refusal, not an unguarded
 * freeze whose clients would hang. */
TEST(a_docker_sock_the_guard_cannot_hold_refuses_the_freeze)
{
	openrc_guest();
	fakeroot_remove("/var/run");
	char err[512];
	CHECK(freeze(err, sizeof err) == NULL);
	CHECK_INT(errno, ENOTSOCK);
	CHECK_CONTAINS(err, "/var/run/docker.sock is not a socket the agent can guard (it does "
			    "not exist)");
	CHECK_STR(freeze_value("openrc.docker"), "0");
	CHECK(!engine_recorded_frozen());
	/* A symlink to the socket (somebody's own layout): not followed, refused. */
	dockerd_start();
	char link_path[128];
	snprintf(link_path, sizeof link_path, "%s/var/run/docker-link.sock", fakeroot_dir);
	CHECK_INT(symlink(docker_path, link_path), 0);
	snprintf(cfg.docker_socket, sizeof cfg.docker_socket, "/var/run/docker-link.sock");
	CHECK(freeze(err, sizeof err) == NULL);
	CHECK_INT(errno, ENOTSOCK);
	CHECK_CONTAINS(err, "(it is a symbolic link)");
	/* A regular file. */
	fakeroot_write("/var/run/docker-file.sock", "not a socket");
	snprintf(cfg.docker_socket, sizeof cfg.docker_socket, "/var/run/docker-file.sock");
	CHECK(freeze(err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "(it is not a socket)");
	CHECK_STR(freeze_value("openrc.docker"), "0");
	CHECK(!engine_recorded_frozen());
	CHECK_INT(guards_started, 0);
	snprintf(cfg.docker_socket, sizeof cfg.docker_socket, "%s", AGENT_DEFAULT_DOCKER_SOCKET);
	unlink(link_path);
	dockerd_end();
}

TEST(a_thaw_from_the_api_lets_the_guard_go_and_puts_the_socket_back)
{
	openrc_guest();
	kernel_start();
	dockerd_start();
	ino_t real = inode_of(docker_path);
	char err[512];
	json_decref(freeze(err, sizeof err));
	json_t *doc = engine_thaw(&cfg, err, sizeof err);
	CHECK_STR(json_string_value(json_object_get(doc, "action")), "thawed");
	json_decref(doc);
	guard_join();
	CHECK(inode_of(docker_path) == real);
	CHECK(ping(3));
	dockerd_end();
	kernel_end();
}

TEST(a_guard_stopped_while_the_freeze_is_recorded_thaws_the_engine)
{
	openrc_guest();
	kernel_start();
	dockerd_start();
	ino_t real = inode_of(docker_path);
	char err[512];
	json_decref(freeze(err, sizeof err));
	CHECK(engine_recorded_frozen());
	/* A SIGTERM that no thaw sent: the guard alone. */
	stop_thread(0);
	guard_join();
	CHECK_STR(freeze_value("openrc.docker"), "0");
	CHECK(!engine_recorded_frozen());
	CHECK(inode_of(docker_path) == real);
	CHECK(ping(4));
	dockerd_end();
	kernel_end();
}

static atomic_bool loop_stop;
static atomic_int loop_sent, loop_lost;

static void *client_loop(void *arg)
{
	(void)arg;
	for (int i = 0; !loop_stop; i++) {
		loop_sent++;
		if (!ping(i))
			loop_lost++;
	}
	return NULL;
}

TEST(two_hundred_freeze_thaw_cycles_under_a_client_loop_lose_no_request)
{
	openrc_guest();
	kernel_start();
	dockerd_start();
	ino_t real = inode_of(docker_path);
	pthread_t client;
	loop_stop = false;
	pthread_create(&client, NULL, client_loop, NULL);
	int froze = 0, failed = 0;
	for (int i = 0; i < 200; i++) {
		char err[512];
		json_t *doc = freeze(err, sizeof err);
		if (!doc) {
			failed++;
			fprintf(stderr, "cycle %d: %s\n", i, err);
		}
		froze +=
		    doc && strcmp(json_string_value(json_object_get(doc, "action")), "froze") == 0;
		json_decref(doc);
		json_decref(engine_thaw(&cfg, err, sizeof err));
		guard_join();
	}
	loop_stop = true;
	pthread_join(client, NULL);
	CHECK_INT(failed, 0);
	CHECK_INT(froze, 200);
	CHECK(loop_sent > 0);
	CHECK_INT(loop_lost, 0);
	CHECK_STR(freeze_value("openrc.docker"), "0");
	CHECK(inode_of(docker_path) == real);
	CHECK(!engine_recorded_frozen());
	dockerd_end();
	kernel_end();
}

int main(void)
{
	vmc_log_init("agent_engine");
	vmc_log_set_level(VMC_LOG_ERROR);
	fakeroot_init();
	agent_config_defaults(&cfg);
	RUN(cgroup_events_values_are_read_at_line_start);
	RUN(processes_are_classified_by_name);
	RUN(a_guard_is_known_by_its_arguments_not_its_name);
	RUN(openrc_dockerd_with_its_own_containerd_is_one_cgroup);
	RUN(systemd_dockerd_on_a_standalone_containerd_is_both_services);
	RUN(no_engine_and_a_missing_configured_cgroup_are_named);
	RUN(a_running_container_refuses_the_freeze);
	RUN(a_shim_refuses_the_freeze);
	RUN(processes_that_are_not_the_engine_are_named_and_refuse_the_freeze);
	RUN(the_agent_itself_and_the_lima_agent_are_never_frozen_by_default);
	RUN(no_freezer_is_a_refusal);
	RUN(freeze_waits_for_frozen_1_and_thaw_undoes_it);
	RUN(a_freeze_that_never_completes_times_out_and_thaws);
	RUN(a_freeze_left_by_a_killed_agent_is_undone_at_start);
	RUN(the_engine_prints_each_state_and_refusal);
	engine_set_guard_hooks(&thread_hooks);
	RUN(a_docker_sock_the_guard_cannot_hold_refuses_the_freeze);
	RUN(a_client_on_docker_sock_while_frozen_thaws_the_engine_and_is_answered);
	RUN(a_thaw_from_the_api_lets_the_guard_go_and_puts_the_socket_back);
	RUN(a_guard_stopped_while_the_freeze_is_recorded_thaws_the_engine);
	RUN(two_hundred_freeze_thaw_cycles_under_a_client_loop_lose_no_request);
	printf("guards started: %d\n", (int)guards_started);
	fakeroot_cleanup();
	return check_done();
}
