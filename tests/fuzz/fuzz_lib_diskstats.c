/* SPDX-License-Identifier: Apache-2.0 */
/* /proc/diskstats as the guest prints it (untrusted: it comes back through limactl shell). */
#include "diskstats.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct vmc_diskstats ds;
	if (vmc_diskstats_parse(text, &ds) == 0) {
		if (ds.n > VMC_DISKSTATS_MAX)
			abort();
		for (size_t i = 0; i < ds.n; i++)
			if (!vmc_disk_is_whole(ds.disk[i].name) || ds.disk[i].written_bytes % 512)
				abort();
	}
	free(text);
	return 0;
}
