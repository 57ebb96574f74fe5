/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /proc/interrupts and /proc/softirqs: per-CPU tables whose columns come from the header (one
 * "CPUn" per online CPU; they change with hotplug). Each row is summed over the CPUs.
 *
 *              CPU0       CPU1
 *     0:         35          0   IO-APIC   2-edge      timer
 *   LOC:      12345      23456   Local timer interrupts
 *   ERR:          0
 */
#ifndef VMC_INTERRUPTS_H
#define VMC_INTERRUPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vmc_irq_row {
	char name[24];	/* "0", "LOC", "IPI0", "TIMER" (the text before ':') */
	char desc[96];	/* the rest of the line, blanks collapsed ("IO-APIC 2-edge timer") */
	uint64_t total; /* summed over the CPU columns present on the line */
};

struct vmc_irq_table {
	size_t ncpu;
	size_t n;
	struct vmc_irq_row *rows; /* malloc'd */
};

/* Parses a whole table. -1 (and nothing allocated) if the header has no CPU column. */
int vmc_irq_table_parse(const char *buf, struct vmc_irq_table *t);
/* Reads <root>/proc/interrupts or <root>/proc/softirqs (abs_path). -1 with errno. */
int vmc_irq_table_read(const char *abs_path, struct vmc_irq_table *t);
void vmc_irq_table_free(struct vmc_irq_table *t);
const struct vmc_irq_row *vmc_irq_table_find(const struct vmc_irq_table *t, const char *name);

/*
 * The per-CPU tick row: "LOC" (x86 "Local timer interrupts"), the arm64 PPI whose action is
 * "arch_timer", or RISC-V's "riscv-timer". NULL when none is recognised.
 */
const struct vmc_irq_row *vmc_irq_timer_row(const struct vmc_irq_table *t);

#endif
