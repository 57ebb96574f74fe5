/* SPDX-License-Identifier: Apache-2.0 */
/* The API's unix socket file, created with its final mode and owners before anyone can connect. */
#ifndef VMC_AGENT_SERVER_SOCKET_H
#define VMC_AGENT_SERVER_SOCKET_H

#include "config.h"

#include <stddef.h>
#include <sys/types.h>

/* The listening socket, and which file it is bound to (server_stop removes only that file). */
struct server_socket {
	int fd;
	char path[108]; /* where the file is: the configured path, its directory resolved */
	dev_t dev;
	ino_t ino;
};

/*
 * Owner and group of the socket by name: "root" and numeric ids directly, otherwise NSS
 * (getpwnam/getgrnam) and, because a static glibc cannot use NSS, /etc/passwd and /etc/group
 * under the fs root. -1 if not found.
 */
int server_user_uid(const char *user, uid_t *uid);
int server_group_gid(const char *group, gid_t *gid);

/*
 * Creates the listening unix socket cfg->socket_path with cfg's mode, owner and group. Refuses a
 * directory that someone other than root could write to (or rename), a path where another
 * process answers, and a path that is not a socket; replaces a stale socket file; falls back to
 * root with a warning when the owner or group does not exist. Returns 0, or -1 with err.
 */
int server_listen_unix(const struct agent_config *cfg, struct server_socket *sock, char *err,
		       size_t errsize);

#endif
