/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HTTP/1.1 over a unix socket with libcurl (CURLOPT_UNIX_SOCKET_PATH), for the vmcost-agent
 * and Docker Engine APIs. JSON bodies parsed with jansson by the callers.
 */
#ifndef VMC_HTTP_H
#define VMC_HTTP_H

#include <stdbool.h>
#include <stddef.h>

/* One response header, as the peer spelled it (libcurl's header API: no parsing of ours). */
struct http_header {
	char *name;
	char *value;
};

struct http_response {
	long status; /* HTTP status, 0 if no response */
	char *body;  /* NUL-terminated, malloc'd (may be NULL) */
	size_t body_len;
	char error[256]; /* transport error ("connection refused", "timed out") when status == 0 */
	/* With want_headers: the final response's headers, in order (malloc'd; freed by
	 * http_response_free). */
	struct http_header *headers;
	size_t nheaders;
};

struct http_request {
	const char *socket_path;
	const char *method;	  /* "GET", "HEAD" (no body is read), "POST", "PUT", "DELETE" */
	const char *path;	  /* "/v1/status?x=1" */
	const char *body;	  /* NULL for none */
	const char *content_type; /* default application/json when body != NULL */
	long timeout_ms;	  /* 0 = no limit */
	/* Streaming callback for long responses (docker pull progress); NULL = buffer the body. */
	int (*on_chunk)(const char *data, size_t len, void *ctx);
	void *ctx;
	bool want_headers; /* keep the response's headers in http_response.headers */
};

/* Returns 0 when a response arrived (any status), -1 on transport failure (see error). */
int http_do(const struct http_request *req, struct http_response *resp);
void http_response_free(struct http_response *resp);

#endif
