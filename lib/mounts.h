/* SPDX-License-Identifier: Apache-2.0 */
/* /proc/mounts: which filesystem holds a path, with its type and options. */
#ifndef VMC_MOUNTS_H
#define VMC_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

struct vmc_mount {
	char source[256];
	char target[256]; /* octal escapes (\040 for a blank) decoded */
	char fstype[32];
	char options[512];
};

/*
 * The mount that holds path: the longest mount point that is path or a parent directory of it;
 * a later line for the same mount point wins (it is mounted over the earlier one). -1 if none.
 */
int vmc_mount_for(const char *buf, const char *path, struct vmc_mount *m);
/*
 * The value of option name in a comma-separated list ("commit=60" -> "60"); 1 with the value,
 * 2 for a flag without value ("discard"), 0 if absent.
 */
int vmc_mount_option(const char *options, const char *name, char *value, size_t size);

#endif
