/* SPDX-License-Identifier: Apache-2.0 */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

int vmc_read_fd(int fd, size_t max_bytes, char **out, size_t *len)
{
	if (max_bytes > SIZE_MAX / 2)
		max_bytes = SIZE_MAX / 2;
	/* One spare byte beyond max_bytes tells "exactly max" from "too big", one for the NUL. */
	size_t cap = max_bytes < 4096 ? max_bytes + 2 : 4096, used = 0;
	int saved;
	char *buf = malloc(cap);
	if (!buf)
		return -1;
	for (;;) {
		if (used + 1 >= cap) {
			if (used > max_bytes)
				break;
			size_t grown_cap = cap * 2 > max_bytes + 2 ? max_bytes + 2 : cap * 2;
			char *grown = realloc(buf, grown_cap);
			if (!grown)
				goto fail;
			buf = grown;
			cap = grown_cap;
		}
		ssize_t n = read(fd, buf + used, cap - used - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	if (used > max_bytes) {
		errno = EFBIG;
		goto fail;
	}
	buf[used] = '\0';
	*out = buf;
	if (len)
		*len = used;
	return 0;
fail:
	saved = errno;
	free(buf);
	errno = saved;
	return -1;
}

int vmc_read_file(const char *path, size_t max_bytes, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = vmc_read_fd(fd, max_bytes, out, len);
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int vmc_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
