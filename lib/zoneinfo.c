/* SPDX-License-Identifier: Apache-2.0 */
#include "zoneinfo.h"

#include "procfs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A machine with many CPUs prints about 1 KiB per CPU and zone. */
#define ZONEINFO_MAX_BYTES (8u << 20)

static const char *next_line(const char *s)
{
	const char *nl = strchr(s, '\n');
	return nl ? nl + 1 : NULL;
}

int vmc_zoneinfo_percpu_pages_parse(const char *buf, uint64_t *pages)
{
	static const char key[] = "count:";
	uint64_t sum = 0;
	bool seen = false;
	for (const char *line = buf; line && *line; line = next_line(line)) {
		const char *p = line + strspn(line, " \t");
		if (strncmp(p, key, sizeof key - 1) != 0)
			continue;
		char *end;
		errno = 0;
		unsigned long long n = strtoull(p + sizeof key - 1, &end, 10);
		if (errno != 0 || end == p + sizeof key - 1)
			return -1;
		sum += n;
		seen = true;
	}
	if (!seen)
		return -1;
	*pages = sum;
	return 0;
}

int vmc_zoneinfo_percpu_free_read(uint64_t *bytes)
{
	char *buf;
	if (vmc_fs_read("/proc/zoneinfo", &buf, NULL, ZONEINFO_MAX_BYTES) < 0)
		return -1;
	uint64_t pages;
	int rc = vmc_zoneinfo_percpu_pages_parse(buf, &pages);
	free(buf);
	if (rc < 0) {
		errno = EINVAL;
		return -1;
	}
	long page = sysconf(_SC_PAGESIZE);
	*bytes = pages * (page > 0 ? (uint64_t)page : 4096);
	return 0;
}
