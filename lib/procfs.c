/* SPDX-License-Identifier: Apache-2.0 */
#include "procfs.h"

#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fs_root[4096];

void vmc_fs_set_root(const char *root)
{
	snprintf(fs_root, sizeof fs_root, "%s", root ? root : "");
	size_t len = strlen(fs_root);
	while (len > 0 && fs_root[len - 1] == '/')
		fs_root[--len] = '\0';
}

const char *vmc_fs_root(void)
{
	return fs_root;
}

char *vmc_fs_path(char *buf, size_t size, const char *fmt, ...)
{
	int n = snprintf(buf, size, "%s", fs_root);
	if (n < 0 || (size_t)n >= size)
		return NULL;
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + n, size - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= size - (size_t)n)
		return NULL;
	return buf;
}

static int open_below_root(const char *abs_path, int flags)
{
	char path[4096];
	if (!vmc_fs_path(path, sizeof path, "%s", abs_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(path, flags | O_CLOEXEC);
}

int vmc_fs_read(const char *abs_path, char **out, size_t *len, size_t max_bytes)
{
	char path[4096];
	if (!vmc_fs_path(path, sizeof path, "%s", abs_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return vmc_read_file(path, max_bytes, out, len);
}

int vmc_fs_read_buf(const char *abs_path, char *buf, size_t size, size_t *len)
{
	int fd = open_below_root(abs_path, O_RDONLY);
	if (fd < 0)
		return -1;
	size_t used = 0;
	while (used + 1 < size) {
		ssize_t n = read(fd, buf + used, size - used - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	buf[used] = '\0';
	if (len)
		*len = used;
	return 0;
}

int vmc_fs_read_line(const char *abs_path, char *buf, size_t size)
{
	if (vmc_fs_read_buf(abs_path, buf, size, NULL) < 0)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int vmc_fs_write(const char *abs_path, const char *data)
{
	int fd = open_below_root(abs_path, O_WRONLY);
	if (fd < 0)
		return -1;
	size_t len = strlen(data);
	ssize_t n;
	do
		n = write(fd, data, len);
	while (n < 0 && errno == EINTR);
	int saved = errno;
	close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	if ((size_t)n != len) {
		errno = EIO;
		return -1;
	}
	return 0;
}

bool vmc_fs_exists(const char *abs_path)
{
	char path[4096];
	struct stat st;
	if (!vmc_fs_path(path, sizeof path, "%s", abs_path))
		return false;
	return stat(path, &st) == 0;
}

const char *vmc_find_key(const char *buf, const char *key)
{
	size_t klen = strlen(key);
	const char *line = buf;
	while (line && *line) {
		if (strncmp(line, key, klen) == 0) {
			const char *v = line + klen;
			while (*v == ' ' || *v == '\t')
				v++;
			return v;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

int vmc_parse_u64(const char **p, uint64_t *value)
{
	const char *s = *p;
	if (*s < '0' || *s > '9')
		return -1;
	uint64_t v = 0;
	while (*s >= '0' && *s <= '9') {
		uint64_t digit = (uint64_t)(*s - '0');
		if (v > (UINT64_MAX - digit) / 10)
			return -1;
		v = v * 10 + digit;
		s++;
	}
	*value = v;
	*p = s;
	return 0;
}

int vmc_key_u64(const char *buf, const char *key, uint64_t *value)
{
	const char *v = vmc_find_key(buf, key);
	if (!v)
		return -1;
	return vmc_parse_u64(&v, value);
}

int vmc_key_kb(const char *buf, const char *key, uint64_t *bytes)
{
	const char *v = vmc_find_key(buf, key);
	uint64_t kb;
	if (!v || vmc_parse_u64(&v, &kb) < 0)
		return -1;
	if (kb > UINT64_MAX / 1024)
		return -1;
	*bytes = kb * 1024;
	return 0;
}
