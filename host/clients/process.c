/* SPDX-License-Identifier: Apache-2.0 */
#include "clients/process.h"

#include "clock.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* How long a terminated child gets before SIGKILL, and how long we read after that. */
#define GRACE_S	     3.0
#define AFTER_KILL_S 2.0
/* How often a stop flag is looked at while the child is quiet. */
#define STOP_POLL_MS 200

bool process_find_on_path(const char *name, char *buf, size_t size)
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

/* One captured stream: what is kept (at most max bytes) and whether more was dropped. */
struct sink {
	int fd;
	char *buf;
	size_t len, max;
	bool dropped;
};

/* Returns 1 while the pipe is open, 0 at EOF (or a read error: nothing more will come). */
static int drain(struct sink *s)
{
	char chunk[4096];
	ssize_t n = read(s->fd, chunk, sizeof chunk);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : 0;
	if (n == 0)
		return 0;
	size_t keep = (size_t)n;
	if (keep > s->max - s->len) {
		keep = s->max - s->len;
		s->dropped = true;
	}
	if (keep > 0) {
		char *grown = realloc(s->buf, s->len + keep + 1);
		if (!grown) {
			s->dropped = true;
			return 1;
		}
		memcpy(grown + s->len, chunk, keep);
		s->buf = grown;
		s->len += keep;
		grown[s->len] = '\0';
	}
	return 1;
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

static pid_t spawn(const char *const argv[], const char *const *unset_env, int out[2], int err[2])
{
	char exe[PATH_MAX];
	if (!process_find_on_path(argv[0], exe, sizeof exe)) {
		errno = ENOENT;
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	/* Its own process group: a stop reaches ssh/socat grandchildren holding the pipes too. */
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	char **env = child_environment(unset_env);
	pid_t child = -1;
	/* posix_spawn's argv is char *const[] for historical reasons; it does not write to it. */
	int rc = env ? posix_spawn(&child, exe, &fa, &attr, (char *const *)argv, env) : ENOMEM;
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return child;
}

/*
 * Terminates the child's process group (SIGTERM, SIGKILL after the grace period). Returns
 * false once even that had time to work: stop reading pipes someone else may still hold.
 */
static bool terminate(pid_t child, double *term_at)
{
	double t = vmc_monotonic_s();
	if (*term_at == 0) {
		kill(-child, SIGTERM);
		*term_at = t;
	} else if (t - *term_at > GRACE_S) {
		kill(-child, SIGKILL);
	}
	return t - *term_at <= GRACE_S + AFTER_KILL_S;
}

/* Reads both streams until EOF, the timeout or the stop flag. */
static void collect(struct sink sinks[2], pid_t child, const struct process_options *opt,
		    struct process_result *res)
{
	double deadline = vmc_monotonic_s() + (double)opt->timeout_ms / 1000.0, term_at = 0;
	int open = 2;
	while (open > 0) {
		bool keep_reading = true;
		if (opt->stop && *opt->stop) {
			res->interrupted = true;
			keep_reading = terminate(child, &term_at);
		} else if (opt->timeout_ms > 0 && vmc_monotonic_s() > deadline) {
			res->timed_out = true;
			keep_reading = terminate(child, &term_at);
		}
		if (!keep_reading)
			return;
		int wait_ms = -1;
		if (term_at > 0 || opt->stop)
			wait_ms = STOP_POLL_MS;
		else if (opt->timeout_ms > 0)
			wait_ms = (int)((deadline - vmc_monotonic_s()) * 1000.0) + 1;
		struct pollfd pfd[2];
		struct sink *which[2];
		nfds_t np = 0;
		for (int i = 0; i < 2; i++)
			if (sinks[i].fd >= 0) {
				pfd[np] = (struct pollfd){.fd = sinks[i].fd, .events = POLLIN};
				which[np++] = &sinks[i];
			}
		int rc = poll(pfd, np, wait_ms < 0 ? -1 : wait_ms);
		for (nfds_t i = 0; rc > 0 && i < np; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (drain(which[i]) == 0) {
				close(which[i]->fd);
				which[i]->fd = -1;
				open--;
			}
		}
	}
}

static char *take(struct sink *s, size_t *len)
{
	*len = s->buf ? s->len : 0;
	return s->buf ? s->buf : calloc(1, 1);
}

int process_run(const char *const argv[], const struct process_options *opt,
		struct process_result *res)
{
	static const struct process_options defaults;
	if (!opt)
		opt = &defaults;
	memset(res, 0, sizeof *res);
	res->exit_code = -1;
	int out[2], err[2];
	if (cloexec_pipe(out) < 0)
		return -1;
	if (cloexec_pipe(err) < 0) {
		close(out[0]);
		close(out[1]);
		return -1;
	}
	pid_t child = spawn(argv, opt->unset_env, out, err);
	int saved = errno;
	close(out[1]);
	close(err[1]);
	if (child < 0) {
		close(out[0]);
		close(err[0]);
		errno = saved;
		return -1;
	}
	size_t max = opt->max_output ? opt->max_output : PROCESS_MAX_OUTPUT;
	struct sink sinks[2] = {{.fd = out[0], .max = max}, {.fd = err[0], .max = max}};
	collect(sinks, child, opt, res);
	for (int i = 0; i < 2; i++)
		if (sinks[i].fd >= 0)
			close(sinks[i].fd);
	int status = 0;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status))
		res->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		res->exit_code = 128 + WTERMSIG(status);
	res->truncated = sinks[0].dropped || sinks[1].dropped;
	res->out = take(&sinks[0], &res->out_len);
	res->err = take(&sinks[1], &res->err_len);
	return 0;
}

void process_result_free(struct process_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
	res->out_len = res->err_len = 0;
}

int process_first_line(const char *const argv[], long timeout_ms, char *buf, size_t size)
{
	if (size == 0)
		return -1;
	buf[0] = '\0';
	struct process_result r;
	if (process_run(argv, &(struct process_options){.timeout_ms = timeout_ms}, &r) != 0)
		return -1;
	if (r.exit_code == 0 && !r.timed_out)
		snprintf(buf, size, "%.*s", (int)strcspn(r.out, "\r\n"), r.out);
	process_result_free(&r);
	return buf[0] ? 0 : -1;
}

void process_last_line(const char *text, char *buf, size_t size)
{
	if (size == 0)
		return;
	buf[0] = '\0';
	if (!text)
		return;
	const char *end = text + strlen(text);
	while (end > text && isspace((unsigned char)end[-1]))
		end--;
	const char *start = end;
	while (start > text && start[-1] != '\n')
		start--;
	size_t len = (size_t)(end - start);
	if (len >= size)
		len = size - 1;
	memcpy(buf, start, len);
	buf[len] = '\0';
}
