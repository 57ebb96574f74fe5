/* SPDX-License-Identifier: Apache-2.0 */
#include "autostop/http_watch.h"

#include <string.h>

#define PENDING_HEAD 0x80 /* the request was HEAD: its response has no body */

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

static void push(struct http_watch *w, enum autostop_request kind, bool head)
{
	if (w->count == HTTP_WATCH_PENDING_MAX) {
		go_raw(w);
		return;
	}
	w->pending[(w->head + w->count) % HTTP_WATCH_PENDING_MAX] =
	    (unsigned char)(kind | (head ? PENDING_HEAD : 0));
	w->count++;
	if (kind == AUTOSTOP_REQ_POLL)
		w->polling++;
	else
		w->working++;
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
	push(w, kind, strcmp(method, "HEAD") == 0);
	return 0;
}

/* A hijacked connection carries a raw stream after this request's body (if any). */
static int on_request_complete(llhttp_t *p)
{
	struct http_watch *w = watch_of(p);
	unsigned newest =
	    (w->head + w->count + HTTP_WATCH_PENDING_MAX - 1) % HTTP_WATCH_PENDING_MAX;
	if (w->count > 0 && (w->pending[newest] & ~PENDING_HEAD) == AUTOSTOP_REQ_HIJACK)
		return HPE_PAUSED;
	return 0;
}

static int on_response_headers(llhttp_t *p)
{
	struct http_watch *w = watch_of(p);
	/* The answer to HEAD has the headers of a GET and no body. */
	return w->count > 0 && (w->pending[w->head] & PENDING_HEAD) ? 1 : 0;
}

static int on_response_complete(llhttp_t *p)
{
	struct http_watch *w = watch_of(p);
	int status = llhttp_get_status_code(p);
	/* 100 Continue and the like come before the real answer. */
	if (status >= 100 && status < 200 && status != 101)
		return 0;
	if (w->count == 0)
		return 0;
	unsigned char e = w->pending[w->head];
	w->head = (w->head + 1) % HTTP_WATCH_PENDING_MAX;
	w->count--;
	if ((e & ~PENDING_HEAD) == AUTOSTOP_REQ_POLL)
		w->polling--;
	else
		w->working--;
	return 0;
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

/* Anything but HPE_OK ends parsing: an upgrade, a hijack (our pause) or bytes that are not
 * HTTP. The bytes are relayed as they are either way. */
void http_watch_client(struct http_watch *w, const char *data, size_t len)
{
	if (w->raw || len == 0)
		return;
	if (llhttp_execute(&w->request, data, len) != HPE_OK)
		go_raw(w);
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
