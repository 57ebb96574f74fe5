/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The API's unix socket file: who may connect is decided here (mode and group from the config),
 * before anyone can.
 */
#include "server_socket.h"

#include "log.h"
#include "procfs.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int parse_gid(const char *s, gid_t *gid)
{
	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
		return -1;
	*gid = (gid_t)strtoul(s, NULL, 10);
	return 0;
}

/* /etc/group under the fs root, for static builds (no NSS) and for tests. */
static int group_file_gid(const char *group, gid_t *gid)
{
	char path[4096];
	if (!vmc_fs_path(path, sizeof path, "/etc/group"))
		return -1;
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int rc = -1;
	struct group *gr;
	while ((gr = fgetgrent(f)) != NULL) {
		if (gr->gr_name && strcmp(gr->gr_name, group) == 0) {
			*gid = gr->gr_gid;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/*
 * Weak: a static link then leaves getgrnam out (NULL) instead of pulling in glibc's NSS, which
 * cannot work without the shared libraries and only warns at link time; /etc/group answers.
 */
#pragma weak getgrnam

int server_group_gid(const char *group, gid_t *gid)
{
	if (strcmp(group, "root") == 0) {
		*gid = 0;
		return 0;
	}
	if (parse_gid(group, gid) == 0)
		return 0;
	/* NSS first on the real root (a dynamic build may know groups from elsewhere); a static
	 * glibc build gets NULL here and the file below answers. */
	if (vmc_fs_root()[0] == '\0' && getgrnam != NULL) {
		struct group *gr = getgrnam(group);
		if (gr) {
			*gid = gr->gr_gid;
			return 0;
		}
	}
	return group_file_gid(group, gid);
}

/*
 * A socket file left by an agent that died is replaced; a live one (someone accepts) or a path
 * that is not a socket is refused: the user must decide.
 */
static int clear_socket_path(const char *path, const struct sockaddr_un *addr, char *err,
			     size_t errsize)
{
	struct stat sb;
	if (lstat(path, &sb) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errsize, "cannot check %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(sb.st_mode)) {
		snprintf(
		    err, errsize,
		    "%s exists and is not a socket: remove it or set another \"socket:\" in the "
		    "config",
		    path);
		return -1;
	}
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0) {
		snprintf(err, errsize, "socket: %s", strerror(errno));
		return -1;
	}
	int rc = connect(probe, (const struct sockaddr *)addr, sizeof *addr);
	int saved = errno;
	close(probe);
	if (rc == 0) {
		snprintf(err, errsize,
			 "another process is serving %s (a running vmcost-agent? rc-service "
			 "cache-trim status)",
			 path);
		return -1;
	}
	if (saved != ECONNREFUSED) {
		snprintf(err, errsize, "cannot probe %s: %s", path, strerror(saved));
		return -1;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		snprintf(err, errsize, "cannot remove the stale socket %s: %s", path,
			 strerror(errno));
		return -1;
	}
	info("removed the stale socket %s", path);
	return 0;
}

static int give_socket_to_group(const char *path, unsigned mode, const char *group, char *err,
				size_t errsize)
{
	gid_t gid = 0;
	if (server_group_gid(group, &gid) < 0) {
		warn("group \"%s\" does not exist: %s is for root only (create the group or set "
		     "\"socket-group:\" in the config)",
		     group, path);
		gid = 0;
	}
	if (chown(path, (uid_t)-1, gid) < 0) {
		snprintf(err, errsize, "cannot give %s to group %s (gid %u): %s", path, group,
			 (unsigned)gid, strerror(errno));
		return -1;
	}
	if (chmod(path, (mode_t)mode) < 0) {
		snprintf(err, errsize, "cannot chmod %04o %s: %s", mode, path, strerror(errno));
		return -1;
	}
	return 0;
}

int server_listen_unix(const char *path, unsigned mode, const char *group, char *err,
		       size_t errsize)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof addr.sun_path) {
		snprintf(err, errsize, "socket path %s is longer than %zu bytes", path,
			 sizeof addr.sun_path - 1);
		return -1;
	}
	memcpy(addr.sun_path, path, strlen(path) + 1);
	if (clear_socket_path(path, &addr, err, errsize) < 0)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errsize, "socket: %s", strerror(errno));
		return -1;
	}
	/* Born owner-only: nobody can connect before mode and group are final. */
	mode_t old_umask = umask(0177);
	int rc = bind(fd, (const struct sockaddr *)&addr, sizeof addr);
	int saved = errno;
	umask(old_umask);
	if (rc < 0) {
		snprintf(err, errsize, "cannot create the socket %s: %s%s", path, strerror(saved),
			 saved == ENOENT ? " (its directory does not exist)" : "");
		close(fd);
		return -1;
	}
	if (give_socket_to_group(path, mode, group, err, errsize) < 0)
		goto fail;
	if (listen(fd, 64) < 0) {
		snprintf(err, errsize, "listen on %s: %s", path, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	unlink(path);
	close(fd);
	return -1;
}
