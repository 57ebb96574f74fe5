/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The API's routing as a plain function (request in, status + JSON out), so unit tests and the
 * fuzzer drive it without a socket. The agent core is reached through struct server_ops.
 */
#ifndef VMC_AGENT_SERVER_ROUTE_H
#define VMC_AGENT_SERVER_ROUTE_H

#include "agent.h"
#include "config.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Longest GET /v1/wakeups?seconds=N the API accepts. */
#define SERVER_MAX_WAKEUP_SECONDS 300.0
/* Most query parameters a request may carry (every endpoint takes at most one). */
#define SERVER_MAX_ARGS 8
/* Highest page_reporting_order the kernel accepts (MAX_PAGE_ORDER, 6.1 and 6.18). */
#define SERVER_MAX_REPORTING_ORDER 10

/* The agent core as the server calls it (agent.h); tests and the fuzzer substitute doubles. */
struct server_ops {
	json_t *(*status)(struct agent_state *st, char *err, size_t errsize);
	json_t *(*checks)(char *err, size_t errsize);
	json_t *(*wakeups)(double seconds, char *err, size_t errsize);
	json_t *(*trim)(struct agent_state *st, const struct agent_config *cfg, bool dry_run,
			bool force, char *err, size_t errsize);
	json_t *(*balloon)(char *err, size_t errsize);
	json_t *(*balloon_set_order)(int order, char *err, size_t errsize);
	/* engine.h; a refusal sets errno EBUSY, ENOENT or ENOTSUP (answered 409) */
	json_t *(*engine_status)(const struct agent_config *cfg, char *err, size_t errsize);
	json_t *(*engine_freeze)(const struct agent_config *cfg, char *err, size_t errsize);
	json_t *(*engine_thaw)(const struct agent_config *cfg, char *err, size_t errsize);
};

/* The real core functions of agent.h (defined in daemon.c, which wires them to the server). */
extern const struct server_ops server_core_ops;

struct server_ctx {
	const struct server_ops *ops;
	struct agent_state *st;		/* shared with the daemon's timer */
	const struct agent_config *cfg; /* socket, mode, group, max request size, trim policy */
};

/* One decoded query parameter (?seconds=5); value is NULL for a bare "?seconds". */
struct server_arg {
	const char *key;
	const char *value;
};

struct server_request {
	const char *method; /* "GET" */
	const char *path;   /* "/v1/wakeups", without the query */
	const struct server_arg *args;
	size_t nargs;
	const char *body; /* not NUL-terminated; may be NULL when body_len is 0 */
	size_t body_len;
};

struct server_reply {
	unsigned status;   /* 200, 400, 404, 405, 409, 413, 500, 503 */
	json_t *body;	   /* always an object: the document, or {"error": "..."}; caller frees */
	const char *allow; /* methods for the Allow header of a 405, else NULL */
};

/* Routes one complete request. Never fails: errors are replies with an "error" member. */
void server_route(const struct server_ctx *ctx, const struct server_request *req,
		  struct server_reply *reply);

/* The JSON error document {"error": message} with a status. */
void server_error(struct server_reply *reply, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One syslog line per trim that ran (info), skipped ones at debug; origin: "timer", "API". */
void server_log_trim(const json_t *doc, const char *origin);

#endif
