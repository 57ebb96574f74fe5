/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the running kernel is: its release (/proc/sys/kernel/osrelease, "6.1.0-57-cloud-amd64")
 * and its command line (/proc/cmdline), with the kernel's own boolean syntax (kstrtobool).
 */
#ifndef VMC_KERNEL_H
#define VMC_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

struct vmc_kernel_version {
	unsigned major, minor, patch;
	char release[128]; /* the whole osrelease string */
};

/* "6.18.44-0-virt" -> 6, 18, 44. -1 unless it starts with "N.N". */
int vmc_kernel_version_parse(const char *s, struct vmc_kernel_version *v);
int vmc_kernel_version_read(struct vmc_kernel_version *v);
/* v >= major.minor */
bool vmc_kernel_at_least(const struct vmc_kernel_version *v, unsigned major, unsigned minor);

/*
 * The value of the LAST "name=value" on a command line (early_param semantics: applied in
 * order, the last one wins); double quotes around a parameter or its value are honoured.
 * Returns 1 and copies the value, 0 if absent, 2 if only a bare "name" (no '=') is present.
 */
int vmc_cmdline_param(const char *cmdline, const char *name, char *value, size_t size);
/* Reads <root>/proc/cmdline into buf (newline removed). -1 with errno. */
int vmc_cmdline_read(char *buf, size_t size);

/*
 * kstrtobool(): 1 y Y t T -> true, 0 n N f F -> false, "on"/"off" (case-insensitive first two
 * characters); newer kernels (6.18, not 6.1) also take e E (true) and d D (false). -1 otherwise.
 */
int vmc_kstrtobool(const char *s, bool accepts_enable_disable, bool *value);

#endif
