/* SPDX-License-Identifier: Apache-2.0 */
/* The memory-return and kernel-wakeup checks of the idle doctor. */
#include "check_groups.h"

#include "procfs.h"
#include "units.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *on_off(int v)
{
	return v < 0 ? "?" : v ? "on" : "off";
}

static const char *reporting_fix(enum doctor_vmm vmm)
{
	switch (vmm) {
	case DOCTOR_VMM_QEMU:
		return "start QEMU with -device virtio-balloon-pci,free-page-reporting=on (Lima's "
		       "qemu driver adds no balloon)";
	case DOCTOR_VMM_KRUN_OR_FIRECRACKER:
		return "boot the guest with init_on_free=0: libkrun/krunkit and Firecracker offer "
		       "reporting but no PAGE_POISON";
	case DOCTOR_VMM_VZ:
		return "none inside the guest: Apple's VZ has no free-page reporting; keep "
		       "init_on_free=1 so freed pages are zeros the macOS compressor stores for "
		       "almost nothing";
	default:
		return "QEMU: -device virtio-balloon-pci,free-page-reporting=on; "
		       "libkrun/Firecracker: "
		       "boot with init_on_free=0; VZ: no reporting exists";
	}
}

static void check_init_on_free(const struct doctor *d, struct check *c)
{
	const struct doctor_init_on_free *iof = &d->iof;
	c->id = "init-on-free";
	c->title = "init_on_free (zeroing of freed pages)";
	check_observed(c, "%s (from %s; cmdline %s, config %s, boot log %s)",
		       iof->effective < 0 ? "unknown" : on_off(iof->effective), iof->source,
		       iof->cmdline < 0 ? "not set" : on_off(iof->cmdline),
		       iof->config < 0 ? "not found" : on_off(iof->config),
		       !iof->kmsg_read	  ? "unreadable"
		       : iof->bootlog < 0 ? "rotated out"
					  : on_off(iof->bootlog));
	bool reporting = balloon_reporting_active(&d->balloon);
	if (iof->effective < 0) {
		c->status = CHECK_STATUS_NA;
		check_why(c,
			  "cannot tell: no init_on_free= on the command line, no kernel config in "
			  "/boot and the boot log no longer holds the mem auto-init line");
		return;
	}
	if (iof->effective == 1) {
		c->status = CHECK_STATUS_OK;
		check_why(c,
			  "freed pages are zeroed (3-5 %% CPU on alloc-heavy work per the kernel's "
			  "Kconfig); %s",
			  reporting
			      ? "free-page reporting still runs because PAGE_POISON was negotiated"
			      : "without reporting, zero pages are what a macOS host compresses "
				"best: stopping the VM freed 2054 MB instead of 4193 MB in the "
				"write-up");
		return;
	}
	if (reporting) {
		c->status = CHECK_STATUS_OK;
		check_why(c,
			  "free-page reporting returns freed memory directly; init_on_free would "
			  "only add the zeroing cost");
		return;
	}
	c->status = d->vmm == DOCTOR_VMM_KRUN_OR_FIRECRACKER ? CHECK_STATUS_OK : CHECK_STATUS_WARN;
	check_why(c, "without reporting, freed pages keep their old data and a macOS host "
		     "compresses them as live memory: stopping the VM freed 4193 MB without "
		     "init_on_free vs 2054 MB with it in the write-up");
	if (c->status == CHECK_STATUS_WARN)
		check_fix(
		    c, "add init_on_free=1 to the kernel command line (GRUB_CMDLINE_LINUX_DEFAULT) "
		       "unless the VMM offers reporting without PAGE_POISON (libkrun, "
		       "Firecracker)");
}

static void check_balloon(const struct doctor *d, struct check *c)
{
	const struct balloon_info *b = &d->balloon;
	c->id = "balloon";
	c->title = "virtio-balloon device and driver";
	if (!b->present) {
		c->status = CHECK_STATUS_WARN;
		check_observed(c, "no virtio device 0x0005 in /sys/bus/virtio/devices");
		check_why(c,
			  "without a balloon the host cannot get any freed guest memory back: the "
			  "VM process keeps the high-water mark of every page the guest touched "
			  "until it stops, whatever the guest trims");
		check_fix(c, "%s", reporting_fix(d->vmm));
		return;
	}
	check_observed(c, "%s on %s, driver %s", b->dev.name,
		       b->dev.transport[0] ? b->dev.transport : "unknown transport",
		       b->dev.driver[0] ? b->dev.driver : "none");
	if (!b->driver_bound) {
		c->status = CHECK_STATUS_FAIL;
		check_why(c, "the device is there but no driver drives it: no reporting, no "
			     "ballooning");
		check_fix(c, "modprobe virtio_balloon (Alpine builds it as a module) and add it to "
			     "/etc/modules");
		return;
	}
	c->status = CHECK_STATUS_OK;
	check_why(c, "the host can take memory back through this device");
}

static void check_reporting(const struct doctor *d, struct check *c)
{
	const struct balloon_info *b = &d->balloon;
	c->id = "free-page-reporting";
	c->title = "free-page reporting negotiated (feature bit 5)";
	if (!b->present || !b->driver_bound) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "no bound balloon");
		check_why(c, "reporting needs a virtio-balloon device with its driver bound");
		return;
	}
	check_observed(c, "features[5] = %c (%zu-bit string)",
		       b->dev.nfeatures > 5 ? b->dev.features[5] : '?', b->dev.nfeatures);
	if (b->reporting) {
		c->status = CHECK_STATUS_OK;
		check_why(c,
			  "free blocks go back to the host about 2 s after they are freed (256 MiB "
			  "every 2 s in the lab)");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_why(c, "freed guest pages stay resident in the VM process: the host gets them back "
		     "only when the VM stops");
	check_fix(c, "%s", reporting_fix(d->vmm));
}

static bool poisoning_matters(const struct doctor *d)
{
	return d->iof.effective == 1 || d->iof.poisoning;
}

static void check_page_poison(const struct doctor *d, struct check *c)
{
	const struct balloon_info *b = &d->balloon;
	c->id = "page-poison";
	c->title = "PAGE_POISON negotiated (feature bit 4)";
	if (!b->present || !b->driver_bound) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "no bound balloon");
		check_why(c, "only matters for a balloon device");
		return;
	}
	check_observed(c, "features[4] = %c, init_on_free %s",
		       b->dev.nfeatures > 4 ? b->dev.features[4] : '?', on_off(d->iof.effective));
	if (!poisoning_matters(d)) {
		c->status = CHECK_STATUS_NA;
		check_why(c,
			  "the guest clears PAGE_POISON unless init_on_free or page poisoning is "
			  "on; it only matters then");
		return;
	}
	if (!b->page_poison && d->vmm == DOCTOR_VMM_VZ) {
		c->status = CHECK_STATUS_NA;
		check_why(c, "Apple's VZ offers no free-page reporting, so there is nothing for "
			     "PAGE_POISON to keep alive");
		return;
	}
	c->status = b->page_poison ? CHECK_STATUS_OK : CHECK_STATUS_WARN;
	if (b->page_poison) {
		check_why(c, "the device accepts zeroed free pages (poison value 0), so reporting "
			     "survives init_on_free");
		return;
	}
	check_why(c, "with init_on_free on and no PAGE_POISON, the guest turns free-page reporting "
		     "off (virtballoon_validate)");
	check_fix(c, "%s", reporting_fix(d->vmm));
}

/* init_on_free is on and the device took no PAGE_POISON: what that costs depends on the VMM. */
static void conflict_on_vmm(const struct doctor *d, struct check *c)
{
	switch (d->vmm) {
	case DOCTOR_VMM_VZ:
		c->status = CHECK_STATUS_OK;
		check_why(c, "Apple's VZ has no free-page reporting at all, so init_on_free costs "
			     "nothing here and makes freed pages cheap for the macOS compressor");
		return;
	case DOCTOR_VMM_KRUN_OR_FIRECRACKER:
		c->status = CHECK_STATUS_FAIL;
		check_why(c, "libkrun/krunkit and Firecracker offer free-page reporting but no "
			     "PAGE_POISON, so init_on_free=1 made the guest drop reporting: freed "
			     "memory never goes back");
		check_fix(c, "boot with init_on_free=0");
		return;
	case DOCTOR_VMM_QEMU:
		c->status = CHECK_STATUS_WARN;
		check_why(c, "QEMU offers PAGE_POISON unless the machine type is 5.0 or older "
			     "(page-poison=off): reporting is lost to init_on_free");
		check_fix(c,
			  "use a newer machine type or -device virtio-balloon-pci,page-poison=on,"
			  "free-page-reporting=on");
		return;
	default:
		c->status = CHECK_STATUS_WARN;
		check_why(
		    c, "the device did not accept PAGE_POISON: on libkrun/krunkit or Firecracker "
		       "init_on_free=1 switched reporting off; on VZ there is no reporting "
		       "anyway; QEMU offers PAGE_POISON so reporting survives there");
		check_fix(c, "%s", reporting_fix(d->vmm));
	}
}

static void check_conflict(const struct doctor *d, struct check *c)
{
	const struct balloon_info *b = &d->balloon;
	c->id = "init-on-free-reporting";
	c->title = "init_on_free vs free-page reporting";
	check_observed(c, "init_on_free %s, reporting %s, PAGE_POISON %s, VMM %s",
		       on_off(d->iof.effective), b->reporting ? "on" : "off",
		       b->page_poison ? "on" : "off", doctor_vmm_name(d->vmm));
	if (!b->present || !b->driver_bound) {
		c->status = CHECK_STATUS_NA;
		check_why(c, "no bound balloon: nothing to conflict with");
		return;
	}
	if (d->iof.effective < 0) {
		c->status = CHECK_STATUS_NA;
		check_why(c, "init_on_free state unknown");
		return;
	}
	if (!poisoning_matters(d)) {
		c->status = CHECK_STATUS_OK;
		check_why(c, "init_on_free is off: nothing can switch reporting off");
		return;
	}
	if (b->reporting || b->page_poison) {
		c->status = CHECK_STATUS_OK;
		check_why(c,
			  "the device offers PAGE_POISON (QEMU does by default), so reporting "
			  "survives init_on_free%s",
			  b->reporting ? ""
				       : "; it is off for another reason (see "
					 "free-page-reporting)");
		return;
	}
	conflict_on_vmm(d, c);
}

static void check_order(const struct doctor *d, struct check *c)
{
	const struct balloon_info *b = &d->balloon;
	char meaning[160], block[32];
	c->id = "page-reporting-order";
	c->title = "page_reporting_order (smallest reported block)";
	balloon_order_meaning(b, meaning, sizeof meaning);
	check_observed(c, "%s", meaning);
	if (!b->has_order || !balloon_reporting_active(b)) {
		c->status = CHECK_STATUS_NA;
		check_why(c, "only matters while free-page reporting is active");
		return;
	}
	if (!b->order_valid) {
		c->status = CHECK_STATUS_FAIL;
		check_why(c,
			  "no free block is ever that large: reporting is on but returns nothing");
		check_fix(c, "vmcost-agent balloon --order 9 (2 MiB blocks with 4 KiB pages)");
		return;
	}
	vmc_format_bytes(b->report_block_bytes, block, sizeof block);
	if (b->report_block_bytes == 2 * VMC_MIB) {
		c->status = CHECK_STATUS_OK;
		check_why(c, "2 MiB blocks match the host's huge pages and cost the host least per "
			     "byte returned");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	if (b->report_block_bytes < 2 * VMC_MIB)
		check_why(c,
			  "%s reports cost the host more work per byte: releasing 3 GiB took "
			  "11-31 ms in 2 MiB extents, 68-120 ms in 64 KiB and 241-502 ms in 16 KiB "
			  "(ArcBox)",
			  block);
	else
		check_why(c,
			  "only free blocks of %s or more are reported: free memory in smaller "
			  "pieces stays with the VM",
			  block);
	check_fix(c, "vmcost-agent balloon --order %d (2 MiB blocks)",
		  b->page_size == 65536	  ? 5
		  : b->page_size == 16384 ? 7
					  : 9);
}

static void check_psi(const struct doctor *d, struct check *c)
{
	(void)d;
	c->id = "psi";
	c->title = "PSI enabled";
	if (vmc_fs_exists("/proc/pressure/cpu")) {
		c->status = CHECK_STATUS_OK;
		check_observed(c, "/proc/pressure present");
		check_why(c, "trims also wait for cpu, io and memory stalls to be quiet; PSI's "
			     "averaging stops while the guest is idle, so it costs nothing then");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_observed(c, "no /proc/pressure");
	check_why(c, "without PSI the trim policy cannot see I/O or memory stalls between its "
		     "samples; Alpine's virt kernel has CONFIG_PSI_DEFAULT_DISABLED=y");
	check_fix(c, "add psi=1 to the kernel command line");
}

static void check_thp(const struct doctor *d, struct check *c)
{
	(void)d;
	char line[128], sleep_ms[32] = "10000";
	c->id = "thp";
	c->title = "transparent huge pages mode";
	if (vmc_fs_read_line("/sys/kernel/mm/transparent_hugepage/enabled", line, sizeof line) <
	    0) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "no /sys/kernel/mm/transparent_hugepage");
		check_why(c, "kernel without THP: no khugepaged");
		return;
	}
	vmc_fs_read_line("/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs",
			 sleep_ms, sizeof sleep_ms);
	const char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
	char mode[32] = "?";
	if (open && close && close - open - 1 < (long)sizeof mode)
		snprintf(mode, sizeof mode, "%.*s", (int)(close - open - 1), open + 1);
	check_observed(c, "%s; khugepaged scans every %s ms", mode, sleep_ms);
	if (strcmp(mode, "always") != 0) {
		c->status = CHECK_STATUS_OK;
		check_why(c, "khugepaged only scans processes that asked for huge pages");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_why(c,
		  "'always' registers nearly every process with khugepaged, which then wakes "
		  "every %s ms to scan them",
		  sleep_ms);
	check_fix(c, "transparent_hugepage=madvise on the kernel command line (or echo madvise > "
		     "/sys/kernel/mm/transparent_hugepage/enabled)");
}

static void check_kfence(const struct doctor *d, struct check *c)
{
	(void)d;
	char interval[32], deferrable[8] = "N";
	c->id = "kfence";
	c->title = "KFENCE sampling";
	if (vmc_fs_read_line("/sys/module/kfence/parameters/sample_interval", interval,
			     sizeof interval) < 0) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "no KFENCE in this kernel");
		check_why(c, "nothing samples allocations");
		return;
	}
	vmc_fs_read_line("/sys/module/kfence/parameters/deferrable", deferrable, sizeof deferrable);
	long ms = strtol(interval, NULL, 10);
	check_observed(c, "sample_interval %ld ms%s", ms,
		       deferrable[0] == 'Y' ? ", deferrable" : "");
	if (ms <= 0 || deferrable[0] == 'Y') {
		c->status = CHECK_STATUS_OK;
		check_why(c, "%s",
			  ms <= 0 ? "sampling is off" : "deferrable: it does not wake an idle CPU");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_why(c,
		  "KFENCE's non-deferrable work wakes the guest every %ld ms (%.0f wakeups/s) "
		  "even when nothing runs",
		  ms, 1000.0 / (double)ms);
	check_fix(c, "kfence.sample_interval=0 on the kernel command line (or echo 0 > "
		     "/sys/module/kfence/parameters/sample_interval)");
}

static void check_compaction(const struct doctor *d, struct check *c)
{
	(void)d;
	char value[32];
	c->id = "compaction-proactiveness";
	c->title = "proactive compaction (kcompactd)";
	if (vmc_fs_read_line("/proc/sys/vm/compaction_proactiveness", value, sizeof value) < 0) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "no vm.compaction_proactiveness");
		check_why(c, "kernel without proactive compaction");
		return;
	}
	long v = strtol(value, NULL, 10);
	check_observed(c, "vm.compaction_proactiveness = %ld", v);
	if (v == 0) {
		c->status = CHECK_STATUS_OK;
		check_why(c, "kcompactd sleeps until woken; the agent compacts once after a trim "
			     "when reporting is active");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_why(c, "kcompactd wakes every 500 ms per node (2 wakeups/s) to measure "
		     "fragmentation, idle or not");
	check_fix(c, "sysctl vm.compaction_proactiveness=0 (the agent compacts after each trim "
		     "when it helps)");
}

static long read_long(const char *path, long fallback)
{
	char v[32];
	if (vmc_fs_read_line(path, v, sizeof v) < 0)
		return fallback;
	return strtol(v, NULL, 10);
}

static void check_watchdog(const struct doctor *d, struct check *c)
{
	(void)d;
	c->id = "soft-lockup-watchdog";
	c->title = "soft-lockup watchdog";
	long watchdog = read_long("/proc/sys/kernel/watchdog", -1);
	long soft = read_long("/proc/sys/kernel/soft_watchdog", 1);
	long thresh = read_long("/proc/sys/kernel/watchdog_thresh", 10);
	if (watchdog < 0) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "no kernel.watchdog");
		check_why(c, "kernel without the lockup detector");
		return;
	}
	check_observed(c, "kernel.watchdog = %ld, soft_watchdog = %ld, thresh %ld s", watchdog,
		       soft, thresh);
	if (watchdog == 0 || soft == 0 || thresh == 0) {
		c->status = CHECK_STATUS_OK;
		check_why(c, "no per-CPU watchdog timer");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_why(c,
		  "a per-CPU hrtimer fires every %.1f s (watchdog_thresh x 2/5) on every vCPU, "
		  "idle or not",
		  (double)thresh * 2.0 / 5.0);
	check_fix(c, "nowatchdog on the kernel command line (or sysctl kernel.watchdog=0)");
}

static void (*const memory_checks[])(const struct doctor *, struct check *) = {
    check_init_on_free, check_balloon,	  check_reporting, check_page_poison,
    check_conflict,	check_order,	  check_psi,	   check_thp,
    check_kfence,	check_compaction, check_watchdog};
_Static_assert(sizeof memory_checks / sizeof memory_checks[0] == CHECK_GROUP_MEMORY_COUNT,
	       "CHECK_GROUP_MEMORY_COUNT is the length of memory_checks");

void check_group_memory(const struct doctor *d, struct check out[CHECK_GROUP_MEMORY_COUNT])
{
	for (size_t i = 0; i < CHECK_GROUP_MEMORY_COUNT; i++)
		memory_checks[i](d, &out[i]);
}
