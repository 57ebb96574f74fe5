/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The status socket of a running `vmcost autostop` (<instance dir>/sock/autostop-status.sock),
 * both ends: the daemon hands out one JSON document per connection and reads nothing, so
 * `vmcost autostop NAME --status` and `vmcost list` cannot disturb it.
 */
#ifndef VMC_AUTOSTOP_STATUS_H
#define VMC_AUTOSTOP_STATUS_H

#include "autostop/state.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <uv.h>

/* The status socket, beside the relay's in the instance's sock/ directory. */
#define AUTOSTOP_STATUS_SOCKET_NAME "autostop-status.sock"

/* Milliseconds to wait for the document: the daemon answers from memory at once. */
#define AUTOSTOP_STATUS_TIMEOUT_MS 2000

/* ---- the daemon's side ---- */

/* The document for the daemon whose decisions are in a (caller decrefs). */
json_t *autostop_status_document(const struct autostop *a, const char *listen, const char *upstream,
				 double now);

struct autostop_status_server {
	uv_pipe_t pipe;
	bool open, unlink_on_close; /* listening; the file is ours to remove */
	char path[4200];
	json_t *(*document)(void *ctx); /* one fresh document per connection */
	void *ctx;
};

/* Readies path (a stale socket is removed, a live one refused) and listens there. Exit code +
 * err. */
int autostop_status_serve(uv_loop_t *loop, struct autostop_status_server *s, const char *path,
			  char *err, size_t errsize);
void autostop_status_close(struct autostop_status_server *s);

/* ---- a reader's side ---- */

/*
 * Fetches the status document of the daemon serving the instance in instance_dir. Returns 0
 * with *doc set (caller decrefs), or -1 with a one-line reason in err: none runs (no socket,
 * or a stale one), it did not answer in time, or the answer was not JSON.
 */
int autostop_status_fetch(const char *instance_dir, json_t **doc, char *err, size_t errsize);

/* <instance_dir>/sock/NAME into buf; false when it does not fit. */
bool autostop_sock_path(const char *instance_dir, const char *name, char *buf, size_t size);

/* One short cell for `vmcost list`: "idle 42 s", "stopped, freed 1.9 GiB", "starting". */
void autostop_status_cell(const json_t *doc, char *buf, size_t size);

/* The human form of --status, several lines. */
void autostop_status_print(const json_t *doc, FILE *f);

#endif
