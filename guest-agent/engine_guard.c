/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The docker.sock guard (engine.h). The kernel accepts a connection on a frozen dockerd's socket
 * and nobody ever reads it: a client hangs. So while the engine is frozen the path is ours: the
 * first client thaws the engine, dockerd's socket goes back to the path (a rename over ours, so
 * the path never disappears), and every connection we accepted meanwhile is relayed to dockerd
 * byte for byte. The guard is a process of its own (`vmcost-agent engine guard`), because a
 * freeze from the command line outlives the command, and so that a guard that dies takes only
 * its relays with it.
 */
#include "engine.h"

#include "log.h"
#include "procfs.h"
#include "proclist.h"
#include "procpid.h"
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Connections the guard takes at once: a frozen engine sees few. */
#define GUARD_BACKLOG	128
#define GUARD_MAX_PAIRS 256
#define RELAY_BUFFER	65536
/* The fd a spawned guard finds its listening socket on. */
#define GUARD_FD 3

static int fs_path(char *buf, size_t size, const char *path, const char *suffix)
{
	return vmc_fs_path(buf, size, "%s%s", path, suffix) ? 0 : -1;
}

static int unix_addr(struct sockaddr_un *addr, const char *path)
{
	*addr = (struct sockaddr_un){.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof addr->sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(addr->sun_path, sizeof addr->sun_path, "%s", path);
	return 0;
}

int engine_guard_install(const char *docker_socket, char *err, size_t errsize)
{
	char sock[512], aside[512], tmp[512];
	struct stat sb;
	if (fs_path(sock, sizeof sock, docker_socket, "") < 0 ||
	    fs_path(aside, sizeof aside, docker_socket, ENGINE_SET_ASIDE_SUFFIX) < 0 ||
	    fs_path(tmp, sizeof tmp, docker_socket, ENGINE_GUARD_SUFFIX) < 0) {
		snprintf(err, errsize, "docker-socket %s: path too long", docker_socket);
		return -1;
	}
	if (lstat(sock, &sb) < 0 || !S_ISSOCK(sb.st_mode))
		return -2;
	if (lstat(aside, &sb) == 0) {
		snprintf(
		    err, errsize,
		    "%s exists: a freeze was not undone (vmcost-agent engine thaw puts it back)",
		    aside);
		errno = EBUSY;
		return -1;
	}
	struct stat orig;
	if (stat(sock, &orig) < 0)
		return -2;
	struct sockaddr_un addr;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || unix_addr(&addr, tmp) < 0) {
		snprintf(err, errsize, "cannot create the guard socket: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	unlink(tmp);
	int rc = bind(fd, (struct sockaddr *)&addr, sizeof addr);
	if (rc == 0)
		rc = chmod(tmp, orig.st_mode & 07777);
	if (rc == 0)
		rc = chown(tmp, orig.st_uid, orig.st_gid) < 0 && errno != EPERM ? -1 : 0;
	if (rc == 0)
		rc = listen(fd, GUARD_BACKLOG);
	/* dockerd's socket keeps a second name, then ours takes the path in one step. */
	if (rc == 0)
		rc = link(sock, aside);
	if (rc == 0 && rename(tmp, sock) < 0) {
		rc = -1;
		unlink(aside);
	}
	if (rc < 0) {
		snprintf(err, errsize, "cannot put the guard at %s: %s", docker_socket,
			 strerror(errno));
		unlink(tmp);
		close(fd);
		return -1;
	}
	return fd;
}

int engine_guard_restore(const char *docker_socket)
{
	char sock[512], aside[512];
	if (fs_path(sock, sizeof sock, docker_socket, "") < 0 ||
	    fs_path(aside, sizeof aside, docker_socket, ENGINE_SET_ASIDE_SUFFIX) < 0)
		return -1;
	if (rename(aside, sock) < 0 && errno != ENOENT) {
		vmc_warn("cannot put dockerd's socket back at %s:", sock);
		return -1;
	}
	return 0;
}

/* ---- relaying ---------------------------------------------------------------------------------
 */

struct pair {
	int fd[2];    /* client, dockerd */
	bool open[2]; /* still reading from this side */
};

static int connect_docker(const char *docker_socket)
{
	char path[512];
	struct sockaddr_un addr;
	if (fs_path(path, sizeof path, docker_socket, "") < 0 || unix_addr(&addr, path) < 0)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* One read on side s of p, written to the other side; false when the pair is finished. */
static bool relay_once(struct pair *p, int s, char *buf)
{
	ssize_t n = read(p->fd[s], buf, RELAY_BUFFER);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n > 0 && vmc_write_all(p->fd[!s], buf, (size_t)n) == 0)
		return true;
	if (n < 0 || n > 0) /* a failed read or write: the connection is broken */
		return false;
	/* EOF: pass the half-close on, keep the other direction. */
	p->open[s] = false;
	shutdown(p->fd[!s], SHUT_WR);
	return p->open[!s];
}

static void relay_all(struct pair *pairs, size_t n)
{
	char *buf = malloc(RELAY_BUFFER);
	struct pollfd *pfd = calloc(2 * (n ? n : 1), sizeof *pfd);
	if (!buf || !pfd)
		n = 0;
	size_t live = n;
	while (live > 0) {
		for (size_t i = 0; i < n; i++)
			for (int s = 0; s < 2; s++) {
				pfd[2 * i + (size_t)s].fd = pairs[i].open[s] ? pairs[i].fd[s] : -1;
				pfd[2 * i + (size_t)s].events = POLLIN;
			}
		if (poll(pfd, 2 * n, -1) < 0 && errno != EINTR)
			break;
		for (size_t i = 0; i < n; i++)
			for (int s = 0; s < 2; s++) {
				if (!pairs[i].open[s] || !pfd[2 * i + (size_t)s].revents)
					continue;
				if (relay_once(&pairs[i], s, buf))
					continue;
				pairs[i].open[0] = pairs[i].open[1] = false;
				live--;
				break;
			}
	}
	for (size_t i = 0; i < n; i++) {
		close(pairs[i].fd[0]);
		close(pairs[i].fd[1]);
	}
	free(pfd);
	free(buf);
}

/* Every connection queued on the listener, without waiting. */
static size_t accept_queued(int listen_fd, int *clients, size_t n, size_t max)
{
	while (n < max) {
		int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* Blocking from here: the relay writes whole buffers. */
		fcntl(c, F_SETFL, fcntl(c, F_GETFL) & ~O_NONBLOCK);
		clients[n++] = c;
	}
	return n;
}

int engine_guard_run(const struct agent_config *cfg, int listen_fd, int wake_fd)
{
	fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
	struct pollfd pfd[2] = {{listen_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
	/* No timeout: the guard costs the idle guest nothing until a client or a thaw. */
	while (poll(pfd, 2, -1) < 0)
		if (errno != EINTR)
			return -1;
	int *clients = calloc(GUARD_MAX_PAIRS, sizeof *clients);
	if (!clients)
		return -1;
	size_t n = accept_queued(listen_fd, clients, 0, GUARD_MAX_PAIRS);
	/* A client, or a SIGTERM that did not come from a thaw (systemd stopping the agent's whole
	 * cgroup, someone's kill): either way nobody may be left with a frozen engine. */
	if (n > 0 || engine_recorded_frozen()) {
		char err[256] = "";
		json_t *doc = engine_thaw_for(
		    cfg, n > 0 ? "a docker.sock client" : "the guard was stopped", err, sizeof err);
		if (!doc)
			vmc_warn("the guard could not thaw the engine: %s", err);
		json_decref(doc);
	}
	/* dockerd's socket has the path again: whoever queued on ours meanwhile is ours. */
	n = accept_queued(listen_fd, clients, n, GUARD_MAX_PAIRS);
	close(listen_fd);
	struct pair *pairs = calloc(n ? n : 1, sizeof *pairs);
	size_t np = 0;
	for (size_t i = 0; pairs && i < n; i++) {
		int d = connect_docker(cfg->docker_socket);
		if (d < 0) {
			vmc_warn("cannot relay a docker.sock client to dockerd:");
			close(clients[i]);
			continue;
		}
		pairs[np++] = (struct pair){{clients[i], d}, {true, true}};
	}
	free(clients);
	if (np > 0)
		vmc_debug("relaying %zu docker.sock connection(s) accepted while frozen", np);
	relay_all(pairs, np);
	free(pairs);
	return 0;
}

/* ---- the guard as a process ---------------------------------------------------------------------
 */

int engine_guard_main(const struct agent_config *cfg)
{
	vmc_log_use_syslog(true);
	/*
	 * A guard that thaws for its client can find a newer freeze recorded (the API thawed its
	 * own and froze again while it waited for the lock): that freeze's guard must be stopped
	 * too, or it waits forever on a socket that no longer has the path (on real Lima, 9 of 50
	 * quick freeze/thaw cycles under a client loop left one).
	 */
	engine_use_guard_process();
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigprocmask(SIG_BLOCK, &term, NULL);
	signal(SIGPIPE, SIG_IGN);
	int wake = signalfd(-1, &term, SFD_CLOEXEC);
	struct stat sb;
	if (wake < 0 || fstat(GUARD_FD, &sb) < 0 || !S_ISSOCK(sb.st_mode)) {
		vmc_warn("engine guard: no listening socket on fd %d (it is started by a freeze)",
			 GUARD_FD);
		return VMC_EXIT_USAGE;
	}
	return engine_guard_run(cfg, GUARD_FD, wake) < 0 ? VMC_EXIT_FAILURE : VMC_EXIT_OK;
}

static pid_t spawn_guard(const struct agent_config *cfg, int listen_fd, char *err, size_t errsize)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t blocked, all;
	sigemptyset(&blocked);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, listen_fd, GUARD_FD);
	/* Detached from whoever froze: a terminal, the daemon's stdio. It logs to syslog. */
	for (int fd = 0; fd < 3; fd++)
		posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
					    POSIX_SPAWN_SETSIGDEF);
	/*
	 * The guard starts with SIGTERM and SIGINT blocked, as engine_guard_main keeps them: a thaw
	 * right after the freeze (milliseconds) must not kill it before it reads its signalfd, with
	 * clients already queued on its socket (they would get an empty reply).
	 */
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGINT);
	posix_spawnattr_setsigmask(&attr, &blocked);
	posix_spawnattr_setsigdefault(&attr, &all);
	char config_arg[] = "--config";
	char *argv[] = {"vmcost-agent", "engine", "guard", NULL, NULL, NULL};
	if (cfg->source[0]) {
		argv[3] = config_arg;
		argv[4] = (char *)cfg->source;
	}
	/* The binary by its own path, so the guard's name (comm) is ours and not "exe". */
	char exe[512];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (len <= 0 || strstr(exe, " (deleted)"))
		snprintf(exe, sizeof exe, "/proc/self/exe");
	else
		exe[len] = '\0';
	pid_t pid;
	int rc = posix_spawn(&pid, exe, &fa, &attr, argv, NULL);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(listen_fd);
	if (rc != 0) {
		snprintf(err, errsize, "cannot start vmcost-agent engine guard: %s", strerror(rc));
		return -1;
	}
	return pid;
}

bool engine_is_guard_cmdline(const char *cmdline)
{
	const char *args = strchr(cmdline, ' ');
	return args && strncmp(args, " engine guard", 13) == 0 &&
	       (args[13] == '\0' || args[13] == ' ');
}

/* Only a guard of ours, by its arguments (its name depends on how it was started): the pid of a
 * guard that died long ago may be someone else's now. */
static void stop_guard(pid_t pid)
{
	char cmdline[1024];
	if (vmc_proc_cmdline_read(pid, cmdline, sizeof cmdline) == 0 &&
	    engine_is_guard_cmdline(cmdline))
		kill(pid, SIGTERM);
	else
		vmc_debug("pid %d is no longer the docker.sock guard: left alone", (int)pid);
}

static const struct engine_guard_hooks process_hooks = {spawn_guard, stop_guard};

void engine_use_guard_process(void)
{
	engine_set_guard_hooks(&process_hooks);
}
