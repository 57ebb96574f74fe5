/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The API's routing: request in, status and JSON out, no socket and no libmicrohttpd, so unit
 * tests and the fuzzer drive every endpoint directly.
 */
#include "server_route.h"

#include "jsonutil.h"
#include "log.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
		vmc_debug("trim (%s) %s: %s", origin, decision ? decision : "skipped",
			  reason ? reason : "");
		return;
	}
	uint64_t freed = 0, reclaimed = 0;
	vmc_json_get_u64(doc, "freed_bytes", &freed);
	vmc_json_get_u64(doc, "reclaimed_bytes", &reclaimed);
	const char *method = vmc_json_get_str(doc, "method");
	char f[32], r[32];
	vmc_info("trim (%s%s): %s freed %s (%s reclaimed)%s", origin,
		 json_is_true(json_object_get(doc, "forced")) ? ", forced" : "",
		 method ? method : "?", vmc_format_bytes(freed, f, sizeof f),
		 vmc_format_bytes(reclaimed, r, sizeof r),
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

/* A refusal (a container runs, foreign processes, no freezer, no engine, a docker.sock that
 * cannot be guarded) is a 409. */
static void engine_reply(json_t *doc, int errnum, const char *err, struct server_reply *reply)
{
	if (!doc &&
	    (errnum == EBUSY || errnum == ENOENT || errnum == ENOTSUP || errnum == ENOTSOCK)) {
		server_error(reply, 409, "%s", err);
		return;
	}
	core_reply(doc, err, reply);
}

static void engine_call(const struct server_ctx *ctx, const struct server_request *req,
			json_t *(*op)(const struct agent_config *, char *, size_t),
			struct server_reply *reply)
{
	char err[512] = "";
	const char *unused;
	if (query_arg(req, NULL, &unused, reply) < 0)
		return;
	if (!body_is_blank(req)) {
		server_error(reply, 400, "%s takes no request body", req->path);
		return;
	}
	if (!op) {
		server_error(reply, 500, "internal error: no engine support in this agent");
		return;
	}
	errno = 0;
	json_t *doc = op(ctx->cfg, err, sizeof err);
	engine_reply(doc, errno, err, reply);
}

static void get_engine(const struct server_ctx *ctx, const struct server_request *req,
		       struct server_reply *reply)
{
	engine_call(ctx, req, ctx->ops->engine_status, reply);
}

static void post_engine_freeze(const struct server_ctx *ctx, const struct server_request *req,
			       struct server_reply *reply)
{
	engine_call(ctx, req, ctx->ops->engine_freeze, reply);
}

static void post_engine_thaw(const struct server_ctx *ctx, const struct server_request *req,
			     struct server_reply *reply)
{
	engine_call(ctx, req, ctx->ops->engine_thaw, reply);
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
    {"/v1/status", "GET", get_status},
    {"/v1/checks", "GET", get_checks},
    {"/v1/wakeups", "GET", get_wakeups},
    {"/v1/trim", "POST", post_trim},
    {"/v1/balloon", "GET", get_balloon},
    {"/v1/balloon/order", "PUT", put_balloon_order},
    {"/v1/version", "GET", get_version},
    {"/v1/engine", "GET", get_engine},
    {"/v1/engine/freeze", "POST", post_engine_freeze},
    {"/v1/engine/thaw", "POST", post_engine_thaw},
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
		     "/v1/balloon/order, GET /v1/version, GET /v1/engine, POST /v1/engine/freeze, "
		     "POST /v1/engine/thaw)",
		     path);
}
