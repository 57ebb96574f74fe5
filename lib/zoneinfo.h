/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /proc/zoneinfo: the free pages on the per-CPU lists. The page allocator keeps a cache of free
 * pages per CPU and zone and hands them out before the buddy lists; MemFree counts only the
 * buddy lists. Kernels that tune those caches themselves (6.7 on) let them hold hundreds of MiB
 * (560 MiB over 2 CPUs on this project's 6.18 build host), so a 512 MiB allocation can take
 * less than a quarter of its size from MemFree.
 */
#ifndef VMC_ZONEINFO_H
#define VMC_ZONEINFO_H

#include <stdint.h>

/* Sums the pagesets' "count:" lines of a /proc/zoneinfo text. -1 if it has none. */
int vmc_zoneinfo_percpu_pages_parse(const char *buf, uint64_t *pages);
/* Reads <root>/proc/zoneinfo: the per-CPU free pages in bytes. -1 with errno. */
int vmc_zoneinfo_percpu_free_read(uint64_t *bytes);

#endif
