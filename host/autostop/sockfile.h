/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unix socket files on disk: what is at a path (a live socket, a stale one a crash left, or
 * something else), making a path ready for listening (refusing a live socket, removing a stale
 * one), and listening on it for this user only. A stale file matters because neither bind(2)
 * nor ssh's -O forward will bind over it.
 */
#ifndef VMC_AUTOSTOP_SOCKFILE_H
#define VMC_AUTOSTOP_SOCKFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

/* Connections a listening socket queues before accept. */
#define SOCKFILE_BACKLOG 256

enum sockfile_state {
	SOCKFILE_ABSENT,
	SOCKFILE_LIVE,	/* someone accepts connections there (or it cannot be told) */
	SOCKFILE_STALE, /* a socket nobody listens on: connect is refused */
	SOCKFILE_OTHER, /* not a socket */
};

enum sockfile_state sockfile_probe(const char *path);

/*
 * Readies path for listening: nothing there, or a stale socket (removed, with a warning).
 * Otherwise returns an exit code with a line in err saying what to do; what names the socket
 * ("listen socket", "status socket").
 */
int sockfile_prepare(const char *path, const char *what, char *err, size_t errsize);

/* Binds pipe to path (mode 0600) and listens with cb; pipe->data = data. Exit code + err. */
int sockfile_listen(uv_loop_t *loop, uv_pipe_t *pipe, const char *path, void *data,
		    uv_connection_cb cb, char *err, size_t errsize);

/* True when path fits sockaddr_un.sun_path with its NUL; max gets the longest usable length. */
bool sockfile_path_fits(const char *path, size_t *max);

#endif
