/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's /proc and /sys buffer parsers on arbitrary bytes: /proc/stat, loadavg, pressure,
 * interrupts/softirqs, vmstat, mounts (octal escapes), kernel release and command line (quotes),
 * kmsg record headers and virtio feature strings. Each must stay inside its buffers, and what it
 * accepts must be consistent.
 */
#include "interrupts.h"
#include "kernel.h"
#include "kmsg.h"
#include "loadavg.h"
#include "mounts.h"
#include "procstat.h"
#include "psi.h"
#include "virtio.h"
#include "vmstat.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void tables(const char *buf)
{
	struct vmc_irq_table t;
	if (vmc_irq_table_parse(buf, &t) < 0)
		return;
	if (t.ncpu == 0)
		abort();
	for (size_t i = 0; i < t.n; i++)
		if (strlen(t.rows[i].name) >= sizeof t.rows[i].name ||
		    strlen(t.rows[i].desc) >= sizeof t.rows[i].desc)
			abort();
	vmc_irq_timer_row(&t);
	vmc_irq_table_free(&t);
}

static void words(const char *buf)
{
	char value[64], out[VMC_VIRTIO_FEATURES_MAX + 1];
	struct vmc_kernel_version v;
	if (vmc_kernel_version_parse(buf, &v) == 0 && strlen(v.release) >= sizeof v.release)
		abort();
	if (vmc_cmdline_param(buf, "init_on_free", value, sizeof value) == 1 &&
	    strlen(value) >= sizeof value)
		abort();
	bool b;
	vmc_kstrtobool(buf, true, &b);
	int n = vmc_virtio_features_parse(buf, out, sizeof out);
	if (n > 0 && (strlen(out) != (size_t)n || strspn(out, "01") != (size_t)n))
		abort();
	unsigned id;
	vmc_virtio_parse_id(buf, &id);
	vmc_virtio_transport_of(buf);
	const char *text = vmc_kmsg_text(buf);
	if (text && (text <= buf || text > buf + strlen(buf)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';

	struct vmc_procstat ps;
	if (vmc_procstat_parse(buf, &ps) == 0 && vmc_cpu_busy(&ps.cpu) > vmc_cpu_total(&ps.cpu) &&
	    ps.cpu.idle + ps.cpu.iowait == 0)
		abort();
	struct vmc_loadavg la;
	if (vmc_loadavg_parse(buf, &la) == 0 && (la.load1 < 0 || la.load5 < 0 || la.load15 < 0))
		abort();
	struct vmc_psi psi;
	if (vmc_psi_parse(buf, &psi) == 0 && (psi.some.avg10 < 0 || psi.some.avg300 < 0))
		abort();
	struct vmc_vmstat vs;
	vmc_vmstat_parse(buf, &vs);
	struct vmc_mount m;
	if (vmc_mount_for(buf, "/var/log", &m) == 0 &&
	    (strlen(m.target) >= sizeof m.target || strlen(m.options) >= sizeof m.options))
		abort();
	char value[32];
	vmc_mount_option(buf, "commit", value, sizeof value);
	tables(buf);
	words(buf);
	free(buf);
	return 0;
}
