/* SPDX-License-Identifier: Apache-2.0 */
/* /proc/loadavg: "0.00 0.01 0.05 1/123 4567". */
#ifndef VMC_LOADAVG_H
#define VMC_LOADAVG_H

#include <stdint.h>

struct vmc_loadavg {
	double load1, load5, load15;
	uint64_t running, total; /* runnable / existing scheduling entities */
};

/* -1 unless the three averages and running/total are present. */
int vmc_loadavg_parse(const char *buf, struct vmc_loadavg *la);
int vmc_loadavg_read(struct vmc_loadavg *la);

#endif
