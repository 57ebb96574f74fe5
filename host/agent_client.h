/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Client of the vmcost-agent API through $LIMA_HOME/NAME/sock/vmcost-agent.sock.
 * CONTRACT shared by host/ files: extend, do not break.
 */
#ifndef VMC_AGENT_CLIENT_H
#define VMC_AGENT_CLIENT_H

#include "lima.h"

#include <jansson.h>
#include <stddef.h>

/*
 * method/path as in the agent API ("GET", "/v1/status"). On success returns VMC_EXIT_OK and a
 * new JSON reference in *out. On failure returns VMC_EXIT_AGENT with a message that says how to
 * check the service (socket missing, refused, timeout, HTTP error with the agent's message).
 */
int agent_call(const struct lima_instance *inst, const char *method, const char *path,
               const char *body, long timeout_ms, json_t **out, char *err, size_t errsize);

#endif
