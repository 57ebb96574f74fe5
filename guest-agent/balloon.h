/* SPDX-License-Identifier: Apache-2.0 */
/*
 * virtio-balloon and free-page-reporting state as the guest sees it, and page_reporting_order
 * with its 6.1 vs 6.18 semantics:
 *   6.18: -1 until a reporting device registers; writes validated 0..10; a value set before
 *         registration is kept.
 *   6.1:  11 (MAX_ORDER) until registration, which overwrites any earlier value; writes are not
 *         validated and an order >= 11 silently stops reporting.
 */
#ifndef VMC_AGENT_BALLOON_H
#define VMC_AGENT_BALLOON_H

#include "kernel.h"
#include "virtio.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Feature bits (include/uapi/linux/virtio_balloon.h). */
enum {
	BALLOON_F_MUST_TELL_HOST = 0,
	BALLOON_F_STATS_VQ = 1,
	BALLOON_F_DEFLATE_ON_OOM = 2,
	BALLOON_F_FREE_PAGE_HINT = 3,
	BALLOON_F_PAGE_POISON = 4,
	BALLOON_F_REPORTING = 5,
};

#define BALLOON_ORDER_PATH "/sys/module/page_reporting/parameters/page_reporting_order"
/* MAX_PAGE_ORDER: the highest buddy order (6.1 calls MAX_ORDER 11 the first invalid one). */
#define BALLOON_MAX_ORDER 10

struct balloon_info {
	bool present;	   /* a virtio device with id 5 */
	bool driver_bound; /* virtio_balloon drives it */
	struct vmc_virtio_dev dev;
	bool stats_vq, deflate_on_oom, free_page_hint, page_poison, reporting;

	bool has_order;	  /* the page_reporting module parameter exists (CONFIG_PAGE_REPORTING) */
	long order;	  /* as read */
	bool order_valid; /* 0..10: reports of pagesize << order */
	uint64_t report_block_bytes;

	bool has_vmstat;	/* balloon_* counters (CONFIG_MEMORY_BALLOON) */
	uint64_t balloon_bytes; /* pages in the balloon now, in bytes */
	uint64_t inflate_pages, deflate_pages, migrate_pages;
	bool has_meminfo_balloon; /* Balloon: line (6.18) */
	uint64_t meminfo_balloon;

	struct vmc_kernel_version kernel;
	bool has_kernel;
	uint64_t page_size;
};

/* Reads everything; a missing balloon is not an error (present = false). */
int balloon_read(struct balloon_info *b);
/* Free-page reporting is live: device present, driver bound, REPORTING negotiated. */
bool balloon_reporting_active(const struct balloon_info *b);
/* A sentence on what the order value means on this kernel ("2 MiB blocks", "unset: ..."). */
void balloon_order_meaning(const struct balloon_info *b, char *buf, size_t size);
json_t *balloon_to_json(const struct balloon_info *b);
void balloon_print(FILE *f, const json_t *doc);

#endif
