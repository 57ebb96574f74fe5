/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One client connection of `vmcost autostop`, relayed byte for byte to the instance's
 * docker.sock with libuv. The bytes are read, never changed, by http_watch.c to tell work from
 * polls; hijacked and upgraded streams (attach, exec, logs -f, events, BuildKit) are just bytes,
 * and an EOF from either side becomes a shutdown of the other side's write half, so half-close
 * works both ways.
 *
 * A relay starts "held": the client is read (up to RELAY_HOLD_MAX bytes, then back-pressured)
 * while no upstream exists, so a client that arrives while the VM is stopped loses nothing and
 * a client that gives up while held is noticed. relay_connect() then opens the upstream, writes
 * what was held and relays from there on.
 *
 * While the VM is stopped, a held relay may instead serve its client locally
 * (relay_serve_locally): each complete request is offered to hooks->answer, whose response
 * goes to the client and whose bytes are dropped; the first one it does not take ends that, and
 * the relay stays held from that request's first byte, so relay_connect() later sends docker.sock
 * the bytes from there, unchanged.
 *
 * Until docker.sock sends its first byte, the relay keeps a copy of what it sent (up to
 * RELAY_HOLD_MAX): a forward that accepted and hangs can be healed, and a client that sent only
 * polls held again (relay_rehold) and relayed anew through the new forward.
 */
#ifndef VMC_AUTOSTOP_RELAY_H
#define VMC_AUTOSTOP_RELAY_H

#include "autostop/state.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* Bytes read from a held client before reading stops until the upstream is connected. */
#define RELAY_HOLD_MAX (256u * 1024u)
/* A side's unsent bytes above which the other side is no longer read (back-pressure). */
#define RELAY_QUEUE_HIGH (1024u * 1024u)

struct relay;

struct relay_hooks {
	/* The upstream connect failed (ENOENT, ECONNREFUSED...): the relay is held again and may
	 * be connected later, or closed. */
	void (*upstream_failed)(struct relay *r, int uv_status, void *ctx);
	/* The upstream accepted; bytes flow. */
	void (*connected)(struct relay *r, void *ctx);
	/* Bytes went to docker.sock and it had sent nothing since the bytes before (may be
	 * NULL): relay_silent_since tells for how long. */
	void (*waiting)(struct relay *r, void *ctx);
	/* A held client sent its first bytes (may be NULL). */
	void (*spoke)(struct relay *r, void *ctx);
	/* What the connection does changed (http_watch.h); a closing one goes to AUTOSTOP_QUIET
	 * before closed. */
	void (*activity)(struct relay *r, enum autostop_activity was, enum autostop_activity is,
			 void *ctx);
	/* Both handles are closed; r is freed right after this returns. why is "" after a clean
	 * end (both sides sent EOF), else the error that ended it. */
	void (*closed)(struct relay *r, const char *why, void *ctx);
	/* Serving locally: a complete request (target "" when too long to keep). Returns true with
	 * the whole response in *out (malloc'd; the relay frees it), false to leave it to
	 * docker.sock. */
	bool (*answer)(struct relay *r, const char *method, const char *target, bool keep_alive,
		       char **out, size_t *len, void *ctx);
	/* Serving locally ended on a request answer() did not take, or on bytes that are not
	 * HTTP (what says which, "POST /containers/create"): the client now waits for docker.sock,
	 * held from that request's first byte. */
	void (*wake)(struct relay *r, const char *what, void *ctx);
};

enum relay_phase {
	RELAY_HELD,	  /* client open, no upstream */
	RELAY_CONNECTING, /* uv_pipe_connect in flight */
	RELAY_RELAYING,
	RELAY_CLOSING,
};

/*
 * Accepts one pending connection from server into a new held relay and starts reading the
 * client. Returns NULL with *uv_err set when accept failed (the pending connection is gone).
 */
struct relay *relay_accept(uv_stream_t *server, const struct relay_hooks *hooks, void *ctx,
			   int *uv_err);
/* Connects the upstream unix socket; hooks tell how it went. Only from RELAY_HELD. */
void relay_connect(struct relay *r, const char *upstream_path);
/* A held relay whose upstream refused serves its client through hooks->answer until a request
 * needs docker.sock (hooks->wake) or the client leaves. relay_connect ends it. */
void relay_serve_locally(struct relay *r);
/* Serving its client locally (relay_serve_locally), until a request needs docker.sock. */
bool relay_serving_locally(const struct relay *r);
/*
 * A relaying client whose docker.sock has not sent a byte since the connect, and that sent only
 * polls (nothing that may have changed something if it did reach dockerd), no more than
 * RELAY_HOLD_MAX bytes: lets go of the upstream and holds the client again, with every byte it
 * sent, for relay_connect (held once the upstream handle is closed, within this loop
 * iteration). Returns false, changing nothing, for any other relay.
 */
bool relay_rehold(struct relay *r);
/* Relaying, and docker.sock has sent nothing since bytes went to it: since when (uv_now,
 * milliseconds); 0 otherwise. */
uint64_t relay_silent_since(const struct relay *r);
/* Closes both sides now (unsent bytes are dropped); why ends up in hooks->closed. */
void relay_close(struct relay *r, const char *why);

enum relay_phase relay_phase(const struct relay *r);
enum autostop_activity relay_activity(const struct relay *r);
size_t relay_held_bytes(const struct relay *r);
/* Failed connects since the last success (a busy upstream answers EAGAIN: retry, then give up). */
unsigned relay_connect_failures(const struct relay *r);
/* The libuv status of the last failed connect (0 if none failed). */
int relay_connect_error(const struct relay *r);
/* "1.41" when the client's last request had a /v1.41 prefix, else "". */
const char *relay_api_version(const struct relay *r);

/* The daemon's list of open relays (intrusive, so counting and closing need no allocation). */
struct relay *relay_next(const struct relay *r);
void relay_list_add(struct relay **head, struct relay *r);
void relay_list_remove(struct relay **head, struct relay *r);

#endif
