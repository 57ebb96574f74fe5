/* SPDX-License-Identifier: Apache-2.0 */
#include "mounts.h"

#include "procfs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Copies one blank-separated field, decoding the kernel's \ooo escapes. */
static const char *copy_field(const char *p, char *out, size_t size)
{
	size_t used = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
		char c = *p++;
		if (c == '\\' && p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' &&
		    p[2] >= '0' && p[2] <= '7') {
			c = (char)((p[0] - '0') * 64 + (p[1] - '0') * 8 + (p[2] - '0'));
			p += 3;
		}
		if (used + 1 < size)
			out[used++] = c;
	}
	out[used] = '\0';
	return p;
}

/* Is mount point target equal to path or one of its parent directories? */
static size_t covers(const char *target, const char *path)
{
	size_t len = strlen(target);
	if (strcmp(target, "/") == 0)
		return 1;
	if (strncmp(path, target, len) != 0)
		return 0;
	return path[len] == '\0' || path[len] == '/' ? len : 0;
}

int vmc_mount_for(const char *buf, const char *path, struct vmc_mount *m)
{
	size_t best = 0;
	const char *line = buf;
	while (line && *line) {
		struct vmc_mount cur;
		const char *p = copy_field(line, cur.source, sizeof cur.source);
		p = copy_field(p, cur.target, sizeof cur.target);
		p = copy_field(p, cur.fstype, sizeof cur.fstype);
		copy_field(p, cur.options, sizeof cur.options);
		size_t len = cur.fstype[0] ? covers(cur.target, path) : 0;
		if (len > 0 && len >= best) {
			best = len;
			*m = cur;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return best > 0 ? 0 : -1;
}

int vmc_mount_option(const char *options, const char *name, char *value, size_t size)
{
	size_t name_len = strlen(name);
	const char *p = options;
	while (*p) {
		size_t len = strcspn(p, ",");
		if (len >= name_len && strncmp(p, name, name_len) == 0) {
			if (len == name_len)
				return 2;
			if (p[name_len] == '=') {
				size_t vlen = len - name_len - 1;
				if (vlen >= size)
					vlen = size - 1;
				memcpy(value, p + name_len + 1, vlen);
				value[vlen] = '\0';
				return 1;
			}
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}
