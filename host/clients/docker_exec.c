/* SPDX-License-Identifier: Apache-2.0 */
/*
 * docker exec over the API (docker_exec.h): create the exec, start it and demultiplex the
 * stdout/stderr stream as it arrives, then ask for its exit code.
 */
#include "clients/docker_exec.h"

#include "clients/docker_stream.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A non-200 start answer is a JSON error: this much of it is kept for the message. */
#define EXEC_ERRBODY_MAX 4096
/* The exit code can land a moment after the output ends: asked this often, this far apart. */
#define EXEC_EXIT_POLLS	  50
#define EXEC_EXIT_POLL_MS 100

static const struct docker_endpoint EXEC_CREATE = {
    "POST", "/containers/…/exec", "container id", 0, {201, 404, 409}};
static const struct docker_endpoint EXEC_INSPECT = {"GET", "/exec/…/json", "exec id", 0, {200}};

struct exec_sink {
	struct docker_demux demux;
	struct docker_exec_result *res;
	docker_output_fn on_output;
	void *ctx;
	char *errbody;
	size_t errbody_len;
};

static void append_capped(char **buf, size_t *len, const char *data, size_t n, bool *truncated)
{
	if (*len + n > DOCKER_EXEC_MAX_OUTPUT) {
		*truncated = true;
		n = *len < DOCKER_EXEC_MAX_OUTPUT ? DOCKER_EXEC_MAX_OUTPUT - *len : 0;
	}
	if (n == 0)
		return;
	char *grown = realloc(*buf, *len + n + 1);
	if (!grown) {
		*truncated = true;
		return;
	}
	memcpy(grown + *len, data, n);
	*buf = grown;
	*len += n;
	grown[*len] = '\0';
}

static void exec_frame(int stream, const char *data, size_t len, void *ctx)
{
	struct exec_sink *sink = ctx;
	struct docker_exec_result *res = sink->res;
	if (stream == 2)
		append_capped(&res->errout, &res->errout_len, data, len, &res->truncated);
	else
		append_capped(&res->out, &res->out_len, data, len, &res->truncated);
	if (sink->on_output)
		sink->on_output(stream, data, len, sink->ctx);
}

static int exec_chunk(const char *data, size_t len, void *ctx)
{
	struct exec_sink *sink = ctx;
	/* Non-200 answers are JSON errors, not frames: keep a copy for the message. */
	if (sink->errbody_len < EXEC_ERRBODY_MAX) {
		size_t take = len < EXEC_ERRBODY_MAX - sink->errbody_len
				  ? len
				  : EXEC_ERRBODY_MAX - sink->errbody_len;
		char *grown = realloc(sink->errbody, sink->errbody_len + take + 1);
		if (grown) {
			memcpy(grown + sink->errbody_len, data, take);
			sink->errbody = grown;
			sink->errbody_len += take;
			grown[sink->errbody_len] = '\0';
		}
	}
	docker_demux_feed(&sink->demux, data, len);
	return docker_aborted() ? 1 : 0;
}

static json_t *string_array(const char *const *items)
{
	json_t *a = json_array();
	for (size_t i = 0; items && items[i]; i++)
		json_array_append_new(a, json_string(items[i]));
	return a;
}

static int exec_create(const struct docker *d, const char *id, const char *const *argv,
		       const char *const *env, char *exec_id, size_t size, char *err,
		       size_t errsize)
{
	json_t *body = json_object();
	json_object_set_new(body, "AttachStdout", json_true());
	json_object_set_new(body, "AttachStderr", json_true());
	json_object_set_new(body, "Cmd", string_array(argv));
	if (env)
		json_object_set_new(body, "Env", string_array(env));
	struct http_response resp;
	int rc = docker_call(d, &EXEC_CREATE, id, NULL, body, &resp, err, errsize);
	json_decref(body);
	if (rc != VMC_EXIT_OK)
		return rc;
	rc = VMC_EXIT_DOCKER;
	if (resp.status == 404)
		vmc_errorf(err, errsize, "container %.12s is gone", id);
	else if (resp.status == 409)
		vmc_errorf(err, errsize, "container %.12s is not running", id);
	else if (docker_body_string(resp.body, "Id", exec_id, size) != 0)
		vmc_errorf(err, errsize, "Docker API POST /containers/…/exec: no Id in the answer");
	else
		rc = VMC_EXIT_OK;
	http_response_free(&resp);
	return rc;
}

static int exec_start(const struct docker *d, const char *exec_id, long timeout_ms,
		      struct exec_sink *sink, char *err, size_t errsize)
{
	char path[600];
	snprintf(path, sizeof path, "/exec/%s/start", exec_id);
	struct http_request req = {
	    .socket_path = d->socket_path,
	    .method = "POST",
	    .path = path,
	    .body = "{\"Detach\":false,\"Tty\":false}",
	    .timeout_ms = timeout_ms,
	    .on_chunk = exec_chunk,
	    .ctx = sink,
	};
	struct http_response resp;
	vmc_debug("docker: POST %s", path);
	int http_rc = http_do(&req, &resp);
	int rc = VMC_EXIT_DOCKER;
	if (docker_aborted()) {
		vmc_errorf(err, errsize, "interrupted");
	} else if (http_rc != 0) {
		docker_transport_error(d, &resp, err, errsize);
	} else if (resp.status != 200 && resp.status != 101) {
		docker_http_error("POST /exec/…/start", resp.status, sink->errbody, err, errsize);
	} else if (!docker_demux_complete(&sink->demux)) {
		vmc_errorf(err, errsize,
			   "Docker API POST /exec/…/start: the output stream is not Docker's "
			   "multiplexed framing");
	} else {
		rc = VMC_EXIT_OK;
	}
	http_response_free(&resp);
	return rc;
}

static int exec_inspect(const struct docker *d, const char *exec_id, long *exit_code, bool *running,
			char *err, size_t errsize)
{
	struct http_response resp;
	int rc = docker_call(d, &EXEC_INSPECT, exec_id, NULL, NULL, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	json_t *j = resp.body ? json_loads(resp.body, 0, NULL) : NULL;
	json_t *code = j ? json_object_get(j, "ExitCode") : NULL;
	json_t *run = j ? json_object_get(j, "Running") : NULL;
	*running = json_is_true(run);
	if (json_is_integer(code)) {
		*exit_code = (long)json_integer_value(code);
	} else if (!*running) {
		vmc_errorf(err, errsize, "Docker API GET /exec/…/json: no ExitCode");
		rc = VMC_EXIT_DOCKER;
	}
	json_decref(j);
	http_response_free(&resp);
	return rc;
}

int docker_exec_stream(const struct docker *d, const char *id, const char *const *argv,
		       const char *const *env, long timeout_ms, docker_output_fn on_output,
		       void *ctx, struct docker_exec_result *res, char *err, size_t errsize)
{
	memset(res, 0, sizeof *res);
	res->exit_code = -1;
	if (!docker_path_token(id))
		return vmc_errorf(err, errsize, "invalid container id \"%s\"", id), VMC_EXIT_DOCKER;
	if (!argv || !argv[0])
		return vmc_errorf(err, errsize, "docker exec needs a command"), VMC_EXIT_DOCKER;
	char exec_id[128];
	int rc = exec_create(d, id, argv, env, exec_id, sizeof exec_id, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	struct exec_sink sink = {.res = res, .on_output = on_output, .ctx = ctx};
	docker_demux_init(&sink.demux, exec_frame, &sink);
	rc = exec_start(d, exec_id, timeout_ms, &sink, err, errsize);
	free(sink.errbody);
	if (rc != VMC_EXIT_OK)
		return rc;
	/* The stream ends when the process's pipes close; its exit status may land a moment later.
	 */
	for (int attempt = 0; attempt < EXEC_EXIT_POLLS; attempt++) {
		bool running = false;
		rc = exec_inspect(d, exec_id, &res->exit_code, &running, err, errsize);
		if (rc != VMC_EXIT_OK || !running)
			return rc;
		usleep(EXEC_EXIT_POLL_MS * 1000);
	}
	return vmc_errorf(err, errsize,
			  "exec %s in container %.12s still runs after its output ended", argv[0],
			  id),
	       VMC_EXIT_DOCKER;
}

int docker_exec(const struct docker *d, const char *id, const char *const *argv,
		const char *const *env, long timeout_ms, struct docker_exec_result *res, char *err,
		size_t errsize)
{
	return docker_exec_stream(d, id, argv, env, timeout_ms, NULL, NULL, res, err, errsize);
}

void docker_exec_result_free(struct docker_exec_result *res)
{
	free(res->out);
	free(res->errout);
	res->out = res->errout = NULL;
	res->out_len = res->errout_len = 0;
}
