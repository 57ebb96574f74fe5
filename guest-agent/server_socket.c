/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The API's unix socket file. The agent runs as root, so the path it is told to use must not let
 * anyone else redirect what root does there: the directory is checked (every component owned by
 * root, none writable by others but sticky ones above the last), and the socket is bound in a
 * private 0700 directory, given its owner, group and mode there, then hard-linked into place.
 * Nothing ever follows a symlink another user could plant, and nobody can connect before the
 * mode and owners are final.
 */
#include "server_socket.h"

#include "log.h"
#include "message.h"
#include "procfs.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- owner and group names ------------------------------------------------------------------ */

static int parse_id(const char *s, unsigned *id)
{
	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
		return -1;
	*id = (unsigned)strtoul(s, NULL, 10);
	return 0;
}

/* /etc/group and /etc/passwd under the fs root, for static builds (no NSS) and for tests. */
static FILE *open_db(const char *abs_path)
{
	char path[4096];
	if (!vmc_fs_path(path, sizeof path, "%s", abs_path))
		return NULL;
	return fopen(path, "re");
}

static int group_file_gid(const char *group, gid_t *gid)
{
	FILE *f = open_db("/etc/group");
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

static int passwd_file_uid(const char *user, uid_t *uid)
{
	FILE *f = open_db("/etc/passwd");
	if (!f)
		return -1;
	int rc = -1;
	struct passwd *pw;
	while ((pw = fgetpwent(f)) != NULL) {
		if (pw->pw_name && strcmp(pw->pw_name, user) == 0) {
			*uid = pw->pw_uid;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/*
 * Weak: a static link then leaves getgrnam/getpwnam out (NULL) instead of pulling in glibc's
 * NSS, which cannot work without the shared libraries and only warns at link time; the files
 * answer.
 */
#pragma weak getgrnam
#pragma weak getpwnam

int server_group_gid(const char *group, gid_t *gid)
{
	unsigned id;
	if (strcmp(group, "root") == 0) {
		*gid = 0;
		return 0;
	}
	if (parse_id(group, &id) == 0) {
		*gid = (gid_t)id;
		return 0;
	}
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

int server_user_uid(const char *user, uid_t *uid)
{
	unsigned id;
	if (strcmp(user, "root") == 0) {
		*uid = 0;
		return 0;
	}
	if (parse_id(user, &id) == 0) {
		*uid = (uid_t)id;
		return 0;
	}
	if (vmc_fs_root()[0] == '\0' && getpwnam != NULL) {
		struct passwd *pw = getpwnam(user);
		if (pw) {
			*uid = pw->pw_uid;
			return 0;
		}
	}
	return passwd_file_uid(user, uid);
}

/* ---- the directory ----------------------------------------------------------------------------
 */

/*
 * One directory on the way to the socket. Owned by root (or by us, when not root); writable by
 * nobody else, except a sticky directory above the last one (/tmp), whose entries only their
 * owners may rename.
 */
static int check_component(const char *dir, bool last, char *err, size_t errsize)
{
	struct stat sb;
	if (lstat(dir, &sb) < 0) {
		vmc_errorf(err, errsize, "cannot check the socket's directory %s:", dir);
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		snprintf(err, errsize, "%s is not a directory", dir);
		return -1;
	}
	if (sb.st_uid != 0 && sb.st_uid != geteuid()) {
		snprintf(err, errsize,
			 "refusing to create the socket below %s: it belongs to uid %u, not root "
			 "(set \"socket:\" in the config to a path in a root-owned directory such "
			 "as /run)",
			 dir, (unsigned)sb.st_uid);
		return -1;
	}
	bool others_write = (sb.st_mode & (S_IWGRP | S_IWOTH)) != 0;
	if (others_write && (last || !(sb.st_mode & S_ISVTX))) {
		snprintf(err, errsize,
			 "refusing to create the socket below %s: its mode %04o lets others write "
			 "there, so they could swap the socket (set \"socket:\" in the config to a "
			 "path in a directory only root can write, such as /run)",
			 dir, (unsigned)(sb.st_mode & 07777));
		return -1;
	}
	return 0;
}

/*
 * Resolves the socket's directory (symlinks such as /var/run -> /run included) and checks every
 * component of the result; the socket then lives at the resolved path.
 */
static int safe_directory(const char *path, char *resolved, char *err, size_t errsize)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash[1] == '\0') {
		snprintf(err, errsize, "socket path %s does not name a file", path);
		return -1;
	}
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (!realpath(dir, resolved)) {
		vmc_errorf(err, errsize,
			   errno == ENOENT
			       ? "cannot create the socket %s (its directory does not exist):"
			       : "cannot create the socket %s:",
			   path);
		return -1;
	}
	size_t len = strlen(resolved);
	if (check_component("/", len == 1, err, errsize) < 0)
		return -1;
	char prefix[PATH_MAX];
	for (size_t i = 2; i <= len; i++) {
		if (i < len && resolved[i] != '/')
			continue;
		memcpy(prefix, resolved, i);
		prefix[i] = '\0';
		if (check_component(prefix, i == len, err, errsize) < 0)
			return -1;
	}
	return 0;
}

/* ---- the socket file --------------------------------------------------------------------------
 */

static int unix_address(const char *path, struct sockaddr_un *addr, char *err, size_t errsize)
{
	memset(addr, 0, sizeof *addr);
	addr->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof addr->sun_path) {
		snprintf(err, errsize, "socket path %s is longer than %zu bytes", path,
			 sizeof addr->sun_path - 1);
		return -1;
	}
	memcpy(addr->sun_path, path, strlen(path) + 1);
	return 0;
}

/*
 * A socket file left by an agent that died is removed; a live one (someone accepts) or a path
 * that is not a socket is refused: the user must decide.
 */
static int clear_socket_path(const char *path, char *err, size_t errsize)
{
	struct stat sb;
	if (lstat(path, &sb) < 0) {
		if (errno == ENOENT)
			return 0;
		vmc_errorf(err, errsize, "cannot check %s:", path);
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
	struct sockaddr_un addr;
	if (unix_address(path, &addr, err, errsize) < 0)
		return -1;
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0) {
		vmc_errorf(err, errsize, "socket:");
		return -1;
	}
	int rc = connect(probe, (const struct sockaddr *)&addr, sizeof addr);
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
		errno = saved;
		vmc_errorf(err, errsize, "cannot probe %s:", path);
		return -1;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		vmc_errorf(err, errsize, "cannot remove the stale socket %s:", path);
		return -1;
	}
	vmc_info("removed the stale socket %s", path);
	return 0;
}

/* Owner and group ids for the socket; a name that does not exist means root, with a warning. */
static void socket_ids(const struct agent_config *cfg, uid_t *uid, gid_t *gid)
{
	if (server_user_uid(cfg->socket_owner, uid) < 0) {
		vmc_warn("user \"%s\" does not exist: %s is owned by root (create the user or set "
			 "\"socket-owner:\" in the config)",
			 cfg->socket_owner, cfg->socket_path);
		*uid = 0;
	}
	if (server_group_gid(cfg->socket_group, gid) < 0) {
		vmc_warn(
		    "group \"%s\" does not exist: %s is for root only (create the group or set "
		    "\"socket-group:\" in the config)",
		    cfg->socket_group, cfg->socket_path);
		*gid = 0;
	}
}

/* Binds fd at tmp (in our private directory) and gives the file its owners and mode. */
static int bind_private(int fd, const char *tmp, const struct agent_config *cfg,
			struct server_socket *sock, char *err, size_t errsize)
{
	struct sockaddr_un addr;
	if (unix_address(tmp, &addr, err, errsize) < 0)
		return -1;
	if (bind(fd, (const struct sockaddr *)&addr, sizeof addr) < 0) {
		vmc_errorf(err, errsize, "cannot create the socket %s:", tmp);
		return -1;
	}
	uid_t uid;
	gid_t gid;
	socket_ids(cfg, &uid, &gid);
	struct stat sb;
	if (lchown(tmp, uid, gid) < 0) {
		vmc_errorf(err, errsize, "cannot give %s to %s:%s (%u:%u):", cfg->socket_path,
			   cfg->socket_owner, cfg->socket_group, (unsigned)uid, (unsigned)gid);
		return -1;
	}
	/* No lchmod on Linux; in a directory only we can enter, tmp is the socket we bound. */
	if (chmod(tmp, (mode_t)cfg->socket_mode) < 0 || lstat(tmp, &sb) < 0) {
		vmc_errorf(err, errsize, "cannot chmod %04o %s:", cfg->socket_mode,
			   cfg->socket_path);
		return -1;
	}
	sock->dev = sb.st_dev;
	sock->ino = sb.st_ino;
	return 0;
}

int server_listen_unix(const struct agent_config *cfg, struct server_socket *sock, char *err,
		       size_t errsize)
{
	char dir[PATH_MAX], path[PATH_MAX + 256], tmpdir[PATH_MAX + 32], tmp[PATH_MAX + 40];
	struct sockaddr_un addr;
	sock->fd = -1;
	if (unix_address(cfg->socket_path, &addr, err, errsize) < 0 ||
	    safe_directory(cfg->socket_path, dir, err, errsize) < 0)
		return -1;
	const char *base = strrchr(cfg->socket_path, '/') + 1;
	snprintf(path, sizeof path, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", base);
	snprintf(tmpdir, sizeof tmpdir, "%s%s.vmcost-XXXXXX", dir,
		 strcmp(dir, "/") == 0 ? "" : "/");
	if (unix_address(path, &addr, err, errsize) < 0 ||
	    clear_socket_path(path, err, errsize) < 0)
		return -1;
	if (!mkdtemp(tmpdir)) {
		vmc_errorf(err, errsize, "cannot create a private directory in %s:", dir);
		return -1;
	}
	snprintf(tmp, sizeof tmp, "%s/s", tmpdir);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		vmc_errorf(err, errsize, "socket:");
		rmdir(tmpdir);
		return -1;
	}
	int rc = bind_private(fd, tmp, cfg, sock, err, errsize);
	/* link() never replaces: a file that appeared at path since we cleared it stays. */
	if (rc == 0 && link(tmp, path) < 0) {
		vmc_errorf(err, errsize, "cannot put the socket in place at %s:", path);
		rc = -1;
	}
	unlink(tmp);
	rmdir(tmpdir);
	if (rc == 0 && listen(fd, 64) < 0) {
		vmc_errorf(err, errsize, "listen on %s:", path);
		unlink(path);
		rc = -1;
	}
	if (rc < 0) {
		close(fd);
		return -1;
	}
	sock->fd = fd;
	/* addr holds path, which fitted sun_path. */
	_Static_assert(sizeof sock->path == sizeof addr.sun_path, "struct server_socket path");
	memcpy(sock->path, addr.sun_path, sizeof sock->path);
	return 0;
}
