/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The guest's memory as vmcost-agent reports it (GET /v1/status): total, free, page cache, and
 * whether free-page reporting runs, so commands never dig through JSON paths themselves.
 */
#ifndef VMC_GUEST_MEMORY_H
#define VMC_GUEST_MEMORY_H

#include "clients/lima.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct guest_memory {
	uint64_t total, free, available, file_cache;
	bool page_reporting; /* free-page reporting active (balloon with REPORTING bound) */
	bool balloon_present;
};

/* MemTotal - MemFree: what the guest uses, page cache included. */
uint64_t guest_used(const struct guest_memory *gm);

/*
 * GET /v1/status with a short timeout and guest_memory_from_status. Returns an exit code with a
 * message in err; *status_out (if not NULL) receives the document.
 */
int guest_status(const struct lima_instance *inst, long timeout_ms, struct guest_memory *gm,
		 json_t **status_out, char *err, size_t errsize);

#endif
