/* SPDX-License-Identifier: Apache-2.0 */
#include "clients/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* limactl's JSON for dozens of instances is a few hundred KiB; more is not limactl talking. */
#define SPAWN_MAX_OUTPUT (16u << 20)

bool spawn_find_on_path(const char *name, char *buf, size_t size)
{
	if (strchr(name, '/')) {
		snprintf(buf, size, "%s", name);
		return access(buf, X_OK) == 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		int n = snprintf(buf, size, "%.*s/%s", (int)len, len ? path : ".", name);
		if (n > 0 && (size_t)n < size && access(buf, X_OK) == 0)
			return true;
		path += len;
		if (*path == ':')
			path++;
	}
	return false;
}

static char **child_environment(const char *const *unset_env)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 1, sizeof *env);
	if (!env)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool drop = false;
		for (size_t u = 0; unset_env && unset_env[u]; u++) {
			size_t len = strlen(unset_env[u]);
			if (strncmp(environ[i], unset_env[u], len) == 0 && environ[i][len] == '=')
				drop = true;
		}
		if (!drop)
			env[k++] = environ[i];
	}
	return env;
}

struct sink {
	int fd;
	char *buf;
	size_t len, cap;
};

/* Returns 1 while the pipe is open, 0 at EOF, -1 on error. */
static int drain(struct sink *s)
{
	if (s->len + 4096 + 1 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8192;
		if (cap > SPAWN_MAX_OUTPUT + 4096 + 1) {
			errno = EFBIG;
			return -1;
		}
		char *grown = realloc(s->buf, cap);
		if (!grown)
			return -1;
		s->buf = grown;
		s->cap = cap;
	}
	ssize_t n = read(s->fd, s->buf + s->len, 4096);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -1;
	if (n == 0)
		return 0;
	s->len += (size_t)n;
	s->buf[s->len] = '\0';
	return 1;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static int collect(struct sink sinks[2], pid_t child, long timeout_ms, bool *timed_out)
{
	double deadline = now_ms() + (double)timeout_ms;
	int open_pipes = 2;
	while (open_pipes > 0) {
		struct pollfd pfd[2];
		nfds_t np = 0;
		struct sink *order[2];
		for (int i = 0; i < 2; i++)
			if (sinks[i].fd >= 0) {
				pfd[np].fd = sinks[i].fd;
				pfd[np].events = POLLIN;
				order[np++] = &sinks[i];
			}
		int wait_ms = -1;
		if (timeout_ms > 0) {
			double left = deadline - now_ms();
			if (left <= 0) {
				kill(child, SIGKILL);
				*timed_out = true;
				return 0;
			}
			wait_ms = (int)left + 1;
		}
		int rc = poll(pfd, np, wait_ms);
		if (rc < 0 && errno != EINTR)
			return -1;
		for (nfds_t i = 0; rc > 0 && i < np; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			int d = drain(order[i]);
			if (d < 0) {
				kill(child, SIGKILL);
				return -1;
			}
			if (d == 0) {
				close(order[i]->fd);
				order[i]->fd = -1;
				open_pipes--;
			}
		}
	}
	return 0;
}

/* pipe2() is not on macOS; nothing here runs threads, so the window does not matter. */
static int cloexec_pipe(int fds[2])
{
	if (pipe(fds) < 0)
		return -1;
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

static char *take(struct sink *s, size_t *len)
{
	if (!s->buf) {
		s->buf = calloc(1, 1);
		s->len = 0;
	}
	*len = s->len;
	return s->buf;
}

int spawn_capture(char *const argv[], const char *const *unset_env, long timeout_ms,
		  struct spawn_result *res)
{
	memset(res, 0, sizeof *res);
	res->exit_code = -1;
	char exe[PATH_MAX];
	if (!spawn_find_on_path(argv[0], exe, sizeof exe)) {
		errno = ENOENT;
		return -1;
	}
	int out_pipe[2], err_pipe[2];
	if (cloexec_pipe(out_pipe) < 0)
		return -1;
	if (cloexec_pipe(err_pipe) < 0) {
		close(out_pipe[0]);
		close(out_pipe[1]);
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
	char **env = child_environment(unset_env);
	pid_t child;
	int rc = env ? posix_spawn(&child, exe, &fa, NULL, argv, env) : ENOMEM;
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	close(out_pipe[1]);
	close(err_pipe[1]);
	if (rc != 0) {
		close(out_pipe[0]);
		close(err_pipe[0]);
		errno = rc;
		return -1;
	}
	struct sink sinks[2] = {{.fd = out_pipe[0]}, {.fd = err_pipe[0]}};
	int collected = collect(sinks, child, timeout_ms, &res->timed_out);
	int saved = errno;
	for (int i = 0; i < 2; i++)
		if (sinks[i].fd >= 0)
			close(sinks[i].fd);
	int status;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	res->out = take(&sinks[0], &res->out_len);
	res->err = take(&sinks[1], &res->err_len);
	if (collected < 0) {
		spawn_result_free(res);
		errno = saved;
		return -1;
	}
	if (WIFEXITED(status))
		res->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		res->exit_code = 128 + WTERMSIG(status);
	return 0;
}

void spawn_result_free(struct spawn_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
	res->out_len = res->err_len = 0;
}
