/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The two questions autostop asks the Docker API directly through the instance's docker.sock
 * (libcurl, never through its own relay): does it answer /_ping, and how many containers run.
 * Blocking calls: the daemon runs them on libuv's thread pool.
 */
#ifndef VMC_AUTOSTOP_PROBE_H
#define VMC_AUTOSTOP_PROBE_H

#include "autostop/state.h"

#include <stdbool.h>
#include <stddef.h>

/* Milliseconds a ping may take: a stopped VM refuses at once, a booting one may accept and
 * say nothing. */
#define PROBE_PING_TIMEOUT_MS  2000
#define PROBE_CHECK_TIMEOUT_MS 10000

/* True when GET /_ping answered 200. */
bool probe_ping(const char *docker_sock, long timeout_ms);
/* The same, with why it did not in why ("timed out: ...", "HTTP 500"). */
bool probe_ping_why(const char *docker_sock, long timeout_ms, char *why, size_t whysize);

/*
 * GET /containers/json (running containers only). When the API does not answer, asks Lima
 * whether instance is stopped or running (c->instance_stopped, c->instance_running) so a VM
 * stopped by hand is told apart from an unhealthy one, and a forward that refuses or hangs
 * (c->no_answer while it runs) from a dockerd that answers with an error.
 */
void probe_check(const char *docker_sock, const char *instance, long timeout_ms,
		 struct autostop_check *c);

/* Parses Docker's container list (a JSON array) into c: count and names. Returns 0 or -1. */
int probe_parse_containers(const char *body, size_t len, struct autostop_check *c);

#endif
