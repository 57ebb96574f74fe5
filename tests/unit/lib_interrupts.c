/* SPDX-License-Identifier: Apache-2.0 */
/* /proc/interrupts and /proc/softirqs tables: header-parsed CPU columns, x86 and arm64 shapes. */
#include "check.h"
#include "fakeroot.h"
#include "interrupts.h"

static const char interrupts_x86[] =
    "           CPU0       CPU1       \n"
    "  0:         35          0   IO-APIC   2-edge      timer\n"
    " 11:        100        200   IO-APIC  11-fasteoi   virtio1, virtio2\n"
    " 24:          0          7   PCI-MSI 65536-edge      virtio0-config\n"
    "NMI:          0          0   Non-maskable interrupts\n"
    "LOC:      12345      23456   Local timer interrupts\n"
    "RES:         10         20   Rescheduling interrupts\n"
    "ERR:          0\n"
    "MIS:          3\n";

/* arm64 guest on VZ: GICv3 PPI 27 is the arch timer; IPIs have names with blanks. */
static const char interrupts_arm64[] =
    "           CPU0       CPU1       CPU2       CPU3       \n"
    " 11:       3060       2080       1010        500     GICv3  27 Level     arch_timer\n"
    " 14:          9          0          0          0     GICv3  34 Level     rtc-pl031\n"
    "IPI0:        11         12         13         14       Rescheduling interrupts\n"
    "IPI1:         1          1          1          1       Function call interrupts\n"
    "Err:          0\n";

static const char softirqs_61[] = "                    CPU0       CPU1       \n"
				  "          HI:          0          1\n"
				  "       TIMER:       1000       2000\n"
				  "      NET_RX:          5          6\n"
				  "         RCU:        300        400\n";

TEST(x86_rows_summed_over_cpus)
{
	struct vmc_irq_table t;
	CHECK_INT(vmc_irq_table_parse(interrupts_x86, &t), 0);
	CHECK_U64(t.ncpu, 2);
	CHECK_U64(t.n, 8);
	const struct vmc_irq_row *loc = vmc_irq_table_find(&t, "LOC");
	CHECK(loc != NULL);
	if (loc) {
		CHECK_U64(loc->total, 12345 + 23456);
		CHECK_STR(loc->desc, "Local timer interrupts");
	}
	const struct vmc_irq_row *r11 = vmc_irq_table_find(&t, "11");
	CHECK(r11 != NULL);
	if (r11) {
		CHECK_U64(r11->total, 300);
		CHECK_STR(r11->desc, "IO-APIC 11-fasteoi virtio1, virtio2");
	}
	/* ERR/MIS carry one number whatever the CPU count */
	const struct vmc_irq_row *mis = vmc_irq_table_find(&t, "MIS");
	CHECK(mis && mis->total == 3 && mis->desc[0] == '\0');
	/* The timer on x86 is LOC, not IRQ 0 (the PIT, named "timer"). */
	const struct vmc_irq_row *timer = vmc_irq_timer_row(&t);
	CHECK(timer != NULL);
	if (timer)
		CHECK_STR(timer->name, "LOC");
	vmc_irq_table_free(&t);
}

TEST(arm64_timer_is_arch_timer)
{
	struct vmc_irq_table t;
	CHECK_INT(vmc_irq_table_parse(interrupts_arm64, &t), 0);
	CHECK_U64(t.ncpu, 4);
	const struct vmc_irq_row *timer = vmc_irq_timer_row(&t);
	CHECK(timer != NULL);
	if (timer) {
		CHECK_STR(timer->name, "11");
		CHECK_U64(timer->total, 3060 + 2080 + 1010 + 500);
	}
	const struct vmc_irq_row *ipi = vmc_irq_table_find(&t, "IPI0");
	CHECK(ipi && ipi->total == 50);
	if (ipi)
		CHECK_STR(ipi->desc, "Rescheduling interrupts");
	vmc_irq_table_free(&t);
}

TEST(softirqs_table)
{
	struct vmc_irq_table t;
	CHECK_INT(vmc_irq_table_parse(softirqs_61, &t), 0);
	CHECK_U64(t.ncpu, 2);
	CHECK_U64(t.n, 4);
	const struct vmc_irq_row *timer = vmc_irq_table_find(&t, "TIMER");
	CHECK(timer && timer->total == 3000);
	CHECK(vmc_irq_timer_row(&t) == NULL);
	vmc_irq_table_free(&t);
}

TEST(no_header_no_table)
{
	struct vmc_irq_table t;
	CHECK_INT(vmc_irq_table_parse("LOC: 1 2 Local timer interrupts\n", &t), -1);
	CHECK(t.rows == NULL);
	CHECK_INT(vmc_irq_table_parse("", &t), -1);
	/* Lines without "name:" are skipped, truncated rows keep what they have. */
	CHECK_INT(vmc_irq_table_parse("  CPU0 CPU1\njunk line\nLOC: 5\n", &t), 0);
	CHECK_U64(t.n, 1);
	CHECK_U64(t.rows[0].total, 5);
	vmc_irq_table_free(&t);
}

TEST(tables_from_fake_root)
{
	struct vmc_irq_table t;
	fakeroot_write("/proc/interrupts", interrupts_x86);
	fakeroot_write("/proc/softirqs", softirqs_61);
	CHECK_INT(vmc_irq_table_read("/proc/interrupts", &t), 0);
	CHECK_U64(t.n, 8);
	vmc_irq_table_free(&t);
	CHECK_INT(vmc_irq_table_read("/proc/softirqs", &t), 0);
	CHECK_U64(t.n, 4);
	vmc_irq_table_free(&t);
	fakeroot_remove("/proc/softirqs");
	CHECK_INT(vmc_irq_table_read("/proc/softirqs", &t), -1);
	CHECK_INT(errno, ENOENT);
}

int main(void)
{
	fakeroot_init();
	RUN(x86_rows_summed_over_cpus);
	RUN(arm64_timer_is_arch_timer);
	RUN(softirqs_table);
	RUN(no_header_no_table);
	RUN(tables_from_fake_root);
	fakeroot_cleanup();
	return check_done();
}
