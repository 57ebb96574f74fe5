/* SPDX-License-Identifier: Apache-2.0 */
/* The Docker client, its calls and its messages (docker_call.h). */
#include "clients/docker_call.h"

#include "jsonutil.h"
#include "log.h"
#include "message.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int (*abort_check)(void);

void docker_set_abort_check(int (*should_abort)(void))
{
	abort_check = should_abort;
}

bool docker_aborted(void)
{
	return abort_check && abort_check();
}

void docker_init_socket(struct docker *d, const char *socket_path, const char *instance)
{
	memset(d, 0, sizeof *d);
	snprintf(d->socket_path, sizeof d->socket_path, "%s", socket_path);
	snprintf(d->instance, sizeof d->instance, "%s", instance ? instance : "");
	d->timeout_ms = DOCKER_SHORT_TIMEOUT_MS;
}

void docker_init_instance(struct docker *d, const struct lima_instance *inst)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/sock/docker.sock", inst->dir);
	docker_init_socket(d, path, inst->name);
}

int docker_transport_error(const struct docker *d, const struct http_response *resp, char *err,
			   size_t errsize)
{
	const char *name = *d->instance ? d->instance : "NAME";
	struct stat st;
	if (stat(d->socket_path, &st) != 0)
		return vmc_errorf(
			   err, errsize,
			   "Docker socket %s does not exist: instance \"%s\" runs no Docker (use a "
			   "template with dockerd, or --workload fill)",
			   d->socket_path, name),
		       VMC_EXIT_DOCKER;
	if (strstr(resp->error, "refused") || strstr(resp->error, "socket missing"))
		return vmc_errorf(
			   err, errsize,
			   "dockerd is not answering on %s (%s): check it with limactl shell %s "
			   "sudo rc-service docker status",
			   d->socket_path, resp->error, name),
		       VMC_EXIT_DOCKER;
	return vmc_errorf(err, errsize, "Docker API on %s failed: %s", d->socket_path, resp->error),
	       VMC_EXIT_DOCKER;
}

void docker_message(const char *body, char *out, size_t size)
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

int docker_http_error(const char *what, long status, const char *body, char *err, size_t errsize)
{
	char msg[512];
	docker_message(body, msg, sizeof msg);
	return vmc_errorf(err, errsize, "Docker API %s: HTTP %ld: %s", what, status, msg),
	       VMC_EXIT_DOCKER;
}

int docker_body_string(const char *body, const char *key, char *out, size_t size)
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

bool docker_path_token(const char *s)
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

static bool status_ok(const struct docker_endpoint *ep, long status)
{
	if (!ep->ok[0])
		return true;
	for (size_t i = 0; i < sizeof ep->ok / sizeof ep->ok[0] && ep->ok[i]; i++)
		if (ep->ok[i] == status)
			return true;
	return false;
}

int docker_call(const struct docker *d, const struct docker_endpoint *ep, const char *token,
		const char *query, const json_t *body, struct http_response *resp, char *err,
		size_t errsize)
{
	char path[1200];
	const char *slot = strstr(ep->path, "…");
	if (slot) {
		if (!docker_path_token(token))
			return vmc_errorf(err, errsize, "invalid %s \"%s\"", ep->token_kind,
					  token ? token : ""),
			       VMC_EXIT_DOCKER;
		vmc_textf(path, sizeof path, "%.*s%s%s", (int)(slot - ep->path), ep->path, token,
			  slot + strlen("…"));
	} else {
		vmc_textf(path, sizeof path, "%s", ep->path);
	}
	if (query) {
		size_t len = strlen(path);
		int n = snprintf(path + len, sizeof path - len, "?%s", query);
		if (n < 0 || (size_t)n >= sizeof path - len)
			return vmc_errorf(err, errsize, "Docker API %s %s: the query is too long",
					  ep->method, path),
			       VMC_EXIT_DOCKER;
	}
	char *json = body ? vmc_json_compact(body) : NULL;
	if (body && !json)
		return vmc_errorf(err, errsize, "out of memory encoding a Docker request"),
		       VMC_EXIT_DOCKER;
	struct http_request req = {
	    .socket_path = d->socket_path,
	    .method = ep->method,
	    .path = path,
	    .body = json,
	    .timeout_ms = ep->timeout_ms ? ep->timeout_ms : d->timeout_ms,
	};
	vmc_debug("docker: %s %s", ep->method, path);
	int http_rc = http_do(&req, resp);
	free(json);
	int rc = VMC_EXIT_OK;
	if (http_rc != 0) {
		rc = docker_transport_error(d, resp, err, errsize);
	} else if (!status_ok(ep, resp->status)) {
		char what[200];
		vmc_textf(what, sizeof what, "%s %s", ep->method, ep->path);
		rc = docker_http_error(what, resp->status, resp->body, err, errsize);
	}
	if (rc != VMC_EXIT_OK)
		http_response_free(resp);
	return rc;
}
