/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP server: libmicrohttpd on the socket of server_socket.c, one thread per connection,
 * each request handed to server_route(). The threads sleep in poll() without a timeout while
 * nobody talks to them, so an idle guest pays nothing for the API.
 *
 * libmicrohttpd's own timeout is an inactivity timeout: a client that sends a byte every few
 * seconds keeps its connection for ever, and 256 of them fill the connection limit. So each
 * connection is also noted here (libmicrohttpd's connection notifications) with the time its
 * request must be complete by, and a deadline thread shuts down the socket of one that missed
 * it: libmicrohttpd's thread for it then reads the end and closes it. An entry is removed when
 * libmicrohttpd reports the connection closed, which it does before it closes the socket, so
 * the thread never touches a descriptor that another connection could have by then.
 */
#include "server.h"

#include "log.h"
#include "units.h"

#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Virtual size only; the pages a request touches are what counts in RSS. Explicit because musl's
 * default (128 KiB) is too small for an ASan build and glibc's (8 MiB) is needlessly large. */
#define SERVER_THREAD_STACK ((size_t)1 << 20)

/*
 * One open connection, as the deadline thread sees it. The list and fd are guarded by the
 * server's lock; the deadline is an atomic that the connection's own thread sets without it, so
 * a request never waits for the lock (on a busy guest, a thread blocked on a mutex loses its
 * CPU, and the requests in flight piled up into 503s).
 */
struct conn_entry {
	struct conn_entry *prev, *next;
	MHD_socket fd;
	atomic_llong deadline_ns; /* CLOCK_MONOTONIC ns its request must be complete by; 0: none */
	bool over_limit; /* beyond SERVER_MAX_CONNECTIONS: its request is answered 503; set before
			    the connection's thread starts, read-only after */
};

struct agent_server {
	struct MHD_Daemon *mhd;
	const struct server_ctx *ctx;
	struct server_socket sock;
	atomic_int in_flight;
	/* the request deadlines; lock guards everything below */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct conn_entry *conns;
	unsigned nconns;
	bool deadline_running, deadline_stop;
	atomic_bool
	    deadline_idle; /* the thread sleeps without a timeout: a deadline must wake it */
	pthread_t deadline_thread;
};

static long long monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#define DEADLINE_NS ((long long)(SERVER_REQUEST_DEADLINE_S * 1e9))

/* With the lock held: the earliest deadline still ahead (0: none), cutting those that passed. */
static long long cut_late_connections(struct agent_server *srv)
{
	long long now = monotonic_ns(), next = 0;
	for (struct conn_entry *e = srv->conns; e; e = e->next) {
		long long d = atomic_load(&e->deadline_ns);
		if (d <= 0)
			continue;
		if (d <= now) {
			/* The connection is still libmicrohttpd's (its entry is here), so the
			 * descriptor is still this connection's. A deadline set again meanwhile
			 * (the request completed) keeps it. */
			if (atomic_compare_exchange_strong(&e->deadline_ns, &d, 0)) {
				shutdown(e->fd, SHUT_RDWR);
				vmc_debug("a connection missed its %.0f s request deadline: closed",
					  SERVER_REQUEST_DEADLINE_S);
			}
		} else if (next == 0 || d < next) {
			next = d;
		}
	}
	return next;
}

/* The deadline thread: sleeps until the earliest deadline, or without a timeout if none. */
static void *deadline_main(void *arg)
{
	struct agent_server *srv = arg;
	pthread_mutex_lock(&srv->lock);
	while (!srv->deadline_stop) {
		long long next = cut_late_connections(srv);
		if (next == 0) {
			/* Idle first, then look again: a deadline set before this store is seen by
			 * the second look, one set after it sees the flag and signals (it needs the
			 * lock for that, which pthread_cond_wait gives up only while waiting). */
			atomic_store(&srv->deadline_idle, true);
			next = cut_late_connections(srv);
			if (next == 0)
				pthread_cond_wait(&srv->wake, &srv->lock);
			atomic_store(&srv->deadline_idle, false);
		} else {
			struct timespec until = {(time_t)(next / 1000000000LL),
						 (long)(next % 1000000000LL)};
			pthread_cond_timedwait(&srv->wake, &srv->lock, &until);
		}
	}
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

/*
 * After a deadline was set (without the lock). Deadlines are always now + the same length, so a
 * new one is never earlier than those the thread already sleeps for: only a thread asleep
 * without a timeout needs waking, and only then is the lock taken.
 */
static void wake_for_deadline(struct agent_server *srv)
{
	if (!atomic_load(&srv->deadline_idle))
		return;
	pthread_mutex_lock(&srv->lock);
	pthread_cond_signal(&srv->wake);
	pthread_mutex_unlock(&srv->lock);
}

/* The connection's entry (NULL when none could be made for it). */
static struct conn_entry *conn_entry_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* A request starts now (seconds > 0: it must be complete by then) or its handler runs (0). */
static void set_deadline(struct agent_server *srv, struct MHD_Connection *conn, double seconds)
{
	struct conn_entry *e = conn_entry_of(conn);
	if (!e)
		return;
	atomic_store(&e->deadline_ns,
		     seconds > 0 ? monotonic_ns() + (long long)(seconds * 1e9) : 0);
	if (seconds > 0)
		wake_for_deadline(srv);
}

static bool conn_over_limit(struct MHD_Connection *conn)
{
	const struct conn_entry *e = conn_entry_of(conn);
	return e && e->over_limit;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct agent_server *srv = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		struct conn_entry *e = calloc(1, sizeof *e);
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!e || !ci) {
			free(e);
			return; /* served without a deadline: only its inactivity timeout ends it */
		}
		e->fd = ci->connect_fd;
		atomic_init(&e->deadline_ns, monotonic_ns() + DEADLINE_NS);
		pthread_mutex_lock(&srv->lock);
		e->over_limit = ++srv->nconns > SERVER_MAX_CONNECTIONS;
		e->next = srv->conns;
		if (srv->conns)
			srv->conns->prev = e;
		srv->conns = e;
		pthread_mutex_unlock(&srv->lock);
		wake_for_deadline(srv);
		*socket_context = e;
		return;
	}
	struct conn_entry *e = *socket_context;
	if (!e)
		return;
	pthread_mutex_lock(&srv->lock);
	if (e->prev)
		e->prev->next = e->next;
	else
		srv->conns = e->next;
	if (e->next)
		e->next->prev = e->prev;
	srv->nconns--;
	pthread_mutex_unlock(&srv->lock);
	free(e);
	*socket_context = NULL;
}

/* Per request: the body collected so far, bounded by max-request. */
struct request_state {
	char *body;
	size_t len;
	bool too_large;
	bool busy; /* answered 503 at once: the body, if any, is read and dropped */
};

struct arg_list {
	struct server_arg args[SERVER_MAX_ARGS];
	size_t n;
	bool overflow;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct arg_list *list = cls;
	(void)kind;
	if (list->n == SERVER_MAX_ARGS) {
		list->overflow = true;
		return MHD_NO;
	}
	list->args[list->n].key = key;
	list->args[list->n].value = value;
	list->n++;
	return MHD_YES;
}

/* Sends reply (and frees its body); MHD_NO closes the connection when even that fails.
 * close_after: the connection is closed once it is sent. */
static enum MHD_Result send_reply_closing(struct MHD_Connection *conn, struct server_reply *reply,
					  bool close_after)
{
	if (!reply->body)
		return MHD_NO;
	/* 9 significant digits: 0.03 instead of 0.029999999999999999, nothing real lost. */
	char *text =
	    json_dumps(reply->body, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
	json_decref(reply->body);
	reply->body = NULL;
	if (!text)
		return MHD_NO;
	size_t len = strlen(text);
	char *with_newline = realloc(text, len + 2);
	if (!with_newline) {
		free(text);
		return MHD_NO;
	}
	with_newline[len++] = '\n';
	with_newline[len] = '\0';
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer_with_free_callback(len, with_newline, free);
	if (!resp) {
		free(with_newline);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (reply->allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, reply->allow);
	if (reply->status == 503)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, SERVER_BUSY_RETRY_AFTER);
	if (close_after)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	enum MHD_Result ret = MHD_queue_response(conn, reply->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result send_reply(struct MHD_Connection *conn, struct server_reply *reply)
{
	return send_reply_closing(conn, reply, false);
}

/* Beyond SERVER_MAX_CONNECTIONS: said at once, and the connection goes. */
static enum MHD_Result send_full(struct MHD_Connection *conn)
{
	struct server_reply reply = {0};
	server_error(&reply, 503,
		     "the agent is full: more than %u connections are open; retry in a second",
		     SERVER_MAX_CONNECTIONS);
	return send_reply_closing(conn, &reply, true);
}

static enum MHD_Result send_too_large(struct MHD_Connection *conn, size_t limit)
{
	struct server_reply reply = {0};
	char size[32];
	server_error(&reply, 413,
		     "request body larger than %s (max-request in /etc/vmcost/agent.yaml)",
		     vmc_format_bytes(limit, size, sizeof size));
	return send_reply(conn, &reply);
}

static enum MHD_Result send_busy(struct MHD_Connection *conn, int running)
{
	struct server_reply reply = {0};
	server_error(&reply, 503, "the agent is busy: %d requests running; retry in a second",
		     running);
	return send_reply(conn, &reply);
}

/* True when a Content-Length header announces more than limit bytes. */
static bool announced_too_large(struct MHD_Connection *conn, size_t limit)
{
	const char *cl =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (!cl || strspn(cl, "0123456789") == 0)
		return false;
	errno = 0;
	unsigned long long n = strtoull(cl, NULL, 10);
	return errno == ERANGE || n > limit;
}

static void append_body(struct request_state *rs, const char *data, size_t size, size_t limit)
{
	if (rs->too_large)
		return;
	if (size > limit - rs->len) {
		rs->too_large = true;
		free(rs->body);
		rs->body = NULL;
		return;
	}
	char *grown = realloc(rs->body, rs->len + size);
	if (!grown) {
		rs->too_large = true;
		free(rs->body);
		rs->body = NULL;
		return;
	}
	memcpy(grown + rs->len, data, size);
	rs->body = grown;
	rs->len += size;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct agent_server *srv = cls;
	struct request_state *rs = *req_cls;
	size_t limit = srv->ctx->cfg->max_request_bytes;
	(void)version;
	if (!rs) {
		rs = calloc(1, sizeof *rs);
		if (!rs)
			return MHD_NO;
		*req_cls = rs;
		int running = atomic_fetch_add(&srv->in_flight, 1);
		if (conn_over_limit(conn)) {
			rs->busy = true;
			return send_full(conn);
		}
		if (running >= SERVER_MAX_REQUESTS) {
			rs->busy = true;
			return send_busy(conn, running);
		}
		if (announced_too_large(conn, limit)) {
			rs->too_large = true;
			return send_too_large(conn, limit);
		}
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		if (!rs->busy)
			append_body(rs, upload_data, *upload_data_size, limit);
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (rs->too_large)
		return send_too_large(conn, limit);
	if (rs->busy)
		return MHD_YES;

	/* The request is complete: the handler's time is not the client's. */
	set_deadline(srv, conn, 0);
	struct arg_list args = {0};
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	struct server_reply reply = {0};
	if (args.overflow) {
		server_error(&reply, 400, "more than %d query parameters", SERVER_MAX_ARGS);
	} else {
		struct server_request req = {method, url, args.args, args.n, rs->body, rs->len};
		server_route(srv->ctx, &req, &reply);
	}
	vmc_debug("%s %s -> %u", method, url, reply.status);
	return send_reply(conn, &reply);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct agent_server *srv = cls;
	struct request_state *rs = *req_cls;
	(void)toe;
	/* A connection kept alive has as long for its next request as for its first. */
	set_deadline(srv, conn, SERVER_REQUEST_DEADLINE_S);
	if (!rs)
		return;
	free(rs->body);
	free(rs);
	*req_cls = NULL;
	atomic_fetch_sub(&srv->in_flight, 1);
}

__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	(void)cls;
	vsnprintf(msg, sizeof msg, fmt, ap);
	size_t len = strlen(msg);
	while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
		msg[--len] = '\0';
	vmc_debug("libmicrohttpd: %s", msg);
}

/* Only our own socket file: another agent may have replaced it since. */
static void remove_socket_file(const struct agent_server *srv)
{
	struct stat sb;
	if (lstat(srv->sock.path, &sb) == 0 && sb.st_dev == srv->sock.dev &&
	    sb.st_ino == srv->sock.ino)
		unlink(srv->sock.path);
}

static void free_server(struct agent_server *srv)
{
	pthread_cond_destroy(&srv->wake);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}

static void stop_deadline_thread(struct agent_server *srv)
{
	if (!srv->deadline_running)
		return;
	pthread_mutex_lock(&srv->lock);
	srv->deadline_stop = true;
	pthread_cond_signal(&srv->wake);
	pthread_mutex_unlock(&srv->lock);
	pthread_join(srv->deadline_thread, NULL);
	srv->deadline_running = false;
}

struct agent_server *server_open(const struct server_ctx *ctx, char *err, size_t errsize)
{
	struct agent_server *srv = calloc(1, sizeof *srv);
	if (!srv) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	srv->ctx = ctx;
	atomic_init(&srv->in_flight, 0);
	err[0] = '\0';
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&srv->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&srv->lock, NULL);
	if (server_listen_unix(ctx->cfg, &srv->sock, err, errsize) < 0) {
		free_server(srv);
		return NULL;
	}
	return srv;
}

int server_serve(struct agent_server *srv, char *err, size_t errsize)
{
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_AUTO | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	int rc = pthread_create(&srv->deadline_thread, NULL, deadline_main, srv);
	if (rc != 0) {
		snprintf(err, errsize, "cannot start the API's deadline thread: %s", strerror(rc));
		remove_socket_file(srv);
		close(srv->sock.fd);
		free_server(srv);
		return -1;
	}
	srv->deadline_running = true;
	/* The logger first: libmicrohttpd complains (on its own logger) when it comes later. */
	srv->mhd = MHD_start_daemon(
	    flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
	    MHD_OPTION_LISTEN_SOCKET, (MHD_socket)srv->sock.fd, MHD_OPTION_NOTIFY_COMPLETED,
	    on_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
	    MHD_OPTION_CONNECTION_LIMIT, SERVER_MAX_CONNECTIONS + SERVER_SPARE_CONNECTIONS,
	    MHD_OPTION_CONNECTION_TIMEOUT, SERVER_READ_TIMEOUT_S, MHD_OPTION_THREAD_STACK_SIZE,
	    SERVER_THREAD_STACK, MHD_OPTION_END);
	if (!srv->mhd) {
		snprintf(err, errsize, "cannot start the HTTP server on %s (libmicrohttpd failed)",
			 srv->sock.path);
		stop_deadline_thread(srv);
		remove_socket_file(srv);
		close(srv->sock.fd);
		free_server(srv);
		return -1;
	}
	return 0;
}

int server_stop(struct agent_server *srv, double grace_s)
{
	if (!srv)
		return 0;
	remove_socket_file(srv);
	MHD_socket listen_fd = MHD_quiesce_daemon(srv->mhd);
	if (listen_fd != MHD_INVALID_SOCKET)
		close(listen_fd);
	/* Polling is fine here: it only happens while shutting down. */
	struct timespec step = {0, 20 * 1000 * 1000};
	for (double waited = 0; atomic_load(&srv->in_flight) > 0 && waited < grace_s;
	     waited += 0.02)
		nanosleep(&step, NULL);
	int running = atomic_load(&srv->in_flight);
	if (running > 0)
		return running;
	MHD_stop_daemon(srv->mhd);
	stop_deadline_thread(srv);
	free_server(srv);
	return 0;
}
