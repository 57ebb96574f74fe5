/* SPDX-License-Identifier: Apache-2.0 */
#include "autostop/relay.h"

#include "autostop/http_watch.h"

#include <stdlib.h>
#include <string.h>

/*
 * 64 KiB per read: large enough that a 1 GiB image export costs few syscalls, small enough to
 * stay below glibc's mmap threshold (a fresh mmap per read would cost more than the copy).
 */
#define RELAY_READ_SIZE (64u * 1024u)

/* Bytes flowing one way: read from src, written to dst. */
struct relay_dir {
	struct relay *relay;
	uv_stream_t *src, *dst;
	bool src_eof;	/* src sent EOF */
	bool reading;	/* uv_read_start is in effect on src */
	bool shut_sent; /* uv_shutdown(dst) requested */
	bool shut_done; /* ... and completed */
	uv_shutdown_t shutdown_req;
};

struct held_chunk {
	struct held_chunk *next;
	size_t len;
	char data[];
};

struct relay {
	uv_pipe_t client, upstream;
	bool local;	    /* serving the client itself (relay_serve_locally) */
	bool local_closing; /* ... and ending the connection after its last answer */
	uv_shutdown_t local_shutdown;
	uint64_t held_from;	   /* the client's byte count at the first held byte */
	bool upstream_initialized; /* the upstream handle exists (open or closing) */
	bool upstream_discarding;  /* a failed upstream handle is being closed */
	int open_handles;
	enum relay_phase phase;
	struct relay_dir up;   /* client -> upstream */
	struct relay_dir down; /* upstream -> client */
	struct held_chunk *held_head, *held_tail;
	size_t held_bytes;
	/* What went to docker.sock before its first byte of answer, up to RELAY_HOLD_MAX: the
	 * bytes relay_rehold sends again through a healed forward. */
	struct held_chunk *sent_head, *sent_tail;
	size_t sent_bytes;
	bool sent_lost;	       /* more was sent than is kept */
	bool answered;	       /* docker.sock sent a byte (or EOF) since the connect */
	uint64_t silent_since; /* uv_now when bytes went up with nothing back since; 0: not */
	uv_connect_t connect_req;
	int connect_status;
	unsigned connect_failures;
	const struct relay_hooks *hooks;
	void *ctx;
	struct http_watch watch;
	enum autostop_activity activity; /* as last reported */
	char why[160];
	struct relay *prev, *next;
};

struct write_req {
	uv_write_t req;
	struct relay_dir *dir;
	char *base;
};

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
	(void)handle;
	(void)suggested;
	buf->base = malloc(RELAY_READ_SIZE);
	buf->len = buf->base ? RELAY_READ_SIZE : 0;
}

static struct relay_dir *dir_of_src(struct relay *r, uv_stream_t *src)
{
	return src == (uv_stream_t *)&r->client ? &r->up : &r->down;
}

static void report_activity(struct relay *r, enum autostop_activity is)
{
	enum autostop_activity was = r->activity;
	if (is == was)
		return;
	r->activity = is;
	if (r->hooks->activity)
		r->hooks->activity(r, was, is, r->ctx);
}

static void free_chunks(struct held_chunk **head, struct held_chunk **tail)
{
	while (*head) {
		struct held_chunk *c = *head;
		*head = c->next;
		free(c);
	}
	*tail = NULL;
}

static void forget_sent(struct relay *r)
{
	free_chunks(&r->sent_head, &r->sent_tail);
	r->sent_bytes = 0;
}

static void finalize(struct relay *r)
{
	report_activity(r, AUTOSTOP_QUIET);
	free_chunks(&r->held_head, &r->held_tail);
	forget_sent(r);
	if (r->hooks->closed)
		r->hooks->closed(r, r->why, r->ctx);
	free(r);
}

static void on_handle_closed(uv_handle_t *handle)
{
	struct relay *r = handle->data;
	if (--r->open_handles == 0)
		finalize(r);
}

/* A failed upstream handle is closed: the relay is held again, unless it was closed meanwhile. */
static void on_upstream_discarded(uv_handle_t *handle)
{
	struct relay *r = handle->data;
	r->upstream_initialized = false;
	r->upstream_discarding = false;
	if (--r->open_handles == 0) {
		finalize(r);
		return;
	}
	if (r->phase == RELAY_CLOSING)
		return;
	r->phase = RELAY_HELD;
	if (r->hooks->upstream_failed)
		r->hooks->upstream_failed(r, r->connect_status, r->ctx);
}

void relay_close(struct relay *r, const char *why)
{
	if (r->phase == RELAY_CLOSING)
		return;
	r->phase = RELAY_CLOSING;
	snprintf(r->why, sizeof r->why, "%s", why ? why : "");
	/* uv_close cancels pending writes and shutdowns (their callbacks see UV_ECANCELED) before
	 * the close callbacks run, so the relay outlives every request that points into it. */
	uv_close((uv_handle_t *)&r->client, on_handle_closed);
	if (r->upstream_initialized && !r->upstream_discarding)
		uv_close((uv_handle_t *)&r->upstream, on_handle_closed);
}

static void close_with_error(struct relay *r, const char *what, int status)
{
	char why[160];
	snprintf(why, sizeof why, "%s: %s", what, uv_strerror(status));
	relay_close(r, why);
}

/* A clean end: both sides sent EOF and both write halves were shut down after their data. */
static void maybe_finish(struct relay *r)
{
	if (r->up.src_eof && r->down.src_eof && r->up.shut_done && r->down.shut_done)
		relay_close(r, "");
}

static void start_reading(struct relay_dir *d)
{
	if (d->reading || d->src_eof || d->relay->phase == RELAY_CLOSING)
		return;
	int rc = uv_read_start(d->src, on_alloc, on_read);
	if (rc < 0) {
		close_with_error(d->relay, "read", rc);
		return;
	}
	d->reading = true;
}

static void stop_reading(struct relay_dir *d)
{
	if (!d->reading)
		return;
	uv_read_stop(d->src);
	d->reading = false;
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
	struct relay_dir *d = req->data;
	if (status == UV_ECANCELED)
		return;
	/* The peer may already have closed its end (ENOTCONN): then there is nothing left to
	 * relay in this direction, and the other direction ends on its own EOF or error. */
	d->shut_done = true;
	(void)status;
	maybe_finish(d->relay);
}

/* The src side sent EOF: once everything before it is written, shut dst's write half. */
static void forward_eof(struct relay_dir *d)
{
	if (d->shut_sent || d->relay->phase != RELAY_RELAYING)
		return;
	d->shut_sent = true;
	d->shutdown_req.data = d;
	int rc = uv_shutdown(&d->shutdown_req, d->dst, on_shutdown);
	if (rc < 0) {
		/* ENOTCONN: the peer is gone; count the direction as done. */
		d->shut_done = true;
		maybe_finish(d->relay);
	}
}

static void on_write(uv_write_t *req, int status)
{
	struct write_req *w = (struct write_req *)req;
	struct relay_dir *d = w->dir;
	free(w->base);
	free(w);
	if (status == UV_ECANCELED)
		return;
	if (status < 0) {
		close_with_error(d->relay,
				 d == &d->relay->up ? "write to docker.sock" : "write to client",
				 status);
		return;
	}
	if (uv_stream_get_write_queue_size(d->dst) <= RELAY_QUEUE_HIGH / 2)
		start_reading(d);
}

/* Bytes on their way to docker.sock: kept until it answers, and its silence timed. */
static void note_sent(struct relay *r, const char *base, size_t len)
{
	if (r->silent_since == 0) {
		r->silent_since = uv_now(r->client.loop);
		if (r->hooks->waiting)
			r->hooks->waiting(r, r->ctx);
	}
	if (r->answered || r->sent_lost)
		return;
	struct held_chunk *c = NULL;
	if (r->sent_bytes + len <= RELAY_HOLD_MAX)
		c = malloc(sizeof *c + len);
	if (!c) {
		forget_sent(r);
		r->sent_lost = true;
		return;
	}
	c->next = NULL;
	c->len = len;
	memcpy(c->data, base, len);
	if (r->sent_tail)
		r->sent_tail->next = c;
	else
		r->sent_head = c;
	r->sent_tail = c;
	r->sent_bytes += len;
}

/* docker.sock sent something (or EOF): it is not silent, and nothing needs sending again. */
static void note_answered(struct relay *r)
{
	r->silent_since = 0;
	if (r->answered)
		return;
	r->answered = true;
	forget_sent(r);
}

/* Takes ownership of base. */
static void write_to(struct relay_dir *d, char *base, size_t len)
{
	if (d == &d->relay->up)
		note_sent(d->relay, base, len);
	struct write_req *w = malloc(sizeof *w);
	if (!w) {
		free(base);
		relay_close(d->relay, "out of memory");
		return;
	}
	w->dir = d;
	w->base = base;
	uv_buf_t buf = uv_buf_init(base, (unsigned)len);
	int rc = uv_write(&w->req, d->dst, &buf, 1, on_write);
	if (rc < 0) {
		free(base);
		free(w);
		close_with_error(d->relay, "write", rc);
		return;
	}
	if (uv_stream_get_write_queue_size(d->dst) > RELAY_QUEUE_HIGH)
		stop_reading(d);
}

static void hold(struct relay *r, char *base, size_t len)
{
	struct held_chunk *c = malloc(sizeof *c + len);
	if (!c) {
		free(base);
		relay_close(r, "out of memory");
		return;
	}
	c->next = NULL;
	c->len = len;
	memcpy(c->data, base, len);
	free(base);
	if (r->held_tail)
		r->held_tail->next = c;
	else
		r->held_head = c;
	r->held_tail = c;
	bool first = r->held_bytes == 0;
	r->held_bytes += len;
	if (r->held_bytes >= RELAY_HOLD_MAX)
		stop_reading(&r->up);
	if (first && !r->local && r->hooks->spoke)
		r->hooks->spoke(r, r->ctx);
}

/* ---- serving the client locally ------------------------------------------------------------ */

struct local_write {
	uv_write_t req;
	struct relay *relay;
	char *base;
};

/* Drops the held bytes before the client's byte count upto: requests answered here. */
static void drop_held(struct relay *r, uint64_t upto)
{
	while (r->held_head && r->held_from < upto) {
		struct held_chunk *c = r->held_head;
		uint64_t want = upto - r->held_from;
		size_t n = want < c->len ? (size_t)want : c->len;
		if (n == c->len) {
			r->held_head = c->next;
			if (!r->held_head)
				r->held_tail = NULL;
			free(c);
		} else {
			memmove(c->data, c->data + n, c->len - n);
			c->len -= n;
		}
		r->held_bytes -= n;
		r->held_from += n;
	}
}

static bool client_backlogged(struct relay *r)
{
	return uv_stream_get_write_queue_size((uv_stream_t *)&r->client) > RELAY_QUEUE_HIGH;
}

static void resume_local_reading(struct relay *r)
{
	if (r->local && !r->local_closing && r->held_bytes < RELAY_HOLD_MAX &&
	    !client_backlogged(r))
		start_reading(&r->up);
}

static void on_local_write(uv_write_t *req, int status)
{
	struct local_write *w = (struct local_write *)req;
	struct relay *r = w->relay;
	free(w->base);
	free(w);
	if (status == UV_ECANCELED)
		return;
	if (status < 0) {
		close_with_error(r, "write to client", status);
		return;
	}
	if (uv_stream_get_write_queue_size((uv_stream_t *)&r->client) <= RELAY_QUEUE_HIGH / 2)
		resume_local_reading(r);
}

/* Takes ownership of base. */
static void write_local(struct relay *r, char *base, size_t len)
{
	struct local_write *w = malloc(sizeof *w);
	if (!w) {
		free(base);
		relay_close(r, "out of memory");
		return;
	}
	w->relay = r;
	w->base = base;
	uv_buf_t buf = uv_buf_init(base, (unsigned)len);
	int rc = uv_write(&w->req, (uv_stream_t *)&r->client, &buf, 1, on_local_write);
	if (rc < 0) {
		free(base);
		free(w);
		close_with_error(r, "write to client", rc);
		return;
	}
	if (client_backlogged(r))
		stop_reading(&r->up);
}

static void on_local_shutdown(uv_shutdown_t *req, int status)
{
	struct relay *r = req->data;
	if (status == UV_ECANCELED)
		return;
	relay_close(r, "");
}

/* The client is done (EOF, or Connection: close): end after the answers already queued. */
static void local_end(struct relay *r)
{
	if (r->local_closing)
		return;
	r->local_closing = true;
	stop_reading(&r->up);
	r->local_shutdown.data = r;
	if (uv_shutdown(&r->local_shutdown, (uv_stream_t *)&r->client, on_local_shutdown) < 0)
		relay_close(r, "");
}

/* Serving locally ends: the client is held for docker.sock from the request in question. */
static void local_give_up(struct relay *r, const char *what)
{
	r->local = false;
	if (r->hooks->wake)
		r->hooks->wake(r, what, r->ctx);
}

static void serve_local(struct relay *r)
{
	while (r->local && !r->local_closing && r->phase == RELAY_HELD) {
		const struct http_watch_request *q = http_watch_oldest(&r->watch);
		char what[HTTP_WATCH_TARGET_MAX + 16];
		if (q)
			snprintf(what, sizeof what, "%s %s", q->method ? q->method : "?",
				 q->target[0] ? q->target : "(a target too long to keep)");
		if (q && q->kind != AUTOSTOP_REQ_POLL) {
			local_give_up(r, what);
			return;
		}
		if (r->watch.raw && (!q || !q->complete)) {
			local_give_up(r, "bytes that are not HTTP");
			return;
		}
		if (!q || !q->complete) {
			if (r->held_bytes >= RELAY_HOLD_MAX)
				local_give_up(r, "a request longer than the relay holds");
			else if (r->up.src_eof)
				local_end(
				    r); /* gone: a request cut half-way is nobody's to answer */
			return;
		}
		char *out = NULL;
		size_t len = 0;
		if (!r->hooks->answer ||
		    !r->hooks->answer(r, q->method, q->target, q->keep_alive, &out, &len, r->ctx)) {
			local_give_up(r, what);
			return;
		}
		bool keep_alive = q->keep_alive;
		drop_held(r, q->end);
		http_watch_answered(&r->watch);
		report_activity(r, http_watch_activity(&r->watch));
		write_local(r, out, len);
		if (r->phase != RELAY_HELD)
			return;
		if (!keep_alive) {
			local_end(r);
			return;
		}
		resume_local_reading(r);
	}
}

bool relay_serving_locally(const struct relay *r)
{
	return r->local;
}

void relay_serve_locally(struct relay *r)
{
	if (r->phase != RELAY_HELD || r->local_closing)
		return;
	r->local = true;
	resume_local_reading(r);
	serve_local(r);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
	struct relay *r = stream->data;
	struct relay_dir *d = dir_of_src(r, stream);
	if (nread == 0) { /* EAGAIN: nothing to do */
		free(buf->base);
		return;
	}
	if (nread < 0) {
		free(buf->base);
		if (nread != UV_EOF) {
			close_with_error(r,
					 d == &r->up ? "read from client" : "read from docker.sock",
					 (int)nread);
			return;
		}
		stop_reading(d);
		d->src_eof = true;
		if (d == &r->down) {
			note_answered(r);
			http_watch_upstream_eof(&r->watch);
			report_activity(r, http_watch_activity(&r->watch));
		}
		if (r->phase == RELAY_RELAYING) {
			forward_eof(d);
		} else if (r->local && d == &r->up) {
			serve_local(r);
		} else if (r->held_bytes == 0) {
			/* Connected and left without a byte: nothing to relay, nobody to answer. */
			relay_close(r, "");
		}
		return;
	}
	if (d == &r->up) {
		http_watch_client(&r->watch, buf->base, (size_t)nread);
	} else {
		note_answered(r);
		http_watch_upstream(&r->watch, buf->base, (size_t)nread);
	}
	if (r->phase == RELAY_RELAYING)
		write_to(d, buf->base, (size_t)nread);
	else
		hold(r, buf->base, (size_t)nread);
	report_activity(r, http_watch_activity(&r->watch));
	if (r->local && d == &r->up)
		serve_local(r);
}

static void flush_held(struct relay *r)
{
	while (r->held_head && r->phase == RELAY_RELAYING) {
		struct held_chunk *c = r->held_head;
		r->held_head = c->next;
		if (!r->held_head)
			r->held_tail = NULL;
		r->held_bytes -= c->len;
		char *copy = malloc(c->len);
		if (!copy) {
			free(c);
			relay_close(r, "out of memory");
			return;
		}
		memcpy(copy, c->data, c->len);
		size_t len = c->len;
		free(c);
		write_to(&r->up, copy, len);
	}
}

static void on_connect(uv_connect_t *req, int status)
{
	struct relay *r = req->data;
	if (status == UV_ECANCELED || r->phase == RELAY_CLOSING)
		return;
	if (status < 0) {
		/* The half-made upstream handle is closed before the relay counts as held again
		 * (the handle's memory is reused by the next relay_connect). The client keeps being
		 * read meanwhile, so its EOF (it gave up) is seen. */
		r->connect_status = status;
		r->connect_failures++;
		r->upstream_discarding = true;
		uv_close((uv_handle_t *)&r->upstream, on_upstream_discarded);
		return;
	}
	r->phase = RELAY_RELAYING;
	r->connect_failures = 0;
	if (r->hooks->connected)
		r->hooks->connected(r, r->ctx);
	if (r->phase != RELAY_RELAYING)
		return;
	flush_held(r);
	if (r->phase != RELAY_RELAYING)
		return;
	if (r->up.src_eof)
		forward_eof(&r->up);
	else
		start_reading(&r->up);
	start_reading(&r->down);
}

void relay_connect(struct relay *r, const char *upstream_path)
{
	if (r->phase != RELAY_HELD || r->local_closing)
		return;
	r->local = false;
	uv_loop_t *loop = r->client.loop;
	uv_pipe_init(loop, &r->upstream, 0);
	r->upstream.data = r;
	r->upstream_initialized = true;
	r->open_handles++;
	r->phase = RELAY_CONNECTING;
	r->connect_req.data = r;
	uv_pipe_connect(&r->connect_req, &r->upstream, upstream_path, on_connect);
}

/* The upstream of a relay held again is closed: it waits for relay_connect, as a new one does. */
static void on_upstream_let_go(uv_handle_t *handle)
{
	struct relay *r = handle->data;
	r->upstream_initialized = false;
	r->upstream_discarding = false;
	if (--r->open_handles == 0) {
		finalize(r);
		return;
	}
	if (r->phase != RELAY_CLOSING)
		r->phase = RELAY_HELD;
}

bool relay_rehold(struct relay *r)
{
	/* Only polls may go twice: a request that changes something may have reached dockerd. */
	if (r->phase != RELAY_RELAYING || r->answered || r->sent_lost || r->watch.raw ||
	    r->watch.working > 0 || r->down.src_eof)
		return false;
	stop_reading(&r->down);
	/* Until the handle is closed the relay is neither held nor connectable (its memory is
	 * reused by the next relay_connect); uv_close cancels the writes still queued. */
	r->phase = RELAY_CONNECTING;
	r->upstream_discarding = true;
	uv_close((uv_handle_t *)&r->upstream, on_upstream_let_go);
	r->held_head = r->sent_head; /* relaying: nothing else is held */
	r->held_tail = r->sent_tail;
	r->held_bytes = r->sent_bytes;
	r->held_from = r->watch.client_bytes - r->sent_bytes;
	r->sent_head = r->sent_tail = NULL;
	r->sent_bytes = 0;
	r->silent_since = 0;
	r->up.shut_sent = r->up.shut_done = false;
	r->down = (struct relay_dir){
	    .relay = r, .src = (uv_stream_t *)&r->upstream, .dst = (uv_stream_t *)&r->client};
	if (r->held_bytes < RELAY_HOLD_MAX)
		start_reading(&r->up);
	return true;
}

uint64_t relay_silent_since(const struct relay *r)
{
	return r->phase == RELAY_RELAYING ? r->silent_since : 0;
}

struct relay *relay_accept(uv_stream_t *server, const struct relay_hooks *hooks, void *ctx,
			   int *uv_err)
{
	struct relay *r = calloc(1, sizeof *r);
	if (!r) {
		*uv_err = UV_ENOMEM;
		return NULL;
	}
	uv_pipe_init(server->loop, &r->client, 0);
	r->client.data = r;
	int rc = uv_accept(server, (uv_stream_t *)&r->client);
	if (rc < 0) {
		*uv_err = rc;
		/* Nothing refers to r but the handle: free it from the close callback. */
		r->client.data = NULL;
		uv_close((uv_handle_t *)&r->client, (uv_close_cb)free);
		return NULL;
	}
	r->open_handles = 1;
	r->hooks = hooks;
	r->ctx = ctx;
	r->phase = RELAY_HELD;
	http_watch_init(&r->watch);
	r->activity = AUTOSTOP_QUIET;
	r->up = (struct relay_dir){
	    .relay = r, .src = (uv_stream_t *)&r->client, .dst = (uv_stream_t *)&r->upstream};
	r->down = (struct relay_dir){
	    .relay = r, .src = (uv_stream_t *)&r->upstream, .dst = (uv_stream_t *)&r->client};
	start_reading(&r->up);
	return r;
}

enum relay_phase relay_phase(const struct relay *r)
{
	return r->phase;
}

enum autostop_activity relay_activity(const struct relay *r)
{
	return r->activity;
}

size_t relay_held_bytes(const struct relay *r)
{
	return r->held_bytes;
}

unsigned relay_connect_failures(const struct relay *r)
{
	return r->connect_failures;
}

int relay_connect_error(const struct relay *r)
{
	return r->connect_failures ? r->connect_status : 0;
}

const char *relay_api_version(const struct relay *r)
{
	return r->watch.api_version;
}

struct relay *relay_next(const struct relay *r)
{
	return r->next;
}

void relay_list_add(struct relay **head, struct relay *r)
{
	r->prev = NULL;
	r->next = *head;
	if (*head)
		(*head)->prev = r;
	*head = r;
}

void relay_list_remove(struct relay **head, struct relay *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else if (*head == r)
		*head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->prev = r->next = NULL;
}
