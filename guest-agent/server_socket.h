/* SPDX-License-Identifier: Apache-2.0 */
/* The API's unix socket file, created with its final mode and owners before anyone can connect. */
#ifndef VMC_AGENT_SERVER_SOCKET_H
#define VMC_AGENT_SERVER_SOCKET_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Group for the socket: "root" and numeric ids directly, otherwise getgrnam() and, because a
 * static glibc cannot use NSS, <fs root>/etc/group read with fgetgrent(). -1 if not found.
 */
int server_group_gid(const char *group, gid_t *gid);

/*
 * Creates the listening unix socket at path with mode and group: refuses when another process
 * answers there or when the path is not a socket; replaces a stale socket file; falls back to
 * group root with a warning when the group does not exist. Returns the fd, or -1 with err.
 */
int server_listen_unix(const char *path, unsigned mode, const char *group, char *err,
		       size_t errsize);

#endif
