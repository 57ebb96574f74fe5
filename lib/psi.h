/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pressure stall information, /proc/pressure/{cpu,io,memory}:
 *   some avg10=0.00 avg60=0.00 avg300=0.00 total=0
 *   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
 * The directory only exists when PSI is enabled at boot (Alpine's virt kernel needs psi=1).
 */
#ifndef VMC_PSI_H
#define VMC_PSI_H

#include <stdbool.h>
#include <stdint.h>

struct vmc_psi_line {
	double avg10, avg60, avg300; /* percent of wall time some/all tasks stalled */
	uint64_t total_us;	     /* cumulative stall time */
};

struct vmc_psi {
	struct vmc_psi_line some, full;
	bool has_full; /* "full" is absent for cpu before 5.13 */
};

/* -1 unless a complete "some" line is present. */
int vmc_psi_parse(const char *buf, struct vmc_psi *psi);
/*
 * Reads <root>/proc/pressure/<resource> ("cpu", "io", "memory", "irq"). ENOENT or EOPNOTSUPP
 * means PSI is disabled (vmc_psi_enabled() tells which).
 */
int vmc_psi_read(const char *resource, struct vmc_psi *psi);
bool vmc_psi_enabled(void);

#endif
