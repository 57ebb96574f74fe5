/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Instances as `limactl list` reports them (docs/lima.md#limactl-list-json), for lima.c when
 * limactl is on PATH. The parser is apart from the I/O so tests and the fuzzer reach it.
 */
#ifndef VMC_LIMACTL_H
#define VMC_LIMACTL_H

#include "clients/lima_common.h"

#include <stddef.h>

/* `limactl list` for one instance (name) or all (NULL); *out is malloc'd. An exit code. */
int limactl_list(const char *name, struct lima_instance **out, size_t *n, char *err,
		 size_t errsize);

/*
 * Parses `limactl list --json` output (JSON Lines, or the indented form limactl prints on a
 * TTY). name == NULL keeps every instance, else only that one (none: *n == 0). Returns
 * VMC_EXIT_OK or VMC_EXIT_MALFORMED with the line and problem in err. *out is malloc'd.
 */
int limactl_parse_list_json(const char *buf, size_t len, const char *name,
			    struct lima_instance **out, size_t *n, char *err, size_t errsize);

#endif
