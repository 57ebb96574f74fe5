/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "Has host free memory settled after a VM stopped?", the one rule memtest and autostop both
 * use. Host free memory rises as the kernel frees the VM's pages after the stop; it has settled
 * once it rises no faster than the background drift (bytes per second, either sign: how much
 * host memory moved on its own before the stop, 0 when not measured) plus 8 MiB/s, so a host
 * whose memory keeps moving for other reasons does not stretch the wait.
 */
#ifndef VMC_SETTLE_H
#define VMC_SETTLE_H

#include <stdbool.h>

/* What free memory may still rise per second, beyond the drift, and count as settled. */
#define VMC_SETTLE_SLACK_PER_S (8.0 * 1024 * 1024)

bool vmc_free_settled(double rise_per_s, double drift_per_s);

#endif
