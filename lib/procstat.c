/* SPDX-License-Identifier: Apache-2.0 */
#include "procstat.h"

#include "procfs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Parses up to max blank-separated decimals; returns how many were read. */
static size_t parse_fields(const char *p, uint64_t *out, size_t max)
{
	size_t n = 0;
	while (n < max) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (vmc_parse_u64(&p, &out[n]) < 0)
			break;
		n++;
	}
	return n;
}

int vmc_procstat_parse(const char *buf, struct vmc_procstat *ps)
{
	memset(ps, 0, sizeof *ps);
	const char *cpu = vmc_find_key(buf, "cpu ");
	uint64_t f[8] = {0};
	/* Kernels before 2.6.11 had fewer columns; four is the minimum that means anything. */
	if (!cpu || parse_fields(cpu, f, 8) < 4)
		return -1;
	ps->cpu = (struct vmc_cpu_times){.user = f[0],
					 .nice = f[1],
					 .system = f[2],
					 .idle = f[3],
					 .iowait = f[4],
					 .irq = f[5],
					 .softirq = f[6],
					 .steal = f[7]};
	if (vmc_key_u64(buf, "ctxt ", &ps->ctxt) < 0)
		return -1;
	ps->has_intr = vmc_key_u64(buf, "intr ", &ps->intr_total) == 0;
	ps->has_softirq = vmc_key_u64(buf, "softirq ", &ps->softirq_total) == 0;
	vmc_key_u64(buf, "procs_running ", &ps->procs_running);
	vmc_key_u64(buf, "procs_blocked ", &ps->procs_blocked);
	return 0;
}

int vmc_procstat_read(struct vmc_procstat *ps)
{
	char *buf;
	/* The intr line has one column per IRQ number: tens of KiB on big machines. */
	if (vmc_fs_read("/proc/stat", &buf, NULL, 4u << 20) < 0)
		return -1;
	int rc = vmc_procstat_parse(buf, ps);
	free(buf);
	if (rc < 0)
		errno = EINVAL;
	return rc;
}

uint64_t vmc_cpu_busy(const struct vmc_cpu_times *t)
{
	return t->user + t->nice + t->system + t->irq + t->softirq + t->steal;
}

uint64_t vmc_cpu_total(const struct vmc_cpu_times *t)
{
	return vmc_cpu_busy(t) + t->idle + t->iowait;
}

double vmc_cpu_busy_percent(const struct vmc_cpu_times *a, const struct vmc_cpu_times *b)
{
	uint64_t busy_a = vmc_cpu_busy(a), busy_b = vmc_cpu_busy(b);
	uint64_t total_a = vmc_cpu_total(a), total_b = vmc_cpu_total(b);
	if (total_b <= total_a || busy_b < busy_a)
		return -1;
	return 100.0 * (double)(busy_b - busy_a) / (double)(total_b - total_a);
}
