/* SPDX-License-Identifier: Apache-2.0 */
/* Balloon state and page_reporting_order on fake 6.1 and 6.18 guests. */
#include "agent.h"
#include "balloon.h"
#include "check.h"
#include "fakeroot.h"
#include "golden.h"
#include "jsonutil.h"
#include "print_capture.h"

#define ORDER "/sys/module/page_reporting/parameters/page_reporting_order"

static const char features_61[] = /* lab, free-page-reporting=on + init_on_free: bits 1 4 5 */
    "0100110000000000000000000000010010000000100000000000000000000000\n";
static const char features_618_deflate[] = /* bits 1 2 5 */
    "0110010000000000000000000000000010000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000\n";

static void guest(const char *release, const char *features, bool bound, const char *order)
{
	fakeroot_remove("/");
	fakeroot_write("/proc/sys/kernel/osrelease", release);
	fakeroot_write("/proc/meminfo", "MemTotal: 2000000 kB\nMemFree: 1000000 kB\n"
					"MemAvailable: 1500000 kB\n");
	fakeroot_write("/proc/vmstat", "nr_free_pages 250000\nballoon_inflate 262144\n"
				       "balloon_deflate 0\nballoon_migrate 0\n");
	if (features) {
		fakeroot_write("/sys/devices/pci0000:00/0000:00:04.0/virtio1/device", "0x0005\n");
		fakeroot_write("/sys/devices/pci0000:00/0000:00:04.0/virtio1/features", features);
		if (bound)
			fakeroot_symlink("../../../../bus/virtio/drivers/virtio_balloon",
					 "/sys/devices/pci0000:00/0000:00:04.0/virtio1/driver");
		fakeroot_symlink("../../../devices/pci0000:00/0000:00:04.0/virtio1",
				 "/sys/bus/virtio/devices/virtio1");
	}
	if (order)
		fakeroot_write(ORDER, order);
}

TEST(kernel_61_balloon_with_reporting)
{
	guest("6.1.0-57-cloud-amd64\n", features_61, true, "9\n");
	struct balloon_info b;
	CHECK_INT(balloon_read(&b), 0);
	CHECK(b.present);
	CHECK(b.driver_bound);
	CHECK_U64(b.dev.nfeatures, 64);
	CHECK(b.reporting && b.page_poison && b.stats_vq && !b.deflate_on_oom);
	CHECK(balloon_reporting_active(&b));
	CHECK(b.order_valid);
	CHECK_U64(b.report_block_bytes, (uint64_t)sysconf(_SC_PAGESIZE) << 9);
	CHECK(b.has_vmstat);
	CHECK_U64(b.balloon_bytes, 262144ull * (uint64_t)sysconf(_SC_PAGESIZE));
	CHECK(!b.has_meminfo_balloon);
	json_t *doc = balloon_to_json(&b);
	CHECK(json_is_true(json_object_get(doc, "page_reporting")));
	CHECK_STR(vmc_json_get_str(json_object_get(doc, "device"), "transport"), "pci");
	CHECK_INT(json_integer_value(
		      json_object_get(json_object_get(doc, "page_reporting_order"), "value")),
		  9);
	char *text = print_capture(balloon_print, doc);
	CHECK_GOLDEN(text, "agent-balloon-reporting");
	free(text);
	json_decref(doc);
}

TEST(kernel_618_128_bit_features_and_meminfo_balloon)
{
	guest("6.18.44-0-virt\n", features_618_deflate, true, "9\n");
	fakeroot_write("/proc/meminfo", "MemTotal: 2000000 kB\nMemFree: 1000000 kB\n"
					"MemAvailable: 1500000 kB\nBalloon: 1048576 kB\n");
	struct balloon_info b;
	balloon_read(&b);
	CHECK_U64(b.dev.nfeatures, 128);
	CHECK(b.reporting && b.deflate_on_oom && !b.page_poison);
	CHECK(b.has_meminfo_balloon);
	CHECK_U64(b.meminfo_balloon, 1024ull * 1024 * 1024);
}

TEST(order_meanings)
{
	struct balloon_info b;
	char m[160];
	/* 6.18 before a device registered */
	guest("6.18.44-0-virt\n", NULL, false, "-1\n");
	balloon_read(&b);
	CHECK(!b.present);
	balloon_order_meaning(&b, m, sizeof m);
	CHECK_CONTAINS(m, "unset (-1)");
	/* 6.1 before registration: MAX_ORDER */
	guest("6.1.0-57-cloud-amd64\n", NULL, false, "11\n");
	balloon_read(&b);
	balloon_order_meaning(&b, m, sizeof m);
	CHECK_CONTAINS(m, "nothing is ever reported (6.1's value before a reporting device "
			  "registers)");
	/* 6.1, device present but driver not bound yet: the value will be overwritten */
	guest("6.1.0-57-cloud-amd64\n", features_61, false, "7\n");
	balloon_read(&b);
	balloon_order_meaning(&b, m, sizeof m);
	CHECK_CONTAINS(m, "6.1 overwrites it when virtio_balloon probes");
	/* no CONFIG_PAGE_REPORTING */
	guest("6.1.0-57-cloud-amd64\n", NULL, false, NULL);
	balloon_read(&b);
	CHECK(!b.has_order);
	balloon_order_meaning(&b, m, sizeof m);
	CHECK_CONTAINS(m, "CONFIG_PAGE_REPORTING");
}

TEST(set_order)
{
	char err[256] = "";
	guest("6.18.44-0-virt\n", features_618_deflate, true, "9\n");
	json_t *doc = agent_balloon_set_order(7, err, sizeof err);
	CHECK(doc != NULL);
	CHECK_STR(fakeroot_read(ORDER), "7\n"); /* sysfs-style write over "9\n" */
	CHECK(json_object_get(doc, "note") == NULL);
	json_decref(doc);
	CHECK(agent_balloon_set_order(11, err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "out of range: use 0..10");
	CHECK(agent_balloon_set_order(-1, err, sizeof err) == NULL);
	CHECK_STR(fakeroot_read(ORDER), "7\n"); /* sysfs-style write over "9\n" */
	/* 6.1 with no reporting registered yet: written, with a warning that it will not stick */
	guest("6.1.0-57-cloud-amd64\n", features_61, false, "11\n");
	doc = agent_balloon_set_order(9, err, sizeof err);
	CHECK(doc != NULL);
	CHECK_CONTAINS(vmc_json_get_str(doc, "note"), "overwritten when virtio_balloon registers");
	json_decref(doc);
	/* no parameter at all */
	guest("6.1.0-57-cloud-amd64\n", NULL, false, NULL);
	CHECK(agent_balloon_set_order(9, err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "no free-page reporting");
}

TEST(no_balloon_document)
{
	guest("6.1.0-57-cloud-amd64\n", NULL, false, NULL);
	fakeroot_remove("/proc/vmstat");
	char err[64];
	json_t *doc = agent_balloon(err, sizeof err);
	CHECK(json_is_false(json_object_get(doc, "present")));
	CHECK(json_is_null(json_object_get(doc, "device")));
	CHECK(json_is_null(json_object_get(json_object_get(doc, "balloon"), "bytes")));
	char *text = print_capture(balloon_print, doc);
	CHECK_GOLDEN(text, "agent-balloon-none");
	free(text);
	json_decref(doc);
}

/* Missing members never reach %s: glibc printed "(null)", other libcs crash. */
TEST(documents_with_members_missing_print_without_null)
{
	CHECK_INT(print_odd_failures(balloon_print), 0);
}

int main(void)
{
	fakeroot_init();
	RUN(kernel_61_balloon_with_reporting);
	RUN(kernel_618_128_bit_features_and_meminfo_balloon);
	RUN(order_meanings);
	RUN(set_order);
	RUN(no_balloon_document);
	RUN(documents_with_members_missing_print_without_null);
	fakeroot_cleanup();
	return check_done();
}
