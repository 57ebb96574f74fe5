/* SPDX-License-Identifier: Apache-2.0 */
/* /proc/meminfo: the figures both the host (Linux) and the guest agent need. */
#ifndef VMC_MEMINFO_H
#define VMC_MEMINFO_H

#include <stdbool.h>
#include <stdint.h>

struct vmc_meminfo {
	uint64_t total;		/* MemTotal */
	uint64_t free;		/* MemFree */
	uint64_t available;	/* MemAvailable */
	uint64_t buffers;	/* Buffers */
	uint64_t cached;	/* Cached (includes Shmem) */
	uint64_t active_file;	/* Active(file) */
	uint64_t inactive_file; /* Inactive(file) */
	uint64_t shmem;		/* Shmem (tmpfs: in Cached, but not droppable) */
	uint64_t sreclaimable;	/* SReclaimable */
	uint64_t anon;		/* AnonPages */
	uint64_t swap_total;	/* SwapTotal */
	uint64_t swap_free;	/* SwapFree */
	uint64_t balloon;	/* Balloon (6.18+ only) */
	bool has_balloon;	/* the Balloon: line exists */
};

/* All values in bytes. MemTotal, MemFree and MemAvailable are required; -1 if missing. */
int vmc_meminfo_parse(const char *buf, struct vmc_meminfo *mi);
/* Reads <root>/proc/meminfo. -1 with errno on I/O error, EINVAL if malformed. */
int vmc_meminfo_read(struct vmc_meminfo *mi);

/* Clean file cache the kernel could drop: Active(file)+Inactive(file) (tmpfs excluded). */
uint64_t vmc_meminfo_file_cache(const struct vmc_meminfo *mi);

#endif
