/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An instance read from its directory the way Lima reads it (docs/lima.md#instance-directory,
 * docs/lima.md#limayaml), for lima.c when limactl is not on PATH. The parser is apart from the
 * I/O so tests and the fuzzer reach it.
 */
#ifndef VMC_LIMA_DIR_H
#define VMC_LIMA_DIR_H

#include "clients/lima_common.h"

#include <stddef.h>

/* $home/name read as Lima would; an exit code with the reason in err. */
int lima_dir_load(const char *home, const char *name, struct lima_instance *inst, char *err,
		  size_t errsize);
/* Every instance directory under home (a broken one is listed Broken with its problem). */
int lima_dir_list(const char *home, struct lima_instance **out, size_t *n, char *err,
		  size_t errsize);

/* What one lima.yaml says (no defaults): fields it leaves out stay unset. */
struct lima_yaml_config {
	char vm_type[16], arch[16];
	int cpus;
	uint64_t memory, disk;
	bool has_vm_type, has_arch, has_cpus, has_memory, has_disk;
};

/*
 * Parses one lima.yaml (or _config/default.yaml, override.yaml) with libyaml. Returns
 * VMC_EXIT_OK or VMC_EXIT_MALFORMED with "FILE: line L: key: problem" in err (file names the
 * document in messages).
 */
int lima_parse_yaml(const char *buf, size_t len, const char *file, struct lima_yaml_config *cfg,
		    char *err, size_t errsize);

#endif
