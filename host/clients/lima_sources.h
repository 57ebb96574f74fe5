/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The two places lima.c finds instances in: limactl (limactl.c) and the instance directory
 * (lima_dir.c). For host/clients/lima*.c only; everyone else calls lima.h.
 */
#ifndef VMC_LIMA_SOURCES_H
#define VMC_LIMA_SOURCES_H

#include "clients/lima.h"

#include <stddef.h>

/* `limactl list` for one instance (name) or all (NULL); *out is malloc'd. An exit code. */
int limactl_list(const char *name, struct lima_instance **out, size_t *n, char *err,
		 size_t errsize);

/* $home/name read as Lima would; an exit code with the reason in err. */
int lima_dir_load(const char *home, const char *name, struct lima_instance *inst, char *err,
		  size_t errsize);
/* Every instance directory under home (a broken one is listed Broken with its problem). */
int lima_dir_list(const char *home, struct lima_instance **out, size_t *n, char *err,
		  size_t errsize);

#endif
