/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vmcost-agent trim` and POST /v1/trim (agent_trim of agent.h): one trim decision, from the
 * claim on the agent's state to the document that says what happened. The policy is
 * trim_policy.h, the kernel writes trim_pass.h, the record state.h.
 */
#ifndef VMC_AGENT_TRIM_H
#define VMC_AGENT_TRIM_H

#include <jansson.h>
#include <stdio.h>

void trim_print(FILE *f, const json_t *doc);

#endif
