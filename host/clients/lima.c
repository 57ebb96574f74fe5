/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Instance discovery (docs/lima.md#instance-directory, docs/lima.md#limactl-list-json,
 * docs/lima.md#limayaml). limactl is the authority when it is on PATH: it knows defaults,
 * drivers and statuses we can only imitate (limactl.c). Without it the instance directory is
 * read the way Lima reads it (lima_dir.c). This file chooses between the two and holds what
 * both use.
 */
#include "clients/lima.h"

#include "clients/lima_sources.h"
#include "clients/process.h"
#include "log.h"
#include "message.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
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

/* ---- the two sources -------------------------------------------------------------------- */

static bool use_limactl(void)
{
	char path[PATH_MAX];
	return process_find_on_path("limactl", path, sizeof path);
}

int lima_instance_load(const char *name, struct lima_instance *inst, char *err, size_t errsize)
{
	memset(inst, 0, sizeof *inst);
	if (!lima_name_valid(name)) {
		textf(err, errsize,
		      "\"%s\" is not a Lima instance name (letters, digits, and . _ - between "
		      "them): limactl list shows the instances",
		      name ? name : "");
		return VMC_EXIT_NO_INSTANCE;
	}
	char home[PATH_MAX - 300];
	if (lima_home(home, sizeof home) < 0) {
		textf(err, errsize, "neither LIMA_HOME nor HOME is set: set LIMA_HOME");
		return VMC_EXIT_FAILURE;
	}
	if (!use_limactl())
		return lima_dir_load(home, name, inst, err, errsize);
	struct lima_instance *list;
	size_t n;
	int rc = limactl_list(name, &list, &n, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (n == 0) {
		free(list);
		textf(err, errsize, "unknown instance \"%s\": limactl list shows the instances",
		      name);
		return VMC_EXIT_NO_INSTANCE;
	}
	*inst = list[0];
	free(list);
	if (inst->unreadable) {
		textf(err, errsize, "%s: fix it, or see limactl list", inst->problem);
		return VMC_EXIT_MALFORMED;
	}
	if (inst->status == LIMA_STATUS_BROKEN && !inst->problem[0])
		textf(inst->problem, sizeof inst->problem,
		      "limactl reports it Broken: see limactl list and %s/ha.stderr.log",
		      inst->dir);
	return VMC_EXIT_OK;
}

int lima_instance_require_running(const char *name, struct lima_instance *inst, char *err,
				  size_t errsize)
{
	int rc = lima_instance_load(name, inst, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	switch (inst->status) {
	case LIMA_STATUS_RUNNING:
		return VMC_EXIT_OK;
	case LIMA_STATUS_BROKEN:
		textf(err, errsize,
		      "instance \"%s\" is broken (%s): stop it with limactl stop -f %s, then "
		      "limactl start %s",
		      name, inst->problem[0] ? inst->problem : "see limactl list", name, name);
		return VMC_EXIT_STOPPED;
	default:
		textf(err, errsize, "instance \"%s\" is %s: start it with limactl start %s", name,
		      inst->status == LIMA_STATUS_UNKNOWN ? "not running"
							  : lima_status_name(inst->status),
		      name);
		return VMC_EXIT_STOPPED;
	}
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(((const struct lima_instance *)a)->name,
		      ((const struct lima_instance *)b)->name);
}

int lima_instance_list(struct lima_instance **out, size_t *n, char *err, size_t errsize)
{
	*out = NULL;
	*n = 0;
	char home[PATH_MAX - 300];
	if (lima_home(home, sizeof home) < 0) {
		textf(err, errsize, "neither LIMA_HOME nor HOME is set: set LIMA_HOME");
		return VMC_EXIT_FAILURE;
	}
	int rc = use_limactl() ? limactl_list(NULL, out, n, err, errsize)
			       : lima_dir_list(home, out, n, err, errsize);
	if (rc == VMC_EXIT_OK && *n > 1)
		qsort(*out, *n, sizeof **out, compare_names);
	return rc;
}
