/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP server: libmicrohttpd on the socket of server_socket.c, one thread per connection,
 * each request handed to server_route(). The threads sleep in poll() without a timeout while
 * nobody talks to them, so an idle guest pays nothing for the API.
 */
#include "server.h"

#include "log.h"
#include "units.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Virtual size only; the pages a request touches are what counts in RSS. Explicit because musl's
 * default (128 KiB) is too small for an ASan build and glibc's (8 MiB) is needlessly large. */
#define SERVER_THREAD_STACK ((size_t)1 << 20)

struct agent_server {
	struct MHD_Daemon *mhd;
	const struct server_ctx *ctx;
	struct server_socket sock;
	atomic_int in_flight;
};

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

/* Sends reply (and frees its body); MHD_NO closes the connection when even that fails. */
static enum MHD_Result send_reply(struct MHD_Connection *conn, struct server_reply *reply)
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
	enum MHD_Result ret = MHD_queue_response(conn, reply->status, resp);
	MHD_destroy_response(resp);
	return ret;
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
	(void)conn;
	(void)toe;
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
	if (server_listen_unix(ctx->cfg, &srv->sock, err, errsize) < 0) {
		free(srv);
		return NULL;
	}
	return srv;
}

int server_serve(struct agent_server *srv, char *err, size_t errsize)
{
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_AUTO | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	/* The logger first: libmicrohttpd complains (on its own logger) when it comes later. */
	srv->mhd = MHD_start_daemon(
	    flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
	    MHD_OPTION_LISTEN_SOCKET, (MHD_socket)srv->sock.fd, MHD_OPTION_NOTIFY_COMPLETED,
	    on_completed, srv, MHD_OPTION_CONNECTION_LIMIT, SERVER_MAX_CONNECTIONS,
	    MHD_OPTION_CONNECTION_TIMEOUT, SERVER_READ_TIMEOUT_S, MHD_OPTION_THREAD_STACK_SIZE,
	    SERVER_THREAD_STACK, MHD_OPTION_END);
	if (!srv->mhd) {
		snprintf(err, errsize, "cannot start the HTTP server on %s (libmicrohttpd failed)",
			 srv->sock.path);
		remove_socket_file(srv);
		close(srv->sock.fd);
		free(srv);
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
	free(srv);
	return 0;
}
