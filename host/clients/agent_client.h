/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Client of the vmcost-agent API through $LIMA_HOME/NAME/sock/vmcost-agent.sock.
 */
#ifndef VMC_AGENT_CLIENT_H
#define VMC_AGENT_CLIENT_H

#include "clients/lima.h"

#include <jansson.h>
#include <stddef.h>

/*
 * method/path as in the agent API ("GET", "/v1/status"). On success returns VMC_EXIT_OK and a
 * new JSON reference in *out. On failure returns VMC_EXIT_AGENT with a message that says how to
 * check the service (socket missing, refused, timeout, HTTP error with the agent's message).
 */
int agent_call(const struct lima_instance *inst, const char *method, const char *path,
	       const char *body, long timeout_ms, json_t **out, char *err, size_t errsize);

/* $dir/sock/vmcost-agent.sock into buf; -1 if it does not fit. */
int agent_socket_path(const struct lima_instance *inst, char *buf, size_t size);

/*
 * Longest unix socket path this OS accepts (sun_path minus the NUL: 103 on macOS, 107 on
 * Linux). Lima keeps its own sockets under 104 bytes for the same reason.
 */
size_t agent_socket_path_max(void);

#endif
