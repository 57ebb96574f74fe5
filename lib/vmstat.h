/* SPDX-License-Identifier: Apache-2.0 */
/* /proc/vmstat: balloon and reclaim counters the agent reports. Absent lines read as 0. */
#ifndef VMC_VMSTAT_H
#define VMC_VMSTAT_H

#include <stdbool.h>
#include <stdint.h>

struct vmc_vmstat {
	uint64_t balloon_inflate;   /* cumulative guest pages given to the balloon */
	uint64_t balloon_deflate;   /* cumulative guest pages taken back */
	uint64_t balloon_migrate;   /* balloon pages moved by compaction */
	uint64_t nr_balloon_pages;  /* current balloon size in pages (6.18; not in 6.1) */
	uint64_t pgsteal_proactive; /* pages reclaimed through memory.reclaim (6.18) */
	uint64_t compact_stall;	    /* direct compactions */
	uint64_t drop_pagecache;    /* writes of 1 or 3 to drop_caches */
	bool has_balloon;	    /* balloon_inflate present (CONFIG_MEMORY_BALLOON) */
	bool has_nr_balloon_pages;
};

/* -1 when none of the known counters is present (not a vmstat file). */
int vmc_vmstat_parse(const char *buf, struct vmc_vmstat *vs);
int vmc_vmstat_read(struct vmc_vmstat *vs);
/* Pages in the balloon now: nr_balloon_pages when present, else inflate - deflate. */
uint64_t vmc_vmstat_balloon_pages(const struct vmc_vmstat *vs);

#endif
