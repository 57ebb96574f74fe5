/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The idle doctor (agent_checks of agent.h): every tuning that decides what an idle guest costs
 * its host, as a document of checks (check_result.h) over facts gathered once (doctor.h), run
 * in groups (check_groups.h).
 */
#ifndef VMC_AGENT_CHECKS_H
#define VMC_AGENT_CHECKS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

void checks_print(FILE *f, const json_t *doc, bool color);

#endif
