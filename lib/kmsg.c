/* SPDX-License-Identifier: Apache-2.0 */
#include "kmsg.h"

#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

const char *vmc_kmsg_text(const char *line)
{
	/* Header: comma-separated fields without blanks up to ';', the priority first
	 * ("6,339,5140900,-;" or with CONFIG_PRINTK_CALLER "6,339,5140900,-,caller=T1;"). */
	if (*line < '0' || *line > '9')
		return NULL;
	for (const char *p = line; *p && *p != '\n'; p++) {
		if (*p == ';')
			return p + 1;
		if (*p == ' ' || *p == '\t')
			return NULL;
	}
	return NULL;
}

/* Hands every complete line in buf[0, *used) to fn and keeps the unfinished tail. */
static int drain_lines(char *buf, size_t *used, int (*fn)(const char *, void *), void *ctx)
{
	size_t start = 0;
	for (;;) {
		char *nl = memchr(buf + start, '\n', *used - start);
		if (!nl)
			break;
		*nl = '\0';
		const char *text = vmc_kmsg_text(buf + start);
		start = (size_t)(nl - buf) + 1;
		if (text && fn(text, ctx))
			return 1;
	}
	memmove(buf, buf + start, *used - start);
	*used -= start;
	return 0;
}

int vmc_kmsg_scan(int (*fn)(const char *text, void *ctx), void *ctx)
{
	char path[4096];
	if (!vmc_fs_path(path, sizeof path, "/dev/kmsg")) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* Non-blocking: at the end of the buffer read() says EAGAIN instead of waiting. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* A record is at most ~1 KiB (PRINTK_MESSAGE_MAX + dict); read() needs room for one. */
	char buf[8192];
	size_t used = 0;
	for (;;) {
		if (used + 1 >= sizeof buf)
			used = 0; /* a line longer than the buffer: not a kmsg record, drop it */
		ssize_t n = read(fd, buf + used, sizeof buf - used - 1);
		if (n < 0) {
			if (errno == EINTR ||
			    errno == EPIPE) /* EPIPE: record overwritten meanwhile */
				continue;
			break; /* EAGAIN: end of buffer */
		}
		if (n == 0) {
			/* A plain file may end without a newline. */
			if (used > 0) {
				buf[used++] = '\n';
				drain_lines(buf, &used, fn, ctx);
			}
			break;
		}
		used += (size_t)n;
		if (drain_lines(buf, &used, fn, ctx))
			break;
	}
	close(fd);
	return 0;
}
