/* SPDX-License-Identifier: Apache-2.0 */
/* Docker Engine API over the instance's docker.sock: libcurl (http_do) for HTTP, jansson. */
#include "clients/docker.h"

#include "clients/docker_stream.h"
#include "clients/http.h"
#include "jsonutil.h"
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Messages quote Docker's own error text; keep room for it. */
#define DOCKER_ERRBODY_MAX (64u << 10)

static int (*abort_check)(void);

void docker_set_abort_check(int (*should_abort)(void))
{
	abort_check = should_abort;
}

static bool aborted(void)
{
	return abort_check && abort_check();
}

void docker_init_socket(struct docker *d, const char *socket_path, const char *instance)
{
	memset(d, 0, sizeof *d);
	snprintf(d->socket_path, sizeof d->socket_path, "%s", socket_path);
	snprintf(d->instance, sizeof d->instance, "%s", instance ? instance : "");
	d->timeout_ms = 30000;
}

void docker_init_instance(struct docker *d, const struct lima_instance *inst)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/sock/docker.sock", inst->dir);
	docker_init_socket(d, path, inst->name);
}

static int fail(char *err, size_t errsize, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	return VMC_EXIT_DOCKER;
}

/* The transport failed: say whether dockerd is missing, down or slow, and how to look. */
static int transport_error(const struct docker *d, const struct http_response *resp, char *err,
			   size_t errsize)
{
	const char *name = *d->instance ? d->instance : "NAME";
	struct stat st;
	if (stat(d->socket_path, &st) != 0)
		return fail(
		    err, errsize,
		    "Docker socket %s does not exist: instance \"%s\" runs no Docker (use a "
		    "template with dockerd, or --workload fill)",
		    d->socket_path, name);
	if (strstr(resp->error, "refused") || strstr(resp->error, "socket missing"))
		return fail(err, errsize,
			    "dockerd is not answering on %s (%s): check it with limactl shell %s "
			    "sudo rc-service docker status",
			    d->socket_path, resp->error, name);
	return fail(err, errsize, "Docker API on %s failed: %s", d->socket_path, resp->error);
}

/* Docker's error bodies are {"message": "..."}; fall back to the raw text. */
static void docker_message(const char *body, char *out, size_t size)
{
	snprintf(out, size, "%s", "(no message)");
	if (!body || !*body)
		return;
	json_t *j = json_loads(body, 0, NULL);
	const char *msg = j ? vmc_json_get_str(j, "message") : NULL;
	if (msg)
		snprintf(out, size, "%s", msg);
	else
		snprintf(out, size, "%.200s", body);
	size_t len = strlen(out);
	while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r'))
		out[--len] = '\0';
	json_decref(j);
}

static int http_error(const char *what, const struct http_response *resp, char *err, size_t errsize)
{
	char msg[512];
	docker_message(resp->body, msg, sizeof msg);
	return fail(err, errsize, "Docker API %s: HTTP %ld: %s", what, resp->status, msg);
}

/* Percent-encodes everything but RFC 3986 unreserved characters. */
static int url_escape(const char *s, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' ||
			     *p == '~';
		if (o + (plain ? 1 : 3) >= size)
			return -1;
		if (plain) {
			out[o++] = (char)*p;
		} else {
			out[o++] = '%';
			out[o++] = hex[*p >> 4];
			out[o++] = hex[*p & 15];
		}
	}
	out[o] = '\0';
	return 0;
}

/* Image references and ids go into URL paths verbatim, as the docker CLI sends them. */
static bool safe_path_token(const char *s)
{
	if (!s || !*s || strlen(s) > 512)
		return false;
	for (const char *p = s; *p; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || strchr("._-:/@+", c) != NULL;
		if (!ok)
			return false;
	}
	return strstr(s, "..") == NULL;
}

static int request(const struct docker *d, const char *method, const char *path, const char *body,
		   long timeout_ms, struct http_response *resp, char *err, size_t errsize)
{
	struct http_request req = {
	    .socket_path = d->socket_path,
	    .method = method,
	    .path = path,
	    .body = body,
	    .timeout_ms = timeout_ms,
	};
	debug("docker: %s %s", method, path);
	if (http_do(&req, resp) != 0) {
		int rc = transport_error(d, resp, err, errsize);
		http_response_free(resp);
		return rc;
	}
	return VMC_EXIT_OK;
}

int docker_version(const struct docker *d, json_t **version, char *err, size_t errsize)
{
	*version = NULL;
	struct http_response resp;
	int rc = request(d, "GET", "/_ping", NULL, d->timeout_ms, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (resp.status != 200) {
		rc = http_error("GET /_ping", &resp, err, errsize);
		http_response_free(&resp);
		return rc;
	}
	http_response_free(&resp);
	rc = request(d, "GET", "/version", NULL, d->timeout_ms, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (resp.status != 200) {
		rc = http_error("GET /version", &resp, err, errsize);
		http_response_free(&resp);
		return rc;
	}
	json_t *j = resp.body ? json_loads(resp.body, 0, NULL) : NULL;
	http_response_free(&resp);
	if (!json_is_object(j) || !vmc_json_get_str(j, "Version")) {
		json_decref(j);
		return fail(err, errsize,
			    "Docker API GET /version: the answer is not Docker's "
			    "version document (is %s really docker.sock?)",
			    d->socket_path);
	}
	*version = j;
	return VMC_EXIT_OK;
}

int docker_image_present(const struct docker *d, const char *image, bool *present, char *err,
			 size_t errsize)
{
	*present = false;
	if (!safe_path_token(image))
		return fail(err, errsize, "invalid image reference \"%s\"", image);
	char path[700];
	snprintf(path, sizeof path, "/images/%s/json", image);
	struct http_response resp;
	int rc = request(d, "GET", path, NULL, d->timeout_ms, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (resp.status == 200)
		*present = true;
	else if (resp.status != 404)
		rc = http_error("GET /images/…/json", &resp, err, errsize);
	http_response_free(&resp);
	return rc;
}

int docker_registry_has_image(const struct docker *d, const char *image, long timeout_ms, char *err,
			      size_t errsize)
{
	if (!safe_path_token(image))
		return fail(err, errsize, "invalid image reference \"%s\"", image);
	char path[700];
	snprintf(path, sizeof path, "/distribution/%s/json", image);
	struct http_response resp;
	int rc = request(d, "GET", path, NULL, timeout_ms, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (resp.status != 200) {
		char msg[512];
		docker_message(resp.body, msg, sizeof msg);
		rc = fail(err, errsize,
			  "dockerd could not look %s up in its registry (HTTP %ld): %s", image,
			  resp.status, msg);
	}
	http_response_free(&resp);
	return rc;
}

void docker_split_image(const char *image, char *repo, size_t repo_size, char *tag, size_t tag_size)
{
	snprintf(repo, repo_size, "%s", image);
	snprintf(tag, tag_size, "%s", "latest");
	if (strchr(repo, '@')) {
		/* A digest names one manifest: no tag. */
		tag[0] = '\0';
		return;
	}
	char *slash = strrchr(repo, '/');
	char *colon = strrchr(slash ? slash : repo, ':');
	if (colon) {
		snprintf(tag, tag_size, "%s", colon + 1);
		*colon = '\0';
	}
}

/* ---- pull ---------------------------------------------------------------------------------- */

/* Keeps the start of a non-200 body (Docker's {"message":...}) next to the line parser. */
struct pull_sink {
	struct docker_lines lines;
	char *raw;
	size_t raw_len;
};

static int pull_chunk(const char *data, size_t len, void *ctx)
{
	struct pull_sink *sink = ctx;
	docker_lines_feed(&sink->lines, data, len);
	if (sink->raw_len < DOCKER_ERRBODY_MAX) {
		size_t take = len;
		if (take > DOCKER_ERRBODY_MAX - sink->raw_len)
			take = DOCKER_ERRBODY_MAX - sink->raw_len;
		char *grown = realloc(sink->raw, sink->raw_len + take + 1);
		if (grown) {
			memcpy(grown + sink->raw_len, data, take);
			sink->raw = grown;
			sink->raw_len += take;
			sink->raw[sink->raw_len] = '\0';
		}
	}
	return aborted() ? 1 : 0;
}

int docker_image_pull(const struct docker *d, const char *image, docker_pull_progress_fn progress,
		      void *ctx, char *err, size_t errsize)
{
	if (!safe_path_token(image))
		return fail(err, errsize, "invalid image reference \"%s\"", image);
	char repo[600], tag[200], erepo[1800], etag[600], path[2600];
	docker_split_image(image, repo, sizeof repo, tag, sizeof tag);
	if (url_escape(repo, erepo, sizeof erepo) != 0 || url_escape(tag, etag, sizeof etag) != 0)
		return fail(err, errsize, "invalid image reference \"%s\"", image);
	if (*tag)
		snprintf(path, sizeof path, "/images/create?fromImage=%s&tag=%s", erepo, etag);
	else
		snprintf(path, sizeof path, "/images/create?fromImage=%s", erepo);

	struct pull_sink sink = {0};
	docker_lines_init(&sink.lines, progress, ctx);
	struct http_request req = {
	    .socket_path = d->socket_path,
	    .method = "POST",
	    .path = path,
	    .on_chunk = pull_chunk,
	    .ctx = &sink,
	};
	struct http_response resp;
	debug("docker: POST %s", path);
	int http_rc = http_do(&req, &resp);
	docker_lines_finish(&sink.lines);
	int rc = VMC_EXIT_OK;
	if (aborted()) {
		rc = fail(err, errsize, "pulling %s was interrupted", image);
	} else if (http_rc != 0) {
		rc = transport_error(d, &resp, err, errsize);
	} else if (resp.status != 200) {
		char msg[512];
		docker_message(sink.raw, msg, sizeof msg);
		rc =
		    fail(err, errsize,
			 "pulling %s failed (HTTP %ld): %s: check the guest's network and registry "
			 "access, or load the image with docker load",
			 image, resp.status, msg);
	} else if (sink.lines.error[0]) {
		rc =
		    fail(err, errsize,
			 "pulling %s failed: %s: check the guest's network and registry access, or "
			 "load the image with docker load",
			 image, sink.lines.error);
	}
	free(sink.raw);
	http_response_free(&resp);
	return rc;
}

/* ---- containers ---------------------------------------------------------------------------- */

static int post_json(const struct docker *d, const char *path, const json_t *body_json,
		     long timeout_ms, struct http_response *resp, char *err, size_t errsize)
{
	char *body = body_json ? vmc_json_compact(body_json) : NULL;
	if (body_json && !body)
		return fail(err, errsize, "out of memory encoding a Docker request");
	int rc = request(d, "POST", path, body, timeout_ms, resp, err, errsize);
	free(body);
	return rc;
}

/* Reads a string member of a JSON body into out; -1 if absent. */
static int body_string(const char *body, const char *key, char *out, size_t size)
{
	json_t *j = body ? json_loads(body, 0, NULL) : NULL;
	const char *s = j ? vmc_json_get_str(j, key) : NULL;
	int rc = -1;
	if (s && *s && strlen(s) < size) {
		snprintf(out, size, "%s", s);
		rc = 0;
	}
	json_decref(j);
	return rc;
}

int docker_container_create(const struct docker *d, const char *name, const json_t *config,
			    char *id, size_t idsize, char *err, size_t errsize)
{
	char path[600] = "/containers/create";
	if (name) {
		char ename[300];
		if (url_escape(name, ename, sizeof ename) != 0)
			return fail(err, errsize, "container name \"%s\" is too long", name);
		snprintf(path, sizeof path, "/containers/create?name=%s", ename);
	}
	struct http_response resp;
	int rc = post_json(d, path, config, d->timeout_ms, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	const char *image = vmc_json_get_str(config, "Image");
	if (resp.status == 404) {
		rc = fail(
		    err, errsize,
		    "image %s is not present in the Docker of instance \"%s\": pull it (docker "
		    "pull %s) or let vmcost pull it",
		    image ? image : "?", *d->instance ? d->instance : "?", image ? image : "?");
	} else if (resp.status == 409) {
		char msg[512];
		docker_message(resp.body, msg, sizeof msg);
		rc = fail(err, errsize,
			  "a container named \"%s\" already exists: %s: remove it with "
			  "docker rm -f %s",
			  name ? name : "?", msg, name ? name : "?");
	} else if (resp.status != 201) {
		rc = http_error("POST /containers/create", &resp, err, errsize);
	} else if (body_string(resp.body, "Id", id, idsize) != 0) {
		rc = fail(err, errsize, "Docker API POST /containers/create: no Id in the answer");
	}
	http_response_free(&resp);
	return rc;
}

static int simple_post(const struct docker *d, const char *what, const char *path, long timeout_ms,
		       char *err, size_t errsize)
{
	struct http_response resp;
	int rc = request(d, "POST", path, NULL, timeout_ms, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	/* 304: already in the requested state. */
	if (resp.status != 204 && resp.status != 304 && resp.status != 200)
		rc = http_error(what, &resp, err, errsize);
	http_response_free(&resp);
	return rc;
}

int docker_container_start(const struct docker *d, const char *id, char *err, size_t errsize)
{
	if (!safe_path_token(id))
		return fail(err, errsize, "invalid container id \"%s\"", id);
	char path[600];
	snprintf(path, sizeof path, "/containers/%s/start", id);
	return simple_post(d, "POST /containers/…/start", path, 120000, err, errsize);
}

int docker_container_stop(const struct docker *d, const char *id, int grace_seconds, char *err,
			  size_t errsize)
{
	if (!safe_path_token(id))
		return fail(err, errsize, "invalid container id \"%s\"", id);
	char path[600];
	snprintf(path, sizeof path, "/containers/%s/stop?t=%d", id, grace_seconds);
	return simple_post(d, "POST /containers/…/stop", path, (grace_seconds + 60) * 1000L, err,
			   errsize);
}

int docker_container_wait(const struct docker *d, const char *id, long timeout_ms,
			  long *status_code, char *err, size_t errsize)
{
	*status_code = -1;
	if (!safe_path_token(id))
		return fail(err, errsize, "invalid container id \"%s\"", id);
	char path[600];
	snprintf(path, sizeof path, "/containers/%s/wait?condition=not-running", id);
	struct http_response resp;
	int rc = request(d, "POST", path, NULL, timeout_ms, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	json_t *j = resp.status == 200 && resp.body ? json_loads(resp.body, 0, NULL) : NULL;
	json_t *code = j ? json_object_get(j, "StatusCode") : NULL;
	if (resp.status != 200)
		rc = http_error("POST /containers/…/wait", &resp, err, errsize);
	else if (!json_is_integer(code))
		rc = fail(err, errsize, "Docker API POST /containers/…/wait: no StatusCode");
	else
		*status_code = (long)json_integer_value(code);
	json_decref(j);
	http_response_free(&resp);
	return rc;
}

int docker_container_remove(const struct docker *d, const char *id, char *err, size_t errsize)
{
	if (!safe_path_token(id))
		return fail(err, errsize, "invalid container id \"%s\"", id);
	char path[600];
	snprintf(path, sizeof path, "/containers/%s?force=1&v=1", id);
	struct http_response resp;
	int rc = request(d, "DELETE", path, NULL, 120000, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (resp.status != 204 && resp.status != 404)
		rc = http_error("DELETE /containers/…", &resp, err, errsize);
	http_response_free(&resp);
	return rc;
}

int docker_container_running(const struct docker *d, const char *id, bool *running, char *err,
			     size_t errsize)
{
	*running = false;
	if (!safe_path_token(id))
		return fail(err, errsize, "invalid container id \"%s\"", id);
	char path[600];
	snprintf(path, sizeof path, "/containers/%s/json", id);
	struct http_response resp;
	int rc = request(d, "GET", path, NULL, d->timeout_ms, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (resp.status == 404) {
		rc = fail(err, errsize, "container %.12s is gone", id);
	} else if (resp.status != 200) {
		rc = http_error("GET /containers/…/json", &resp, err, errsize);
	} else {
		json_t *j = resp.body ? json_loads(resp.body, 0, NULL) : NULL;
		json_t *state = j ? json_object_get(j, "State") : NULL;
		json_t *run = state ? json_object_get(state, "Running") : NULL;
		if (!json_is_boolean(run))
			rc = fail(err, errsize,
				  "Docker API GET /containers/…/json: no State.Running");
		else
			*running = json_is_true(run);
		json_decref(j);
	}
	http_response_free(&resp);
	return rc;
}

/* ---- exec ---------------------------------------------------------------------------------- */

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
	if (sink->errbody_len < 4096) {
		size_t take = len < 4096 - sink->errbody_len ? len : 4096 - sink->errbody_len;
		char *grown = realloc(sink->errbody, sink->errbody_len + take + 1);
		if (grown) {
			memcpy(grown + sink->errbody_len, data, take);
			sink->errbody = grown;
			sink->errbody_len += take;
			grown[sink->errbody_len] = '\0';
		}
	}
	docker_demux_feed(&sink->demux, data, len);
	return aborted() ? 1 : 0;
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
	char path[600];
	snprintf(path, sizeof path, "/containers/%s/exec", id);
	json_t *body = json_object();
	json_object_set_new(body, "AttachStdout", json_true());
	json_object_set_new(body, "AttachStderr", json_true());
	json_object_set_new(body, "Cmd", string_array(argv));
	if (env)
		json_object_set_new(body, "Env", string_array(env));
	struct http_response resp;
	int rc = post_json(d, path, body, d->timeout_ms, &resp, err, errsize);
	json_decref(body);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (resp.status == 404)
		rc = fail(err, errsize, "container %.12s is gone", id);
	else if (resp.status == 409)
		rc = fail(err, errsize, "container %.12s is not running", id);
	else if (resp.status != 201)
		rc = http_error("POST /containers/…/exec", &resp, err, errsize);
	else if (body_string(resp.body, "Id", exec_id, size) != 0)
		rc = fail(err, errsize, "Docker API POST /containers/…/exec: no Id in the answer");
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
	debug("docker: POST %s", path);
	int http_rc = http_do(&req, &resp);
	int rc = VMC_EXIT_OK;
	if (aborted()) {
		rc = fail(err, errsize, "interrupted");
	} else if (http_rc != 0) {
		rc = transport_error(d, &resp, err, errsize);
	} else if (resp.status != 200 && resp.status != 101) {
		struct http_response shown = {.status = resp.status, .body = sink->errbody};
		rc = http_error("POST /exec/…/start", &shown, err, errsize);
	} else if (sink->demux.broken) {
		rc = fail(err, errsize,
			  "Docker API POST /exec/…/start: the output stream is not "
			  "Docker's multiplexed framing");
	}
	http_response_free(&resp);
	return rc;
}

static int exec_inspect(const struct docker *d, const char *exec_id, long *exit_code, bool *running,
			char *err, size_t errsize)
{
	char path[600];
	snprintf(path, sizeof path, "/exec/%s/json", exec_id);
	struct http_response resp;
	int rc = request(d, "GET", path, NULL, d->timeout_ms, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (resp.status != 200) {
		rc = http_error("GET /exec/…/json", &resp, err, errsize);
		http_response_free(&resp);
		return rc;
	}
	json_t *j = resp.body ? json_loads(resp.body, 0, NULL) : NULL;
	json_t *code = j ? json_object_get(j, "ExitCode") : NULL;
	json_t *run = j ? json_object_get(j, "Running") : NULL;
	*running = json_is_true(run);
	if (json_is_integer(code))
		*exit_code = (long)json_integer_value(code);
	else if (!*running)
		rc = fail(err, errsize, "Docker API GET /exec/…/json: no ExitCode");
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
	if (!safe_path_token(id))
		return fail(err, errsize, "invalid container id \"%s\"", id);
	if (!argv || !argv[0])
		return fail(err, errsize, "docker exec needs a command");
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
	for (int attempt = 0; attempt < 50; attempt++) {
		bool running = false;
		rc = exec_inspect(d, exec_id, &res->exit_code, &running, err, errsize);
		if (rc != VMC_EXIT_OK || !running)
			return rc;
		usleep(100 * 1000);
	}
	return fail(err, errsize, "exec %s in container %.12s still runs after its output ended",
		    argv[0], id);
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
