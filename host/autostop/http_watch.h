/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a relayed connection is doing, read from its bytes with llhttp (Node.js's HTTP/1.1
 * parser) without changing them: requests from the client, responses from docker.sock, matched
 * in order, so a request counts from its first byte until its response has ended. A poll's
 * answer ends at once; `logs -f` or `events` never does, which is what keeps the VM up. Once a
 * connection is upgraded or hijacked (attach, exec, BuildKit) or its bytes are not HTTP, it is
 * raw: nothing more is parsed and it counts as work until it closes.
 */
#ifndef VMC_AUTOSTOP_HTTP_WATCH_H
#define VMC_AUTOSTOP_HTTP_WATCH_H

#include "autostop/state.h"

#include <llhttp.h>
#include <stdbool.h>
#include <stddef.h>

/* Requests sent ahead of their responses (pipelining) that are told apart; more is raw. */
#define HTTP_WATCH_PENDING_MAX 16
/* The longest request target read; a longer one is not a poll. */
#define HTTP_WATCH_TARGET_MAX 160

struct http_watch {
	llhttp_t request, response;
	bool raw;
	bool unknown_request; /* a request began and its headers are not all here yet */
	/* Requests waiting for (or receiving) their response, oldest first. */
	unsigned char pending[HTTP_WATCH_PENDING_MAX]; /* enum autostop_request | HEAD flag */
	unsigned head, count;
	unsigned working, polling; /* of the pending ones */
	char target[HTTP_WATCH_TARGET_MAX];
	size_t target_len;
	bool target_cut;
};

void http_watch_init(struct http_watch *w);
/* Bytes the client sent (to docker.sock, now or once connected). */
void http_watch_client(struct http_watch *w, const char *data, size_t len);
/* Bytes docker.sock sent back. */
void http_watch_upstream(struct http_watch *w, const char *data, size_t len);
/* docker.sock sent EOF: a response that ends with the connection has ended. */
void http_watch_upstream_eof(struct http_watch *w);
enum autostop_activity http_watch_activity(const struct http_watch *w);

#endif
