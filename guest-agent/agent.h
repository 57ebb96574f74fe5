/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the CLI (main.c) and the HTTP server (server.c) ask of the agent's core. Each builder
 * returns a new JSON object (the same document the CLI prints with --json and the API returns),
 * or NULL with a one-line message in err and errno set to the cause (EACCES or EPERM: not root),
 * so callers choose exit codes from errno, never from the message.
 */
#ifndef VMC_AGENT_H
#define VMC_AGENT_H

#include "config.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* What the daemon's timer and API requests share (state.h; its lock is taken there only). */
struct agent_state;

struct agent_state *agent_state_new(void);
void agent_state_free(struct agent_state *st);

/* GET /v1/status: memory summary, PSI, trim history, page-reporting state. st may be NULL. */
json_t *agent_status(struct agent_state *st, char *err, size_t errsize);
/* GET /v1/checks: the idle doctor. */
json_t *agent_checks(char *err, size_t errsize);
/* GET /v1/wakeups?seconds=N: blocks for N seconds; safe to run concurrently with anything. */
json_t *agent_wakeups(double seconds, char *err, size_t errsize);
/* POST /v1/trim and the timer: one pass. force skips the idle test; dry_run changes nothing. */
json_t *agent_trim(struct agent_state *st, const struct agent_config *cfg, bool dry_run, bool force,
		   char *err, size_t errsize);
/* GET /v1/balloon */
json_t *agent_balloon(char *err, size_t errsize);
/* PUT /v1/balloon/order: returns the new balloon document, or NULL (bad order, EINVAL...). */
json_t *agent_balloon_set_order(int order, char *err, size_t errsize);

/*
 * The daemon: trim policy timer + API server in one process, until SIGTERM/SIGINT. Returns an
 * exit code.
 */
int agent_run(const struct agent_config *cfg);

#endif
