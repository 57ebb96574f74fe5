/* SPDX-License-Identifier: Apache-2.0 */
#include "platform/cgroup.h"

#include "procfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* v1 reports "no limit" as the largest page-aligned counter (9223372036854771712). */
#define V1_UNLIMITED (1ull << 62)

static void copy_text(char *out, size_t size, const char *p, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(out, p, len);
	out[len] = '\0';
}

/* Is "memory" one of the comma-separated controllers in [p, p+len)? */
static bool has_memory(const char *p, size_t len)
{
	while (len > 0) {
		size_t n = 0;
		while (n < len && p[n] != ',')
			n++;
		if (n == 6 && strncmp(p, "memory", 6) == 0)
			return true;
		if (n == len)
			break;
		p += n + 1;
		len -= n + 1;
	}
	return false;
}

int vmc_cgroup_parse(const char *buf, char *v1, size_t v1_size, char *v2, size_t v2_size)
{
	v1[0] = v2[0] = '\0';
	bool found = false;
	for (const char *line = buf; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
		if (c2) {
			const char *path = c2 + 1;
			size_t path_len = len - (size_t)(path - line);
			size_t ctl_len = (size_t)(c2 - c1 - 1);
			if (ctl_len == 0 && strncmp(line, "0:", 2) == 0) {
				copy_text(v2, v2_size, path, path_len);
				found = true;
			} else if (has_memory(c1 + 1, ctl_len)) {
				copy_text(v1, v1_size, path, path_len);
				found = true;
			}
		}
		line = end ? end + 1 : NULL;
	}
	return found ? 0 : -1;
}

/* A counter file: a decimal, or "max" (v2: no limit). -1 if absent or unreadable. */
static int read_counter(const char *dir, const char *file, uint64_t *value, bool *unlimited)
{
	char path[600], line[64];
	if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path ||
	    vmc_fs_read_line(path, line, sizeof line) != 0)
		return -1;
	*unlimited = strcmp(line, "max") == 0;
	if (*unlimited)
		return 0;
	const char *p = line;
	if (vmc_parse_u64(&p, value) != 0)
		return -1;
	if (*value >= V1_UNLIMITED)
		*unlimited = true;
	return 0;
}

/* One cgroup directory: its limit and usage folded into out. */
static void fold_cgroup(const char *dir, const char *limit_file, const char *usage_file,
			struct vmc_memory_limit *out)
{
	uint64_t limit = 0, usage = 0;
	bool unlimited = false, usage_unlimited = false;
	if (read_counter(dir, limit_file, &limit, &unlimited) != 0 || unlimited)
		return;
	if (read_counter(dir, usage_file, &usage, &usage_unlimited) != 0)
		usage = 0;
	uint64_t room = limit > usage ? limit - usage : 0;
	if (!out->limited || room < out->room) {
		out->room = room;
		snprintf(out->where, sizeof out->where, "%.*s", (int)sizeof out->where - 1, dir);
	}
	if (!out->limited || limit < out->limit)
		out->limit = limit;
	out->limited = true;
}

/* base + path, then each parent up to base itself. */
static void walk(const char *base, const char *path, const char *limit_file, const char *usage_file,
		 struct vmc_memory_limit *out)
{
	char dir[512];
	if (snprintf(dir, sizeof dir, "%s%s", base, strcmp(path, "/") == 0 ? "" : path) >=
	    (int)sizeof dir)
		return;
	size_t base_len = strlen(base);
	for (;;) {
		fold_cgroup(dir, limit_file, usage_file, out);
		char *slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < base_len)
			break;
		*slash = '\0';
	}
}

int vmc_cgroup_memory_limit(struct vmc_memory_limit *out)
{
	memset(out, 0, sizeof *out);
	char *buf;
	if (vmc_fs_read("/proc/self/cgroup", &buf, NULL, 64 * 1024) != 0)
		return -1;
	char v1[256], v2[256];
	int rc = vmc_cgroup_parse(buf, v1, sizeof v1, v2, sizeof v2);
	free(buf);
	if (rc != 0)
		return 0;
	if (v1[0] && vmc_fs_exists("/sys/fs/cgroup/memory"))
		walk("/sys/fs/cgroup/memory", v1, "memory.limit_in_bytes", "memory.usage_in_bytes",
		     out);
	else if (v2[0])
		walk("/sys/fs/cgroup", v2, "memory.max", "memory.current", out);
	return 0;
}
