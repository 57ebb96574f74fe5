/* SPDX-License-Identifier: Apache-2.0 */
#include "loadavg.h"

#include "procfs.h"
#include "units.h"

#include <errno.h>
#include <string.h>

/* "12.34": the kernel prints LOAD_INT.LOAD_FRAC with two decimals. */
static int parse_load(const char **p, double *out)
{
	while (**p == ' ')
		(*p)++;
	return vmc_parse_decimal(p, out);
}

int vmc_loadavg_parse(const char *buf, struct vmc_loadavg *la)
{
	memset(la, 0, sizeof *la);
	const char *p = buf;
	if (parse_load(&p, &la->load1) < 0 || parse_load(&p, &la->load5) < 0 ||
	    parse_load(&p, &la->load15) < 0)
		return -1;
	while (*p == ' ')
		p++;
	if (vmc_parse_u64(&p, &la->running) < 0 || *p++ != '/' || vmc_parse_u64(&p, &la->total) < 0)
		return -1;
	return 0;
}

int vmc_loadavg_read(struct vmc_loadavg *la)
{
	char buf[256];
	if (vmc_fs_read_buf("/proc/loadavg", buf, sizeof buf, NULL) < 0)
		return -1;
	if (vmc_loadavg_parse(buf, la) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}
