/* SPDX-License-Identifier: Apache-2.0 */
#include "meminfo.h"

#include "procfs.h"

#include <errno.h>
#include <string.h>

int vmc_meminfo_parse(const char *buf, struct vmc_meminfo *mi)
{
	memset(mi, 0, sizeof *mi);
	if (vmc_key_kb(buf, "MemTotal:", &mi->total) < 0 ||
	    vmc_key_kb(buf, "MemFree:", &mi->free) < 0 ||
	    vmc_key_kb(buf, "MemAvailable:", &mi->available) < 0)
		return -1;
	/* Optional lines: absent on some kernels or configs; zero is the honest default. */
	vmc_key_kb(buf, "Buffers:", &mi->buffers);
	vmc_key_kb(buf, "Cached:", &mi->cached);
	vmc_key_kb(buf, "Active(file):", &mi->active_file);
	vmc_key_kb(buf, "Inactive(file):", &mi->inactive_file);
	vmc_key_kb(buf, "Shmem:", &mi->shmem);
	vmc_key_kb(buf, "SReclaimable:", &mi->sreclaimable);
	vmc_key_kb(buf, "AnonPages:", &mi->anon);
	vmc_key_kb(buf, "SwapTotal:", &mi->swap_total);
	vmc_key_kb(buf, "SwapFree:", &mi->swap_free);
	mi->has_balloon = vmc_key_kb(buf, "Balloon:", &mi->balloon) == 0;
	return 0;
}

int vmc_meminfo_read(struct vmc_meminfo *mi)
{
	char buf[8192];
	if (vmc_fs_read_buf("/proc/meminfo", buf, sizeof buf, NULL) < 0)
		return -1;
	if (vmc_meminfo_parse(buf, mi) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

uint64_t vmc_meminfo_file_cache(const struct vmc_meminfo *mi)
{
	return mi->active_file + mi->inactive_file;
}
