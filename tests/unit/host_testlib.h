/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the host unit tests: temporary LIMA_HOME trees, fake limactl scripts on PATH, live
 * and dead pids, and capturing what a command prints. Header-only (each test is one program).
 */
#ifndef VMC_HOST_TESTLIB_H
#define VMC_HOST_TESTLIB_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char t_root[128];

/* CHECK_STR for long strings (paths): check.h's message buffer would truncate them. */
#define CHECK_PATH(actual, expected) CHECK(strcmp((actual), (expected)) == 0)

/* mkdir -p for the directory part of root-relative rel, then write text. */
__attribute__((format(printf, 2, 3))) static void t_write(const char *text, const char *relfmt, ...)
{
	char rel[1024], path[5200];
	va_list ap;
	va_start(ap, relfmt);
	vsnprintf(rel, sizeof rel, relfmt, ap);
	va_end(ap);
	snprintf(path, sizeof path, "%s/%s", t_root, rel);
	for (char *s = path + strlen(t_root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

__attribute__((unused)) static void t_chmod(const char *rel, mode_t mode)
{
	char path[5200];
	snprintf(path, sizeof path, "%s/%s", t_root, rel);
	chmod(path, mode);
}

static void t_setup(const char *tag)
{
	snprintf(t_root, sizeof t_root, "/tmp/vmc-%s-XXXXXX", tag);
	if (!mkdtemp(t_root)) {
		perror("mkdtemp");
		exit(2);
	}
	char home[4200], bin[4200];
	snprintf(home, sizeof home, "%s/lima", t_root);
	snprintf(bin, sizeof bin, "%s/bin", t_root);
	mkdir(home, 0755);
	mkdir(bin, 0755);
	setenv("LIMA_HOME", home, 1);
	/* No limactl on PATH unless a test writes one into bin/. */
	setenv("PATH", bin, 1);
}

static void t_cleanup(void)
{
	char cmd[4300];
	snprintf(cmd, sizeof cmd, "/bin/rm -rf '%s'", t_root);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", t_root);
}

/* A pid that certainly is not running: a child that exited and was reaped. */
__attribute__((unused)) static pid_t t_dead_pid(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	return p;
}

/* A live child that sleeps until t_kill. */
__attribute__((unused)) static pid_t t_live_child(void)
{
	pid_t p = fork();
	if (p == 0) {
		for (;;)
			pause();
	}
	return p;
}

__attribute__((unused)) static void t_kill(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

__attribute__((unused)) static void t_write_pid(pid_t pid, const char *relfmt, const char *leaf)
{
	char text[32];
	snprintf(text, sizeof text, "%ld\n", (long)pid);
	t_write(text, "%s/%s", relfmt, leaf);
}

/*
 * Captures stdout and stderr of fn() into the two buffers (NUL-terminated) and returns its
 * return value. Output that does not fit is cut.
 */
static char t_out[65536], t_err[16384];

__attribute__((unused)) static int t_capture(int (*fn)(int, char **), int argc, char **argv)
{
	fflush(stdout);
	fflush(stderr);
	char out_path[4200], err_path[4200];
	snprintf(out_path, sizeof out_path, "%s/stdout", t_root);
	snprintf(err_path, sizeof err_path, "%s/stderr", t_root);
	int saved_out = dup(1), saved_err = dup(2);
	int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fo, 1);
	dup2(fe, 2);
	close(fo);
	close(fe);
	int rc = fn(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	FILE *f = fopen(out_path, "r");
	size_t n = f ? fread(t_out, 1, sizeof t_out - 1, f) : 0;
	t_out[n] = '\0';
	if (f)
		fclose(f);
	f = fopen(err_path, "r");
	n = f ? fread(t_err, 1, sizeof t_err - 1, f) : 0;
	t_err[n] = '\0';
	if (f)
		fclose(f);
	return rc;
}

/* ---- fake peers on unix sockets (vmcost-agent, QEMU) ------------------------------------- */

__attribute__((unused)) static int t_listen_unix(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	size_t len = strlen(path);
	if (len >= sizeof addr.sun_path) {
		fprintf(stderr, "socket path too long: %s\n", path);
		exit(2);
	}
	memcpy(addr.sun_path, path, len + 1);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 4) < 0) {
		perror(path);
		exit(2);
	}
	return fd;
}

/* Reads one HTTP request head (and ignores any body: the client sends small ones). */
__attribute__((unused)) static void t_read_request(int fd, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	while (used + 1 < size && !strstr(buf, "\r\n\r\n")) {
		ssize_t n = read(fd, buf + used, size - used - 1);
		if (n <= 0)
			break;
		used += (size_t)n;
		buf[used] = '\0';
	}
}

/*
 * A child that answers `count` connections with the same raw bytes, after reading a request
 * head (HTTP) or at once (a peer that speaks first, as QEMU does).
 */
__attribute__((unused)) static pid_t t_fake_peer(const char *path, const char *response, int count,
						 bool speaks_first)
{
	int lfd = t_listen_unix(path);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < count; i++) {
			int c = accept(lfd, NULL, NULL);
			if (c < 0)
				_exit(1);
			char req[4096];
			if (!speaks_first)
				t_read_request(c, req, sizeof req);
			if (write(c, response, strlen(response)) < 0)
				_exit(1);
			close(c);
		}
		_exit(0);
	}
	close(lfd);
	return pid;
}

/*
 * A fake QEMU on QMP for one connection: the greeting, then answers by command name, with a
 * BALLOON_CHANGE event before each query-balloon answer (a client must skip it). The balloon
 * starts at 2 GiB and goes where "balloon" sets it, at once; without a balloon device every
 * command but qmp_capabilities gets DeviceNotActive.
 */
__attribute__((unused)) static pid_t t_fake_qemu(const char *path, bool has_balloon)
{
	int lfd = t_listen_unix(path);
	pid_t pid = fork();
	if (pid != 0) {
		close(lfd);
		return pid;
	}
	int c = accept(lfd, NULL, NULL);
	FILE *in = fdopen(c, "r");
	const char greeting[] = "{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 22, \"minor\": 2, "
				"\"major\": 7}, \"package\": \"Debian\"}, \"capabilities\": "
				"[\"oob\"]}}\r\n";
	if (write(c, greeting, sizeof greeting - 1) < 0)
		_exit(1);
	long long actual = 2147483648LL;
	char line[1024];
	while (fgets(line, sizeof line, in)) {
		char out[512];
		if (strstr(line, "qmp_capabilities")) {
			snprintf(out, sizeof out, "{\"return\": {}}\r\n");
		} else if (!has_balloon) {
			snprintf(
			    out, sizeof out,
			    "{\"error\": {\"class\": \"DeviceNotActive\", \"desc\": \"No balloon "
			    "device has been activated\"}}\r\n");
		} else if (strstr(line, "query-balloon")) {
			/* An event first: the client must skip it. */
			snprintf(
			    out, sizeof out,
			    "{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2}, \"event\": "
			    "\"BALLOON_CHANGE\", \"data\": {\"actual\": %lld}}\r\n{\"return\": "
			    "{\"actual\": %lld}}\r\n",
			    actual, actual);
		} else if (strstr(line, "\"balloon\"")) {
			const char *v = strstr(line, "\"value\":");
			actual = v ? atoll(v + 8) : -1;
			snprintf(out, sizeof out, "{\"return\": {}}\r\n");
		} else {
			snprintf(out, sizeof out,
				 "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": "
				 "\"nope\"}}\r\n");
		}
		if (write(c, out, strlen(out)) < 0)
			_exit(1);
	}
	_exit(0);
}

#endif
