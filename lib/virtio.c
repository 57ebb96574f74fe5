/* SPDX-License-Identifier: Apache-2.0 */
#include "virtio.h"

#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int vmc_virtio_features_parse(const char *s, char *out, size_t size)
{
	size_t n = strcspn(s, "\n");
	if (n == 0 || n > VMC_VIRTIO_FEATURES_MAX || n >= size)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (s[i] != '0' && s[i] != '1')
			return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return (int)n;
}

bool vmc_virtio_has_feature(const struct vmc_virtio_dev *dev, unsigned bit)
{
	return bit < dev->nfeatures && dev->features[bit] == '1';
}

int vmc_virtio_parse_id(const char *s, unsigned *id)
{
	if (strncmp(s, "0x", 2) != 0)
		return -1;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s + 2, &end, 16);
	if (errno || end == s + 2 || (*end && *end != '\n') || v > UINT_MAX)
		return -1;
	*id = (unsigned)v;
	return 0;
}

const char *vmc_virtio_transport_of(const char *link_target)
{
	/* virtio-pci: .../pci0000:00/0000:00:04.0/virtio1; virtio-mmio: platform "*.virtio_mmio",
	 * "virtio-mmio.N" (cmdline devices) or the ACPI id LNRO0005 (Firecracker, libkrun). */
	if (strstr(link_target, "mmio") || strstr(link_target, "LNRO0005"))
		return "mmio";
	if (strstr(link_target, "/pci"))
		return "pci";
	return "";
}

static void read_link_base(const char *abs_path, char *out, size_t size, bool whole)
{
	char path[4096], target[4096];
	out[0] = '\0';
	if (!vmc_fs_path(path, sizeof path, "%s", abs_path))
		return;
	ssize_t n = readlink(path, target, sizeof target - 1);
	if (n < 0)
		return;
	target[n] = '\0';
	const char *slash = strrchr(target, '/');
	snprintf(out, size, "%s", whole || !slash ? target : slash + 1);
}

int vmc_virtio_read(const char *name, struct vmc_virtio_dev *dev)
{
	char path[256], line[256];
	memset(dev, 0, sizeof *dev);
	snprintf(dev->name, sizeof dev->name, "%s", name);
	snprintf(path, sizeof path, "/sys/bus/virtio/devices/%s/device", name);
	if (vmc_fs_read_line(path, line, sizeof line) < 0)
		return -1;
	if (vmc_virtio_parse_id(line, &dev->device_id) < 0) {
		errno = EINVAL;
		return -1;
	}
	snprintf(path, sizeof path, "/sys/bus/virtio/devices/%s/vendor", name);
	if (vmc_fs_read_line(path, line, sizeof line) == 0)
		vmc_virtio_parse_id(line, &dev->vendor_id);
	snprintf(path, sizeof path, "/sys/bus/virtio/devices/%s/driver", name);
	read_link_base(path, dev->driver, sizeof dev->driver, false);
	char target[4096];
	snprintf(path, sizeof path, "/sys/bus/virtio/devices/%s", name);
	read_link_base(path, target, sizeof target, true);
	snprintf(dev->transport, sizeof dev->transport, "%s", vmc_virtio_transport_of(target));
	snprintf(path, sizeof path, "/sys/bus/virtio/devices/%s/features", name);
	char features[VMC_VIRTIO_FEATURES_MAX + 8];
	if (vmc_fs_read_line(path, features, sizeof features) == 0) {
		int n = vmc_virtio_features_parse(features, dev->features, sizeof dev->features);
		dev->nfeatures = n > 0 ? (size_t)n : 0;
	}
	return 0;
}

/* "virtio12" -> 12, so virtio10 sorts after virtio9. */
static long device_index(const char *name)
{
	if (strncmp(name, "virtio", 6) != 0)
		return -1;
	char *end;
	long v = strtol(name + 6, &end, 10);
	return end == name + 6 || *end ? -1 : v;
}

int vmc_virtio_find(unsigned device_id, struct vmc_virtio_dev *dev)
{
	char path[4096];
	if (!vmc_fs_path(path, sizeof path, "/sys/bus/virtio/devices")) {
		errno = ENAMETOOLONG;
		return -1;
	}
	DIR *dir = opendir(path);
	if (!dir) {
		errno = ENOENT;
		return -1;
	}
	long best = -1;
	char best_name[sizeof((struct dirent *)0)->d_name] = "";
	struct dirent *de;
	while ((de = readdir(dir))) {
		long idx = device_index(de->d_name);
		if (idx < 0 || (best >= 0 && idx >= best))
			continue;
		struct vmc_virtio_dev candidate;
		if (vmc_virtio_read(de->d_name, &candidate) == 0 &&
		    candidate.device_id == device_id) {
			best = idx;
			snprintf(best_name, sizeof best_name, "%s", de->d_name);
		}
	}
	closedir(dir);
	if (best < 0) {
		errno = ENOENT;
		return -1;
	}
	return vmc_virtio_read(best_name, dev);
}
