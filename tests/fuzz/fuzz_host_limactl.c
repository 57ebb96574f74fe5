/* SPDX-License-Identifier: Apache-2.0 */
/* `limactl list --json` output (JSON Lines or the indented TTY form) on arbitrary bytes. */
#include "clients/limactl.h"
#include "log.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lima_instance *list = NULL;
	size_t n = 0;
	char err[512];
	err[0] = '\0';
	int rc =
	    limactl_parse_list_json((const char *)data, size, NULL, &list, &n, err, sizeof err);
	if (rc == VMC_EXIT_OK) {
		for (size_t i = 0; i < n; i++) {
			const struct lima_instance *in = &list[i];
			/* Whatever was accepted is a usable instance: named, terminated, sane pids.
			 */
			if (!in->name[0] || !memchr(in->name, '\0', sizeof in->name) ||
			    !memchr(in->dir, '\0', sizeof in->dir) || !in->vm_type[0] ||
			    in->ha_pid < 0 || in->driver_pid < 0 || in->cpus < 0)
				abort();
		}
		/* Filtering by the first name finds at least that one. */
		if (n > 0) {
			struct lima_instance *one = NULL;
			size_t m = 0;
			char name[256];
			memcpy(name, list[0].name, sizeof name);
			if (limactl_parse_list_json((const char *)data, size, name, &one, &m, err,
						    sizeof err) != VMC_EXIT_OK ||
			    m == 0)
				abort();
			free(one);
		}
	} else if (rc == VMC_EXIT_MALFORMED) {
		/* A refusal leaves nothing behind and says where in limactl's output it was. */
		if (list || n || strncmp(err, "limactl list --json: line ", 26) != 0)
			abort();
	} else if (rc != VMC_EXIT_FAILURE) { /* out of memory is the only other answer */
		abort();
	}
	free(list);
	return 0;
}
