/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scratch files and sockets for the suites: write a whole file (a test that cannot set up its
 * fixture stops with exit 2, it does not pass), connect to a unix socket. Header-only.
 */
#ifndef VMC_SCRATCH_H
#define VMC_SCRATCH_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static inline void scratch_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

/* A connected stream socket to path, or -1. */
static inline int scratch_connect(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

#endif
