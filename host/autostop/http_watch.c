/* SPDX-License-Identifier: Apache-2.0 */
#include "autostop/http_watch.h"

#include <string.h>

static struct http_watch *watch_of(llhttp_t *p)
{
	return p->data;
}

static void go_raw(struct http_watch *w)
{
	w->raw = true;
}

static int on_request_begin(llhttp_t *p)
{
	struct http_watch *w = watch_of(p);
	w->unknown_request = true;
	w->target_len = 0;
	w->target_cut = false;
	return 0;
}

static int on_target(llhttp_t *p, const char *at, size_t len)
{
	struct http_watch *w = watch_of(p);
	size_t room = sizeof w->target - 1 - w->target_len;
	if (len > room) {
		len = room;
		w->target_cut = true;
	}
	memcpy(w->target + w->target_len, at, len);
	w->target_len += len;
	return 0;
}

static struct http_watch_request *push(struct http_watch *w, enum autostop_request kind)
{
	if (w->count == HTTP_WATCH_PENDING_MAX) {
		go_raw(w);
		return NULL;
	}
	struct http_watch_request *q = &w->pending[(w->head + w->count) % HTTP_WATCH_PENDING_MAX];
	memset(q, 0, sizeof *q);
	q->kind = kind;
	q->seq = ++w->requests;
	w->count++;
	if (kind == AUTOSTOP_REQ_POLL)
		w->polling++;
	else
		w->working++;
	return q;
}

/* The request being read, if it still waits for its response (Docker may answer early). */
static struct http_watch_request *newest(struct http_watch *w)
{
	if (w->count == 0)
		return NULL;
	struct http_watch_request *q =
	    &w->pending[(w->head + w->count - 1) % HTTP_WATCH_PENDING_MAX];
	return q->seq == w->requests ? q : NULL;
}

/* "1.41" of "/v1.41/..." (the docker CLI's negotiated API version), for the snapshot. */
static void note_api_version(struct http_watch *w)
{
	const char *t = w->target;
	if (t[0] != '/' || t[1] != 'v' || t[2] < '0' || t[2] > '9')
		return;
	size_t n = strspn(t + 2, "0123456789.");
	if (n >= sizeof w->api_version || (t[2 + n] != '/' && t[2 + n] != '\0'))
		return;
	memcpy(w->api_version, t + 2, n);
	w->api_version[n] = '\0';
}

static int on_request_headers(llhttp_t *p)
{
	struct http_watch *w = watch_of(p);
	w->target[w->target_len] = '\0';
	const char *method = llhttp_method_name((llhttp_method_t)llhttp_get_method(p));
	enum autostop_request kind =
	    w->target_cut ? AUTOSTOP_REQ_WORK
			  : autostop_request_kind(method, w->target, llhttp_get_upgrade(p) != 0);
	w->unknown_request = false;
	struct http_watch_request *q = push(w, kind);
	if (q) {
		q->head = strcmp(method, "HEAD") == 0;
		q->method = method;
		if (!w->target_cut) {
			memcpy(q->target, w->target, w->target_len + 1);
			note_api_version(w);
		}
	}
	return 0;
}

/* Every request pauses after its last byte, so http_watch_client learns where it ended. */
static int on_request_complete(llhttp_t *p)
{
	(void)p;
	return HPE_PAUSED;
}

static int on_response_headers(llhttp_t *p)
{
	struct http_watch *w = watch_of(p);
	/* The answer to HEAD has the headers of a GET and no body. */
	return w->count > 0 && w->pending[w->head].head ? 1 : 0;
}

static int on_response_complete(llhttp_t *p)
{
	struct http_watch *w = watch_of(p);
	int status = llhttp_get_status_code(p);
	/* 100 Continue and the like come before the real answer. */
	if (status >= 100 && status < 200 && status != 101)
		return 0;
	http_watch_answered(w);
	return 0;
}

void http_watch_answered(struct http_watch *w)
{
	if (w->count == 0)
		return;
	enum autostop_request kind = w->pending[w->head].kind;
	w->head = (w->head + 1) % HTTP_WATCH_PENDING_MAX;
	w->count--;
	if (kind == AUTOSTOP_REQ_POLL)
		w->polling--;
	else
		w->working--;
}

const struct http_watch_request *http_watch_oldest(const struct http_watch *w)
{
	return w->count > 0 ? &w->pending[w->head] : NULL;
}

static const llhttp_settings_t *request_settings(void)
{
	static llhttp_settings_t s;
	static bool ready;
	if (!ready) {
		llhttp_settings_init(&s);
		s.on_message_begin = on_request_begin;
		s.on_url = on_target;
		s.on_headers_complete = on_request_headers;
		s.on_message_complete = on_request_complete;
		ready = true;
	}
	return &s;
}

static const llhttp_settings_t *response_settings(void)
{
	static llhttp_settings_t s;
	static bool ready;
	if (!ready) {
		llhttp_settings_init(&s);
		s.on_headers_complete = on_response_headers;
		s.on_message_complete = on_response_complete;
		ready = true;
	}
	return &s;
}

void http_watch_init(struct http_watch *w)
{
	memset(w, 0, sizeof *w);
	llhttp_init(&w->request, HTTP_REQUEST, request_settings());
	llhttp_init(&w->response, HTTP_RESPONSE, response_settings());
	w->request.data = w->response.data = w;
}

/*
 * Each request pauses the parser after its last byte (on_request_complete): that is where it
 * ends, and where a hijacked connection's raw stream begins. Any other error ends parsing: an
 * upgrade or bytes that are not HTTP. The bytes are relayed as they are either way.
 */
void http_watch_client(struct http_watch *w, const char *data, size_t len)
{
	uint64_t base = w->client_bytes;
	w->client_bytes += len;
	const char *p = data, *end = data + len;
	while (!w->raw && p < end) {
		llhttp_errno_t e = llhttp_execute(&w->request, p, (size_t)(end - p));
		if (e == HPE_OK)
			return;
		if (e != HPE_PAUSED) {
			go_raw(w);
			return;
		}
		const char *at = llhttp_get_error_pos(&w->request);
		if (!at || at < p || at > end)
			at = end;
		struct http_watch_request *q = newest(w);
		if (q) {
			q->complete = true;
			q->end = base + (uint64_t)(at - data);
			q->keep_alive = llhttp_should_keep_alive(&w->request) != 0;
			if (q->kind == AUTOSTOP_REQ_HIJACK) {
				go_raw(w); /* a raw stream follows */
				return;
			}
		}
		llhttp_resume(&w->request);
		p = at;
	}
}

void http_watch_upstream(struct http_watch *w, const char *data, size_t len)
{
	if (w->raw || len == 0)
		return;
	if (llhttp_execute(&w->response, data, len) != HPE_OK)
		go_raw(w);
}

void http_watch_upstream_eof(struct http_watch *w)
{
	if (!w->raw && llhttp_finish(&w->response) != HPE_OK)
		go_raw(w);
}

enum autostop_activity http_watch_activity(const struct http_watch *w)
{
	if (w->raw || w->working > 0)
		return AUTOSTOP_WORKING;
	/* A request still arriving, not yet known: work until its headers say otherwise. */
	if (w->unknown_request)
		return AUTOSTOP_WORKING;
	return w->polling > 0 ? AUTOSTOP_POLLING : AUTOSTOP_QUIET;
}
