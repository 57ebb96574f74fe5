/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /proc/diskstats: bytes written per whole disk (partitions and stacked devices are skipped so
 * nothing is counted twice). Used host-side on text the guest printed, and by the agent.
 */
#ifndef VMC_DISKSTATS_H
#define VMC_DISKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VMC_DISKSTATS_MAX 16

struct vmc_disk_io {
	char name[32];
	uint64_t read_bytes;	/* sectors read x 512 */
	uint64_t written_bytes; /* sectors written x 512 */
	uint64_t writes;	/* write requests completed */
};

struct vmc_diskstats {
	struct vmc_disk_io disk[VMC_DISKSTATS_MAX];
	size_t n;
};

/* True for a whole virtual or physical disk: vda, sda, xvda, nvme0n1, mmcblk0. */
bool vmc_disk_is_whole(const char *name);

/* Parses the text; lines that are not whole disks are skipped. -1 on a malformed disk line. */
int vmc_diskstats_parse(const char *buf, struct vmc_diskstats *ds);
/* Reads <root>/proc/diskstats. */
int vmc_diskstats_read(struct vmc_diskstats *ds);

/* The entry for name, or NULL. */
const struct vmc_disk_io *vmc_diskstats_find(const struct vmc_diskstats *ds, const char *name);

#endif
