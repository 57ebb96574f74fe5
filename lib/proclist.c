/* SPDX-License-Identifier: Apache-2.0 */
#include "proclist.h"

#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_id(const char *name, pid_t *id)
{
	const char *p = name;
	uint64_t v;
	if (vmc_parse_u64(&p, &v) < 0 || *p || v == 0 || v > INT_MAX)
		return -1;
	*id = (pid_t)v;
	return 0;
}

static int compare_ids(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

static int list_dir(const char *abs_path, pid_t **ids, size_t *n)
{
	char path[4096];
	*ids = NULL;
	*n = 0;
	if (!vmc_fs_path(path, sizeof path, "%s", abs_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	DIR *dir = opendir(path);
	if (!dir)
		return -1;
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(dir))) {
		pid_t id;
		if (parse_id(de->d_name, &id) < 0)
			continue;
		if (*n == cap) {
			size_t grown_cap = cap ? cap * 2 : 64;
			pid_t *grown = realloc(*ids, grown_cap * sizeof *grown);
			if (!grown) {
				free(*ids);
				*ids = NULL;
				*n = 0;
				closedir(dir);
				errno = ENOMEM;
				return -1;
			}
			*ids = grown;
			cap = grown_cap;
		}
		(*ids)[(*n)++] = id;
	}
	closedir(dir);
	if (*n > 1)
		qsort(*ids, *n, sizeof **ids, compare_ids);
	return 0;
}

int vmc_proc_list(pid_t **ids, size_t *n)
{
	return list_dir("/proc", ids, n);
}

int vmc_proc_tasks(pid_t pid, pid_t **ids, size_t *n)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	return list_dir(path, ids, n);
}

void vmc_proc_cmdline_join(char *buf, size_t len)
{
	while (len > 0 && buf[len - 1] == '\0')
		len--;
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[len] = '\0';
}

int vmc_proc_cmdline_read(pid_t pid, char *buf, size_t size)
{
	char path[64];
	size_t len;
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	if (vmc_fs_read_buf(path, buf, size, &len) < 0)
		return -1;
	vmc_proc_cmdline_join(buf, len);
	return 0;
}
