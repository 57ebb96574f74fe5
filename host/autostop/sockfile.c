/* SPDX-License-Identifier: Apache-2.0 */
#include "autostop/sockfile.h"

#include "log.h"
#include "message.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

enum sockfile_state sockfile_probe(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return SOCKFILE_ABSENT;
	if (!S_ISSOCK(st.st_mode))
		return SOCKFILE_OTHER;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path)
		return SOCKFILE_LIVE; /* cannot tell: do not remove it */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return SOCKFILE_LIVE;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
	int e = errno;
	close(fd);
	if (rc == 0)
		return SOCKFILE_LIVE;
	return e == ECONNREFUSED ? SOCKFILE_STALE : SOCKFILE_LIVE;
}

bool sockfile_path_fits(const char *path, size_t *max)
{
	size_t limit = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
	if (max)
		*max = limit;
	return strlen(path) <= limit;
}

static int refuse_live(const char *path, const char *what, char *err, size_t errsize)
{
	if (strcmp(what, "status socket") == 0)
		vmc_errorf(
		    err, errsize,
		    "another vmcost autostop already serves this instance (its status socket %s "
		    "answers): see vmcost autostop NAME --status, and stop that one first",
		    path);
	else
		vmc_errorf(err, errsize,
			   "%s %s is in use: another vmcost autostop (or another program) listens "
			   "there; stop it first, or choose another path with --listen",
			   what, path);
	return VMC_EXIT_FAILURE;
}

int sockfile_prepare(const char *path, const char *what, char *err, size_t errsize)
{
	size_t max;
	if (!sockfile_path_fits(path, &max)) {
		vmc_errorf(
		    err, errsize,
		    "%s %s is %zu bytes long; a unix socket path holds at most %zu bytes on this "
		    "system (103 on macOS): choose a shorter path with --listen, or a shorter "
		    "LIMA_HOME",
		    what, path, strlen(path), max);
		return VMC_EXIT_USAGE;
	}
	switch (sockfile_probe(path)) {
	case SOCKFILE_ABSENT:
		return VMC_EXIT_OK;
	case SOCKFILE_LIVE:
		return refuse_live(path, what, err, errsize);
	case SOCKFILE_OTHER:
		vmc_errorf(err, errsize,
			   "%s %s exists and is not a socket: move it away, or choose another path "
			   "with --listen",
			   what, path);
		return VMC_EXIT_FAILURE;
	case SOCKFILE_STALE:
		if (unlink(path) < 0) {
			vmc_errorf(err, errsize, "cannot remove the stale socket %s:", path);
			return VMC_EXIT_PERMISSION;
		}
		vmc_warn(
		    "removed the stale socket %s (left by a process that ended without cleaning "
		    "up)",
		    path);
		return VMC_EXIT_OK;
	}
	return VMC_EXIT_OK;
}

int sockfile_listen(uv_loop_t *loop, uv_pipe_t *pipe, const char *path, void *data,
		    uv_connection_cb cb, char *err, size_t errsize)
{
	uv_pipe_init(loop, pipe, 0);
	pipe->data = data;
	int rc = uv_pipe_bind(pipe, path);
	/* The Docker API is root in the VM: only this user may connect. */
	if (rc == 0)
		rc = chmod(path, 0600) < 0 ? uv_translate_sys_error(errno) : 0;
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)pipe, SOCKFILE_BACKLOG, cb);
	if (rc < 0) {
		uv_close((uv_handle_t *)pipe, NULL);
		vmc_errorf(err, errsize, "cannot listen on %s: %s", path, uv_strerror(rc));
		return rc == UV_EACCES ? VMC_EXIT_PERMISSION : VMC_EXIT_FAILURE;
	}
	return VMC_EXIT_OK;
}
