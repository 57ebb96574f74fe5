/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Instance discovery (docs/lima.md#instance-directory, docs/lima.md#limactl-list-json,
 * docs/lima.md#limayaml). limactl is the authority when it is on PATH: it knows defaults,
 * drivers and statuses we can only imitate (limactl.c). Without it the instance directory is
 * read the way Lima reads it (lima_dir.c). This file chooses between the two; what both
 * share is in lima_common.c.
 */
#include "clients/lima.h"

#include "clients/lima_dir.h"
#include "clients/limactl.h"
#include "clients/process.h"
#include "log.h"
#include "message.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static bool use_limactl(void)
{
	char path[PATH_MAX];
	return process_find_on_path("limactl", path, sizeof path);
}

int lima_instance_load(const char *name, struct lima_instance *inst, char *err, size_t errsize)
{
	memset(inst, 0, sizeof *inst);
	if (!lima_name_valid(name)) {
		vmc_textf(err, errsize,
			  "\"%s\" is not a Lima instance name (letters, digits, and . _ - between "
			  "them): limactl list shows the instances",
			  name ? name : "");
		return VMC_EXIT_NO_INSTANCE;
	}
	char home[PATH_MAX - 300];
	if (lima_home(home, sizeof home) < 0) {
		vmc_textf(err, errsize, "neither LIMA_HOME nor HOME is set: set LIMA_HOME");
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
		vmc_textf(err, errsize, "unknown instance \"%s\": limactl list shows the instances",
			  name);
		return VMC_EXIT_NO_INSTANCE;
	}
	*inst = list[0];
	free(list);
	if (inst->unreadable) {
		vmc_textf(err, errsize, "%s: fix it, or see limactl list", inst->problem);
		return VMC_EXIT_MALFORMED;
	}
	if (inst->status == LIMA_STATUS_BROKEN && !inst->problem[0])
		vmc_textf(inst->problem, sizeof inst->problem,
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
		vmc_textf(err, errsize,
			  "instance \"%s\" is broken (%s): stop it with limactl stop -f %s, then "
			  "limactl start %s",
			  name, inst->problem[0] ? inst->problem : "see limactl list", name, name);
		return VMC_EXIT_STOPPED;
	default:
		vmc_textf(err, errsize, "instance \"%s\" is %s: start it with limactl start %s",
			  name,
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
		vmc_textf(err, errsize, "neither LIMA_HOME nor HOME is set: set LIMA_HOME");
		return VMC_EXIT_FAILURE;
	}
	int rc = use_limactl() ? limactl_list(NULL, out, n, err, errsize)
			       : lima_dir_list(home, out, n, err, errsize);
	if (rc == VMC_EXIT_OK && *n > 1)
		qsort(*out, *n, sizeof **out, compare_names);
	return rc;
}

void lima_limactl_version(char *buf, size_t size)
{
	const char *argv[] = {"limactl", "--version", NULL};
	if (process_first_line(argv, 30000, buf, size) != 0)
		vmc_textf(buf, size, "limactl version unknown");
}
