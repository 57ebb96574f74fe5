/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fake daemon on a unix socket, curl's test-server style: a thread accepts one connection per
 * scripted exchange, records the exact request bytes it received and replays canned response
 * bytes, then closes. No HTTP parsing: the server reads until it has as many bytes as the
 * expected request (or the client goes quiet), so a wrong request shows up as a byte diff.
 * Header-only, for tests/unit/host_*.c.
 */
#ifndef VMC_FAKE_DAEMON_H
#define VMC_FAKE_DAEMON_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define FAKE_MAX_EXCHANGES 16

struct fake_exchange {
	char *expect; /* request bytes the client should send */
	size_t expect_len;
	char *reply; /* response bytes to replay */
	size_t reply_len;
	char *got; /* what the client really sent */
	size_t got_len;
};

struct fake_daemon {
	char dir[64];
	char sock[100];
	int listen_fd;
	pthread_t thread;
	bool started;
	struct fake_exchange ex[FAKE_MAX_EXCHANGES];
	size_t n;
	size_t served;
	size_t reply_piece; /* write replies in pieces of this size (0 = all at once) */
};

static inline char *fake_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			cap *= 2;
			char *grown = realloc(buf, cap + 1);
			if (!grown) {
				free(buf);
				buf = NULL;
			}
			buf = grown;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

/* Adds an exchange from in-memory bytes (copied). */
static inline void fake_add(struct fake_daemon *fd, const char *expect, size_t expect_len,
			    const char *reply, size_t reply_len)
{
	struct fake_exchange *e = &fd->ex[fd->n++];
	e->expect = malloc(expect_len + 1);
	memcpy(e->expect, expect, expect_len);
	e->expect[expect_len] = '\0';
	e->expect_len = expect_len;
	e->reply = malloc(reply_len + 1);
	memcpy(e->reply, reply, reply_len);
	e->reply[reply_len] = '\0';
	e->reply_len = reply_len;
}

/* Adds DIR/NAME.request and DIR/NAME.response; returns -1 if either is missing. */
static inline int fake_add_files(struct fake_daemon *fd, const char *dir, const char *name)
{
	char req[512], resp[512];
	snprintf(req, sizeof req, "%s/%s.request", dir, name);
	snprintf(resp, sizeof resp, "%s/%s.response", dir, name);
	size_t qlen = 0, rlen = 0;
	char *q = fake_read_file(req, &qlen);
	char *r = fake_read_file(resp, &rlen);
	if (!q || !r) {
		fprintf(stderr, "fake daemon: missing fixture %s or %s\n", req, resp);
		free(q);
		free(r);
		return -1;
	}
	fake_add(fd, q, qlen, r, rlen);
	free(q);
	free(r);
	return 0;
}

static inline void fake_record(struct fake_exchange *e, int conn)
{
	size_t cap = e->expect_len + 4096;
	e->got = malloc(cap + 1);
	e->got_len = 0;
	for (;;) {
		/* Long wait for the expected bytes, short one for anything beyond them. */
		int wait_ms = e->got_len < e->expect_len ? 3000 : 50;
		struct pollfd p = {.fd = conn, .events = POLLIN};
		if (poll(&p, 1, wait_ms) <= 0)
			break;
		if (e->got_len == cap)
			break;
		ssize_t r = read(conn, e->got + e->got_len, cap - e->got_len);
		if (r <= 0)
			break;
		e->got_len += (size_t)r;
	}
	e->got[e->got_len] = '\0';
}

static inline void fake_reply(struct fake_daemon *fd, struct fake_exchange *e, int conn)
{
	size_t off = 0;
	while (off < e->reply_len) {
		size_t piece = e->reply_len - off;
		if (fd->reply_piece && piece > fd->reply_piece)
			piece = fd->reply_piece;
		ssize_t w = write(conn, e->reply + off, piece);
		if (w <= 0)
			break;
		off += (size_t)w;
		if (fd->reply_piece)
			usleep(2000);
	}
}

static inline void *fake_serve(void *arg)
{
	struct fake_daemon *fd = arg;
	for (size_t i = 0; i < fd->n; i++) {
		struct pollfd p = {.fd = fd->listen_fd, .events = POLLIN};
		if (poll(&p, 1, 5000) <= 0)
			break;
		int conn = accept(fd->listen_fd, NULL, NULL);
		if (conn < 0)
			break;
		fake_record(&fd->ex[i], conn);
		fake_reply(fd, &fd->ex[i], conn);
		shutdown(conn, SHUT_RDWR);
		close(conn);
		fd->served = i + 1;
	}
	return NULL;
}

/* Creates the socket in a fresh temp dir and starts serving the exchanges added so far. */
static inline int fake_start(struct fake_daemon *fd)
{
	snprintf(fd->dir, sizeof fd->dir, "/tmp/vmcost-fake-XXXXXX");
	if (!mkdtemp(fd->dir))
		return -1;
	snprintf(fd->sock, sizeof fd->sock, "%.60s/docker.sock", fd->dir);
	fd->listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	snprintf(addr.sun_path, sizeof addr.sun_path, "%.100s", fd->sock);
	if (fd->listen_fd < 0 || bind(fd->listen_fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
	    listen(fd->listen_fd, 8) != 0)
		return -1;
	if (pthread_create(&fd->thread, NULL, fake_serve, fd) != 0)
		return -1;
	fd->started = true;
	return 0;
}

/* Joins the thread, removes the socket; exchanges stay readable until fake_free. */
static inline void fake_stop(struct fake_daemon *fd)
{
	if (fd->started)
		pthread_join(fd->thread, NULL);
	fd->started = false;
	if (fd->listen_fd >= 0)
		close(fd->listen_fd);
	fd->listen_fd = -1;
	unlink(fd->sock);
	rmdir(fd->dir);
}

static inline void fake_free(struct fake_daemon *fd)
{
	for (size_t i = 0; i < fd->n; i++) {
		free(fd->ex[i].expect);
		free(fd->ex[i].reply);
		free(fd->ex[i].got);
	}
	memset(fd, 0, sizeof *fd);
	fd->listen_fd = -1;
}

/* True if exchange i received exactly the expected bytes; prints a diff position otherwise. */
static inline bool fake_request_matches(const struct fake_daemon *fd, size_t i)
{
	const struct fake_exchange *e = &fd->ex[i];
	if (e->got && e->got_len == e->expect_len && memcmp(e->got, e->expect, e->got_len) == 0)
		return true;
	size_t at = 0;
	while (e->got && at < e->got_len && at < e->expect_len && e->got[at] == e->expect[at])
		at++;
	fprintf(stderr,
		"request %zu differs at byte %zu:\n--- expected (%zu bytes)\n%s\n--- got (%zu "
		"bytes)\n%s\n---\n",
		i, at, e->expect_len, e->expect, e->got_len, e->got ? e->got : "(nothing)");
	return false;
}

#endif
