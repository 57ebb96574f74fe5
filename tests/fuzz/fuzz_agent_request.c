/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Request handling of the agent's API (server_route) on arbitrary input. The input is
 *   METHOD \n PATH \n QUERY \n BODY
 * with QUERY as key=value pairs joined by '&' (split here, as libmicrohttpd would hand them
 * over). The core is replaced by doubles that answer at once: the fuzzer exercises parsing and
 * routing, and must never trim this machine's caches or sleep in the wakeups profiler.
 */
#include "server_route.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static json_t *doc(void)
{
	return json_pack("{s:s}", "doc", "fuzz");
}

static json_t *f_status(struct agent_state *st, char *err, size_t errsize)
{
	(void)st;
	(void)err;
	(void)errsize;
	return doc();
}

static json_t *f_checks(char *err, size_t errsize)
{
	(void)err;
	(void)errsize;
	return doc();
}

static json_t *f_wakeups(double seconds, char *err, size_t errsize)
{
	(void)err;
	(void)errsize;
	if (!(seconds >= 0.1 && seconds <= SERVER_MAX_WAKEUP_SECONDS))
		abort(); /* the router must have refused it */
	return doc();
}

static json_t *f_trim(struct agent_state *st, const struct agent_config *cfg, bool dry_run,
		      bool force, char *err, size_t errsize)
{
	(void)st;
	(void)cfg;
	(void)dry_run;
	(void)force;
	snprintf(err, errsize, "fuzz: trim refused");
	return NULL;
}

static json_t *f_balloon(char *err, size_t errsize)
{
	(void)err;
	(void)errsize;
	return doc();
}

static json_t *f_set_order(int order, char *err, size_t errsize)
{
	(void)err;
	(void)errsize;
	if (order < 0 || order > SERVER_MAX_REPORTING_ORDER)
		abort();
	return doc();
}

/* The engine endpoints take no input beyond the route: a refusal half of the time. */
static json_t *f_engine(const struct agent_config *cfg, char *err, size_t errsize)
{
	static unsigned calls;
	(void)cfg;
	if (calls++ % 2) {
		snprintf(err, errsize, "container 0123456789ab is running");
		errno = EBUSY;
		return NULL;
	}
	return doc();
}

static const struct server_ops fuzz_ops = {f_status,	f_checks, f_wakeups, f_trim,  f_balloon,
					   f_set_order, f_engine, f_engine,  f_engine};

/* Next '\n'-terminated field of [*p, end) as a NUL-terminated copy in out. */
static char *take_line(const uint8_t **p, const uint8_t *end, char *out, size_t size)
{
	const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t len = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
	if (len >= size)
		len = size - 1;
	memcpy(out, *p, len);
	out[len] = '\0';
	*p = nl ? nl + 1 : end;
	return out;
}

static size_t split_query(char *query, struct server_arg *args)
{
	size_t n = 0;
	char *save = NULL;
	for (char *pair = strtok_r(query, "&", &save); pair && n < SERVER_MAX_ARGS;
	     pair = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(pair, '=');
		if (eq)
			*eq = '\0';
		args[n].key = pair;
		args[n].value = eq ? eq + 1 : NULL;
		n++;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct agent_config cfg;
	static bool init;
	if (!init) {
		agent_config_defaults(&cfg);
		init = true;
	}
	char method[32], path[512], query[512];
	struct server_arg args[SERVER_MAX_ARGS];
	const uint8_t *p = data, *end = data + size;
	take_line(&p, end, method, sizeof method);
	take_line(&p, end, path, sizeof path);
	take_line(&p, end, query, sizeof query);
	size_t nargs = split_query(query, args);

	struct server_ctx ctx = {&fuzz_ops, NULL, &cfg};
	struct server_request req = {method, path, args, nargs, (const char *)p, (size_t)(end - p)};
	struct server_reply reply;
	server_route(&ctx, &req, &reply);
	/* Every reply is a JSON object with a known status; errors carry a message. */
	if (!json_is_object(reply.body))
		abort();
	if (reply.status != 200 && !json_is_string(json_object_get(reply.body, "error")))
		abort();
	if ((reply.status == 405) != (reply.allow != NULL))
		abort();
	char *text = json_dumps(reply.body, 0);
	if (!text)
		abort();
	free(text);
	json_decref(reply.body);
	return 0;
}
