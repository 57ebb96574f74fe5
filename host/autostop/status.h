/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading a running `vmcost autostop` from outside: its status socket
 * (<instance dir>/sock/autostop-status.sock) hands out one JSON document per connection and
 * reads nothing, so `vmcost autostop NAME --status` and `vmcost list` cannot disturb it.
 */
#ifndef VMC_AUTOSTOP_STATUS_H
#define VMC_AUTOSTOP_STATUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Milliseconds to wait for the document: the daemon answers from memory at once. */
#define AUTOSTOP_STATUS_TIMEOUT_MS 2000

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
