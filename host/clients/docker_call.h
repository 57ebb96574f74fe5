/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Docker Engine API client (over the instance's <dir>/sock/docker.sock, with http_do and
 * jansson) and the one way docker.c and docker_exec.c make a call: an endpoint named as data,
 * the id or image that goes into its path checked, the request sent, the status checked, and
 * every failure turned into one line that says what to do. Everyone else includes docker.h.
 */
#ifndef VMC_DOCKER_CALL_H
#define VMC_DOCKER_CALL_H

#include "clients/http.h"
#include "clients/lima_common.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* A short request: ping, version, inspect, create. */
#define DOCKER_SHORT_TIMEOUT_MS 30000L
/* Starting and removing a container wait on the runtime and on volume cleanup. */
#define DOCKER_CONTAINER_TIMEOUT_MS 120000L

struct docker {
	char socket_path[PATH_MAX + 32];
	char instance[256]; /* for messages ("limactl shell dev ..."); may be "" */
	long timeout_ms;    /* per short request; streaming calls have their own limits */
};

/* A client for <inst dir>/sock/docker.sock. */
void docker_init_instance(struct docker *d, const struct lima_instance *inst);
/* A client for any socket (tests, DOCKER_HOST=unix://...). */
void docker_init_socket(struct docker *d, const char *socket_path, const char *instance);

/* Returns non-zero to abort streaming calls (exec, pull): set by SIGINT handlers. */
void docker_set_abort_check(int (*should_abort)(void));
/* The abort check said stop. */
bool docker_aborted(void);

/*
 * One endpoint, as messages name it: "GET /images/…/json". The "…" in path is where the token
 * goes (an image reference or an id, checked first: token_kind names it in the message when it
 * does not belong in a path). ok lists the statuses the caller handles (0-terminated; none:
 * every status); any other is an error quoting Docker's message.
 */
struct docker_endpoint {
	const char *method;
	const char *path;
	const char *token_kind;
	long timeout_ms; /* 0: the client's short timeout */
	long ok[4];
};

/*
 * Calls ep with token in its path, "?query" after it (may be NULL) and body (may be NULL) as
 * JSON. VMC_EXIT_OK with the answer in resp (the caller frees it), else VMC_EXIT_DOCKER with
 * the message in err and nothing to free.
 */
int docker_call(const struct docker *d, const struct docker_endpoint *ep, const char *token,
		const char *query, const json_t *body, struct http_response *resp, char *err,
		size_t errsize);

/* The transport failed: says whether dockerd is missing, down or slow, and how to look. */
int docker_transport_error(const struct docker *d, const struct http_response *resp, char *err,
			   size_t errsize);
/* "Docker API WHAT: HTTP 500: Docker's message" (the body is {"message": ...} or raw text). */
int docker_http_error(const char *what, long status, const char *body, char *err, size_t errsize);
/* Docker's error bodies are {"message": "..."}; falls back to the raw text. */
void docker_message(const char *body, char *out, size_t size);
/* Reads a string member of a JSON body into out; -1 if absent. */
int docker_body_string(const char *body, const char *key, char *out, size_t size);
/* Image references and ids go into URL paths verbatim, as the docker CLI sends them. */
bool docker_path_token(const char *s);

#endif
