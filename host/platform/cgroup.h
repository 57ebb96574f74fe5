/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How much memory this process may still use under its memory cgroup: a container, a systemd
 * slice with MemoryMax= or a test's cgroup caps memory below what /proc/meminfo says is
 * available, and an allocation beyond the cap ends in the cgroup's OOM killer. cgroup v1's
 * memory controller (mounted at /sys/fs/cgroup/memory) and cgroup v2 (/sys/fs/cgroup) alike.
 * Linux only (platform_linux.c uses it), but plain POSIX, so it builds everywhere; files are read
 * below lib/procfs.h's root, so tests run it on fake trees.
 */
#ifndef VMC_CGROUP_H
#define VMC_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The cgroup paths of /proc/self/cgroup: v1 gets the path of the hierarchy that holds the
 * "memory" controller ("" when none does), v2 the path of the unified "0::" line ("" when
 * there is none). Returns 0, or -1 when the text holds neither.
 */
int vmc_cgroup_parse(const char *buf, char *v1, size_t v1_size, char *v2, size_t v2_size);

struct vmc_memory_limit {
	bool limited;	 /* some cgroup on the way to the root has a limit */
	uint64_t limit;	 /* the tightest one (bytes) */
	uint64_t room;	 /* min over the cgroups of limit - usage: what this process may add */
	char where[256]; /* the cgroup directory whose room is smallest */
};

/*
 * Reads /proc/self/cgroup and walks from this process's memory cgroup up to the root
 * (memory.limit_in_bytes and memory.usage_in_bytes in v1, memory.max and memory.current in
 * v2), below the fs root. Returns 0 (limited false when no cgroup limits memory), or -1 with
 * errno when /proc/self/cgroup cannot be read.
 */
int vmc_cgroup_memory_limit(struct vmc_memory_limit *out);

#endif
