/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a relayed connection is doing, read from its bytes with llhttp (Node.js's HTTP/1.1
 * parser) without changing them: requests from the client, responses from docker.sock, matched
 * in order, so a request counts from its first byte until its response has ended. A poll's
 * answer ends at once; `logs -f` or `events` never does, which is what keeps the VM up. Once a
 * connection is upgraded or hijacked (attach, exec, BuildKit) or its bytes are not HTTP, it is
 * raw: nothing more is parsed and it counts as work until it closes.
 *
 * Each request is kept, with its target and where it ends in the client's bytes, until its
 * response has ended or someone else answered it (http_watch_answered): while the VM is stopped
 * the relay answers polls itself and forwards the first request it cannot answer from that
 * request's first byte.
 */
#ifndef VMC_AUTOSTOP_HTTP_WATCH_H
#define VMC_AUTOSTOP_HTTP_WATCH_H

#include "autostop/state.h"

#include <llhttp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Requests sent ahead of their responses (pipelining) that are told apart; more is raw. */
#define HTTP_WATCH_PENDING_MAX 16
/* The longest request target read; a longer one is not a poll. */
#define HTTP_WATCH_TARGET_MAX 160

/* One request, from its headers until its response has ended. */
struct http_watch_request {
	enum autostop_request kind;
	bool head;	    /* HEAD: its response has no body */
	bool complete;	    /* read to its last byte */
	bool keep_alive;    /* with complete: the client may send another request after it */
	uint64_t end;	    /* with complete: the client's bytes up to its last one */
	uint64_t seq;	    /* the how-manieth request of the connection */
	const char *method; /* "GET" ... (llhttp's names) */
	char target[HTTP_WATCH_TARGET_MAX]; /* "" when it was too long */
};

struct http_watch {
	llhttp_t request, response;
	bool raw;
	bool unknown_request; /* a request began and its headers are not all here yet */
	/* Requests waiting for (or receiving) their response, oldest first. */
	struct http_watch_request pending[HTTP_WATCH_PENDING_MAX];
	unsigned head, count;
	unsigned working, polling; /* of the pending ones */
	uint64_t requests;	   /* requests whose headers were read */
	uint64_t client_bytes;	   /* bytes the client sent so far */
	char target[HTTP_WATCH_TARGET_MAX];
	size_t target_len;
	bool target_cut;
	char api_version[16]; /* X.Y of the last request with a /vX.Y prefix, "" if none */
};

void http_watch_init(struct http_watch *w);
/* Bytes the client sent (to docker.sock, now or once connected). */
void http_watch_client(struct http_watch *w, const char *data, size_t len);
/* Bytes docker.sock sent back. */
void http_watch_upstream(struct http_watch *w, const char *data, size_t len);
/* docker.sock sent EOF: a response that ends with the connection has ended. */
void http_watch_upstream_eof(struct http_watch *w);
enum autostop_activity http_watch_activity(const struct http_watch *w);

/* The oldest request still waiting for its response, or NULL. */
const struct http_watch_request *http_watch_oldest(const struct http_watch *w);
/* The oldest request was answered by the relay itself: it waits for nothing from docker.sock. */
void http_watch_answered(struct http_watch *w);

#endif
