/* SPDX-License-Identifier: Apache-2.0 */
#include "clients/guest_memory.h"

#include "clients/agent_client.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"

#include <string.h>

/* From a /v1/status document; -1 if its "memory" object lacks total/free. */
static int guest_memory_from_status(const json_t *status, struct guest_memory *gm)
{
	memset(gm, 0, sizeof *gm);
	const json_t *m = json_object_get(status, "memory");
	if (vmc_json_get_u64(m, "total", &gm->total) < 0 ||
	    vmc_json_get_u64(m, "free", &gm->free) < 0)
		return -1;
	vmc_json_get_u64(m, "available", &gm->available);
	vmc_json_get_u64(m, "file_cache", &gm->file_cache);
	const json_t *r = json_object_get(status, "page_reporting");
	gm->page_reporting = json_is_true(json_object_get(r, "active"));
	gm->balloon_present = json_is_true(json_object_get(r, "balloon_present"));
	return 0;
}

uint64_t guest_used(const struct guest_memory *gm)
{
	return gm->total > gm->free ? gm->total - gm->free : 0;
}

int guest_status(const struct lima_instance *inst, long timeout_ms, struct guest_memory *gm,
		 json_t **status_out, char *err, size_t errsize)
{
	json_t *doc;
	if (status_out)
		*status_out = NULL;
	int rc = agent_call(inst, "GET", "/v1/status", NULL, timeout_ms, &doc, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (guest_memory_from_status(doc, gm) < 0) {
		vmc_textf(err, errsize,
			  "vmcost-agent's status has no memory figures: is the agent older than "
			  "vmcost? (update it in the guest)");
		json_decref(doc);
		return VMC_EXIT_AGENT;
	}
	if (status_out)
		*status_out = doc;
	else
		json_decref(doc);
	return VMC_EXIT_OK;
}
