/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's API under load, over a real unix socket with the agent core replaced by doubles:
 * many parallel clients all get an answer, clients that stall halfway through a request line
 * neither block new clients nor keep their connection for long, and a server whose request
 * slots are all busy says so with a 503 instead of closing the connection. Clients are raw
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
	RUN(when_every_request_slot_is_busy_the_answer_is_503);
	server_stop(srv, 5.0);
	rmdir(tmpdir);
	return check_done();
}
