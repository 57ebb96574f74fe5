/* SPDX-License-Identifier: Apache-2.0 */
#include "psi.h"

#include "procfs.h"
#include "units.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int parse_avg(const char **p, const char *name, double *out)
{
	size_t len = strlen(name);
	while (**p == ' ')
		(*p)++;
	if (strncmp(*p, name, len) != 0)
		return -1;
	*p += len;
	return vmc_parse_decimal(p, out);
}

static int parse_line(const char *v, struct vmc_psi_line *line)
{
	const char *p = v;
	if (parse_avg(&p, "avg10=", &line->avg10) < 0 ||
	    parse_avg(&p, "avg60=", &line->avg60) < 0 ||
	    parse_avg(&p, "avg300=", &line->avg300) < 0)
		return -1;
	while (*p == ' ')
		p++;
	if (strncmp(p, "total=", 6) != 0)
		return -1;
	p += 6;
	return vmc_parse_u64(&p, &line->total_us);
}

int vmc_psi_parse(const char *buf, struct vmc_psi *psi)
{
	memset(psi, 0, sizeof *psi);
	const char *some = vmc_find_key(buf, "some ");
	if (!some || parse_line(some, &psi->some) < 0)
		return -1;
	const char *full = vmc_find_key(buf, "full ");
	psi->has_full = full && parse_line(full, &psi->full) == 0;
	return 0;
}

int vmc_psi_read(const char *resource, struct vmc_psi *psi)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/pressure/%s", resource);
	if (vmc_fs_read_buf(path, buf, sizeof buf, NULL) < 0)
		return -1;
	if (vmc_psi_parse(buf, psi) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

bool vmc_psi_enabled(void)
{
	struct vmc_psi psi;
	return vmc_psi_read("cpu", &psi) == 0;
}
