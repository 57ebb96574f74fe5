/* SPDX-License-Identifier: Apache-2.0 */
/* Docker's images and containers (docker.h); every call goes through docker_call. */
#include "clients/docker.h"

#include "clients/docker_call.h"
#include "clients/docker_stream.h"
#include "clients/http.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Messages quote Docker's own error text; keep room for it. */
#define DOCKER_ERRBODY_MAX (64u << 10)

static const struct docker_endpoint PING = {"GET", "/_ping", NULL, 0, {200}};
static const struct docker_endpoint VERSION = {"GET", "/version", NULL, 0, {200}};
static const struct docker_endpoint IMAGE_INSPECT = {
    "GET", "/images/…/json", "image reference", 0, {200, 404}};
/* Every status: a refusal is a message of its own. */
static const struct docker_endpoint DISTRIBUTION_INSPECT = {
    "GET", "/distribution/…/json", "image reference", 0, {0}};
static const struct docker_endpoint CONTAINER_CREATE = {
    "POST", "/containers/create", NULL, 0, {201, 404, 409}};
/* 304: already in the requested state. */
static const struct docker_endpoint CONTAINER_START = {
    "POST", "/containers/…/start", "container id", DOCKER_CONTAINER_TIMEOUT_MS, {204, 304, 200}};
/* 404: already gone. */
static const struct docker_endpoint CONTAINER_REMOVE = {
    "DELETE", "/containers/…", "container id", DOCKER_CONTAINER_TIMEOUT_MS, {204, 404}};
static const struct docker_endpoint CONTAINER_INSPECT = {
    "GET", "/containers/…/json", "container id", 0, {200, 404}};

int docker_version(const struct docker *d, json_t **version, char *err, size_t errsize)
{
	*version = NULL;
	struct http_response resp;
	int rc = docker_call(d, &PING, NULL, NULL, NULL, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	http_response_free(&resp);
	rc = docker_call(d, &VERSION, NULL, NULL, NULL, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	json_t *j = resp.body ? json_loads(resp.body, 0, NULL) : NULL;
	http_response_free(&resp);
	if (!json_is_object(j) || !vmc_json_get_str(j, "Version")) {
		json_decref(j);
		return vmc_errorf(err, errsize,
				  "Docker API GET /version: the answer is not Docker's "
				  "version document (is %s really docker.sock?)",
				  d->socket_path),
		       VMC_EXIT_DOCKER;
	}
	*version = j;
	return VMC_EXIT_OK;
}

int docker_image_present(const struct docker *d, const char *image, bool *present, char *err,
			 size_t errsize)
{
	*present = false;
	struct http_response resp;
	int rc = docker_call(d, &IMAGE_INSPECT, image, NULL, NULL, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	*present = resp.status == 200;
	http_response_free(&resp);
	return VMC_EXIT_OK;
}

int docker_registry_has_image(const struct docker *d, const char *image, long timeout_ms, char *err,
			      size_t errsize)
{
	struct docker_endpoint ep = DISTRIBUTION_INSPECT;
	ep.timeout_ms = timeout_ms;
	struct http_response resp;
	int rc = docker_call(d, &ep, image, NULL, NULL, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (resp.status != 200) {
		char msg[512];
		docker_message(resp.body, msg, sizeof msg);
		vmc_errorf(err, errsize,
			   "dockerd could not look %s up in its registry (HTTP %ld): %s", image,
			   resp.status, msg);
		rc = VMC_EXIT_DOCKER;
	}
	http_response_free(&resp);
	return rc;
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
	return docker_aborted() ? 1 : 0;
}

int docker_image_pull(const struct docker *d, const char *image, docker_pull_progress_fn progress,
		      void *ctx, char *err, size_t errsize)
{
	if (!docker_path_token(image))
		return vmc_errorf(err, errsize, "invalid image reference \"%s\"", image),
		       VMC_EXIT_DOCKER;
	char repo[600], tag[200], erepo[1800], etag[600], path[2600];
	docker_split_image(image, repo, sizeof repo, tag, sizeof tag);
	if (url_escape(repo, erepo, sizeof erepo) != 0 || url_escape(tag, etag, sizeof etag) != 0)
		return vmc_errorf(err, errsize, "invalid image reference \"%s\"", image),
		       VMC_EXIT_DOCKER;
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
	vmc_debug("docker: POST %s", path);
	int http_rc = http_do(&req, &resp);
	docker_lines_finish(&sink.lines);
	int rc = VMC_EXIT_DOCKER;
	if (docker_aborted()) {
		vmc_errorf(err, errsize, "pulling %s was interrupted", image);
	} else if (http_rc != 0) {
		docker_transport_error(d, &resp, err, errsize);
	} else if (resp.status != 200) {
		char msg[512];
		docker_message(sink.raw, msg, sizeof msg);
		vmc_errorf(
		    err, errsize,
		    "pulling %s failed (HTTP %ld): %s: check the guest's network and registry "
		    "access, or load the image with docker load",
		    image, resp.status, msg);
	} else if (sink.lines.error[0]) {
		vmc_errorf(
		    err, errsize,
		    "pulling %s failed: %s: check the guest's network and registry access, or "
		    "load the image with docker load",
		    image, sink.lines.error);
	} else {
		rc = VMC_EXIT_OK;
	}
	free(sink.raw);
	http_response_free(&resp);
	return rc;
}

/* ---- containers ---------------------------------------------------------------------------- */

int docker_container_create(const struct docker *d, const char *name, const json_t *config,
			    char *id, size_t idsize, char *err, size_t errsize)
{
	char query[320] = "";
	if (name) {
		char ename[300];
		if (url_escape(name, ename, sizeof ename) != 0)
			return vmc_errorf(err, errsize, "container name \"%s\" is too long", name),
			       VMC_EXIT_DOCKER;
		vmc_textf(query, sizeof query, "name=%s", ename);
	}
	struct http_response resp;
	int rc = docker_call(d, &CONTAINER_CREATE, NULL, name ? query : NULL, config, &resp, err,
			     errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	const char *image = vmc_json_get_str(config, "Image");
	rc = VMC_EXIT_DOCKER;
	if (resp.status == 404) {
		vmc_errorf(
		    err, errsize,
		    "image %s is not present in the Docker of instance \"%s\": pull it (docker "
		    "pull %s) or let vmcost pull it",
		    image ? image : "?", *d->instance ? d->instance : "?", image ? image : "?");
	} else if (resp.status == 409) {
		char msg[512];
		docker_message(resp.body, msg, sizeof msg);
		vmc_errorf(
		    err, errsize,
		    "a container named \"%s\" already exists: %s: remove it with docker rm -f %s",
		    name ? name : "?", msg, name ? name : "?");
	} else if (docker_body_string(resp.body, "Id", id, idsize) != 0) {
		vmc_errorf(err, errsize, "Docker API POST /containers/create: no Id in the answer");
	} else {
		rc = VMC_EXIT_OK;
	}
	http_response_free(&resp);
	return rc;
}

/* A call whose answer says nothing beyond its status. */
static int call_for_status(const struct docker *d, const struct docker_endpoint *ep, const char *id,
			   const char *query, char *err, size_t errsize)
{
	struct http_response resp;
	int rc = docker_call(d, ep, id, query, NULL, &resp, err, errsize);
	if (rc == VMC_EXIT_OK)
		http_response_free(&resp);
	return rc;
}

int docker_container_start(const struct docker *d, const char *id, char *err, size_t errsize)
{
	return call_for_status(d, &CONTAINER_START, id, NULL, err, errsize);
}

int docker_container_remove(const struct docker *d, const char *id, char *err, size_t errsize)
{
	return call_for_status(d, &CONTAINER_REMOVE, id, "force=1&v=1", err, errsize);
}

int docker_container_running(const struct docker *d, const char *id, bool *running, char *err,
			     size_t errsize)
{
	*running = false;
	struct http_response resp;
	int rc = docker_call(d, &CONTAINER_INSPECT, id, NULL, NULL, &resp, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	json_t *j = resp.status == 200 && resp.body ? json_loads(resp.body, 0, NULL) : NULL;
	json_t *state = j ? json_object_get(j, "State") : NULL;
	json_t *run = state ? json_object_get(state, "Running") : NULL;
	if (resp.status == 404) {
		vmc_errorf(err, errsize, "container %.12s is gone", id);
		rc = VMC_EXIT_DOCKER;
	} else if (!json_is_boolean(run)) {
		vmc_errorf(err, errsize, "Docker API GET /containers/…/json: no State.Running");
		rc = VMC_EXIT_DOCKER;
	} else {
		*running = json_is_true(run);
	}
	json_decref(j);
	http_response_free(&resp);
	return rc;
}
