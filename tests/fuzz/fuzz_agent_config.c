/* SPDX-License-Identifier: Apache-2.0 */
/* agent.yaml parsing (agent_config_parse) on arbitrary bytes. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_config cfg, def;
	char err[256];
	err[0] = '\0';
	agent_config_defaults(&def);
	int rc = agent_config_parse((const char *)data, size, "fuzz.yaml", &cfg, err, sizeof err);
	if (rc == 0) {
		/* Whatever was accepted is within the documented ranges. */
		if (cfg.interval_s < 1 || cfg.interval_s > 7 * 86400 || cfg.idle_cpu_percent < 0 ||
		    cfg.idle_cpu_percent > 100 || cfg.idle_psi_percent > 100 ||
		    cfg.socket_path[0] != '/' || cfg.socket_mode > 0777 ||
		    cfg.max_request_bytes < 1024 || cfg.max_request_bytes > (16u << 20) ||
		    memchr(cfg.socket_path, '\0', sizeof cfg.socket_path) == NULL)
			abort();
	} else {
		/* A refusal names the file and leaves the defaults. */
		if (strncmp(err, "fuzz.yaml", 9) != 0 || cfg.interval_s != def.interval_s ||
		    cfg.floor_bytes != def.floor_bytes)
			abort();
	}
	return 0;
}
