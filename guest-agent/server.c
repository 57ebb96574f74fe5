/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP API. Routing (server_route) is pure: request in, status + JSON out. The rest is glue:
 * a unix socket we create ourselves (so mode and group are right before anyone can connect) and
 * libmicrohttpd with one thread per connection, which sleeps in poll() without a timeout while
 * nobody talks to it, so an idle guest pays nothing for the API.
 */
#include "server.h"

#include "jsonutil.h"
#include "log.h"
#include "procfs.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A connection idle this long (keep-alive, or a client that stopped sending) is closed and its
 * thread ends. Time spent inside a handler (a long wakeups) does not count. */
#define SERVER_IDLE_TIMEOUT_S 30u
/* Each connection is a thread: bound their number (and so the agent's RSS). */
#define SERVER_MAX_CONNECTIONS 16u
/* Virtual size only; the pages a request touches are what counts in RSS. Explicit because musl's
 * default (128 KiB) is too small for an ASan build and glibc's (8 MiB) is needlessly large. */
#define SERVER_THREAD_STACK	((size_t)1 << 20)
#define WAKEUPS_DEFAULT_SECONDS 30.0

/*
 * Messages quote paths and parameters as the client sent them; JSON strings must be UTF-8, so
 * control characters always, and every non-ASCII byte when the text is not valid UTF-8, become
 * '?'.
 */
static json_t *message_string(char *msg)
{
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	json_t *s = json_string(msg);
	if (s)
		return s;
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	return json_string(msg);
}

void server_error(struct server_reply *reply, unsigned status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	reply->status = status;
	reply->body = json_object();
	if (reply->body && json_object_set_new(reply->body, "error", message_string(msg)) < 0) {
		json_decref(reply->body);
		reply->body = NULL;
	}
}

/* ---- routing ------------------------------------------------------------------------------ */

/*
 * The value of the one query parameter an endpoint takes (allowed may be NULL for none). Unknown
 * or repeated parameters are errors: a typo such as ?second=5 must not silently run 30 s.
 */
static int query_arg(const struct server_request *req, const char *allowed, const char **value,
		     struct server_reply *reply)
{
	*value = NULL;
	bool seen = false;
	for (size_t i = 0; i < req->nargs; i++) {
		const char *key = req->args[i].key ? req->args[i].key : "";
		if (!allowed || strcmp(key, allowed) != 0) {
			if (allowed)
				server_error(reply, 400,
					     "unknown query parameter \"%s\" for %s (it takes: %s)",
					     key, req->path, allowed);
			else
				server_error(reply, 400,
					     "unknown query parameter \"%s\": %s takes none", key,
					     req->path);
			return -1;
		}
		if (seen) {
			server_error(reply, 400, "query parameter \"%s\" given twice", key);
			return -1;
		}
		seen = true;
		*value = req->args[i].value;
	}
	return 0;
}

static bool body_is_blank(const struct server_request *req)
{
	for (size_t i = 0; i < req->body_len; i++)
		if (!isspace((unsigned char)req->body[i]))
			return false;
	return true;
}

/*
 * The request body as a JSON object whose members are all in known[]. A blank body is an empty
 * object. NULL after writing a 400.
 */
static json_t *body_object(const struct server_request *req, const char *const *known,
			   const char *known_list, struct server_reply *reply)
{
	if (body_is_blank(req))
		return json_object();
	json_error_t jerr;
	json_t *obj = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (!obj) {
		server_error(reply, 400, "request body is not valid JSON: %s (line %d, column %d)",
			     jerr.text, jerr.line, jerr.column);
		return NULL;
	}
	if (!json_is_object(obj)) {
		json_decref(obj);
		server_error(reply, 400, "request body must be a JSON object such as {%s}",
			     known_list);
		return NULL;
	}
	const char *key;
	json_t *value;
	json_object_foreach(obj, key, value)
	{
		bool ok = false;
		for (const char *const *k = known; *k; k++)
			ok = ok || strcmp(key, *k) == 0;
		if (!ok) {
			server_error(reply, 400, "unknown option \"%s\" (expected {%s})", key,
				     known_list);
			json_decref(obj);
			return NULL;
		}
	}
	return obj;
}

static int body_bool(const json_t *obj, const char *key, bool *out, struct server_reply *reply)
{
	json_t *v = json_object_get(obj, key);
	*out = false;
	if (!v)
		return 0;
	if (!json_is_boolean(v)) {
		server_error(reply, 400, "\"%s\" must be true or false", key);
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

/* A core builder's result: the document, or its message as a 500. */
static void core_reply(json_t *doc, const char *err, struct server_reply *reply)
{
	if (!doc) {
		server_error(reply, 500, "%s", err[0] ? err : "internal error (see logread)");
		return;
	}
	if (!json_is_object(doc)) {
		json_decref(doc);
		server_error(reply, 500, "internal error: the agent built a malformed document");
		return;
	}
	reply->status = 200;
	reply->body = doc;
}

static void get_status(const struct server_ctx *ctx, const struct server_request *req,
		       struct server_reply *reply)
{
	char err[256] = "";
	const char *unused;
	if (query_arg(req, NULL, &unused, reply) < 0)
		return;
	core_reply(ctx->ops->status(ctx->st, err, sizeof err), err, reply);
}

static void get_checks(const struct server_ctx *ctx, const struct server_request *req,
		       struct server_reply *reply)
{
	char err[256] = "";
	const char *unused;
	if (query_arg(req, NULL, &unused, reply) < 0)
		return;
	core_reply(ctx->ops->checks(err, sizeof err), err, reply);
}

static void get_wakeups(const struct server_ctx *ctx, const struct server_request *req,
			struct server_reply *reply)
{
	char err[256] = "";
	const char *text;
	double seconds = WAKEUPS_DEFAULT_SECONDS;
	if (query_arg(req, "seconds", &text, reply) < 0)
		return;
	if (req->nargs > 0 && (!text || vmc_parse_duration(text, &seconds) < 0 || seconds < 0.1 ||
			       seconds > SERVER_MAX_WAKEUP_SECONDS)) {
		server_error(
		    reply, 400,
		    "seconds=%s: expected a duration from 0.1 to %.0f seconds (examples: 5, "
		    "500ms, 2m)",
		    text ? text : "", SERVER_MAX_WAKEUP_SECONDS);
		return;
	}
	core_reply(ctx->ops->wakeups(seconds, err, sizeof err), err, reply);
}

void server_log_trim(const json_t *doc, const char *origin)
{
	const char *decision = vmc_json_get_str(doc, "decision");
	const char *reason = vmc_json_get_str(doc, "reason");
	if (!json_is_true(json_object_get(doc, "ran"))) {
		debug("trim (%s) %s: %s", origin, decision ? decision : "skipped",
		      reason ? reason : "");
		return;
	}
	uint64_t freed = 0, reclaimed = 0;
	vmc_json_get_u64(doc, "freed_bytes", &freed);
	vmc_json_get_u64(doc, "reclaimed_bytes", &reclaimed);
	const char *method = vmc_json_get_str(doc, "method");
	char f[32], r[32];
	info("trim (%s%s): %s freed %s (%s reclaimed)%s", origin,
	     json_is_true(json_object_get(doc, "forced")) ? ", forced" : "", method ? method : "?",
	     vmc_format_bytes(freed, f, sizeof f), vmc_format_bytes(reclaimed, r, sizeof r),
	     json_is_true(json_object_get(doc, "compacted")) ? ", compacted" : "");
}

static void post_trim(const struct server_ctx *ctx, const struct server_request *req,
		      struct server_reply *reply)
{
	static const char *const known[] = {"dry_run", "force", NULL};
	char err[256] = "";
	const char *unused;
	bool dry_run, force;
	if (query_arg(req, NULL, &unused, reply) < 0)
		return;
	json_t *opts = body_object(req, known, "\"dry_run\": false, \"force\": false", reply);
	if (!opts)
		return;
	int rc = body_bool(opts, "dry_run", &dry_run, reply);
	if (rc == 0)
		rc = body_bool(opts, "force", &force, reply);
	json_decref(opts);
	if (rc < 0)
		return;
	/* agent_trim lowers this thread to SCHED_IDLE / idle I/O for the pass itself. */
	json_t *doc = ctx->ops->trim(ctx->st, ctx->cfg, dry_run, force, err, sizeof err);
	if (doc)
		server_log_trim(doc, "API");
	core_reply(doc, err, reply);
}

static void get_balloon(const struct server_ctx *ctx, const struct server_request *req,
			struct server_reply *reply)
{
	char err[256] = "";
	const char *unused;
	if (query_arg(req, NULL, &unused, reply) < 0)
		return;
	core_reply(ctx->ops->balloon(err, sizeof err), err, reply);
}

static void put_balloon_order(const struct server_ctx *ctx, const struct server_request *req,
			      struct server_reply *reply)
{
	static const char *const known[] = {"order", NULL};
	char err[256] = "";
	const char *unused;
	if (query_arg(req, NULL, &unused, reply) < 0)
		return;
	json_t *body = body_object(req, known, "\"order\": 9", reply);
	if (!body)
		return;
	json_t *order = json_object_get(body, "order");
	if (!json_is_integer(order) || json_integer_value(order) < 0 ||
	    json_integer_value(order) > SERVER_MAX_REPORTING_ORDER) {
		server_error(
		    reply, 400,
		    "\"order\" must be an integer from 0 to %d (9 = 2 MiB blocks with 4 KiB "
		    "pages)",
		    SERVER_MAX_REPORTING_ORDER);
		json_decref(body);
		return;
	}
	int value = (int)json_integer_value(order);
	json_decref(body);
	core_reply(ctx->ops->balloon_set_order(value, err, sizeof err), err, reply);
}

static void get_version(const struct server_ctx *ctx, const struct server_request *req,
			struct server_reply *reply)
{
	const char *unused;
	(void)ctx;
	if (query_arg(req, NULL, &unused, reply) < 0)
		return;
	reply->status = 200;
	reply->body = json_pack("{s:s,s:i}", "version", VMCOST_VERSION, "api", 1);
}

struct route {
	const char *path;
	const char *method; /* each resource answers exactly one method */
	void (*handle)(const struct server_ctx *ctx, const struct server_request *req,
		       struct server_reply *reply);
};

static const struct route routes[] = {
    {"/v1/status", "GET", get_status},	 {"/v1/checks", "GET", get_checks},
    {"/v1/wakeups", "GET", get_wakeups}, {"/v1/trim", "POST", post_trim},
    {"/v1/balloon", "GET", get_balloon}, {"/v1/balloon/order", "PUT", put_balloon_order},
    {"/v1/version", "GET", get_version},
};

void server_route(const struct server_ctx *ctx, const struct server_request *req,
		  struct server_reply *reply)
{
	reply->status = 500;
	reply->body = NULL;
	reply->allow = NULL;
	const char *path = req->path ? req->path : "";
	const char *method = req->method ? req->method : "";
	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
		if (strcmp(routes[i].path, path) != 0)
			continue;
		if (strcmp(routes[i].method, method) != 0) {
			server_error(reply, 405, "%s %s: method not allowed (use %s)", method, path,
				     routes[i].method);
			reply->allow = routes[i].method;
			return;
		}
		routes[i].handle(ctx, req, reply);
		if (!reply->body)
			server_error(reply, 500, "out of memory");
		return;
	}
	server_error(reply, 404,
		     "no such endpoint: %s (endpoints: GET /v1/status, GET /v1/checks, GET "
		     "/v1/wakeups?seconds=N, POST /v1/trim, GET /v1/balloon, PUT "
		     "/v1/balloon/order, GET /v1/version)",
		     path);
}

/* ---- the socket ------------------------------------------------------------------------------ */

static int parse_gid(const char *s, gid_t *gid)
{
	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
		return -1;
	*gid = (gid_t)strtoul(s, NULL, 10);
	return 0;
}

/* /etc/group under the fs root, for static builds (no NSS) and for tests. */
static int group_file_gid(const char *group, gid_t *gid)
{
	char path[4096];
	if (!vmc_fs_path(path, sizeof path, "/etc/group"))
		return -1;
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int rc = -1;
	struct group *gr;
	while ((gr = fgetgrent(f)) != NULL) {
		if (gr->gr_name && strcmp(gr->gr_name, group) == 0) {
			*gid = gr->gr_gid;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/*
 * Weak: a static link then leaves getgrnam out (NULL) instead of pulling in glibc's NSS, which
 * cannot work without the shared libraries and only warns at link time; /etc/group answers.
 */
#pragma weak getgrnam

int server_group_gid(const char *group, gid_t *gid)
{
	if (strcmp(group, "root") == 0) {
		*gid = 0;
		return 0;
	}
	if (parse_gid(group, gid) == 0)
		return 0;
	/* NSS first on the real root (a dynamic build may know groups from elsewhere); a static
	 * glibc build gets NULL here and the file below answers. */
	if (vmc_fs_root()[0] == '\0' && getgrnam != NULL) {
		struct group *gr = getgrnam(group);
		if (gr) {
			*gid = gr->gr_gid;
			return 0;
		}
	}
	return group_file_gid(group, gid);
}

/*
 * A socket file left by an agent that died is replaced; a live one (someone accepts) or a path
 * that is not a socket is refused: the user must decide.
 */
static int clear_socket_path(const char *path, const struct sockaddr_un *addr, char *err,
			     size_t errsize)
{
	struct stat sb;
	if (lstat(path, &sb) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errsize, "cannot check %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(sb.st_mode)) {
		snprintf(
		    err, errsize,
		    "%s exists and is not a socket: remove it or set another \"socket:\" in the "
		    "config",
		    path);
		return -1;
	}
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0) {
		snprintf(err, errsize, "socket: %s", strerror(errno));
		return -1;
	}
	int rc = connect(probe, (const struct sockaddr *)addr, sizeof *addr);
	int saved = errno;
	close(probe);
	if (rc == 0) {
		snprintf(err, errsize,
			 "another process is serving %s (a running vmcost-agent? rc-service "
			 "cache-trim status)",
			 path);
		return -1;
	}
	if (saved != ECONNREFUSED) {
		snprintf(err, errsize, "cannot probe %s: %s", path, strerror(saved));
		return -1;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		snprintf(err, errsize, "cannot remove the stale socket %s: %s", path,
			 strerror(errno));
		return -1;
	}
	info("removed the stale socket %s", path);
	return 0;
}

static int give_socket_to_group(const char *path, unsigned mode, const char *group, char *err,
				size_t errsize)
{
	gid_t gid = 0;
	if (server_group_gid(group, &gid) < 0) {
		warn("group \"%s\" does not exist: %s is for root only (create the group or set "
		     "\"socket-group:\" in the config)",
		     group, path);
		gid = 0;
	}
	if (chown(path, (uid_t)-1, gid) < 0) {
		snprintf(err, errsize, "cannot give %s to group %s (gid %u): %s", path, group,
			 (unsigned)gid, strerror(errno));
		return -1;
	}
	if (chmod(path, (mode_t)mode) < 0) {
		snprintf(err, errsize, "cannot chmod %04o %s: %s", mode, path, strerror(errno));
		return -1;
	}
	return 0;
}

int server_listen_unix(const char *path, unsigned mode, const char *group, char *err,
		       size_t errsize)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof addr.sun_path) {
		snprintf(err, errsize, "socket path %s is longer than %zu bytes", path,
			 sizeof addr.sun_path - 1);
		return -1;
	}
	memcpy(addr.sun_path, path, strlen(path) + 1);
	if (clear_socket_path(path, &addr, err, errsize) < 0)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errsize, "socket: %s", strerror(errno));
		return -1;
	}
	/* Born owner-only: nobody can connect before mode and group are final. */
	mode_t old_umask = umask(0177);
	int rc = bind(fd, (const struct sockaddr *)&addr, sizeof addr);
	int saved = errno;
	umask(old_umask);
	if (rc < 0) {
		snprintf(err, errsize, "cannot create the socket %s: %s%s", path, strerror(saved),
			 saved == ENOENT ? " (its directory does not exist)" : "");
		close(fd);
		return -1;
	}
	if (give_socket_to_group(path, mode, group, err, errsize) < 0)
		goto fail;
	if (listen(fd, 64) < 0) {
		snprintf(err, errsize, "listen on %s: %s", path, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	unlink(path);
	close(fd);
	return -1;
}

/* ---- libmicrohttpd ------------------------------------------------------------------------- */

struct agent_server {
	struct MHD_Daemon *mhd;
	const struct server_ctx *ctx;
	char path[108];
	dev_t dev;
	ino_t ino;
	atomic_int in_flight;
};

/* Per request: the body collected so far, bounded by max-request. */
struct request_state {
	char *body;
	size_t len;
	bool too_large;
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
		atomic_fetch_add(&srv->in_flight, 1);
		if (announced_too_large(conn, limit)) {
			rs->too_large = true;
			return send_too_large(conn, limit);
		}
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		append_body(rs, upload_data, *upload_data_size, limit);
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (rs->too_large)
		return send_too_large(conn, limit);

	struct arg_list args = {0};
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	struct server_reply reply = {0};
	if (args.overflow) {
		server_error(&reply, 400, "more than %d query parameters", SERVER_MAX_ARGS);
	} else {
		struct server_request req = {method, url, args.args, args.n, rs->body, rs->len};
		server_route(srv->ctx, &req, &reply);
	}
	debug("%s %s -> %u", method, url, reply.status);
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
	debug("libmicrohttpd: %s", msg);
}

struct agent_server *server_start(const struct server_ctx *ctx, char *err, size_t errsize)
{
	const struct agent_config *cfg = ctx->cfg;
	struct agent_server *srv = calloc(1, sizeof *srv);
	if (!srv) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	srv->ctx = ctx;
	atomic_init(&srv->in_flight, 0);
	snprintf(srv->path, sizeof srv->path, "%s", cfg->socket_path);
	err[0] = '\0';
	int fd =
	    server_listen_unix(cfg->socket_path, cfg->socket_mode, cfg->socket_group, err, errsize);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0 || stat(srv->path, &sb) < 0) {
		if (fd >= 0) {
			snprintf(err, errsize, "%s: %s", srv->path, strerror(errno));
			close(fd);
		}
		free(srv);
		return NULL;
	}
	srv->dev = sb.st_dev;
	srv->ino = sb.st_ino;
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_AUTO | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	srv->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_LISTEN_SOCKET,
				    (MHD_socket)fd, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
				    MHD_OPTION_CONNECTION_LIMIT, SERVER_MAX_CONNECTIONS,
				    MHD_OPTION_CONNECTION_TIMEOUT, SERVER_IDLE_TIMEOUT_S,
				    MHD_OPTION_THREAD_STACK_SIZE, SERVER_THREAD_STACK,
				    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	if (!srv->mhd) {
		snprintf(err, errsize, "cannot start the HTTP server on %s (libmicrohttpd failed)",
			 srv->path);
		close(fd);
		unlink(srv->path);
		free(srv);
		return NULL;
	}
	return srv;
}

/* Only our own socket file: another agent may have replaced it since. */
static void remove_socket_file(const struct agent_server *srv)
{
	struct stat sb;
	if (lstat(srv->path, &sb) == 0 && sb.st_dev == srv->dev && sb.st_ino == srv->ino)
		unlink(srv->path);
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
