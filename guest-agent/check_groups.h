/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The idle doctor's check groups: each fills exactly its count of checks from the facts.
 * checks.c runs them; a group's count is checked against its table when it compiles.
 */
#ifndef VMC_AGENT_CHECK_GROUPS_H
#define VMC_AGENT_CHECK_GROUPS_H

#include "check_result.h"
#include "doctor.h"

#include <stddef.h>

/* checks_memory.c: memory return to the host and the kernel's own wakeups. */
#define CHECK_GROUP_MEMORY_COUNT 11
void check_group_memory(const struct doctor *d, struct check out[CHECK_GROUP_MEMORY_COUNT]);

/* checks_system.c: the userland: disk writes, respawning gettys, boot, Docker. */
#define CHECK_GROUP_SYSTEM_COUNT 10
void check_group_system(const struct doctor *d, struct check out[CHECK_GROUP_SYSTEM_COUNT]);

#define CHECK_GROUPS_TOTAL (CHECK_GROUP_MEMORY_COUNT + CHECK_GROUP_SYSTEM_COUNT)

#endif
