/* SPDX-License-Identifier: Apache-2.0 */
#include "loadavg.h"

#include "procfs.h"

#include <errno.h>
#include <string.h>

/* "12.34": the kernel prints LOAD_INT.LOAD_FRAC with two decimals; no sign, no exponent. */
static int parse_load(const char **p, double *out)
{
	uint64_t whole, frac = 0;
	double scale = 1;
	while (**p == ' ')
		(*p)++;
	if (vmc_parse_u64(p, &whole) < 0)
		return -1;
	if (**p == '.') {
		(*p)++;
		const char *start = *p;
		if (vmc_parse_u64(p, &frac) < 0 || *p - start > 9)
			return -1;
		for (const char *c = start; c < *p; c++)
			scale *= 10;
	}
	*out = (double)whole + (double)frac / scale;
	return 0;
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
