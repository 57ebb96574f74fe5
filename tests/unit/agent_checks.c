/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The idle doctor on fake guests: an Alpine cloud image as shipped on VZ (everything the
 * write-up fixed is flagged), the tuned template (all ok), the init_on_free/reporting
 * conflict per VMM, the QEMU lab guest, and a bare tree (missing files are n/a, not errors).
 */
#include "agent.h"
#include "check.h"
#include "checks.h"
#include "fakeroot.h"
#include "golden.h"
#include "jsonutil.h"
#include "print_capture.h"

static const char features_qemu_fpr_iof[] = /* lab: reporting + poison (init_on_free=1) */
    "0100110000000000000000000000010010000000100000000000000000000000\n";
static const char features_vz[] = /* stats + deflate only, 128 chars (6.18) */
    "0110000000000000000000000000000010000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000\n";
static const char features_krun_iof[] = /* reporting dropped by the guest, no poison */
    "0100000000000000000000000000000010000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000\n";

static void balloon(const char *parent, const char *features)
{
	char rel[256], target[256];
	snprintf(rel, sizeof rel, "/sys/devices/%s/virtio1/device", parent);
	fakeroot_write(rel, "0x0005\n");
	snprintf(rel, sizeof rel, "/sys/devices/%s/virtio1/features", parent);
	fakeroot_write(rel, features);
	snprintf(rel, sizeof rel, "/sys/devices/%s/virtio1/driver", parent);
	fakeroot_symlink("/sys/bus/virtio/drivers/virtio_balloon", rel);
	snprintf(target, sizeof target, "../../../devices/%s/virtio1", parent);
	fakeroot_symlink(target, "/sys/bus/virtio/devices/virtio1");
}

static void proc(int pid, const char *name, const char *argv_nul, size_t argv_len)
{
	char rel[64], text[128], path[4096];
	snprintf(rel, sizeof rel, "/proc/%d/status", pid);
	snprintf(text, sizeof text, "Name:\t%s\nState:\tS (sleeping)\nPPid:\t1\n", name);
	fakeroot_write(rel, text);
	snprintf(path, sizeof path, "%s/proc/%d/cmdline", fakeroot_dir, pid);
	FILE *f = fopen(path, "w");
	fwrite(argv_nul, 1, argv_len, f);
	fclose(f);
}

#define PROC(pid, name, argv) proc(pid, name, argv, sizeof argv - 1)

/* Alpine 3.23 cloud image on VZ, as shipped
 * (docs/published-measurements.md#cloud-image-fixes-one-at-a-time). */
static void alpine_cloud_as_shipped(void)
{
	fakeroot_remove("/");
	fakeroot_write("/proc/sys/kernel/osrelease", "6.18.22-0-virt\n");
	fakeroot_write("/proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz-virt root=UUID=1 modules=ext4 "
					"console=ttyAMA0\n");
	fakeroot_write("/dev/kmsg", "6,1,0,-;mem auto-init: stack:all(zero), heap alloc:on, heap "
				    "free:off\n");
	fakeroot_write("/sys/class/dmi/id/sys_vendor", "Apple Inc.\n");
	fakeroot_write("/sys/class/dmi/id/product_name", "Apple Virtualization Generic Platform\n");
	balloon("pci0000:00/0000:00:05.0", features_vz);
	fakeroot_write("/sys/module/page_reporting/parameters/page_reporting_order", "-1\n");
	fakeroot_write("/sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
	fakeroot_write("/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs",
		       "10000\n");
	fakeroot_write("/sys/module/kfence/parameters/sample_interval", "100\n");
	fakeroot_write("/proc/sys/vm/compaction_proactiveness", "20\n");
	fakeroot_write("/proc/sys/kernel/watchdog", "1\n");
	fakeroot_write("/proc/sys/kernel/soft_watchdog", "1\n");
	fakeroot_write("/proc/sys/kernel/watchdog_thresh", "10\n");
	fakeroot_write("/proc/mounts", "/dev/vda2 / ext4 rw,relatime 0 0\n"
				       "proc /proc proc rw 0 0\n");
	PROC(1, "init", "/sbin/init\0");
	PROC(301, "syslogd", "/sbin/syslogd\0-t\0-n\0");
	PROC(420, "cloud-init-hotp", "/bin/sh\0/usr/sbin/cloud-init-hotplugd\0");
	PROC(512, "lima-guestagent", "/usr/local/bin/lima-guestagent\0daemon\0");
	PROC(600, "dockerd", "/usr/bin/dockerd\0");
	fakeroot_write("/etc/inittab", "::sysinit:/sbin/openrc sysinit\n"
				       "tty1::respawn:/sbin/getty 38400 tty1\n"
				       "ttyAMA0::respawn:/sbin/getty -L 0 ttyAMA0 vt100\n"
				       "# ttyS0::respawn:/sbin/getty -L 0 ttyS0 vt100\n");
	fakeroot_mkdir("/sys/class/tty/tty1");
	fakeroot_write("/etc/default/grub", "GRUB_TIMEOUT=10\nGRUB_DISABLE_SUBMENU=y\n");
	fakeroot_write("/sys/block/vda/queue/discard_max_bytes", "2147483648\n");
	fakeroot_write("/etc/init.d/lima-guestagent",
		       "#!/sbin/openrc-run\ncommand=/usr/local/bin/lima-guestagent\n"
		       "output_log=\"/var/log/lima-guestagent.log\"\n");
}

/* The same guest with every fix of the write-up's final template (and psi=1). */
static void alpine_tuned(void)
{
	alpine_cloud_as_shipped();
	fakeroot_write("/proc/cmdline", "root=UUID=1 console=hvc0 init_on_free=1 psi=1 "
					"kfence.sample_interval=0 transparent_hugepage=madvise "
					"nowatchdog\n");
	fakeroot_write("/dev/kmsg", "6,1,0,-;mem auto-init: stack:all(zero), heap alloc:on, heap "
				    "free:on\n");
	fakeroot_write("/proc/pressure/cpu", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
	fakeroot_write("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
	fakeroot_write("/sys/module/kfence/parameters/sample_interval", "0\n");
	fakeroot_write("/proc/sys/vm/compaction_proactiveness", "0\n");
	fakeroot_write("/proc/sys/kernel/watchdog", "0\n");
	fakeroot_write("/proc/mounts", "/dev/vda2 / ext4 rw,relatime,commit=60 0 0\n"
				       "tmpfs /var/log tmpfs rw,nosuid,nodev 0 0\n");
	fakeroot_remove("/proc/301");
	fakeroot_remove("/proc/420");
	PROC(302, "syslogd", "/sbin/syslogd\0-t\0-C64\0");
	fakeroot_write("/etc/inittab", "::sysinit:/sbin/openrc sysinit\n"
				       "tty1::respawn:/sbin/getty 38400 tty1\n");
	fakeroot_write("/etc/default/grub", "GRUB_TIMEOUT=0\n");
	fakeroot_write("/etc/local.d/fstrim.start", "#!/bin/sh\nfstrim -a\n");
	fakeroot_write("/etc/docker/daemon.json",
		       "{\"log-driver\": \"local\", \"builder\": {\"gc\": {\"enabled\": true, "
		       "\"defaultKeepStorage\": \"5GB\"}}}\n");
}

static json_t *run_checks(void)
{
	char err[128];
	json_t *doc = agent_checks(err, sizeof err);
	CHECK(doc != NULL);
	return doc;
}

static const json_t *find(const json_t *doc, const char *id)
{
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(doc, "checks"), i, c)
	{
		if (strcmp(vmc_json_get_str(c, "id"), id) == 0)
			return c;
	}
	return NULL;
}

static const char *status_of(const json_t *doc, const char *id)
{
	return vmc_json_get_str(find(doc, id), "status");
}

static const char *field(const json_t *doc, const char *id, const char *key)
{
	return vmc_json_get_str(find(doc, id), key);
}

TEST(cloud_image_as_shipped_is_flagged)
{
	alpine_cloud_as_shipped();
	json_t *doc = run_checks();
	CHECK_STR(vmc_json_get_str(json_object_get(doc, "vmm"), "guess"), "vz");
	/* The statuses; what each check says is in human_output's golden file. */
	CHECK_STR(status_of(doc, "init-on-free"), "warn");
	CHECK_STR(status_of(doc, "balloon"), "ok");
	CHECK_STR(status_of(doc, "free-page-reporting"), "warn");
	CHECK_STR(status_of(doc, "page-poison"), "n/a");
	CHECK_STR(status_of(doc, "init-on-free-reporting"), "ok");
	CHECK_STR(status_of(doc, "page-reporting-order"), "n/a");
	CHECK_STR(status_of(doc, "psi"), "warn");
	CHECK_STR(status_of(doc, "thp"), "warn");
	CHECK_STR(status_of(doc, "kfence"), "warn");
	CHECK_STR(status_of(doc, "compaction-proactiveness"), "warn");
	CHECK_STR(status_of(doc, "soft-lockup-watchdog"), "warn");
	CHECK_STR(status_of(doc, "var-log-tmpfs"), "warn");
	CHECK_STR(status_of(doc, "root-commit"), "warn");
	CHECK_STR(status_of(doc, "syslogd-ring-buffer"), "warn");
	CHECK_STR(status_of(doc, "inittab-gettys"), "warn");
	CHECK_STR(status_of(doc, "cloud-init-hotplugd"), "warn");
	CHECK_STR(status_of(doc, "grub-timeout"), "warn");
	CHECK_STR(status_of(doc, "fstrim-at-boot"), "warn");
	CHECK_STR(status_of(doc, "docker-log-limits"), "warn");
	CHECK_STR(status_of(doc, "docker-builder-gc"), "warn");
	CHECK_STR(status_of(doc, "lima-guestagent-log"), "warn");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(doc, "summary"), "fail")), 0);
	/* every warn names its fix */
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(doc, "checks"), i, c)
	{
		if (strcmp(vmc_json_get_str(c, "status"), "warn") == 0 &&
		    !vmc_json_get_str(c, "fix"))
			CHECK_STR(vmc_json_get_str(c, "id"), "a warn with a fix");
	}
	json_decref(doc);
}

TEST(tuned_template_is_clean)
{
	alpine_tuned();
	json_t *doc = run_checks();
	const json_t *s = json_object_get(doc, "summary");
	CHECK_INT(json_integer_value(json_object_get(s, "warn")),
		  1); /* VZ: reporting cannot exist */
	CHECK_INT(json_integer_value(json_object_get(s, "fail")), 0);
	CHECK_STR(status_of(doc, "free-page-reporting"), "warn");
	CHECK_STR(status_of(doc, "init-on-free"), "ok");
	CHECK_CONTAINS(field(doc, "init-on-free", "observed"), "cmdline on");
	CHECK_STR(status_of(doc, "init-on-free-reporting"), "ok");
	CHECK_CONTAINS(field(doc, "init-on-free-reporting", "why"),
		       "VZ has no free-page reporting");
	CHECK_STR(status_of(doc, "psi"), "ok");
	CHECK_STR(status_of(doc, "var-log-tmpfs"), "ok");
	CHECK_STR(status_of(doc, "root-commit"), "ok");
	CHECK_STR(status_of(doc, "syslogd-ring-buffer"), "ok");
	CHECK_STR(status_of(doc, "inittab-gettys"), "ok");
	CHECK_STR(status_of(doc, "cloud-init-hotplugd"), "ok");
	CHECK_STR(status_of(doc, "grub-timeout"), "ok");
	CHECK_STR(status_of(doc, "fstrim-at-boot"), "ok");
	CHECK_STR(status_of(doc, "docker-log-limits"), "ok");
	CHECK_STR(status_of(doc, "docker-builder-gc"), "ok");
	CHECK_STR(status_of(doc, "lima-guestagent-log"), "ok");
	json_decref(doc);
}

TEST(conflict_on_libkrun_is_a_failure)
{
	alpine_tuned();
	fakeroot_remove("/sys/class/dmi");
	fakeroot_remove("/sys/bus");
	fakeroot_remove("/sys/devices");
	balloon("platform/a003e00.virtio_mmio", features_krun_iof);
	json_t *doc = run_checks();
	CHECK_STR(vmc_json_get_str(json_object_get(doc, "vmm"), "guess"), "libkrun-or-firecracker");
	CHECK_STR(status_of(doc, "init-on-free-reporting"), "fail");
	CHECK_CONTAINS(field(doc, "init-on-free-reporting", "why"), "no PAGE_POISON");
	CHECK_STR(field(doc, "init-on-free-reporting", "fix"), "boot with init_on_free=0");
	CHECK_STR(status_of(doc, "page-poison"), "warn");
	CHECK_STR(status_of(doc, "free-page-reporting"), "warn");
	CHECK_CONTAINS(field(doc, "free-page-reporting", "fix"), "init_on_free=0");
	json_decref(doc);
	/* the same device with init_on_free off: no conflict */
	fakeroot_write("/proc/cmdline", "root=UUID=1 init_on_free=0 psi=1\n");
	fakeroot_write("/dev/kmsg", "6,1,0,-;mem auto-init: stack:off, heap alloc:off, heap "
				    "free:off\n");
	doc = run_checks();
	CHECK_STR(status_of(doc, "init-on-free-reporting"), "ok");
	CHECK_STR(status_of(doc, "page-poison"), "n/a");
	json_decref(doc);
}

TEST(unknown_vmm_explains_every_case)
{
	alpine_tuned();
	fakeroot_remove("/sys/class/dmi");
	json_t *doc = run_checks();
	CHECK_STR(vmc_json_get_str(json_object_get(doc, "vmm"), "guess"), "unknown");
	CHECK_STR(status_of(doc, "init-on-free-reporting"), "warn");
	const char *why = field(doc, "init-on-free-reporting", "why");
	CHECK_CONTAINS(why, "libkrun/krunkit or Firecracker");
	CHECK_CONTAINS(why, "on VZ there is no reporting");
	CHECK_CONTAINS(why, "QEMU offers PAGE_POISON");
	json_decref(doc);
}

TEST(qemu_lab_guest_with_reporting)
{
	fakeroot_remove("/");
	fakeroot_write("/proc/sys/kernel/osrelease", "6.1.0-57-cloud-amd64\n");
	fakeroot_write("/proc/cmdline", "console=ttyS0 init_on_free=1 quiet\n");
	fakeroot_write("/dev/kmsg", "6,1,0,-;mem auto-init: stack:all(zero), heap alloc:on, heap "
				    "free:on\n"
				    "6,2,0,-;Free page reporting enabled\n");
	fakeroot_write("/sys/class/dmi/id/sys_vendor", "QEMU\n");
	balloon("pci0000:00/0000:00:04.0", features_qemu_fpr_iof);
	fakeroot_write("/sys/module/page_reporting/parameters/page_reporting_order", "9\n");
	fakeroot_write("/proc/mounts", "rootfs / rootfs rw 0 0\n");
	json_t *doc = run_checks();
	CHECK_STR(vmc_json_get_str(json_object_get(doc, "vmm"), "guess"), "qemu");
	CHECK_STR(status_of(doc, "free-page-reporting"), "ok");
	CHECK_STR(status_of(doc, "page-poison"), "ok");
	CHECK_STR(status_of(doc, "init-on-free-reporting"), "ok");
	CHECK_CONTAINS(field(doc, "init-on-free-reporting", "why"), "QEMU does by default");
	CHECK_STR(status_of(doc, "page-reporting-order"), "ok");
	CHECK_CONTAINS(field(doc, "page-reporting-order", "observed"), "2.00 MiB (order 9)");
	CHECK_STR(status_of(doc, "root-commit"), "n/a");
	CHECK_STR(status_of(doc, "var-log-tmpfs"), "ok");
	json_decref(doc);
	/* order 5 = 128 KiB reports; order 11 on 6.1 = nothing ever reported */
	fakeroot_write("/sys/module/page_reporting/parameters/page_reporting_order", "5\n");
	doc = run_checks();
	CHECK_STR(status_of(doc, "page-reporting-order"), "warn");
	CHECK_CONTAINS(field(doc, "page-reporting-order", "why"), "68-120 ms in 64 KiB");
	CHECK_CONTAINS(field(doc, "page-reporting-order", "fix"), "--order 9");
	json_decref(doc);
	fakeroot_write("/sys/module/page_reporting/parameters/page_reporting_order", "11\n");
	doc = run_checks();
	CHECK_STR(status_of(doc, "page-reporting-order"), "fail");
	json_decref(doc);
}

TEST(no_balloon_says_why_the_host_gets_nothing)
{
	fakeroot_remove("/");
	fakeroot_write("/proc/sys/kernel/osrelease", "6.1.0-57-cloud-amd64\n");
	fakeroot_write("/sys/class/dmi/id/sys_vendor", "QEMU\n");
	fakeroot_mkdir("/sys/bus/virtio/devices");
	json_t *doc = run_checks();
	CHECK_STR(status_of(doc, "balloon"), "warn");
	CHECK_CONTAINS(field(doc, "balloon", "why"), "the host cannot get any freed guest memory "
						     "back");
	CHECK_CONTAINS(field(doc, "balloon", "fix"), "free-page-reporting=on");
	CHECK_STR(status_of(doc, "free-page-reporting"), "n/a");
	json_decref(doc);
}

TEST(unbound_driver_fails)
{
	alpine_cloud_as_shipped();
	fakeroot_remove("/sys/devices/pci0000:00/0000:00:05.0/virtio1/driver");
	json_t *doc = run_checks();
	CHECK_STR(status_of(doc, "balloon"), "fail");
	CHECK_CONTAINS(field(doc, "balloon", "fix"), "modprobe virtio_balloon");
	json_decref(doc);
}

TEST(init_on_free_sources)
{
	alpine_tuned();
	/* boot log rotated away: the command line decides, last valid occurrence wins */
	fakeroot_write("/dev/kmsg", "6,1000,0,-;something else\n");
	fakeroot_write("/proc/cmdline", "init_on_free=0 init_on_free=on\n");
	json_t *doc = run_checks();
	CHECK_CONTAINS(field(doc, "init-on-free", "observed"), "on (from kernel command line");
	json_decref(doc);
	/* nothing on the command line: the kernel config default */
	fakeroot_write("/proc/cmdline", "quiet\n");
	fakeroot_write("/boot/config-6.18.22-0-virt",
		       "CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y\n"
		       "# CONFIG_INIT_ON_FREE_DEFAULT_ON is not set\n");
	doc = run_checks();
	CHECK_CONTAINS(field(doc, "init-on-free", "observed"), "off (from kernel config default");
	json_decref(doc);
	/* page poisoning takes precedence over init_on_free */
	fakeroot_write("/dev/kmsg", "6,1,0,-;mem auto-init: CONFIG_PAGE_POISONING is on, will take "
				    "precedence over init_on_alloc and init_on_free\n");
	fakeroot_write("/proc/cmdline", "init_on_free=1 page_poison=1\n");
	doc = run_checks();
	CHECK_CONTAINS(field(doc, "init-on-free", "observed"), "off");
	json_decref(doc);
	/* nothing at all */
	fakeroot_remove("/dev/kmsg");
	fakeroot_remove("/boot");
	fakeroot_remove("/proc/cmdline");
	doc = run_checks();
	CHECK_STR(status_of(doc, "init-on-free"), "n/a");
	CHECK_CONTAINS(field(doc, "init-on-free", "observed"), "boot log unreadable");
	json_decref(doc);
}

TEST(daemon_json_variants)
{
	alpine_tuned();
	fakeroot_write("/etc/docker/daemon.json", "{\"log-opts\": {\"max-size\": \"10m\"}}");
	json_t *doc = run_checks();
	CHECK_STR(status_of(doc, "docker-log-limits"), "ok");
	CHECK_STR(status_of(doc, "docker-builder-gc"), "warn");
	json_decref(doc);
	fakeroot_write("/etc/docker/daemon.json", "{\"log-driver\": \"json-file\",");
	doc = run_checks();
	CHECK_STR(status_of(doc, "docker-log-limits"), "fail");
	CHECK_CONTAINS(field(doc, "docker-log-limits", "observed"), "does not parse");
	json_decref(doc);
	fakeroot_write("/etc/docker/daemon.json", "{\"builder\": {\"gc\": {\"enabled\": false, "
						  "\"defaultKeepStorage\": \"5GB\"}}}");
	doc = run_checks();
	CHECK_STR(status_of(doc, "docker-builder-gc"), "warn");
	json_decref(doc);
}

TEST(gettys_on_8250_stubs_and_hvc)
{
	alpine_tuned();
	fakeroot_write("/etc/inittab", "ttyS0::respawn:/sbin/getty -L 0 ttyS0 vt100\n"
				       "ttyS1::respawn:/sbin/getty -L 0 ttyS1 vt100\n"
				       "hvc0::respawn:/sbin/getty -L 0 hvc0 vt100\n");
	fakeroot_write("/sys/class/tty/ttyS0/type", "4\n"); /* a real 16550A */
	fakeroot_write("/sys/class/tty/ttyS1/type", "0\n"); /* legacy port stub */
	fakeroot_mkdir("/sys/class/tty/hvc0");
	json_t *doc = run_checks();
	CHECK_STR(status_of(doc, "inittab-gettys"), "warn");
	CHECK_STR(field(doc, "inittab-gettys", "observed"), "getty respawns on missing ttyS1");
	json_decref(doc);
}

TEST(bare_tree_is_not_an_error)
{
	fakeroot_remove("/");
	fakeroot_mkdir("/proc");
	json_t *doc = run_checks();
	CHECK(json_array_size(json_object_get(doc, "checks")) >= 21);
	CHECK_STR(status_of(doc, "kfence"), "n/a");
	CHECK_STR(status_of(doc, "grub-timeout"), "n/a");
	CHECK_STR(status_of(doc, "docker-log-limits"), "n/a");
	CHECK_STR(status_of(doc, "lima-guestagent-log"), "n/a");
	CHECK_STR(status_of(doc, "inittab-gettys"), "n/a");
	json_decref(doc);
}

TEST(human_output_ranks_problems_after_the_table)
{
	alpine_cloud_as_shipped();
	json_t *doc = run_checks();
	struct capture cap;
	checks_print(capture_open(&cap), doc, false);
	char *text = capture_close(&cap);
	CHECK_GOLDEN(text, "agent-check-cloud-image");
	CHECK(strstr(text, "\033[") == NULL);
	free(text);
	json_decref(doc);
}

static void print_checks_plain(FILE *f, const json_t *doc)
{
	checks_print(f, doc, false);
}

static void print_checks_colored(FILE *f, const json_t *doc)
{
	checks_print(f, doc, true);
}

/* Missing members never reach %s: glibc printed "(null)", other libcs crash. */
TEST(documents_with_members_missing_print_without_null)
{
	CHECK_INT(print_odd_failures(print_checks_plain), 0);
	CHECK_INT(print_odd_failures(print_checks_colored), 0);
}

int main(void)
{
	fakeroot_init();
	RUN(cloud_image_as_shipped_is_flagged);
	RUN(tuned_template_is_clean);
	RUN(conflict_on_libkrun_is_a_failure);
	RUN(unknown_vmm_explains_every_case);
	RUN(qemu_lab_guest_with_reporting);
	RUN(no_balloon_says_why_the_host_gets_nothing);
	RUN(unbound_driver_fails);
	RUN(init_on_free_sources);
	RUN(daemon_json_variants);
	RUN(gettys_on_8250_stubs_and_hvc);
	RUN(bare_tree_is_not_an_error);
	RUN(human_output_ranks_problems_after_the_table);
	RUN(documents_with_members_missing_print_without_null);
	fakeroot_cleanup();
	return check_done();
}
