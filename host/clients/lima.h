/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lima instance discovery (docs/lima.md#instance-directory, docs/lima.md#limactl-list-json):
 * `limactl list --format '{{json .}}' NAME` when limactl is on PATH (JSON Lines, limactl.c),
 * else the instance directory itself (lima_dir.c: lima.yaml via libyaml, ha.pid,
 * <vmType>.pid, status by Lima's own pid-file rule, docs/lima.md#instance-status).
 */
#ifndef VMC_LIMA_H
#define VMC_LIMA_H

#include "clients/lima_common.h"

#include <stddef.h>

/*
 * Loads one instance by name. Returns VMC_EXIT_OK, or an exit code with a one-line message in
 * err that says what to do: VMC_EXIT_NO_INSTANCE, VMC_EXIT_MALFORMED (lima.yaml / limactl JSON),
 * VMC_EXIT_PERMISSION.
 */
int lima_instance_load(const char *name, struct lima_instance *inst, char *err, size_t errsize);

/* lima_instance_load + "is it running?" (VMC_EXIT_STOPPED: "start it with limactl start NAME"). */
int lima_instance_require_running(const char *name, struct lima_instance *inst, char *err,
				  size_t errsize);

/* Every instance (sorted by name); *out is malloc'd. Returns an exit code like above. */
int lima_instance_list(struct lima_instance **out, size_t *n, char *err, size_t errsize);

/* First line of `limactl --version` ("limactl version 2.2.0"), or "limactl version unknown". */
void lima_limactl_version(char *buf, size_t size);

#endif
