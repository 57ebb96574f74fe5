/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's API under load, over a real unix socket with the agent core replaced by doubles:
 * many parallel clients all get an answer, clients that stall halfway through a request line
 * neither block new clients nor keep their connection for long, clients that drip a byte a
 * second (which no inactivity timeout ends) are cut at the request deadline, more of them than
 * the connection limit do not keep new clients out for longer than that, a server whose
 * connections or request slots are all taken says so with a 503 instead of closing the
 * connection, and a handler that runs longer than the deadline is not cut. Clients are raw
 * sockets so a test can stop sending in the middle of a request; each read has a timeout, so a
 * server that never answers fails the test instead of hanging it. Runs under TSan too.
 */
#include "check.h"
#include "config.h"
#include "log.h"
#include "scratch.h"
#include "server.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static atomic_int wakeups_running;

static json_t *fake_status(struct agent_state *st, char *err, size_t errsize)
{
	(void)st;
	(void)err;
	(void)errsize;
	return json_pack("{s:s}", "doc", "status");
}

/* Holds a request slot for as long as asked, like the real profiler. */
static json_t *fake_wakeups(double seconds, char *err, size_t errsize)
{
	(void)err;
	(void)errsize;
	wakeups_running++;
	struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
	nanosleep(&ts, NULL);
	wakeups_running--;
	return json_pack("{s:s}", "doc", "wakeups");
}

static const struct server_ops fake_ops = {.status = fake_status, .wakeups = fake_wakeups};
static struct agent_config cfg;
static struct server_ctx ctx = {&fake_ops, NULL, &cfg};
static char tmpdir[] = "/tmp/vmcost-agent-load-XXXXXX";

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads until EOF or timeout_s; returns the bytes read (NUL-terminated), -1 on timeout. */
static long read_all(int fd, char *buf, size_t size, double timeout_s)
{
	size_t len = 0;
	double deadline = now_s() + timeout_s;
	for (;;) {
		double left = deadline - now_s();
		if (left <= 0)
			return -1;
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n <= 0 || len + (size_t)n >= size - 1) {
			if (n > 0)
				len += (size_t)n;
			buf[len] = '\0';
			return (long)len;
		}
		len += (size_t)n;
	}
}

/* One request on a new connection: the HTTP status, 0 when closed without one, -1 on timeout. */
static int request(const char *method, const char *path, char *body, size_t body_size)
{
	int fd = scratch_connect(cfg.socket_path);
	if (fd < 0)
		return 0;
	char req[256];
	int n =
	    snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: agent\r\nConnection: close\r\n\r\n",
		     method, path);
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return 0;
	}
	char reply[4096];
	long len = read_all(fd, reply, sizeof reply, 15.0);
	close(fd);
	if (len < 0)
		return -1;
	int status = 0;
	if (sscanf(reply, "HTTP/1.%*d %d", &status) != 1)
		return 0;
	const char *start = strstr(reply, "\r\n\r\n");
	if (body && start)
		snprintf(body, body_size, "%s", start + 4);
	return status;
}

static struct agent_server *srv;

struct client_run {
	int requests;
	atomic_int *ok, *busy, *closed, *timed_out;
};

static void *client(void *arg)
{
	struct client_run *run = arg;
	for (int i = 0; i < run->requests; i++) {
		int status = request("GET", "/v1/status", NULL, 0);
		if (status == 200)
			(*run->ok)++;
		else if (status == 503)
			(*run->busy)++;
		else if (status < 0)
			(*run->timed_out)++;
		else
			(*run->closed)++;
	}
	return NULL;
}

TEST(forty_parallel_clients_all_get_an_answer)
{
	enum { CLIENTS = 40, EACH = 10 };
	atomic_int ok = 0, busy = 0, closed = 0, timed_out = 0;
	struct client_run run = {EACH, &ok, &busy, &closed, &timed_out};
	pthread_t threads[CLIENTS];
	for (int i = 0; i < CLIENTS; i++)
		pthread_create(&threads[i], NULL, client, &run);
	for (int i = 0; i < CLIENTS; i++)
		pthread_join(threads[i], NULL);
	CHECK_INT(closed, 0);
	CHECK_INT(timed_out, 0);
	/* The status double is instant: nothing had to wait for a request slot. */
	CHECK_INT(ok, CLIENTS * EACH);
	CHECK_INT(busy, 0);
}

/* Connections that sent half a request line and then nothing. */
static int stall(int *fds, int n)
{
	int opened = 0;
	for (int i = 0; i < n; i++) {
		fds[i] = scratch_connect(cfg.socket_path);
		if (fds[i] < 0)
			break;
		if (write(fds[i], "GET /v1/sta", 11) != 11)
			break;
		opened++;
	}
	return opened;
}

TEST(fifty_stalled_clients_do_not_block_a_hundred_new_ones)
{
	enum { STALLED = 50, NEW = 100 };
	int fds[STALLED];
	CHECK_INT(stall(fds, STALLED), STALLED);
	/* Every new client starts while all the stalled ones still hold their connections. */
	atomic_int ok = 0, busy = 0, closed = 0, timed_out = 0;
	struct client_run run = {NEW / 10, &ok, &busy, &closed, &timed_out};
	pthread_t threads[10];
	double t0 = now_s();
	for (int i = 0; i < 10; i++)
		pthread_create(&threads[i], NULL, client, &run);
	for (int i = 0; i < 10; i++)
		pthread_join(threads[i], NULL);
	double took = now_s() - t0;
	CHECK_INT(ok, NEW);
	CHECK_INT(closed + timed_out + busy, 0);
	CHECK(took < SERVER_READ_TIMEOUT_S);
	for (int i = 0; i < STALLED; i++)
		close(fds[i]);
}

TEST(a_stalled_client_is_closed_after_the_read_timeout)
{
	int fd;
	CHECK_INT(stall(&fd, 1), 1);
	char buf[256];
	double t0 = now_s();
	long len = read_all(fd, buf, sizeof buf, SERVER_READ_TIMEOUT_S + 5.0);
	double took = now_s() - t0;
	close(fd);
	/* Closed by the server (EOF, nothing sent), not by our own timeout. */
	CHECK(len >= 0);
	CHECK(took >= SERVER_READ_TIMEOUT_S - 1.0);
	CHECK(took < SERVER_READ_TIMEOUT_S + 3.0);
}

/* ---- clients that drip a byte a second ---------------------------------------------------- */

/* A request head far too long to be complete before the test ends, at a byte a second. */
static const char drip_request[] = "GET /v1/status HTTP/1.1\r\nHost: agent\r\nX-Pad: "
				   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				   "aaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";

/* More than the connections served: those beyond are answered 503 once their request is
 * complete, which a drip's never is. */
#define DRIPS (SERVER_MAX_CONNECTIONS + 32)

struct drip {
	int fds[DRIPS];
	double cut_at[DRIPS]; /* seconds after t0 the server ended it; 0: still open */
	int n;
	double t0;
	atomic_bool stop;
	pthread_mutex_t lock;
};

/* Each second, the next byte to every connection still open; notes when the server ended one. */
static void *dripper(void *arg)
{
	struct drip *d = arg;
	for (size_t sent = 0; !d->stop; sent++) {
		pthread_mutex_lock(&d->lock);
		for (int i = 0; i < d->n; i++) {
			if (d->cut_at[i] > 0)
				continue;
			struct pollfd p = {d->fds[i], POLLIN, 0};
			char c;
			bool ended = poll(&p, 1, 0) > 0 && read(d->fds[i], &c, 1) <= 0;
			if (!ended && sent < sizeof drip_request - 1)
				ended = send(d->fds[i], drip_request + sent, 1, MSG_NOSIGNAL) < 0 &&
					errno != EAGAIN;
			if (ended)
				d->cut_at[i] = now_s() - d->t0;
		}
		pthread_mutex_unlock(&d->lock);
		for (int t = 0; t < 10 && !d->stop; t++) {
			struct timespec step = {0, 100 * 1000 * 1000};
			nanosleep(&step, NULL);
		}
	}
	return NULL;
}

static int drip_cut(struct drip *d, double *first, double *last)
{
	int n = 0;
	*first = 1e9;
	*last = 0;
	pthread_mutex_lock(&d->lock);
	for (int i = 0; i < d->n; i++) {
		if (d->cut_at[i] <= 0)
			continue;
		n++;
		if (d->cut_at[i] < *first)
			*first = d->cut_at[i];
		if (d->cut_at[i] > *last)
			*last = d->cut_at[i];
	}
	pthread_mutex_unlock(&d->lock);
	return n;
}

TEST(a_client_dripping_a_byte_a_second_is_cut_at_the_deadline)
{
	static struct drip d;
	memset(&d, 0, sizeof d);
	pthread_mutex_init(&d.lock, NULL);
	d.t0 = now_s();
	d.fds[0] = scratch_connect(cfg.socket_path);
	CHECK(d.fds[0] >= 0);
	d.n = 1;
	pthread_t t;
	pthread_create(&t, NULL, dripper, &d);
	double first, last;
	for (int i = 0; i < 200 && drip_cut(&d, &first, &last) == 0; i++) {
		struct timespec step = {0, 50 * 1000 * 1000};
		nanosleep(&step, NULL);
	}
	d.stop = true;
	pthread_join(t, NULL);
	/* Cut at the deadline, although it never went SERVER_READ_TIMEOUT_S without a byte. */
	CHECK_INT(drip_cut(&d, &first, &last), 1);
	CHECK(first >= SERVER_REQUEST_DEADLINE_S - 0.5);
	CHECK(first < SERVER_REQUEST_DEADLINE_S + 2.5);
	close(d.fds[0]);
	pthread_mutex_destroy(&d.lock);
}

struct late_client {
	double start_after; /* seconds after t0 */
	double t0;
	int status;
	double answered_at;
};

static void *late_client(void *arg)
{
	struct late_client *c = arg;
	double wait = c->t0 + c->start_after - now_s();
	if (wait > 0) {
		struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
		nanosleep(&ts, NULL);
	}
	c->status = request("GET", "/v1/status", NULL, 0);
	c->answered_at = now_s() - c->t0;
	return NULL;
}

TEST(more_dripping_clients_than_the_limit_do_not_keep_new_ones_out)
{
	static struct drip d;
	memset(&d, 0, sizeof d);
	pthread_mutex_init(&d.lock, NULL);
	d.t0 = now_s();
	for (int i = 0; i < (int)DRIPS; i++) {
		d.fds[i] = scratch_connect(cfg.socket_path);
		if (d.fds[i] < 0)
			break;
		d.n++;
	}
	CHECK_INT(d.n, DRIPS);
	pthread_t t;
	pthread_create(&t, NULL, dripper, &d);
	/* One new client while every connection served is taken, one after the deadline. */
	struct late_client during = {.start_after = 1, .t0 = d.t0};
	struct late_client after = {.start_after = SERVER_REQUEST_DEADLINE_S + 2, .t0 = d.t0};
	pthread_t tc[2];
	pthread_create(&tc[0], NULL, late_client, &during);
	pthread_create(&tc[1], NULL, late_client, &after);
	pthread_join(tc[0], NULL);
	pthread_join(tc[1], NULL);
	/* While full: told so at once, not left waiting nor closed without a word. */
	CHECK_INT(during.status, 503);
	CHECK(during.answered_at < 2.5);
	/* After the deadline: served, although every drip would still be sending its head. */
	CHECK_INT(after.status, 200);
	CHECK(after.answered_at < SERVER_REQUEST_DEADLINE_S + 4);
	double first, last;
	for (int i = 0; i < 200 && drip_cut(&d, &first, &last) < (int)DRIPS; i++) {
		struct timespec step = {0, 50 * 1000 * 1000};
		nanosleep(&step, NULL);
	}
	/* Every drip was cut at its deadline, none before. */
	CHECK_INT(drip_cut(&d, &first, &last), DRIPS);
	CHECK(first >= SERVER_REQUEST_DEADLINE_S - 0.5);
	CHECK(last < SERVER_REQUEST_DEADLINE_S + 4);
	d.stop = true;
	pthread_join(t, NULL);
	for (int i = 0; i < d.n; i++)
		close(d.fds[i]);
	pthread_mutex_destroy(&d.lock);
}

/* GET /v1/status on a new connection: the raw answer (status line, headers and body). */
static long raw_request(char *reply, size_t size)
{
	int fd = scratch_connect(cfg.socket_path);
	if (fd < 0)
		return -1;
	const char req[] = "GET /v1/status HTTP/1.1\r\nHost: agent\r\nConnection: close\r\n\r\n";
	long len = -1;
	if (write(fd, req, sizeof req - 1) == (ssize_t)(sizeof req - 1))
		len = read_all(fd, reply, size, 5.0);
	close(fd);
	return len;
}

TEST(beyond_the_connection_limit_the_answer_is_503)
{
	static int fds[SERVER_MAX_CONNECTIONS];
	CHECK_INT(stall(fds, SERVER_MAX_CONNECTIONS), SERVER_MAX_CONNECTIONS);
	/* Once libmicrohttpd has taken every stalled connection, a new request is told the agent
	 * is full (before that, it may still be served). */
	char reply[4096] = "";
	double took = 0;
	for (int i = 0; i < 100 && strncmp(reply, "HTTP/1.1 503", 12) != 0; i++) {
		double t0 = now_s();
		if (raw_request(reply, sizeof reply) < 0)
			break;
		took = now_s() - t0;
		if (strncmp(reply, "HTTP/1.1 503", 12) != 0) {
			struct timespec step = {0, 20 * 1000 * 1000};
			nanosleep(&step, NULL);
		}
	}
	CHECK(strncmp(reply, "HTTP/1.1 503", 12) == 0);
	CHECK(took < 1.0);
	CHECK(strstr(reply, "Retry-After: 1") != NULL);
	CHECK(strstr(reply, "the agent is full: more than 256 connections are open") != NULL);
	for (unsigned i = 0; i < SERVER_MAX_CONNECTIONS; i++)
		close(fds[i]);
	/* Freed: served again. */
	int status = 0;
	for (int i = 0; i < 100 && status != 200; i++) {
		status = request("GET", "/v1/status", NULL, 0);
		if (status != 200) {
			struct timespec step = {0, 20 * 1000 * 1000};
			nanosleep(&step, NULL);
		}
	}
	CHECK_INT(status, 200);
}

TEST(a_handler_that_runs_longer_than_the_deadline_is_not_cut)
{
	char path[64];
	snprintf(path, sizeof path, "/v1/wakeups?seconds=%.0f", SERVER_REQUEST_DEADLINE_S + 1);
	char body[512] = "";
	CHECK_INT(request("GET", path, body, sizeof body), 200);
	CHECK_CONTAINS(body, "wakeups");
}

struct slow_run {
	int status;
};

static void *slow_wakeups(void *arg)
{
	struct slow_run *run = arg;
	run->status = request("GET", "/v1/wakeups?seconds=3", NULL, 0);
	return NULL;
}

TEST(when_every_request_slot_is_busy_the_answer_is_503)
{
	enum { SLOW = SERVER_MAX_REQUESTS };
	struct slow_run slow[SLOW];
	pthread_t threads[SLOW];
	for (int i = 0; i < SLOW; i++)
		pthread_create(&threads[i], NULL, slow_wakeups, &slow[i]);
	for (int waited = 0; wakeups_running < SLOW && waited < 200; waited++) {
		struct timespec step = {0, 10 * 1000 * 1000};
		nanosleep(&step, NULL);
	}
	CHECK_INT(wakeups_running, SLOW);
	char body[1024] = "";
	double t0 = now_s();
	int status = request("GET", "/v1/status", body, sizeof body);
	CHECK_INT(status, 503);
	CHECK(now_s() - t0 < 1.0);
	json_t *doc = json_loads(body, 0, NULL);
	CHECK_CONTAINS(json_string_value(json_object_get(doc, "error")), "busy");
	json_decref(doc);
	for (int i = 0; i < SLOW; i++) {
		pthread_join(threads[i], NULL);
		CHECK_INT(slow[i].status, 200);
	}
	/* The slots are free again. */
	CHECK_INT(request("GET", "/v1/status", NULL, 0), 200);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	vmc_log_init("agent_server_load");
	vmc_log_set_level(VMC_LOG_ERROR);
	agent_config_defaults(&cfg);
	snprintf(cfg.socket_path, sizeof cfg.socket_path, "%s/agent.sock", tmpdir);
	snprintf(cfg.socket_group, sizeof cfg.socket_group, "%d", (int)getgid());
	char err[256] = "";
	srv = server_open(&ctx, err, sizeof err);
	if (srv && server_serve(srv, err, sizeof err) < 0)
		srv = NULL;
	if (!srv) {
		fprintf(stderr, "server_open/serve: %s\n", err);
		return 1;
	}
	RUN(forty_parallel_clients_all_get_an_answer);
	RUN(fifty_stalled_clients_do_not_block_a_hundred_new_ones);
	RUN(a_stalled_client_is_closed_after_the_read_timeout);
	RUN(a_client_dripping_a_byte_a_second_is_cut_at_the_deadline);
	RUN(more_dripping_clients_than_the_limit_do_not_keep_new_ones_out);
	RUN(beyond_the_connection_limit_the_answer_is_503);
	RUN(a_handler_that_runs_longer_than_the_deadline_is_not_cut);
	RUN(when_every_request_slot_is_busy_the_answer_is_503);
	server_stop(srv, 5.0);
	rmdir(tmpdir);
	return check_done();
}
