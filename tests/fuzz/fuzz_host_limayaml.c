/* SPDX-License-Identifier: Apache-2.0 */
/* lima.yaml (and _config/default.yaml, override.yaml) parsing on arbitrary bytes. */
#include "clients/lima_dir.h"
#include "log.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int known(const char *t)
{
	return !strcmp(t, "qemu") || !strcmp(t, "vz") || !strcmp(t, "krunkit") ||
	       !strcmp(t, "wsl2");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lima_yaml_config cfg;
	char err[512];
	err[0] = '\0';
	int rc = lima_parse_yaml((const char *)data, size, "lima.yaml", &cfg, err, sizeof err);
	if (rc == VMC_EXIT_OK) {
		if ((cfg.has_vm_type && !known(cfg.vm_type)) || (cfg.has_cpus && cfg.cpus <= 0) ||
		    (cfg.has_memory && cfg.memory == 0) || (cfg.has_disk && cfg.disk == 0) ||
		    (cfg.has_arch && (!cfg.arch[0] || !memchr(cfg.arch, '\0', sizeof cfg.arch))))
			abort();
	} else if (rc != VMC_EXIT_MALFORMED || strncmp(err, "lima.yaml: ", 11) != 0) {
		/* Every refusal names the file: the user must know which one to fix. */
		abort();
	}
	return 0;
}
