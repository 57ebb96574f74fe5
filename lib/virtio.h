/* SPDX-License-Identifier: Apache-2.0 */
/*
 * virtio devices in /sys/bus/virtio/devices/virtioN: device id ("0x0005" = balloon), bound
 * driver, transport and the negotiated feature bits. The features file has one '0'/'1' per bit,
 * character i = bit i: 64 characters on 6.1, 128 on 6.18.
 */
#ifndef VMC_VIRTIO_H
#define VMC_VIRTIO_H

#include <stdbool.h>
#include <stddef.h>

#define VMC_VIRTIO_ID_BALLOON	5u
#define VMC_VIRTIO_FEATURES_MAX 128

struct vmc_virtio_dev {
	char name[256];	    /* "virtio1" */
	unsigned device_id; /* 5 = balloon */
	unsigned vendor_id; /* 0x1af4 for QEMU and most VMMs */
	char driver[64];    /* "virtio_balloon", "" when no driver is bound */
	char transport[8];  /* "pci", "mmio" or "" (unknown) */
	char features[VMC_VIRTIO_FEATURES_MAX + 1]; /* as read, "" if unreadable */
	size_t nfeatures;			    /* 64 (6.1) or 128 (6.18); 0 if unreadable */
};

/*
 * Checks a features string (trailing newline allowed): only '0'/'1', 1..128 characters.
 * Copies the bits to out (NUL-terminated) and returns their count, or -1.
 */
int vmc_virtio_features_parse(const char *s, char *out, size_t size);
bool vmc_virtio_has_feature(const struct vmc_virtio_dev *dev, unsigned bit);
/* "0x0005\n" -> 5; -1 if not a hex id. */
int vmc_virtio_parse_id(const char *s, unsigned *id);
/* Classifies the device's sysfs path (symlink target) as "pci" or "mmio"; "" otherwise. */
const char *vmc_virtio_transport_of(const char *link_target);

/* Reads one device by name ("virtio1"). -1 with errno (ENOENT). */
int vmc_virtio_read(const char *name, struct vmc_virtio_dev *dev);
/*
 * Finds the first device with the given id (lowest virtioN). 0 if found, -1 with errno ENOENT
 * when there is none (or no virtio bus at all).
 */
int vmc_virtio_find(unsigned device_id, struct vmc_virtio_dev *dev);

#endif
