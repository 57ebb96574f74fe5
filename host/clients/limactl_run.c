/* SPDX-License-Identifier: Apache-2.0 */
#include "clients/limactl_run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* How long a terminated child gets before SIGKILL. */
#define GRACE_MS 3000

struct capture {
	int fd;
	char *buf;
	size_t len;
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* Returns 1 while open, 0 at EOF. Output beyond the bound is read and dropped. */
static int drain(struct capture *c)
{
	char chunk[4096];
	ssize_t n = read(c->fd, chunk, sizeof chunk);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : 0;
	if (n == 0)
		return 0;
	size_t take = (size_t)n;
	if (c->len + take > LIMACTL_MAX_OUTPUT)
		take = LIMACTL_MAX_OUTPUT - c->len;
	if (take > 0) {
		char *grown = realloc(c->buf, c->len + take + 1);
		if (grown) {
			memcpy(grown + c->len, chunk, take);
			c->buf = grown;
			c->len += take;
			grown[c->len] = '\0';
		}
	}
	return 1;
}

static int open_pipe(int fds[2])
{
	if (pipe(fds) < 0)
		return -1;
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

static pid_t spawn(const char *const *args, struct capture cap[2])
{
	size_t n = 0;
	while (args[n])
		n++;
	char **argv = calloc(n + 2, sizeof *argv);
	if (!argv)
		return -1;
	argv[0] = (char *)"limactl";
	for (size_t i = 0; i < n; i++)
		argv[i + 1] = (char *)args[i];
	int out[2], err[2];
	if (open_pipe(out) < 0) {
		free(argv);
		return -1;
	}
	if (open_pipe(err) < 0) {
		close(out[0]);
		close(out[1]);
		free(argv);
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
	pid_t child = -1;
	int rc = posix_spawnp(&child, "limactl", &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	free(argv);
	close(out[1]);
	close(err[1]);
	if (rc != 0) {
		close(out[0]);
		close(err[0]);
		errno = rc;
		return -1;
	}
	cap[0].fd = out[0];
	cap[1].fd = err[0];
	return child;
}

/*
 * Terminates the child's process group (SIGTERM, SIGKILL after the grace period). Returns
 * false once even that had time to work: stop reading pipes someone else may still hold.
 */
static bool terminate(pid_t child, double *term_at)
{
	double t = now_ms();
	if (*term_at == 0) {
		kill(-child, SIGTERM);
		*term_at = t;
	} else if (t - *term_at > GRACE_MS) {
		kill(-child, SIGKILL);
	}
	return t - *term_at <= GRACE_MS + 2000;
}

int limactl_run(const char *const *args, long timeout_ms, volatile sig_atomic_t *stop,
		struct limactl_result *res)
{
	memset(res, 0, sizeof *res);
	res->exit_code = -1;
	struct capture cap[2] = {{.fd = -1}, {.fd = -1}};
	pid_t child = spawn(args, cap);
	if (child < 0)
		return -1;
	double deadline = now_ms() + (double)timeout_ms, term_at = 0;
	int open = 2;
	while (open > 0) {
		bool keep_reading = true;
		if (stop && *stop) {
			res->interrupted = true;
			keep_reading = terminate(child, &term_at);
		} else if (timeout_ms > 0 && now_ms() > deadline) {
			res->timed_out = true;
			keep_reading = terminate(child, &term_at);
		}
		if (!keep_reading)
			break;
		struct pollfd pfd[2];
		struct capture *which[2];
		nfds_t np = 0;
		for (int i = 0; i < 2; i++)
			if (cap[i].fd >= 0) {
				pfd[np] = (struct pollfd){.fd = cap[i].fd, .events = POLLIN};
				which[np++] = &cap[i];
			}
		int rc = poll(pfd, np, 200);
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
	for (int i = 0; i < 2; i++)
		if (cap[i].fd >= 0)
			close(cap[i].fd);
	int status = 0;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status))
		res->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		res->exit_code = 128 + WTERMSIG(status);
	res->out = cap[0].buf ? cap[0].buf : calloc(1, 1);
	res->out_len = cap[0].len;
	res->err = cap[1].buf ? cap[1].buf : calloc(1, 1);
	res->err_len = cap[1].len;
	return 0;
}

void limactl_result_free(struct limactl_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
	res->out_len = res->err_len = 0;
}

void limactl_last_line(const char *text, char *buf, size_t size)
{
	if (size == 0)
		return;
	buf[0] = '\0';
	if (!text)
		return;
	const char *end = text + strlen(text);
	while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
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

void limactl_version_line(char *buf, size_t size)
{
	const char *args[] = {"--version", NULL};
	struct limactl_result r;
	snprintf(buf, size, "limactl version unknown");
	if (limactl_run(args, 30000, NULL, &r) != 0)
		return;
	if (r.exit_code == 0 && r.out_len)
		snprintf(buf, size, "%.*s", (int)strcspn(r.out, "\n"), r.out);
	limactl_result_free(&r);
}
