/* SPDX-License-Identifier: Apache-2.0 */
/* `vmcost-agent status` / GET /v1/status: memory, PSI, trim history, page-reporting state. */
#ifndef VMC_AGENT_STATUS_H
#define VMC_AGENT_STATUS_H

#include <jansson.h>
#include <stdio.h>

void status_print(FILE *f, const json_t *doc);

#endif
