/* SPDX-License-Identifier: Apache-2.0 */
#include "vmstat.h"

#include "procfs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int vmc_vmstat_parse(const char *buf, struct vmc_vmstat *vs)
{
	memset(vs, 0, sizeof *vs);
	int found = 0;
	vs->has_balloon = vmc_key_u64(buf, "balloon_inflate ", &vs->balloon_inflate) == 0;
	found += vs->has_balloon;
	found += vmc_key_u64(buf, "balloon_deflate ", &vs->balloon_deflate) == 0;
	found += vmc_key_u64(buf, "balloon_migrate ", &vs->balloon_migrate) == 0;
	vs->has_nr_balloon_pages =
	    vmc_key_u64(buf, "nr_balloon_pages ", &vs->nr_balloon_pages) == 0;
	found += vs->has_nr_balloon_pages;
	found += vmc_key_u64(buf, "pgsteal_proactive ", &vs->pgsteal_proactive) == 0;
	found += vmc_key_u64(buf, "compact_stall ", &vs->compact_stall) == 0;
	found += vmc_key_u64(buf, "drop_pagecache ", &vs->drop_pagecache) == 0;
	/* nr_free_pages is in every vmstat since 2.6: it tells a real file from garbage. */
	uint64_t nr_free;
	found += vmc_key_u64(buf, "nr_free_pages ", &nr_free) == 0;
	return found ? 0 : -1;
}

int vmc_vmstat_read(struct vmc_vmstat *vs)
{
	char *buf;
	if (vmc_fs_read("/proc/vmstat", &buf, NULL, 1u << 20) < 0)
		return -1;
	int rc = vmc_vmstat_parse(buf, vs);
	free(buf);
	if (rc < 0)
		errno = EINVAL;
	return rc;
}

uint64_t vmc_vmstat_balloon_pages(const struct vmc_vmstat *vs)
{
	if (vs->has_nr_balloon_pages)
		return vs->nr_balloon_pages;
	return vs->balloon_inflate > vs->balloon_deflate ? vs->balloon_inflate - vs->balloon_deflate
							 : 0;
}
