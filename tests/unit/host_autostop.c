/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost autostop end to end on this machine, with no VM: the daemon (host/autostop/) runs in
 * a child process against a fake docker.sock and a fake limactl. This same program is the fake
 * dockerd (--fake-dockerd SOCK DIR): it answers GET and HEAD /_ping, /version, /info,
 * /containers/json (the running ones from DIR/containers.json, all=1 from DIR/all.json), a
 * container's inspect, /images/json, /volumes, /networks and /system/df with dockerd 24's
 * headers, records a POST /containers/create byte for byte (DIR/posted.txt), holds /events
 * open, echoes "ECHO" connections byte for byte, and records what a "HALF" connection sends
 * after it shut its own write half. The fake limactl starts and stops it and answers
 * `list --json` from whether it runs. A fake vmcost-agent freezes and thaws it: while
 * DIR/frozen exists the fake dockerd answers nothing, as a frozen one would; both log what they
 * were asked to DIR/order, in order.
 *
 * Waits poll with generous deadlines; nothing here measures time.
 */
#include "autostop/daemon.h"
#include "autostop/snapshot.h"
#include "autostop/status.h"
#include "check.h"
#include "commands/commands.h"
#include "fake_daemon.h"
#include "host_testlib.h"
#include "log.h"

#include <limits.h>
#include <llhttp.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

static char t_self[PATH_MAX]; /* this test program, the fake dockerd */
static char t_inst[256];      /* $LIMA_HOME/dev */
static char t_state[256];     /* the fakes' shared directory */
static char t_docker[320];    /* $LIMA_HOME/dev/sock/docker.sock */
static char t_listen[320];    /* $LIMA_HOME/dev/sock/docker-autostop.sock */
static char t_log[320];	      /* the daemon's stdout and stderr */
static pid_t t_daemon_pid;

/* sun_path for path; false when it does not fit (the caller's paths always do). */
static bool t_sockaddr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	size_t len = strlen(path);
	if (len >= sizeof sa->sun_path)
		return false;
	memcpy(sa->sun_path, path, len + 1);
	return true;
}

/* ---- the fake dockerd --------------------------------------------------------------------- */

static void dockerd_write(int fd, const char *s, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, s, len);
		if (w <= 0)
			return;
		s += w;
		len -= (size_t)w;
	}
}

static void dockerd_puts(int fd, const char *s)
{
	dockerd_write(fd, s, strlen(s));
}

/* Reads the first line; for HTTP, the rest of the header too (so closing sends FIN, not RST). */
static size_t dockerd_read_head(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, 1);
		if (r <= 0)
			break;
		n++;
		buf[n] = '\0';
		if (n >= 4 && strncmp(buf, "ECHO", 4) != 0 && strncmp(buf, "HALF", 4) != 0 &&
		    strcmp(buf + n - 4, "\r\n\r\n") == 0)
			break;
		if ((strncmp(buf, "ECHO", 4) == 0 || strncmp(buf, "HALF", 4) == 0) &&
		    buf[n - 1] == '\n')
			break;
	}
	buf[n] = '\0';
	return n;
}

/* dockerd 24's headers; HEAD gets them without the body. */
static void dockerd_answer(int fd, const char *status, const char *type, const char *body,
			   bool head)
{
	char text[1024];
	snprintf(text, sizeof text,
		 "HTTP/1.1 %s\r\nApi-Version: 1.43\r\nContent-Type: %s\r\n"
		 "Docker-Experimental: false\r\nOstype: linux\r\nServer: Docker/24.0.7 (linux)\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		 status, type, head ? 0 : strlen(body));
	dockerd_puts(fd, text);
	if (!head)
		dockerd_puts(fd, body);
}

static void dockerd_reply(int fd, const char *status, const char *body)
{
	dockerd_answer(fd, status, "application/json", body, false);
}

/* DIR/NAME, or fallback when there is none. */
static void dockerd_reply_file(int fd, const char *dir, const char *name, const char *fallback)
{
	char path[400];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	size_t len;
	char *text = fake_read_file(path, &len);
	dockerd_reply(fd, "200 OK", text ? text : fallback);
	free(text);
}

/* The request's path without a /vX.Y prefix. */
static const char *dockerd_path(const char *target)
{
	if (target[0] == '/' && target[1] == 'v' && target[2] >= '0' && target[2] <= '9') {
		const char *slash = strchr(target + 1, '/');
		if (slash)
			return slash;
	}
	return target;
}

/* Whatever else the client sent (a request body), until it goes quiet for 200 ms. */
static size_t dockerd_drain(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	while (n < cap && poll(&p, 1, 200) > 0) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	return n;
}

/* A container's inspect: stopped an hour ago with exit code 0. */
static void dockerd_inspect(int fd, const char *path)
{
	char id[80] = "";
	sscanf(path, "/containers/%79[^/]", id);
	time_t finished = time(NULL) - 3600 - 30;
	struct tm tm;
	gmtime_r(&finished, &tm);
	char when[40], body[512];
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S.123456789Z", &tm);
	snprintf(body, sizeof body,
		 "{\"Id\":\"%s\",\"State\":{\"Status\":\"exited\",\"Running\":false,"
		 "\"ExitCode\":0,\"FinishedAt\":\"%s\"}}",
		 id, when);
	dockerd_reply(fd, "200 OK", body);
}

/* One line appended to DIR/NAME (O_APPEND: lines of several processes stay whole). */
static void t_append(const char *dir, const char *name, const char *line)
{
	char path[400], text[300];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int n = snprintf(text, sizeof text, "%s\n", line);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) {
		dockerd_write(fd, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
		close(fd);
	}
}

/* A frozen dockerd reads and answers nothing until it is thawed (at most a minute here). */
static void dockerd_wait_thawed(const char *dir)
{
	char path[400];
	snprintf(path, sizeof path, "%s/frozen", dir);
	for (int i = 0; i < 6000 && access(path, F_OK) == 0; i++)
		usleep(10000);
}

static void dockerd_serve(int fd, const char *dir)
{
	char head[8192];
	dockerd_read_head(fd, head, sizeof head);
	dockerd_wait_thawed(dir);
	if (strncmp(head, "GET ", 4) == 0 || strncmp(head, "POST ", 5) == 0) {
		char line[200];
		snprintf(line, sizeof line, "dockerd %.*s", (int)strcspn(head, "\r"), head);
		t_append(dir, "order", line);
	}
	char buf[65536];
	ssize_t r;
	if (strncmp(head, "ECHO", 4) == 0) {
		while ((r = read(fd, buf, sizeof buf)) > 0)
			dockerd_write(fd, buf, (size_t)r);
		dockerd_puts(fd, "EOF\n");
		shutdown(fd, SHUT_WR);
	} else if (strncmp(head, "HALF", 4) == 0) {
		dockerd_puts(fd, "bye\n");
		shutdown(fd, SHUT_WR);
		char path[400];
		snprintf(path, sizeof path, "%s/half.txt", dir);
		FILE *f = fopen(path, "w");
		while ((r = read(fd, buf, sizeof buf)) > 0 && f)
			fwrite(buf, 1, (size_t)r, f);
		if (f)
			fclose(f);
	}
	char method[16] = "", target[1024] = "";
	sscanf(head, "%15s %1023s", method, target);
	const char *path = dockerd_path(target);
	size_t plen = strcspn(path, "?");
	bool get = strcmp(method, "GET") == 0, is_head = strcmp(method, "HEAD") == 0;
#define PATH_IS(p) (plen == strlen(p) && strncmp(path, (p), plen) == 0)
	if (strncmp(head, "ECHO", 4) == 0 || strncmp(head, "HALF", 4) == 0) {
		/* served above */
	} else if ((get || is_head) && PATH_IS("/_ping")) {
		dockerd_answer(fd, "200 OK", "text/plain; charset=utf-8", "OK", is_head);
	} else if (get && PATH_IS("/containers/json")) {
		bool all = strstr(path, "all=1") != NULL;
		dockerd_reply_file(fd, dir, all ? "all.json" : "containers.json", "[]");
	} else if (get && strncmp(path, "/containers/", 12) == 0 && plen > 17 &&
		   strncmp(path + plen - 5, "/json", 5) == 0) {
		dockerd_inspect(fd, path);
	} else if (get && PATH_IS("/version")) {
		dockerd_reply(fd, "200 OK",
			      "{\"Platform\":{\"Name\":\"\"},\"Version\":\"24.0.7\","
			      "\"ApiVersion\":\"1.43\",\"MinAPIVersion\":\"1.12\","
			      "\"GitCommit\":\"311b9ff\",\"GoVersion\":\"go1.20.10\","
			      "\"Os\":\"linux\",\"Arch\":\"amd64\","
			      "\"KernelVersion\":\"6.1.0\",\"BuildTime\":"
			      "\"2023-10-26T09:08:02.000000000+00:00\"}");
	} else if (get && PATH_IS("/info")) {
		dockerd_reply(fd, "200 OK",
			      "{\"ID\":\"fake\",\"Containers\":1,\"ContainersRunning\":0,"
			      "\"ServerVersion\":\"24.0.7\"}");
	} else if (get && PATH_IS("/images/json")) {
		dockerd_reply(fd, "200 OK",
			      "[{\"Id\":\"sha256:1234567890ab1234567890ab\",\"ParentId\":\"\","
			      "\"RepoTags\":[\"alpine:latest\"],\"RepoDigests\":[],"
			      "\"Created\":1767300000,\"Size\":7800000,\"SharedSize\":-1,"
			      "\"Labels\":null,\"Containers\":-1}]");
	} else if (get && PATH_IS("/volumes")) {
		dockerd_reply(fd, "200 OK", "{\"Volumes\":[],\"Warnings\":null}");
	} else if (get && PATH_IS("/networks")) {
		dockerd_reply(fd, "200 OK", "[{\"Name\":\"bridge\",\"Driver\":\"bridge\"}]");
	} else if (get && PATH_IS("/system/df")) {
		dockerd_reply(fd, "200 OK", "{\"LayersSize\":7800000,\"Images\":[]}");
	} else if (strcmp(method, "POST") == 0 && PATH_IS("/containers/create")) {
		size_t n = strlen(head);
		n += dockerd_drain(fd, head + n, sizeof head - 1 - n);
		char posted[400];
		snprintf(posted, sizeof posted, "%s/posted.txt", dir);
		FILE *f = fopen(posted, "wb");
		if (f) {
			fwrite(head, 1, n, f);
			fclose(f);
		}
		dockerd_reply(fd, "201 Created", "{\"Id\":\"cccc3333\",\"Warnings\":[]}");
	} else if (strncmp(head, "GET /events", 11) == 0) {
		dockerd_puts(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n");
		while (read(fd, buf, sizeof buf) > 0)
			;
	} else {
		dockerd_reply(fd, "400 Bad Request", "{\"message\":\"page not found\"}");
	}
#undef PATH_IS
	close(fd);
}

static int fake_dockerd(const char *sock, const char *dir)
{
	setpgid(0, 0); /* the fake limactl stops the whole group, connections included */
	signal(SIGCHLD, SIG_IGN);
	unlink(sock);
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa;
	if (!t_sockaddr(sock, &sa) || bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    listen(lfd, 128) < 0) {
		perror(sock);
		return 1;
	}
	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		if (fork() == 0) {
			close(lfd);
			dockerd_serve(fd, dir);
			_exit(0);
		}
		close(fd);
	}
}

/* ---- the environment ---------------------------------------------------------------------- */

static const char fake_limactl[] =
    "#!/bin/sh\n"
    "PATH=/usr/bin:/bin\n"
    "S='%s'\n"
    "echo \"$*\" >>\"$S/calls\"\n"
    "cmd=$1\n"
    "alive() { [ -f \"$S/dockerd.pid\" ] && kill -0 \"$(cat \"$S/dockerd.pid\")\" 2>/dev/null; }\n"
    "case $cmd in\n"
    "list) st=Stopped; alive && st=Running\n"
    "  printf '{\"name\":\"dev\",\"status\":\"%%s\",\"dir\":\"%s\",\"vmType\":\"qemu\"}\\n' $st "
    ";;\n"
    "start) if [ -f \"$S/start-fails\" ]; then echo 'level=fatal msg=\"fake start failed\"' >&2;"
    " exit 1; fi\n"
    "  alive && exit 0\n"
    "  sleep \"$(cat \"$S/start-delay\" 2>/dev/null || echo 0.3)\"\n"
    "  '%s' --fake-dockerd '%s' \"$S\" </dev/null &\n"
    "  echo $! >\"$S/dockerd.pid\"\n"
    "  echo $! >>\"$S/every-dockerd.pid\"\n"
    "  echo 'level=info msg=\"READY\"' >&2 ;;\n"
    "stop) alive || { echo 'level=fatal msg=\"not running\"' >&2; exit 1; }\n"
    "  kill -TERM -\"$(cat \"$S/dockerd.pid\")\"; rm -f \"$S/dockerd.pid\" '%s' ;;\n"
    "*) echo \"fake limactl: $cmd?\" >&2; exit 2 ;;\n"
    "esac\n";

static bool t_file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static void t_env(void)
{
	t_setup("autostop");
	snprintf(t_inst, sizeof t_inst, "%s/lima/dev", t_root);
	snprintf(t_state, sizeof t_state, "%s/state", t_root);
	snprintf(t_docker, sizeof t_docker, "%s/sock/docker.sock", t_inst);
	snprintf(t_listen, sizeof t_listen, "%s/sock/%s", t_inst, AUTOSTOP_SOCKET_NAME);
	snprintf(t_log, sizeof t_log, "%s/daemon.log", t_root);
	t_write("vmType: qemu\n", "lima/dev/lima.yaml");
	t_write("", "lima/dev/sock/.keep");
	t_write("", "state/.keep");
	char script[16384];
	snprintf(script, sizeof script, fake_limactl, t_state, t_inst, t_self, t_docker, t_docker);
	t_write(script, "bin/limactl");
	t_chmod("bin/limactl", 0755);
}

static double t_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Polls cond every 20 ms for up to seconds. */
#define WAIT_UNTIL(cond, seconds)                                                                  \
	({                                                                                         \
		double end_ = t_now() + (seconds);                                                 \
		bool ok_;                                                                          \
		while (!(ok_ = (cond)) && t_now() < end_)                                          \
			usleep(20000);                                                             \
		ok_;                                                                               \
	})

static char *t_slurp(const char *path)
{
	size_t len;
	char *s = fake_read_file(path, &len);
	return s ? s : calloc(1, 1);
}

static bool t_file_has(const char *path, const char *needle)
{
	char *s = t_slurp(path);
	bool found = strstr(s, needle) != NULL;
	free(s);
	return found;
}

static bool t_log_has(const char *needle)
{
	return t_file_has(t_log, needle);
}

/* Open client connections as the daemon counts them (-1 when it did not answer). */
static long t_clients(void)
{
	json_t *doc = NULL;
	char err[512];
	long n = -1;
	if (autostop_status_fetch(t_inst, &doc, err, sizeof err) == 0)
		n = (long)json_integer_value(json_object_get(doc, "clients"));
	json_decref(doc);
	return n;
}

/* The daemon's state as its status socket tells it, into buf ("" when it did not answer). */
static const char *t_status_state(char *buf, size_t size)
{
	json_t *doc = NULL;
	char err[512];
	buf[0] = '\0';
	if (autostop_status_fetch(t_inst, &doc, err, sizeof err) == 0)
		snprintf(buf, size, "%s", json_string_value(json_object_get(doc, "state")));
	json_decref(doc);
	return buf;
}

/* Lines of the fakes' call log that start with verb ("start", "stop"). */
static int t_calls(const char *verb)
{
	char path[400];
	snprintf(path, sizeof path, "%s/calls", t_state);
	char *s = t_slurp(path);
	int n = 0;
	size_t len = strlen(verb);
	for (char *line = s; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		n += strncmp(line, verb, len) == 0 && line[len] == ' ';
	free(s);
	return n;
}

static pid_t t_dockerd_pid(void)
{
	char path[400];
	snprintf(path, sizeof path, "%s/dockerd.pid", t_state);
	char *s = t_slurp(path);
	pid_t p = (pid_t)atoi(s);
	free(s);
	return p;
}

static bool t_dockerd_alive(void)
{
	pid_t p = t_dockerd_pid();
	return p > 0 && kill(p, 0) == 0;
}

/* The VM "runs": the fake limactl starts the fake dockerd, as a start by hand would. */
static void t_vm_up(void)
{
	CHECK_INT(system("limactl start --tty=false dev >/dev/null 2>&1"), 0);
	CHECK(WAIT_UNTIL(t_file_exists(t_docker), 10));
}

static void t_vm_kill(void)
{
	pid_t p = t_dockerd_pid();
	if (p <= 0)
		return;
	kill(-p, SIGKILL);
	WAIT_UNTIL(kill(p, 0) != 0, 5);
}

/* Every fake dockerd this test started is gone (a test must not leave processes behind). */
static void t_kill_every_vm(void)
{
	char path[400];
	snprintf(path, sizeof path, "%s/every-dockerd.pid", t_state);
	char *s = t_slurp(path);
	for (char *line = s; line && *line;) {
		pid_t p = (pid_t)atoi(line);
		if (p > 0 && kill(-p, SIGKILL) == 0)
			WAIT_UNTIL(kill(p, 0) != 0, 5);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	free(s);
}

/* ---- the fake vmcost-agent ----------------------------------------------------------------- */

static pid_t t_agent_pid;

/*
 * Serves sock/vmcost-agent.sock (or another path) until killed: GET /v1/status answers 200,
 * POST /v1/engine/freeze is answered with the next
 * status of state/freeze-answers (one a line, used up in order; 200 once none is left), and a 200
 * creates state/frozen; POST /v1/engine/thaw removes it and answers 200. Each is appended to
 * state/order ("agent freeze 200", "agent thaw").
 */
static void t_fake_agent_at(const char *path)
{
	int lfd = t_listen_unix(path);
	pid_t pid = fork();
	if (pid != 0) {
		close(lfd);
		t_agent_pid = pid;
		return;
	}
	int answered = 0;
	for (;;) {
		int c = accept(lfd, NULL, NULL);
		if (c < 0)
			_exit(1);
		char req[4096], body[200], frozen[400], line[64];
		t_read_request(c, req, sizeof req);
		snprintf(frozen, sizeof frozen, "%s/frozen", t_state);
		const char *status = "200 OK";
		if (strncmp(req, "POST /v1/engine/freeze ", 23) == 0) {
			char answers[400];
			snprintf(answers, sizeof answers, "%s/freeze-answers", t_state);
			char *list = t_slurp(answers);
			int skip = answered++;
			char *at = list;
			while (skip-- > 0 && at && *at)
				at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL;
			if (at && *at == '5')
				status = "503 Service Unavailable";
			else if (at && *at == '4')
				status = "409 Conflict";
			free(list);
			snprintf(line, sizeof line, "agent freeze %.3s", status);
			t_append(t_state, "order", line);
			if (status[0] == '2') {
				t_write("", "state/frozen");
				snprintf(body, sizeof body, "{\"state\":\"frozen\"}");
			} else if (status[0] == '5') {
				snprintf(
				    body, sizeof body,
				    "{\"error\":\"the agent is busy: 16 requests running; retry "
				    "in a second\"}");
			} else {
				snprintf(body, sizeof body,
					 "{\"error\":\"container abc is running\"}");
			}
		} else if (strncmp(req, "GET /v1/status ", 15) == 0) {
			snprintf(body, sizeof body, "{\"engine\":{\"state\":\"running\"}}");
		} else if (strncmp(req, "POST /v1/engine/thaw ", 21) == 0) {
			t_append(t_state, "order", "agent thaw");
			unlink(frozen);
			snprintf(body, sizeof body,
				 "{\"state\":\"running\",\"action\":\"thawed\"}");
		} else {
			status = "404 Not Found";
			snprintf(body, sizeof body, "{\"error\":\"no such route\"}");
		}
		char head[300];
		snprintf(head, sizeof head,
			 "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: "
			 "%zu\r\nConnection: close\r\n\r\n",
			 status, strlen(body));
		if (write(c, head, strlen(head)) < 0 || write(c, body, strlen(body)) < 0)
			_exit(1);
		close(c);
	}
}

static void t_fake_agent(void)
{
	char path[400];
	snprintf(path, sizeof path, "%s/sock/vmcost-agent.sock", t_inst);
	t_fake_agent_at(path);
}

static void t_fake_agent_stop(void)
{
	if (t_agent_pid > 0) {
		kill(t_agent_pid, SIGKILL);
		waitpid(t_agent_pid, NULL, 0);
	}
	t_agent_pid = 0;
}

/* The lines of state/order from the first one that starts with from ("" when none does). */
static char *t_order_from(const char *from)
{
	char path[400];
	snprintf(path, sizeof path, "%s/order", t_state);
	char *s = t_slurp(path);
	char *at = s;
	while (at && *at && strncmp(at, from, strlen(from)) != 0)
		at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL;
	char *out = strdup(at ? at : "");
	free(s);
	return out;
}

/* A number from the daemon's status document (-1 when it did not answer). */
static double t_status_number(const char *key)
{
	json_t *doc = NULL;
	char err[512];
	double v = -1;
	if (autostop_status_fetch(t_inst, &doc, err, sizeof err) == 0)
		v = json_number_value(json_object_get(doc, key));
	json_decref(doc);
	return v;
}

static const char *t_status_string(const char *key, char *buf, size_t size)
{
	json_t *doc = NULL;
	char err[512];
	buf[0] = '\0';
	if (autostop_status_fetch(t_inst, &doc, err, sizeof err) == 0)
		snprintf(buf, size, "%s", json_string_value(json_object_get(doc, key)));
	json_decref(doc);
	return buf;
}

/* ---- the daemon in a child process ---------------------------------------------------------- */

static void t_daemon_config(struct autostop_config *cfg, double idle, const char *listen)
{
	memset(cfg, 0, sizeof *cfg);
	snprintf(cfg->instance, sizeof cfg->instance, "dev");
	snprintf(cfg->instance_dir, sizeof cfg->instance_dir, "%s", t_inst);
	snprintf(cfg->upstream, sizeof cfg->upstream, "%s", t_docker);
	snprintf(cfg->listen, sizeof cfg->listen, "%s", listen ? listen : t_listen);
	snprintf(cfg->status, sizeof cfg->status, "%s/sock/%s", t_inst,
		 AUTOSTOP_STATUS_SOCKET_NAME);
	cfg->idle_s = idle;
	cfg->start_timeout_s = 20;
	cfg->stop_timeout_s = 20;
	cfg->listen_fd = -1;
	cfg->instance_running = t_dockerd_alive();
}

static pid_t t_daemon_cfg(const struct autostop_config *cfg)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(t_log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
		vmc_log_init("vmcost");
		char err[1024];
		int rc = autostop_daemon_run(cfg, err, sizeof err);
		if (rc != 0)
			fprintf(stderr, "vmcost: error: %s\n", err);
		exit(rc);
	}
	t_daemon_pid = pid;
	return pid;
}

/* Starts the daemon and waits until it listens (its status socket comes last). */
static void t_daemon(double idle)
{
	struct autostop_config cfg;
	t_daemon_config(&cfg, idle, NULL);
	t_daemon_pid = t_daemon_cfg(&cfg);
	CHECK(WAIT_UNTIL(t_log_has("listening on"), 10));
	CHECK(WAIT_UNTIL(t_file_exists(cfg.status), 10));
}

/* Exit status of a child, or -1 when it did not exit within seconds. */
static int t_wait_exit(pid_t pid, double seconds)
{
	int status = 0;
	if (!WAIT_UNTIL(waitpid(pid, &status, WNOHANG) == pid, seconds))
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* SIGTERM, and the daemon must exit 0: no sanitizer report, no leak. */
static void t_daemon_stop(void)
{
	kill(t_daemon_pid, SIGTERM);
	int rc = t_wait_exit(t_daemon_pid, 15);
	CHECK_INT(rc, 0);
	if (rc != 0) {
		char *s = t_slurp(t_log);
		fprintf(stderr, "---- daemon log\n%s----\n", s);
		free(s);
		if (rc < 0) {
			kill(t_daemon_pid, SIGKILL);
			waitpid(t_daemon_pid, NULL, 0);
		}
	}
}

static void t_teardown(void)
{
	if (getenv("AUTOSTOP_TEST_SHOW_LOG")) {
		char *s = t_slurp(t_log);
		printf("---- %s: daemon log\n%s----\n", check_current, s);
		free(s);
	}
	t_fake_agent_stop();
	t_vm_kill();
	t_kill_every_vm();
	t_cleanup();
}

/* The daemon with deep idle: idle period idle, the engine frozen after freeze_after. */
static void t_daemon_freezing(double idle, double freeze_after)
{
	struct autostop_config cfg;
	t_daemon_config(&cfg, idle, NULL);
	cfg.freeze_after_s = freeze_after;
	t_daemon_pid = t_daemon_cfg(&cfg);
	CHECK(WAIT_UNTIL(t_log_has("listening on"), 10));
	CHECK(WAIT_UNTIL(t_file_exists(cfg.status), 10));
}

/* ---- clients ------------------------------------------------------------------------------ */

static int t_connect(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa;
	if (!t_sockaddr(path, &sa) || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool t_send(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w <= 0)
			return false;
		p += w;
		len -= (size_t)w;
	}
	return true;
}

/* Reads until EOF or an error; -2 if nothing ended within timeout_ms. */
static ssize_t t_read_to_eof(int fd, char *buf, size_t cap, int timeout_ms)
{
	size_t n = 0;
	double end = t_now() + timeout_ms / 1000.0;
	for (;;) {
		int left = (int)((end - t_now()) * 1000);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (left <= 0 || poll(&p, 1, left) <= 0)
			return -2;
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r <= 0) {
			buf[n] = '\0';
			return r < 0 && n == 0 ? -1 : (ssize_t)n;
		}
		n += (size_t)r;
		if (n + 1 >= cap) {
			buf[n] = '\0';
			return (ssize_t)n;
		}
	}
}

static const char ping_request[] = "GET /_ping HTTP/1.1\r\nHost: docker\r\n\r\n";
/* Not a poll: while the engine is frozen, the snapshot does not answer it. */
static const char inspect_request[] =
    "GET /containers/aaaa1111/json HTTP/1.1\r\nHost: docker\r\n\r\n";

/* One request through the relay; the answer (NUL-terminated) in buf, or false. */
static bool t_request(const char *request, char *buf, size_t cap, int timeout_ms)
{
	buf[0] = '\0';
	int fd = t_connect(t_listen);
	if (fd < 0)
		return false;
	bool ok =
	    t_send(fd, request, strlen(request)) && t_read_to_eof(fd, buf, cap, timeout_ms) > 0;
	close(fd);
	return ok;
}

/*
 * Sends len bytes and reads what comes back at the same time (the echo would fill both
 * socket buffers otherwise), half-closing after the last byte.
 */
static size_t t_pump(int fd, const char *out, size_t len, char *in, size_t cap)
{
	size_t sent = 0, got = 0;
	bool shut = false;
	double end = t_now() + 60;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN | (shut ? 0 : POLLOUT)};
		if (poll(&p, 1, 1000) < 0 || t_now() > end)
			break;
		if ((p.revents & POLLOUT) && !shut) {
			size_t piece = len - sent < 65536 ? len - sent : 65536;
			ssize_t w = send(fd, out + sent, piece, MSG_DONTWAIT);
			if (w > 0)
				sent += (size_t)w;
			if (sent == len) {
				shutdown(fd, SHUT_WR);
				shut = true;
			}
		}
		if (p.revents & (POLLIN | POLLHUP)) {
			ssize_t r = recv(fd, in + got, cap - got, MSG_DONTWAIT);
			if (r == 0)
				break;
			if (r > 0)
				got += (size_t)r;
		}
	}
	return got;
}

static int t_response_done(llhttp_t *p)
{
	*(bool *)p->data = true;
	return HPE_PAUSED;
}

static int t_no_body(llhttp_t *p)
{
	(void)p;
	return 1; /* the answer to HEAD */
}

/*
 * Reads one whole response on a kept-alive connection (llhttp tells where it ends) into buf,
 * NUL-terminated. Returns its length, or -1 when none ended within timeout_ms.
 */
static ssize_t t_read_response(int fd, char *buf, size_t cap, bool head, int timeout_ms)
{
	llhttp_settings_t settings;
	llhttp_settings_init(&settings);
	settings.on_message_complete = t_response_done;
	if (head)
		settings.on_headers_complete = t_no_body;
	llhttp_t parser;
	llhttp_init(&parser, HTTP_RESPONSE, &settings);
	bool done = false;
	parser.data = &done;
	size_t n = 0;
	double end = t_now() + timeout_ms / 1000.0;
	buf[0] = '\0';
	while (!done) {
		int left = (int)((end - t_now()) * 1000);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (left <= 0 || poll(&p, 1, left) <= 0 || n + 1 >= cap)
			return -1;
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r <= 0) {
			if (llhttp_finish(&parser) != HPE_OK || !done)
				return -1;
			break;
		}
		llhttp_errno_t e = llhttp_execute(&parser, buf + n, (size_t)r);
		n += (size_t)r;
		buf[n] = '\0';
		if (e != HPE_OK && e != HPE_PAUSED)
			return -1;
	}
	return (ssize_t)n;
}

/* One request on a kept-alive connection and its answer, timed. */
static ssize_t t_exchange(int fd, const char *request, char *buf, size_t cap, double *took)
{
	double t0 = t_now();
	bool head = strncmp(request, "HEAD ", 5) == 0;
	ssize_t n =
	    t_send(fd, request, strlen(request)) ? t_read_response(fd, buf, cap, head, 15000) : -1;
	*took = t_now() - t0;
	return n;
}

/* ---- tests -------------------------------------------------------------------------------- */

TEST(relays_bytes_exactly_both_ways)
{
	t_env();
	t_vm_up();
	t_daemon(60);
	size_t len = 3u << 20;
	char *out = malloc(len + 5), *in = malloc(len + 64);
	memcpy(out, "ECHO\n", 5);
	for (size_t i = 0; i < len; i++)
		out[5 + i] = (char)(i * 7 + i / 4096);
	int fd = t_connect(t_listen);
	CHECK(fd >= 0);
	size_t got = t_pump(fd, out, len + 5, in, len + 64);
	close(fd);
	/* Every byte back in order, then the upstream's EOF marker: it saw our half-close. */
	CHECK_U64(got, len + 4);
	CHECK(got >= len && memcmp(in, out + 5, len) == 0);
	CHECK(got == len + 4 && memcmp(in + len, "EOF\n", 4) == 0);
	free(out);
	free(in);
	t_daemon_stop();
	t_teardown();
}

TEST(half_close_from_docker_keeps_the_client_half_open)
{
	t_env();
	t_vm_up();
	t_daemon(60);
	int fd = t_connect(t_listen);
	CHECK(t_send(fd, "HALF\n", 5));
	char buf[64];
	ssize_t n = t_read_to_eof(fd, buf, sizeof buf, 5000);
	CHECK_INT(n, 4);
	CHECK_STR(buf, "bye\n");
	/* Docker has shut its write half; ours still reaches it. */
	CHECK(t_send(fd, "after-eof\n", 10));
	shutdown(fd, SHUT_WR);
	char path[400];
	snprintf(path, sizeof path, "%s/half.txt", t_state);
	CHECK(WAIT_UNTIL(t_file_has(path, "after-eof"), 5));
	close(fd);
	t_daemon_stop();
	t_teardown();
}

TEST(the_first_client_starts_a_stopped_vm)
{
	t_env();
	t_daemon(60);
	CHECK(t_log_has("dev is stopped: the first client will start it"));
	char buf[4096];
	CHECK(t_request(ping_request, buf, sizeof buf, 15000));
	CHECK_CONTAINS(buf, "HTTP/1.1 200 OK");
	CHECK_CONTAINS(buf, "\r\n\r\nOK");
	CHECK_INT(t_calls("start"), 1);
	/* limactl waits as long as the held clients do (the test's --start-timeout is 20 s). */
	char calls[400];
	snprintf(calls, sizeof calls, "%s/calls", t_state);
	CHECK(t_file_has(calls, "start --tty=false --timeout=20s dev"));
	CHECK(t_log_has("starting dev: a client is waiting and dev is stopped"));
	CHECK(t_log_has("dev answers /_ping"));
	CHECK(t_log_has("relaying 1 held client"));
	char state[64];
	CHECK(WAIT_UNTIL(strcmp(t_status_state(state, sizeof state), "running") == 0, 10));
	json_t *doc = NULL;
	char err[512];
	CHECK_INT(autostop_status_fetch(t_inst, &doc, err, sizeof err), 0);
	CHECK(json_is_number(json_object_get(doc, "last_start_s")));
	json_decref(doc);
	t_daemon_stop();
	t_teardown();
}

TEST(ten_clients_at_once_cause_one_start)
{
	t_env();
	t_daemon(60);
	int fds[10];
	for (int i = 0; i < 10; i++) {
		fds[i] = t_connect(t_listen);
		CHECK(fds[i] >= 0 && t_send(fds[i], ping_request, strlen(ping_request)));
	}
	int answered = 0;
	for (int i = 0; i < 10; i++) {
		char buf[1024];
		answered += t_read_to_eof(fds[i], buf, sizeof buf, 15000) > 0 &&
			    strstr(buf, "200 OK") != NULL;
		close(fds[i]);
	}
	CHECK_INT(answered, 10);
	CHECK_INT(t_calls("start"), 1);
	t_daemon_stop();
	t_teardown();
}

TEST(idle_with_nothing_running_stops_and_a_client_starts_it_again)
{
	t_env();
	t_vm_up();
	int starts_by_hand = t_calls("start");
	pid_t vm = t_dockerd_pid();
	t_daemon(1);
	CHECK(WAIT_UNTIL(t_calls("stop") == 1, 15));
	CHECK(WAIT_UNTIL(kill(vm, 0) != 0, 10)); /* limactl stop really stopped it */
	CHECK(WAIT_UNTIL(t_log_has("stopped dev in"), 15));
	CHECK(t_log_has("dev is idle: no client at work, no running container; it stops in 1.0 s"));
	CHECK(t_log_has("stopping dev: no client at work and no running container for 1.0 s"));
	CHECK(!t_dockerd_alive());
	json_t *doc = NULL;
	char err[512];
	CHECK_INT(autostop_status_fetch(t_inst, &doc, err, sizeof err), 0);
	CHECK_STR(json_string_value(json_object_get(doc, "state")), "stopped by autostop");
	CHECK(json_is_integer(json_object_get(doc, "last_stop_ram_freed")));
	char cell[64];
	autostop_status_cell(doc, cell, sizeof cell);
	CHECK(strncmp(cell, "stopped, freed", 14) == 0);
	json_decref(doc);
	char buf[1024];
	/* Not a poll (an inspect): the snapshot does not answer it, the VM starts. */
	CHECK(t_request("GET /containers/abc/json HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
			buf, sizeof buf, 15000));
	CHECK_CONTAINS(buf, "HTTP/1.1 200 OK");
	CHECK(strstr(buf, SNAPSHOT_HEADER) == NULL);
	CHECK_INT(t_calls("start") - starts_by_hand, 1);
	CHECK(t_log_has("starting dev: the snapshot does not answer GET /containers/abc/json (not "
			"a poll); limactl start dev"));
	t_daemon_stop();
	t_teardown();
}

/* The snapshot's file in the instance directory ("" when there is none). */
static char *t_snapshot_file(void)
{
	char path[400];
	snprintf(path, sizeof path, "%s/%s", t_inst, SNAPSHOT_FILE_NAME);
	return t_slurp(path);
}

/* "X-Vmcost-Snapshot: <taken>" as the snapshot file says when it was taken. */
static void t_marker(char *buf, size_t size)
{
	char *text = t_snapshot_file();
	json_t *doc = json_loads(text, 0, NULL);
	snprintf(buf, size, "\r\n%s: %s\r\n", SNAPSHOT_HEADER,
		 json_is_string(json_object_get(doc, "taken"))
		     ? json_string_value(json_object_get(doc, "taken"))
		     : "(none)");
	json_decref(doc);
	free(text);
}

/* dev up with a stopped container pg, a client that used API 1.41, then idle: stopped. */
static void t_stopped_by_autostop(double idle)
{
	t_write("[{\"Id\":\"aaaa1111\",\"Names\":[\"/pg\"],\"Image\":\"postgres:16\","
		"\"Command\":\"postgres\",\"Created\":1767300000,\"Ports\":[],\"Labels\":{},"
		"\"State\":\"exited\",\"Status\":\"Exited (0) 10 minutes ago\"}]",
		"state/all.json");
	t_vm_up();
	t_daemon(idle);
	char buf[4096];
	CHECK(t_request("GET /v1.41/version HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n", buf,
			sizeof buf, 5000));
	CHECK(WAIT_UNTIL(t_log_has("stopped dev in"), 20));
	CHECK(t_log_has("polls are answered from the snapshot of"));
	CHECK(!t_dockerd_alive());
}

/* issue 22: an IDE's view and `docker ps -a` are answered while dev is stopped, and the first
 * request that needs Docker starts it and gets through unchanged. */
TEST(polls_while_stopped_are_answered_from_the_snapshot)
{
	t_env();
	t_stopped_by_autostop(1);
	int starts = t_calls("start");
	char marker[128];
	t_marker(marker, sizeof marker);
	CHECK(strstr(marker, "(none)") == NULL);
	/* One kept-alive connection: polls as the docker CLI sends them, then a create. */
	int fd = t_connect(t_listen);
	CHECK(fd >= 0);
	static const struct {
		const char *request, *want;
	} polls[] = {
	    {"HEAD /_ping HTTP/1.1\r\nHost: api.moby.localhost\r\n\r\n",
	     "\r\nApi-Version: 1.43\r\nContent-Length: 0\r\n"},
	    {"GET /_ping HTTP/1.1\r\nHost: api.moby.localhost\r\n\r\n", "\r\n\r\nOK"},
	    {"GET /v1.41/containers/json?all=1 HTTP/1.1\r\nHost: api.moby.localhost\r\n\r\n",
	     "\"Status\":\"Exited (0) About an hour ago\""},
	    {"GET /v1.43/containers/json HTTP/1.1\r\nHost: api.moby.localhost\r\n\r\n",
	     "\r\n\r\n[]\n"},
	    {"GET /v1.41/version HTTP/1.1\r\nHost: api.moby.localhost\r\n\r\n",
	     "\"ApiVersion\":\"1.43\""},
	    {"GET /images/json HTTP/1.1\r\nHost: api.moby.localhost\r\n\r\n", "alpine:latest"},
	    {"GET /v1.41/networks HTTP/1.1\r\nHost: api.moby.localhost\r\n\r\n", "bridge"},
	    {"GET /info HTTP/1.1\r\nHost: api.moby.localhost\r\n\r\n", "\"ID\":\"fake\""},
	};
	for (size_t i = 0; i < sizeof polls / sizeof polls[0]; i++) {
		char buf[8192];
		double took;
		ssize_t n = t_exchange(fd, polls[i].request, buf, sizeof buf, &took);
		CHECK(n > 0);
		CHECK_CONTAINS(buf, "HTTP/1.1 200 OK\r\n");
		CHECK_CONTAINS(buf, marker);
		CHECK_CONTAINS(buf, polls[i].want);
		CHECK_CONTAINS(buf, "\r\nServer: Docker/24.0.7 (linux)\r\n");
		CHECK_CONTAINS(buf, "\r\nOstype: linux\r\n");
		CHECK(took < 1);
	}
	CHECK_INT(t_calls("start"), starts);
	CHECK(!t_dockerd_alive());
	char state[64];
	CHECK_STR(t_status_state(state, sizeof state), "stopped by autostop");
	json_t *doc = NULL;
	char err[512];
	CHECK_INT(autostop_status_fetch(t_inst, &doc, err, sizeof err), 0);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(doc, "snapshot"), "answered")),
		  8);
	json_decref(doc);
	/* Then work, on the same connection: it starts dev, and dockerd gets the very bytes. */
	static const char create[] =
	    "POST /v1.41/containers/create?name=web HTTP/1.1\r\n"
	    "Host: api.moby.localhost\r\nContent-Type: application/json\r\n"
	    "Content-Length: 18\r\n\r\n{\"Image\":\"alpine\"}";
	char buf[8192];
	double took;
	CHECK(t_exchange(fd, create, buf, sizeof buf, &took) > 0);
	CHECK_CONTAINS(buf, "HTTP/1.1 201 Created\r\n");
	CHECK(strstr(buf, SNAPSHOT_HEADER) == NULL);
	CHECK_INT(t_calls("start"), starts + 1);
	char posted[400];
	snprintf(posted, sizeof posted, "%s/posted.txt", t_state);
	char *got = t_slurp(posted);
	CHECK_STR(got, create);
	free(got);
	close(fd);
	CHECK(t_log_has("starting dev: the snapshot does not answer POST "
			"/v1.41/containers/create?name=web (not a poll); limactl start dev"));
	/* It answers again: the snapshot no longer says how things are, and is gone. */
	char *text = t_snapshot_file();
	CHECK_STR(text, "");
	free(text);
	t_daemon_stop();
	t_teardown();
}

/* While dev starts (3 s here), a new client's polls are still answered from the snapshot; the
 * request that started it waits for Docker and gets its answer. */
TEST(polls_while_it_starts_are_answered_from_the_snapshot)
{
	t_env();
	t_stopped_by_autostop(1);
	char marker[128];
	t_marker(marker, sizeof marker);
	t_write("3", "state/start-delay");
	int work = t_connect(t_listen);
	CHECK(work >= 0);
	static const char create[] =
	    "POST /v1.41/containers/create?name=web HTTP/1.1\r\n"
	    "Host: api.moby.localhost\r\nContent-Type: application/json\r\n"
	    "Content-Length: 18\r\n\r\n{\"Image\":\"alpine\"}";
	CHECK(t_send(work, create, strlen(create)));
	CHECK(WAIT_UNTIL(t_log_has("starting dev: the snapshot does not answer POST"), 5));
	char buf[8192];
	double took;
	int poll = t_connect(t_listen);
	CHECK(poll >= 0);
	CHECK(t_exchange(poll, "GET /v1.41/containers/json?all=1 HTTP/1.1\r\nHost: d\r\n\r\n", buf,
			 sizeof buf, &took) > 0);
	CHECK_CONTAINS(buf, "HTTP/1.1 200 OK\r\n");
	CHECK_CONTAINS(buf, marker);
	CHECK_CONTAINS(buf, "\"Names\":[\"/pg\"]");
	CHECK(took < 1);
	CHECK(!t_dockerd_alive()); /* still starting */
	close(poll);
	CHECK(t_read_to_eof(work, buf, sizeof buf, 20000) > 0);
	CHECK_CONTAINS(buf, "HTTP/1.1 201 Created\r\n");
	close(work);
	CHECK_INT(t_calls("start"), 2); /* t_vm_up's and this one */
	t_daemon_stop();
	t_teardown();
}

/* Socket activation starts a new daemon on the next client: the snapshot is still there. */
TEST(the_snapshot_survives_a_daemon_restart)
{
	t_env();
	t_stopped_by_autostop(1);
	int starts = t_calls("start");
	char marker[128];
	t_marker(marker, sizeof marker);
	t_daemon_stop();
	t_daemon(60);
	CHECK(t_log_has("dev is stopped by autostop: polls are answered from the snapshot of"));
	char buf[8192];
	CHECK(t_request("GET /v1.41/containers/json?all=1 HTTP/1.1\r\nHost: d\r\n"
			"Connection: close\r\n\r\n",
			buf, sizeof buf, 5000));
	CHECK_CONTAINS(buf, marker);
	CHECK_CONTAINS(buf, "\r\nConnection: close\r\n");
	CHECK_CONTAINS(buf, "\"Names\":[\"/pg\"]");
	CHECK_INT(t_calls("start"), starts);
	/* A poll with a filter the snapshot cannot apply starts dev, and Docker answers it. */
	CHECK(
	    t_request("GET /v1.41/containers/json?all=1&filters=%7B%22name%22%3A%7B%22pg%22%3Atrue"
		      "%7D%7D HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
		      buf, sizeof buf, 15000));
	CHECK_CONTAINS(buf, "HTTP/1.1 200 OK");
	CHECK(strstr(buf, SNAPSHOT_HEADER) == NULL);
	CHECK_INT(t_calls("start"), starts + 1);
	CHECK(t_log_has("is not applied to the snapshot); limactl start dev"));
	t_daemon_stop();
	t_teardown();
}

/* The docker CLI, unchanged, as a developer runs it while dev is stopped. */
static int t_docker_cli(const char *args, char *out, size_t size)
{
	char cmd[1200];
	snprintf(cmd, sizeof cmd,
		 "DOCKER_HOST=unix://%s DOCKER_CONFIG=%s/docker-config /usr/bin/docker %s "
		 ">%s/cli.out 2>&1",
		 t_listen, t_root, args, t_root);
	int rc = system(cmd);
	char path[400];
	snprintf(path, sizeof path, "%s/cli.out", t_root);
	char *text = t_slurp(path);
	snprintf(out, size, "%s", text);
	free(text);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(the_docker_cli_is_answered_while_stopped)
{
	if (access("/usr/bin/docker", X_OK) != 0) {
		SKIP("/usr/bin/docker is missing (apt-get install docker.io)");
	}
	t_env();
	t_stopped_by_autostop(1);
	int starts = t_calls("start");
	char out[8192];
	CHECK_INT(t_docker_cli("ps -a", out, sizeof out), 0);
	CHECK_CONTAINS(out, "postgres:16");
	CHECK_CONTAINS(out, "Exited (0) About an hour ago");
	CHECK_CONTAINS(out, "pg");
	char line[128];
	CHECK_INT(t_docker_cli("ps -q", line, sizeof line), 0);
	CHECK_STR(line, ""); /* nothing runs */
	CHECK_INT(t_docker_cli("images", out, sizeof out), 0);
	CHECK_CONTAINS(out, "alpine");
	CHECK_INT(t_docker_cli("version --format '{{.Server.Version}}'", line, sizeof line), 0);
	CHECK_STR(line, "24.0.7\n");
	CHECK_INT(t_calls("start"), starts);
	CHECK(!t_dockerd_alive());
	t_daemon_stop();
	t_teardown();
}

TEST(wake_on_any_starts_on_a_poll)
{
	t_env();
	t_vm_up();
	int starts = t_calls("start");
	struct autostop_config cfg;
	t_daemon_config(&cfg, 1, NULL);
	cfg.wake_on_any = true;
	t_daemon_pid = t_daemon_cfg(&cfg);
	CHECK(WAIT_UNTIL(t_log_has("stopped dev in"), 20));
	CHECK(!t_log_has("snapshot"));
	char *text = t_snapshot_file();
	CHECK_STR(text, ""); /* none taken */
	free(text);
	char buf[4096];
	CHECK(t_request("GET /_ping HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n", buf,
			sizeof buf, 15000));
	CHECK_CONTAINS(buf, "\r\n\r\nOK");
	CHECK(strstr(buf, SNAPSHOT_HEADER) == NULL);
	CHECK_INT(t_calls("start"), starts + 1);
	CHECK(t_log_has("starting dev: a client is waiting and dev is stopped by autostop"));
	t_daemon_stop();
	t_teardown();
}

TEST(a_running_container_keeps_it_up)
{
	t_env();
	t_vm_up();
	t_write("[{\"Id\":\"abc\",\"Names\":[\"/sleeper\"]}]", "state/containers.json");
	t_daemon(1);
	CHECK(WAIT_UNTIL(t_log_has("dev stays up: 1 container running (sleeper)"), 10));
	sleep(3);
	CHECK_INT(t_calls("stop"), 0);
	t_write("[]", "state/containers.json");
	CHECK(WAIT_UNTIL(t_calls("stop") == 1, 15));
	t_daemon_stop();
	t_teardown();
}

TEST(an_open_events_stream_keeps_it_up)
{
	t_env();
	t_vm_up();
	t_daemon(1);
	CHECK(WAIT_UNTIL(t_log_has("dev is idle"), 10));
	int fd = t_connect(t_listen);
	const char req[] = "GET /events HTTP/1.1\r\nHost: d\r\n\r\n";
	CHECK(t_send(fd, req, strlen(req)));
	sleep(4);
	CHECK_INT(t_calls("stop"), 0);
	json_t *doc = NULL;
	char err[512];
	CHECK_INT(autostop_status_fetch(t_inst, &doc, err, sizeof err), 0);
	CHECK_INT(json_integer_value(json_object_get(doc, "clients")), 1);
	json_decref(doc);
	close(fd);
	CHECK(WAIT_UNTIL(t_calls("stop") == 1, 15));
	t_daemon_stop();
	t_teardown();
}

/* issue 22: an IDE's Docker view polls; before, every poll restarted the idle period. */
TEST(polls_through_the_relay_do_not_keep_it_up)
{
	t_env();
	t_vm_up();
	t_daemon(1);
	CHECK(WAIT_UNTIL(t_log_has("dev is idle"), 10));
	double t0 = t_now();
	char buf[1024];
	while (t_calls("stop") == 0 && t_now() - t0 < 15) {
		t_request("GET /v1.47/containers/json HTTP/1.1\r\nHost: d\r\n\r\n", buf, sizeof buf,
			  5000);
		usleep(300 * 1000);
	}
	CHECK_INT(t_calls("stop"), 1);
	CHECK(t_now() - t0 < 5);
	t_daemon_stop();
	t_teardown();
}

TEST(a_kept_open_connection_without_work_does_not_keep_it_up)
{
	t_env();
	t_vm_up();
	t_daemon(1);
	CHECK(WAIT_UNTIL(t_log_has("dev is idle"), 10));
	int fd = t_connect(t_listen);
	CHECK(fd >= 0);
	CHECK(WAIT_UNTIL(t_calls("stop") == 1, 10));
	/* Closed before the stop, as a server closes a connection kept alive between requests. */
	char buf[64];
	CHECK_INT(t_read_to_eof(fd, buf, sizeof buf, 5000), 0);
	close(fd);
	t_daemon_stop();
	t_teardown();
}

/*
 * ssh as Lima runs it: -O forward makes the host socket a relay (socat) to the guest's, which
 * is state/guest-docker.sock for /var/run/docker.sock and state/guest-agent.sock for the
 * agent's; state/socat-docker.pid and socat-agent.pid name the latest, socat.pids all of them.
 */
static const char fake_ssh[] =
    "#!/bin/sh\n"
    "PATH=/usr/bin:/bin\n"
    "S='%s'\n"
    "echo \"$*\" >>\"$S/ssh-calls\"\n"
    "case \"$*\" in\n"
    "*'-O forward -L '*) spec=$(echo \"$*\" | sed 's/.*-L \\([^ ]*\\).*/\\1/')\n"
    "  case ${spec##*:} in *docker.sock) t=docker ;; *) t=agent ;; esac\n"
    "  socat UNIX-LISTEN:\"${spec%%%%:*}\",fork UNIX-CONNECT:\"$S/guest-$t.sock\" "
    "</dev/null >/dev/null 2>&1 &\n"
    "  echo $! >\"$S/socat-$t.pid\"; echo $! >>\"$S/socat.pids\"; sleep 0.5 ;;\n"
    "esac\n"
    "exit 0\n";

/* The fake ssh in bin/, or false (and a skip) without socat. */
static bool t_fake_ssh(void)
{
	if (access("/usr/bin/socat", X_OK) != 0)
		return false;
	char script[4096];
	snprintf(script, sizeof script, fake_ssh, t_state);
	t_write(script, "bin/ssh");
	t_chmod("bin/ssh", 0755);
	return true;
}

/* Every socat the fake ssh started is gone. */
static void t_kill_socats(void)
{
	char path[400];
	snprintf(path, sizeof path, "%s/socat.pids", t_state);
	char *s = t_slurp(path);
	for (char *line = s; line && *line;) {
		pid_t p = (pid_t)atoi(line);
		if (p > 0 && kill(p, SIGTERM) == 0)
			WAIT_UNTIL(kill(p, 0) != 0, 5);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	free(s);
}

/* A socket file nobody listens on: what a dead forward leaves behind. */
static void t_stale_socket(const char *path)
{
	unlink(path);
	struct sockaddr_un sa;
	CHECK(t_sockaddr(path, &sa));
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_INT(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	close(fd); /* bound, never listened, not removed: refuses */
}

/* Lima's forward of docker.sock dies (the master was cancelled): the socket file stays, stale. */
static void t_forward_dies(void)
{
	char guest[400];
	snprintf(guest, sizeof guest, "%s/guest-docker.sock", t_state);
	CHECK_INT(rename(t_docker, guest), 0); /* dockerd keeps listening, now "in the guest" */
	t_stale_socket(t_docker);
}

/* issue 22: autostop ran limactl start on a running instance whose forward had died. */
TEST(a_dead_forward_is_healed_without_a_start)
{
	t_env();
	if (!t_fake_ssh()) {
		t_cleanup();
		SKIP("socat is missing (apt-get install socat)");
	}
	t_vm_up();
	t_daemon(60);
	char buf[1024];
	CHECK(t_request(ping_request, buf, sizeof buf, 10000));
	int starts = t_calls("start");
	t_forward_dies();
	double t0 = t_now();
	CHECK(t_request(ping_request, buf, sizeof buf, 15000));
	CHECK_CONTAINS(buf, "\r\n\r\nOK");
	CHECK(t_now() - t0 < 10);
	CHECK_INT(t_calls("start"), starts);
	CHECK(t_log_has("docker.sock refused a client"));
	CHECK(t_log_has("dev runs and docker.sock answers again (its forward was dead"));
	char calls[400];
	snprintf(calls, sizeof calls, "%s/ssh-calls", t_state);
	char want[900];
	snprintf(want, sizeof want, "-O forward -L %s:/var/run/docker.sock lima-dev", t_docker);
	CHECK(t_file_has(calls, want));
	/* Afterwards the forwarded socket answers directly. */
	int fd = t_connect(t_docker);
	CHECK(fd >= 0 && t_send(fd, ping_request, strlen(ping_request)));
	CHECK(t_read_to_eof(fd, buf, sizeof buf, 5000) > 0);
	CHECK_CONTAINS(buf, "OK");
	close(fd);
	t_daemon_stop();
	t_kill_socats();
	t_teardown();
}

/* Accepts every connection on path and never says a word: a forward whose far end is gone. */
static pid_t t_silent_listener(const char *path)
{
	unlink(path);
	struct sockaddr_un sa;
	CHECK(t_sockaddr(path, &sa));
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_INT(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
	CHECK_INT(listen(lfd, 64), 0);
	pid_t pid = fork();
	if (pid == 0) {
		/* Each connection stays open, never read, never answered. */
		for (;;)
			if (accept(lfd, NULL, NULL) < 0)
				usleep(10000);
	}
	close(lfd);
	return pid;
}

/* issue 22: a forward that accepts and hangs while Lima says Running (after host sleep). */
TEST(a_hung_forward_is_healed_without_a_start)
{
	t_env();
	if (!t_fake_ssh()) {
		t_cleanup();
		SKIP("socat is missing (apt-get install socat)");
	}
	t_vm_up();
	t_daemon(60);
	char buf[1024];
	CHECK(t_request(ping_request, buf, sizeof buf, 10000));
	int starts = t_calls("start");
	char guest[400];
	snprintf(guest, sizeof guest, "%s/guest-docker.sock", t_state);
	CHECK_INT(rename(t_docker, guest), 0); /* dockerd keeps listening, now "in the guest" */
	pid_t silent = t_silent_listener(t_docker);
	/* The client's ping is relayed into the silence, then sent again through the new forward.
	 */
	double t0 = t_now();
	CHECK(t_request(ping_request, buf, sizeof buf, 30000));
	double took = t_now() - t0;
	CHECK_CONTAINS(buf, "HTTP/1.1 200 OK");
	CHECK_CONTAINS(buf, "\r\n\r\nOK");
	CHECK(took < 15);
	printf("    answered %.1f s after it was sent\n", took);
	CHECK_INT(t_calls("start"), starts);
	CHECK(t_log_has("docker.sock accepted a client and sent no answer for 2.0 s, nor to /_ping "
			"on a new connection (timed out: "));
	CHECK(t_log_has(") while dev was running: asking Lima whether it still runs, to re-create "
			"the forward"));
	CHECK(t_log_has("dev runs and docker.sock answers again (its forward was dead: removed the "
			"socket file and forwarded it again with ssh -O forward in "));
	CHECK(t_log_has("relaying 1 held client"));
	CHECK(!t_log_has("stays up: the Docker API does not answer"));
	char calls[400], want[900];
	snprintf(calls, sizeof calls, "%s/ssh-calls", t_state);
	snprintf(want, sizeof want, "-O forward -L %s:/var/run/docker.sock lima-dev", t_docker);
	CHECK(t_file_has(calls, want));
	/* The forwarded socket answers directly again, and through the relay. */
	int fd = t_connect(t_docker);
	CHECK(fd >= 0 && t_send(fd, ping_request, strlen(ping_request)));
	CHECK(t_read_to_eof(fd, buf, sizeof buf, 5000) > 0);
	CHECK_CONTAINS(buf, "OK");
	close(fd);
	t0 = t_now();
	CHECK(t_request(ping_request, buf, sizeof buf, 10000));
	CHECK_CONTAINS(buf, "\r\n\r\nOK");
	CHECK(t_now() - t0 < 2);
	char state[64];
	CHECK_STR(t_status_state(state, sizeof state), "running");
	t_daemon_stop();
	kill(silent, SIGKILL);
	waitpid(silent, NULL, 0);
	t_kill_socats();
	t_teardown();
}

/* A request slower than the silence (docker stop) while the forward works is left alone. */
TEST(a_slow_answer_is_not_taken_for_a_hung_forward)
{
	t_env();
	t_vm_up();
	t_daemon(60);
	int fd = t_connect(t_listen);
	CHECK(fd >= 0);
	/* ECHO answers nothing until the client sends more: silent, with /_ping answering. */
	CHECK(t_send(fd, "ECHO\n", 5));
	sleep(5);
	CHECK(t_send(fd, "late\n", 5));
	shutdown(fd, SHUT_WR);
	char buf[64];
	CHECK_INT(t_read_to_eof(fd, buf, sizeof buf, 5000), 9);
	CHECK_STR(buf, "late\nEOF\n");
	close(fd);
	CHECK(!t_log_has("sent no answer"));
	CHECK(!t_log_has("asking Lima"));
	t_daemon_stop();
	t_teardown();
}

/* The agent's forward is dead when autostop freezes, and again when it thaws: healed both times. */
TEST(a_dead_agent_forward_is_healed_for_the_freeze_and_the_thaw)
{
	t_env();
	if (!t_fake_ssh()) {
		t_cleanup();
		SKIP("socat is missing (apt-get install socat)");
	}
	t_vm_up();
	char guest[400], agent_sock[400];
	snprintf(guest, sizeof guest, "%s/guest-agent.sock", t_state);
	snprintf(agent_sock, sizeof agent_sock, "%s/sock/vmcost-agent.sock", t_inst);
	t_fake_agent_at(guest);
	t_stale_socket(agent_sock);
	t_daemon_freezing(60, 1);
	CHECK(WAIT_UNTIL(t_log_has("froze dev's Docker engine after 1.0 s idle"), 20));
	CHECK(t_log_has("dev's vmcost-agent.sock did not answer the engine freeze: "));
	CHECK(t_log_has("refuses connections (a stale socket file: nobody listens); removed the "
			"socket file and forwarded it again with ssh -O forward in "));
	CHECK(!t_log_has("the agent did not answer the freeze"));
	char calls[400], want[900];
	snprintf(calls, sizeof calls, "%s/ssh-calls", t_state);
	snprintf(want, sizeof want, "-O forward -L %s:/run/vmcost-agent.sock lima-dev", agent_sock);
	CHECK(t_file_has(calls, want));
	char *order = t_order_from("agent freeze");
	CHECK(strncmp(order, "agent freeze 200\n", 17) == 0);
	free(order);
	/* The forward dies again while frozen: the thaw heals it too, and the client is answered
	 * (without the thaw, the frozen fake dockerd would not answer it for a minute). */
	char pidfile[400];
	snprintf(pidfile, sizeof pidfile, "%s/socat-agent.pid", t_state);
	char *pid = t_slurp(pidfile);
	pid_t socat = (pid_t)atoi(pid);
	free(pid);
	CHECK(socat > 0 && kill(socat, SIGTERM) == 0);
	CHECK(WAIT_UNTIL(kill(socat, 0) != 0, 5));
	t_stale_socket(agent_sock);
	char buf[1024];
	CHECK(t_request(inspect_request, buf, sizeof buf, 20000));
	CHECK_CONTAINS(buf, "\"Id\":\"aaaa1111\"");
	CHECK(t_log_has("dev's vmcost-agent.sock did not answer the engine thaw: "));
	CHECK(t_log_has("thawed dev's Docker engine after"));
	CHECK(!t_log_has("the agent did not thaw"));
	order = t_order_from("agent freeze");
	CHECK(strstr(order, "agent thaw\ndockerd GET /containers/aaaa1111/json") != NULL);
	free(order);
	CHECK_INT(t_calls("start"), 1); /* t_vm_up's, none of autostop's */
	t_daemon_stop();
	t_kill_socats();
	t_teardown();
}

/* issue 21: --freeze-after asks the agent to freeze the engine within the idle period. */

TEST(freeze_after_freezes_and_the_engine_is_thawed_before_the_stop)
{
	t_env();
	t_vm_up();
	t_fake_agent();
	t_daemon_freezing(4, 1);
	CHECK(t_log_has("idle period 4.0 s, the engine frozen after 1.0 s of it"));
	CHECK(WAIT_UNTIL(t_log_has("froze dev's Docker engine after 1.0 s idle"), 15));
	char engine[32];
	CHECK_STR(t_status_string("engine", engine, sizeof engine), "frozen");
	CHECK(t_status_number("engine_frozen_for_s") > 0);
	CHECK_DBL(t_status_number("engine_freezes"), 1, 0.001);
	CHECK(WAIT_UNTIL(t_calls("stop") == 1, 15)); /* and the stop still comes */
	CHECK(t_log_has("thawed dev's Docker engine after"));
	CHECK(t_log_has("frozen (the idle period ends)"));
	/* Thawed by autostop before anything asked dockerd, then checked, then stopped. */
	char *order = t_order_from("agent freeze");
	CHECK(strncmp(order, "agent freeze 200\nagent thaw\ndockerd GET ", 40) == 0);
	if (strncmp(order, "agent freeze 200\nagent thaw\ndockerd GET ", 40) != 0)
		printf("    state/order from the freeze:\n%s", order);
	free(order);
	char *log = t_slurp(t_log);
	char *thawed = strstr(log, "thawed dev's Docker engine");
	char *stopping = strstr(log, "stopping dev:");
	CHECK(thawed && stopping && thawed < stopping);
	free(log);
	t_daemon_stop();
	t_teardown();
}

TEST(a_client_while_frozen_is_held_and_the_engine_thawed_first)
{
	t_env();
	t_vm_up();
	t_fake_agent();
	t_daemon_freezing(60, 1);
	CHECK(WAIT_UNTIL(t_log_has("froze dev's Docker engine after 1.0 s idle"), 15));
	/* The fake dockerd answers nothing while frozen: only a thaw gets this an answer (an
	 * inspect is no poll: the snapshot does not answer it). */
	char buf[1024];
	CHECK(t_request(inspect_request, buf, sizeof buf, 15000));
	CHECK_CONTAINS(buf, "\"Id\":\"aaaa1111\"");
	char *order = t_order_from("agent freeze");
	const char *want =
	    "agent freeze 200\nagent thaw\ndockerd GET /containers/aaaa1111/json HTTP/1.1\n";
	CHECK(strncmp(order, want, strlen(want)) == 0);
	if (strncmp(order, want, strlen(want)) != 0)
		printf("    state/order from the freeze:\n%s", order);
	free(order);
	CHECK(t_log_has("frozen (GET /containers/aaaa1111/json (not a poll)); relaying 1 held "
			"client"));
	char engine[32];
	CHECK_STR(t_status_string("engine", engine, sizeof engine), "running");
	CHECK(t_status_number("engine_frozen_total_s") > 0);
	/* A poll does not freeze it again in the same idle period. */
	sleep(2);
	order = t_order_from("agent freeze");
	CHECK(strstr(order + 1, "agent freeze") == NULL);
	free(order);
	t_daemon_stop();
	t_teardown();
}

/* While frozen, polls are answered from the snapshot taken just before the freeze, and the
 * engine stays frozen; work thaws it and reaches dockerd, byte for byte. */
TEST(polls_while_frozen_are_answered_from_the_snapshot)
{
	t_env();
	t_vm_up();
	t_fake_agent();
	t_daemon_freezing(60, 1);
	CHECK(WAIT_UNTIL(t_log_has("froze dev's Docker engine after 1.0 s idle (polls are "
				   "answered from the snapshot of "),
			 15));
	int fd = t_connect(t_listen);
	CHECK(fd >= 0);
	static const char *const polls[] = {
	    "GET /_ping HTTP/1.1\r\nHost: api.moby.localhost\r\n\r\n",
	    "GET /v1.43/containers/json?all=1 HTTP/1.1\r\nHost: api.moby.localhost\r\n\r\n",
	    "GET /v1.43/version HTTP/1.1\r\nHost: api.moby.localhost\r\n\r\n",
	};
	char buf[8192];
	double took;
	for (size_t i = 0; i < sizeof polls / sizeof polls[0]; i++) {
		CHECK(t_exchange(fd, polls[i], buf, sizeof buf, &took) > 0);
		CHECK_CONTAINS(buf, "HTTP/1.1 200 OK\r\n");
		CHECK_CONTAINS(buf, SNAPSHOT_HEADER ": ");
		CHECK(took < 1);
	}
	char engine[32];
	CHECK_STR(t_status_string("engine", engine, sizeof engine), "frozen");
	char *order = t_order_from("agent freeze");
	CHECK(strstr(order, "agent thaw") == NULL);
	CHECK(strstr(order, "dockerd ") == NULL);
	free(order);
	/* Work on the same connection: the engine is thawed for it, and dockerd gets its bytes. */
	static const char create[] =
	    "POST /v1.43/containers/create?name=web HTTP/1.1\r\n"
	    "Host: api.moby.localhost\r\nContent-Type: application/json\r\n"
	    "Content-Length: 18\r\n\r\n{\"Image\":\"alpine\"}";
	CHECK(t_exchange(fd, create, buf, sizeof buf, &took) > 0);
	CHECK_CONTAINS(buf, "HTTP/1.1 201 Created\r\n");
	CHECK(strstr(buf, SNAPSHOT_HEADER) == NULL);
	close(fd);
	order = t_order_from("agent freeze");
	const char *want = "agent freeze 200\nagent thaw\ndockerd POST "
			   "/v1.43/containers/create?name=web HTTP/1.1\n";
	CHECK(strncmp(order, want, strlen(want)) == 0);
	if (strncmp(order, want, strlen(want)) != 0)
		printf("    state/order from the freeze:\n%s", order);
	free(order);
	char posted[400];
	snprintf(posted, sizeof posted, "%s/posted.txt", t_state);
	char *got = t_slurp(posted);
	CHECK_STR(got, create);
	free(got);
	CHECK(t_log_has("frozen (POST /v1.43/containers/create?name=web (not a poll)); "
			"relaying 1 held client"));
	CHECK_INT(t_calls("start"), 1); /* t_vm_up's: a thaw, never a start */
	t_daemon_stop();
	t_teardown();
}

TEST(a_connection_kept_open_across_the_freeze_is_answered)
{
	t_env();
	t_vm_up();
	t_fake_agent();
	t_daemon_freezing(60, 1);
	CHECK(WAIT_UNTIL(t_log_has("dev is idle"), 10));
	int fd = t_connect(t_listen); /* relayed to dockerd at once, says nothing yet */
	CHECK(fd >= 0);
	CHECK(WAIT_UNTIL(t_log_has("froze dev's Docker engine after 1.0 s idle"), 15));
	char buf[1024];
	CHECK(t_send(fd, ping_request, strlen(ping_request)));
	CHECK(t_read_to_eof(fd, buf, sizeof buf, 15000) > 0);
	CHECK_CONTAINS(buf, "\r\n\r\nOK");
	close(fd);
	CHECK(t_log_has("(a connection kept open sent a request)"));
	t_daemon_stop();
	t_teardown();
}

TEST(a_busy_agent_is_asked_to_freeze_again)
{
	t_env();
	t_vm_up();
	t_write("503\n", "state/freeze-answers");
	t_fake_agent();
	t_daemon_freezing(60, 1);
	CHECK(WAIT_UNTIL(t_log_has("the agent is busy (the agent is busy: 16 requests running; "
				   "retry in a second); asking again in 5.0 s"),
			 15));
	CHECK(WAIT_UNTIL(t_log_has("froze dev's Docker engine after 1.0 s idle"), 20));
	/* Asked again (after a check: the period goes on), and frozen then. */
	char *order = t_order_from("agent freeze");
	char *again = strstr(order, "agent freeze 200\n");
	CHECK(strncmp(order, "agent freeze 503\n", 17) == 0 && again);
	CHECK(again && strstr(again + 1, "agent freeze") == NULL);
	free(order);
	t_daemon_stop();
	t_teardown();
}

TEST(a_refused_freeze_is_not_asked_again_in_the_period)
{
	t_env();
	t_vm_up();
	t_write("409\n", "state/freeze-answers");
	t_fake_agent();
	t_daemon_freezing(60, 1);
	CHECK(
	    WAIT_UNTIL(t_log_has("the agent refused to freeze it (container abc is running)"), 15));
	sleep(3);
	char *order = t_order_from("agent freeze");
	CHECK_STR(order, "agent freeze 409\n");
	free(order);
	t_daemon_stop();
	t_teardown();
}

/* vmcost autostop ARGS... as the command line runs it, in a child; its log is t_log. */
static pid_t t_command(char **argv)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	fflush(stdout);
	fflush(stderr);
	close(open(t_log, O_WRONLY | O_CREAT | O_TRUNC, 0644)); /* no line of the last run */
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(t_log, O_WRONLY | O_APPEND, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
		vmc_log_init("vmcost");
		exit(cmd_autostop(argc, argv));
	}
	return pid;
}

/* --freeze-after: 30 s unless --idle is not longer, 0 for off, never as long as --idle. */
TEST(the_command_line_freezes_after_30_s_by_default)
{
	t_env();
	char *dflt[] = {"autostop", "dev", NULL};
	t_daemon_pid = t_command(dflt);
	CHECK(WAIT_UNTIL(t_log_has("listening on"), 10));
	CHECK(t_log_has("idle period 5 min 00 s, the engine frozen after 30.0 s of it"));
	t_daemon_stop();
	char *short_idle[] = {"autostop", "dev", "--idle", "30s", NULL};
	t_daemon_pid = t_command(short_idle);
	CHECK(WAIT_UNTIL(t_log_has("listening on"), 10));
	CHECK(t_log_has("idle period 30.0 s\n"));
	t_daemon_stop();
	char *off[] = {"autostop", "dev", "--freeze-after", "0", NULL};
	t_daemon_pid = t_command(off);
	CHECK(WAIT_UNTIL(t_log_has("listening on"), 10));
	CHECK(t_log_has("idle period 5 min 00 s\n"));
	t_daemon_stop();
	char *given[] = {"autostop", "dev", "--freeze-after", "2m", NULL};
	t_daemon_pid = t_command(given);
	CHECK(WAIT_UNTIL(t_log_has("listening on"), 10));
	CHECK(t_log_has("idle period 5 min 00 s, the engine frozen after 2 min 00 s of it"));
	t_daemon_stop();
	char *too_long[] = {"autostop", "dev", "--idle", "1m", "--freeze-after", "1m", NULL};
	CHECK_INT(t_wait_exit(t_command(too_long), 10), VMC_EXIT_USAGE);
	CHECK(t_log_has("--freeze-after (60 s) must be shorter than --idle (60 s)"));
	char *bad[] = {"autostop", "dev", "--freeze-after", "soon", NULL};
	CHECK_INT(t_wait_exit(t_command(bad), 10), VMC_EXIT_USAGE);
	CHECK(t_log_has("--freeze-after needs a duration (\"30s\", \"2m\") or 0 for off, not "
			"\"soon\""));
	t_teardown();
}

TEST(a_vm_killed_under_a_stream_gives_an_error_then_recovers)
{
	t_env();
	t_vm_up();
	t_daemon(60);
	int fd = t_connect(t_listen);
	const char req[] = "GET /events HTTP/1.1\r\nHost: d\r\n\r\n";
	CHECK(t_send(fd, req, strlen(req)));
	usleep(300000);
	t_vm_kill();
	char buf[1024];
	/* The stream ends (EOF or reset) instead of hanging. */
	CHECK(t_read_to_eof(fd, buf, sizeof buf, 5000) != -2);
	close(fd);
	CHECK(t_request(ping_request, buf, sizeof buf, 15000));
	CHECK_CONTAINS(buf, "200 OK");
	CHECK(t_log_has("went away behind autostop's back"));
	t_daemon_stop();
	t_teardown();
}

TEST(a_failed_start_closes_held_clients_and_says_why)
{
	t_env();
	t_write("", "state/start-fails");
	t_daemon(60);
	char buf[1024];
	int fd = t_connect(t_listen);
	CHECK(t_send(fd, ping_request, strlen(ping_request)));
	ssize_t n = t_read_to_eof(fd, buf, sizeof buf, 10000);
	CHECK(n == 0 || n == -1); /* closed without an answer, not left hanging */
	close(fd);
	CHECK(WAIT_UNTIL(t_log_has("start of dev failed: limactl start exited 1: "
				   "level=fatal msg=\"fake start failed\"; closed 1 held client"),
			 5));
	char path[400];
	snprintf(path, sizeof path, "%s/start-fails", t_state);
	unlink(path);
	CHECK(t_request(ping_request, buf, sizeof buf, 15000));
	CHECK_CONTAINS(buf, "200 OK");
	t_daemon_stop();
	t_teardown();
}

TEST(garbage_half_requests_and_a_thousand_drops)
{
	t_env();
	t_vm_up();
	int starts_by_hand = t_calls("start");
	t_daemon(60);
	char buf[1024];
	static const char garbage[] = "\x00\xff\x01 not http at all\r\n\r\n";
	CHECK(t_request(garbage, buf, sizeof buf, 5000) || buf[0] == '\0');
	for (int i = 0; i < 1000; i++) {
		int fd = t_connect(t_listen);
		if (fd < 0) {
			CHECK(fd >= 0);
			break;
		}
		if (i % 3 == 0)
			t_send(fd, "GET /_pi", 8); /* closes half-way through a request */
		close(fd);
	}
	CHECK(t_request(ping_request, buf, sizeof buf, 10000));
	CHECK_CONTAINS(buf, "200 OK");
	CHECK(kill(t_daemon_pid, 0) == 0);
	/* A busy docker.sock (its backlog full) is retried, not taken for a stopped VM. */
	CHECK_INT(t_calls("start") - starts_by_hand, 0);
	CHECK(!t_log_has("starting dev"));
	t_daemon_stop();
	t_teardown();
}

TEST(connecting_without_a_word_does_not_start_the_vm)
{
	t_env();
	t_daemon(60);
	for (int i = 0; i < 50; i++) {
		int fd = t_connect(t_listen);
		CHECK(fd >= 0);
		close(fd);
	}
	/* Let every one of them be accepted, refused by docker.sock and closed. */
	char state[64];
	CHECK(WAIT_UNTIL(t_clients() == 0, 10));
	CHECK_INT(t_calls("start"), 0);
	CHECK_STR(t_status_state(state, sizeof state), "stopped");
	/* The first byte does. */
	char buf[1024];
	CHECK(t_request(ping_request, buf, sizeof buf, 15000));
	CHECK_INT(t_calls("start"), 1);
	t_daemon_stop();
	t_teardown();
}

TEST(env_and_list_see_the_daemon)
{
	t_env();
	char *env_argv[] = {"env", "dev", NULL};
	CHECK_INT(t_capture(cmd_env, 2, env_argv), VMC_EXIT_OK);
	CHECK_CONTAINS(t_out, "sock/docker.sock'"); /* no daemon: docker.sock */
	t_daemon(60);
	CHECK_INT(t_capture(cmd_env, 2, env_argv), VMC_EXIT_OK);
	CHECK_CONTAINS(t_out, "# through vmcost autostop: the first call starts dev");
	CHECK_CONTAINS(t_out, "export DOCKER_HOST='unix://");
	CHECK_CONTAINS(t_out, "/sock/docker-autostop.sock'");
	CHECK_CONTAINS(t_out, "docker context create lima-dev-autostop");
	char *direct_argv[] = {"env", "dev", "--direct", NULL};
	CHECK_INT(t_capture(cmd_env, 3, direct_argv), VMC_EXIT_OK);
	CHECK_CONTAINS(t_out, "/sock/docker.sock'");
	CHECK(strstr(t_out, "docker-autostop") == NULL);
	char *list_argv[] = {"list", NULL};
	CHECK_INT(t_capture(cmd_list, 1, list_argv), VMC_EXIT_OK);
	CHECK_CONTAINS(t_out, "AUTOSTOP");
	CHECK_CONTAINS(t_out, "stopped");
	char *json_argv[] = {"list", "--json", NULL};
	CHECK_INT(t_capture(cmd_list, 2, json_argv), VMC_EXIT_OK);
	CHECK_CONTAINS(t_out, "\"autostop\": {");
	CHECK_CONTAINS(t_out, "\"last_stop_ram_freed\": null");
	/* Asking did not start the VM. */
	CHECK_INT(t_calls("start"), 0);
	t_daemon_stop();
	t_teardown();
}

TEST(socket_files_too_long_stale_busy_or_foreign)
{
	t_env();
	struct autostop_config cfg;
	char longpath[300];
	memset(longpath, 'x', sizeof longpath);
	memcpy(longpath, "/tmp/", 5);
	longpath[sizeof longpath - 1] = '\0';
	t_daemon_config(&cfg, 60, longpath);
	pid_t p = t_daemon_cfg(&cfg);
	CHECK_INT(t_wait_exit(p, 10), VMC_EXIT_USAGE);
	CHECK(t_log_has("is 299 bytes long; a unix socket path holds at most"));

	/* A stale socket (its listener died without unlinking) is replaced. */
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa;
	CHECK(t_sockaddr(t_listen, &sa));
	CHECK(bind(s, (struct sockaddr *)&sa, sizeof sa) == 0);
	close(s);
	t_daemon(60);
	pid_t first = t_daemon_pid;
	CHECK(t_log_has("removed the stale socket"));
	/* A second daemon finds both sockets live and leaves them alone. */
	t_daemon_config(&cfg, 60, NULL);
	p = t_daemon_cfg(&cfg);
	CHECK_INT(t_wait_exit(p, 10), VMC_EXIT_FAILURE);
	CHECK(t_log_has("another vmcost autostop already serves this instance"));
	CHECK(t_file_exists(t_listen));
	t_daemon_pid = first;
	t_daemon_stop();
	t_teardown();
}

TEST(a_file_in_the_way_is_not_removed)
{
	t_env();
	char path[400];
	snprintf(path, sizeof path, "%s/not-a-socket", t_root);
	t_write("keep me", "not-a-socket");
	struct autostop_config cfg;
	t_daemon_config(&cfg, 60, path);
	pid_t p = t_daemon_cfg(&cfg);
	CHECK_INT(t_wait_exit(p, 10), VMC_EXIT_FAILURE);
	CHECK(t_log_has("exists and is not a socket"));
	CHECK(t_file_exists(path));
	t_teardown();
}

TEST(sigterm_closes_the_listener_and_leaves_the_vm)
{
	t_env();
	t_vm_up();
	t_daemon(60);
	t_daemon_stop();
	CHECK(!t_file_exists(t_listen));
	CHECK(t_dockerd_alive());
	CHECK_INT(t_calls("stop"), 0);
	CHECK(t_log_has("SIGTERM: listener closed, dev left as it is"));
	t_teardown();
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--fake-dockerd") == 0)
		return fake_dockerd(argv[2], argv[3]);
	signal(SIGPIPE, SIG_IGN);
	if (!realpath(argv[0], t_self)) {
		perror(argv[0]);
		return 2;
	}
	RUN(relays_bytes_exactly_both_ways);
	RUN(half_close_from_docker_keeps_the_client_half_open);
	RUN(the_first_client_starts_a_stopped_vm);
	RUN(ten_clients_at_once_cause_one_start);
	RUN(idle_with_nothing_running_stops_and_a_client_starts_it_again);
	RUN(polls_while_stopped_are_answered_from_the_snapshot);
	RUN(polls_while_it_starts_are_answered_from_the_snapshot);
	RUN(the_snapshot_survives_a_daemon_restart);
	RUN(the_docker_cli_is_answered_while_stopped);
	RUN(wake_on_any_starts_on_a_poll);
	RUN(a_running_container_keeps_it_up);
	RUN(an_open_events_stream_keeps_it_up);
	RUN(polls_through_the_relay_do_not_keep_it_up);
	RUN(a_kept_open_connection_without_work_does_not_keep_it_up);
	RUN(a_dead_forward_is_healed_without_a_start);
	RUN(a_hung_forward_is_healed_without_a_start);
	RUN(a_slow_answer_is_not_taken_for_a_hung_forward);
	RUN(a_dead_agent_forward_is_healed_for_the_freeze_and_the_thaw);
	RUN(freeze_after_freezes_and_the_engine_is_thawed_before_the_stop);
	RUN(a_client_while_frozen_is_held_and_the_engine_thawed_first);
	RUN(polls_while_frozen_are_answered_from_the_snapshot);
	RUN(a_connection_kept_open_across_the_freeze_is_answered);
	RUN(a_busy_agent_is_asked_to_freeze_again);
	RUN(a_refused_freeze_is_not_asked_again_in_the_period);
	RUN(the_command_line_freezes_after_30_s_by_default);
	RUN(a_vm_killed_under_a_stream_gives_an_error_then_recovers);
	RUN(a_failed_start_closes_held_clients_and_says_why);
	RUN(garbage_half_requests_and_a_thousand_drops);
	RUN(connecting_without_a_word_does_not_start_the_vm);
	RUN(env_and_list_see_the_daemon);
	RUN(socket_files_too_long_stale_busy_or_foreign);
	RUN(a_file_in_the_way_is_not_removed);
	RUN(sigterm_closes_the_listener_and_leaves_the_vm);
	return check_done();
}
