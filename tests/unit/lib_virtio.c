/* SPDX-License-Identifier: Apache-2.0 */
/* virtio devices on a fake /sys: balloon lookup, driver, transport, features of 64/128 chars. */
#include "check.h"
#include "fakeroot.h"
#include "virtio.h"

/* Measured in the lab (docs/lab.md#guest-view-of-the-balloon): balloon with
 * free-page-reporting=on + init_on_free. */
static const char balloon_features_61[] =
    "0100110000000000000000000000010010000000100000000000000000000000\n";
/* The same negotiated set as a 6.18 kernel prints it: 128 characters. */
static const char balloon_features_618[] =
    "0100110000000000000000000000010010000000100000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000\n";

static void make_device(const char *name, const char *id, const char *parent, const char *driver,
			const char *features)
{
	char rel[256], target[512];
	snprintf(rel, sizeof rel, "/sys/devices/%s/%s/device", parent, name);
	fakeroot_write(rel, id);
	snprintf(rel, sizeof rel, "/sys/devices/%s/%s/vendor", parent, name);
	fakeroot_write(rel, "0x1af4\n");
	if (features) {
		snprintf(rel, sizeof rel, "/sys/devices/%s/%s/features", parent, name);
		fakeroot_write(rel, features);
	}
	if (driver) {
		snprintf(rel, sizeof rel, "/sys/devices/%s/%s/driver", parent, name);
		snprintf(target, sizeof target, "../../../../bus/virtio/drivers/%s", driver);
		fakeroot_symlink(target, rel);
	}
	snprintf(rel, sizeof rel, "/sys/bus/virtio/devices/%s", name);
	snprintf(target, sizeof target, "../../../devices/%s/%s", parent, name);
	fakeroot_symlink(target, rel);
}

TEST(features_strings)
{
	char bits[VMC_VIRTIO_FEATURES_MAX + 1];
	CHECK_INT(vmc_virtio_features_parse(balloon_features_61, bits, sizeof bits), 64);
	CHECK_INT(vmc_virtio_features_parse(balloon_features_618, bits, sizeof bits), 128);
	CHECK(bits[5] == '1' && bits[4] == '1' && bits[1] == '1' && bits[2] == '0');
	CHECK_INT(vmc_virtio_features_parse("0102\n", bits, sizeof bits), -1);
	CHECK_INT(vmc_virtio_features_parse("\n", bits, sizeof bits), -1);
	char too_long[200];
	memset(too_long, '0', sizeof too_long - 1);
	too_long[sizeof too_long - 1] = '\0';
	CHECK_INT(vmc_virtio_features_parse(too_long, bits, sizeof bits), -1);
	/* an output buffer too small is refused, not overrun */
	CHECK_INT(vmc_virtio_features_parse(balloon_features_61, bits, 10), -1);
}

TEST(ids_and_transport)
{
	unsigned id = 0;
	CHECK_INT(vmc_virtio_parse_id("0x0005\n", &id), 0);
	CHECK_INT(id, 5);
	CHECK_INT(vmc_virtio_parse_id("0x0018", &id), 0);
	CHECK_INT(id, 24);
	CHECK_INT(vmc_virtio_parse_id("5", &id), -1);
	CHECK_INT(vmc_virtio_parse_id("0xzz", &id), -1);
	CHECK_STR(vmc_virtio_transport_of("../../../devices/pci0000:00/0000:00:04.0/virtio1"),
		  "pci");
	CHECK_STR(vmc_virtio_transport_of("../../../devices/platform/a003e00.virtio_mmio/virtio0"),
		  "mmio");
	CHECK_STR(vmc_virtio_transport_of("../../../devices/platform/LNRO0005:00/virtio0"), "mmio");
	CHECK_STR(vmc_virtio_transport_of("../../../devices/somewhere/virtio0"), "");
}

TEST(finds_balloon_among_devices)
{
	fakeroot_remove("/sys");
	make_device("virtio0", "0x0001\n", "pci0000:00/0000:00:03.0", "virtio_net",
		    "0010010000000001111101010000110010000000100000000000000000000000\n");
	make_device("virtio10", "0x0005\n", "pci0000:00/0000:00:09.0", NULL, NULL);
	make_device("virtio2", "0x0005\n", "pci0000:00/0000:00:04.0", "virtio_balloon",
		    balloon_features_618);
	struct vmc_virtio_dev dev;
	CHECK_INT(vmc_virtio_find(VMC_VIRTIO_ID_BALLOON, &dev), 0);
	/* lowest index wins: virtio2 before virtio10 (not string order) */
	CHECK_STR(dev.name, "virtio2");
	CHECK_STR(dev.driver, "virtio_balloon");
	CHECK_STR(dev.transport, "pci");
	CHECK_INT(dev.vendor_id, 0x1af4);
	CHECK_U64(dev.nfeatures, 128);
	CHECK(vmc_virtio_has_feature(&dev, 5));
	CHECK(vmc_virtio_has_feature(&dev, 4));
	CHECK(!vmc_virtio_has_feature(&dev, 2));
	CHECK(!vmc_virtio_has_feature(&dev, 200));
	CHECK_INT(vmc_virtio_read("virtio10", &dev), 0);
	CHECK_STR(dev.driver, "");
	CHECK_U64(dev.nfeatures, 0);
	CHECK(!vmc_virtio_has_feature(&dev, 5));
}

TEST(no_balloon_or_no_bus)
{
	struct vmc_virtio_dev dev;
	fakeroot_remove("/sys");
	make_device("virtio0", "0x0001\n", "platform/a000000.virtio_mmio", "virtio_net",
		    balloon_features_61);
	CHECK_INT(vmc_virtio_find(VMC_VIRTIO_ID_BALLOON, &dev), -1);
	CHECK_INT(errno, ENOENT);
	CHECK_INT(vmc_virtio_read("virtio0", &dev), 0);
	CHECK_STR(dev.transport, "mmio");
	fakeroot_remove("/sys");
	CHECK_INT(vmc_virtio_find(VMC_VIRTIO_ID_BALLOON, &dev), -1);
	CHECK_INT(errno, ENOENT);
	CHECK_INT(vmc_virtio_read("virtio9", &dev), -1);
}

int main(void)
{
	fakeroot_init();
	RUN(features_strings);
	RUN(ids_and_transport);
	RUN(finds_balloon_among_devices);
	RUN(no_balloon_or_no_bus);
	fakeroot_cleanup();
	return check_done();
}
