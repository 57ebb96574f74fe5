/* SPDX-License-Identifier: Apache-2.0 */
/* Rules about Lima instances that lima.c, limactl.c and lima_dir.c all follow. */
#include "clients/lima_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

const char *lima_status_name(enum lima_status status)
{
	switch (status) {
	case LIMA_STATUS_RUNNING:
		return "Running";
	case LIMA_STATUS_STOPPED:
		return "Stopped";
	case LIMA_STATUS_BROKEN:
		return "Broken";
	case LIMA_STATUS_INSTALLING:
		return "Installing";
	case LIMA_STATUS_UNINITIALIZED:
		return "Uninitialized";
	case LIMA_STATUS_UNKNOWN:
		break;
	}
	return "Unknown";
}

int lima_home(char *buf, size_t size)
{
	const char *env = getenv("LIMA_HOME");
	int n;
	if (env && *env) {
		n = snprintf(buf, size, "%s", env);
	} else {
		const char *home = getenv("HOME");
		if (!home || !*home)
			return -1;
		n = snprintf(buf, size, "%s/.lima", home);
	}
	if (n < 0 || (size_t)n >= size)
		return -1;
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	return 0;
}

bool lima_name_valid(const char *name)
{
	/* pkg/identifiers: ^[A-Za-z0-9]+(?:[._-](?:[A-Za-z0-9]+))*$ */
	if (!name || !isalnum((unsigned char)*name) ||
	    strlen(name) >= sizeof(((struct lima_instance *)0)->name))
		return false;
	bool after_sep = false;
	for (const char *p = name; *p; p++) {
		if (isalnum((unsigned char)*p)) {
			after_sep = false;
		} else if (*p == '.' || *p == '_' || *p == '-') {
			if (after_sep)
				return false;
			after_sep = true;
		} else {
			return false;
		}
	}
	return !after_sep;
}

void lima_host(char *os, size_t os_size, char *arch, size_t arch_size)
{
	struct utsname u;
	if (uname(&u) < 0) {
		snprintf(os, os_size, "unknown");
		snprintf(arch, arch_size, "unknown");
		return;
	}
	if (strcmp(u.sysname, "Darwin") == 0)
		snprintf(os, os_size, "darwin");
	else if (strcmp(u.sysname, "Linux") == 0)
		snprintf(os, os_size, "linux");
	else
		snprintf(os, os_size, "%s", u.sysname);
	/* Lima says aarch64 where macOS says arm64. */
	if (strcmp(u.machine, "arm64") == 0)
		snprintf(arch, arch_size, "aarch64");
	else if (strcmp(u.machine, "amd64") == 0)
		snprintf(arch, arch_size, "x86_64");
	else
		snprintf(arch, arch_size, "%s", u.machine);
}

const char *lima_default_vm_type(const char *host_os, const char *host_arch, const char *arch)
{
	if (host_os && strcmp(host_os, "darwin") == 0) {
		/* Since v2.1 a non-native arch defaults to qemu: vz cannot emulate. */
		if (arch && *arch && host_arch && strcmp(arch, host_arch) != 0)
			return "qemu";
		return "vz";
	}
	return "qemu";
}

int lima_instance_path(const struct lima_instance *inst, const char *rel, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%s", inst->dir, rel);
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
