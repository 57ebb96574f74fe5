/* SPDX-License-Identifier: Apache-2.0 */
#include "doctor.h"

#include "kmsg.h"
#include "procfs.h"
#include "proclist.h"
#include "procpid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *doctor_vmm_name(enum doctor_vmm v)
{
	static const char *const names[] = {"unknown", "qemu", "vz", "libkrun-or-firecracker"};
	return names[v];
}

/* The basename of the n-th blank-separated word of cmdline equals name. */
static bool argv_is(const char *cmdline, int n, const char *name)
{
	const char *w = cmdline;
	for (int i = 0; i < n && w; i++) {
		w = strchr(w, ' ');
		if (w)
			w++;
	}
	if (!w || !*w)
		return false;
	size_t len = strcspn(w, " ");
	const char *base = w;
	for (const char *p = w; p < w + len; p++)
		if (*p == '/')
			base = p + 1;
	return (size_t)(w + len - base) == strlen(name) && strncmp(base, name, strlen(name)) == 0;
}

const struct doctor_proc *doctor_find_proc(const struct doctor *d, const char *name)
{
	static const char *const interpreters[] = {"sh", "ash", "bash", "busybox", "python3"};
	for (size_t i = 0; i < d->nprocs; i++) {
		const struct doctor_proc *p = &d->procs[i];
		/* comm holds at most 15 characters of the name */
		if (strncmp(p->comm, name, 15) == 0 &&
		    strlen(p->comm) == (strlen(name) < 15 ? strlen(name) : 15))
			return p;
		if (argv_is(p->cmdline, 0, name))
			return p;
		for (size_t j = 0; j < sizeof interpreters / sizeof interpreters[0]; j++)
			if (argv_is(p->cmdline, 0, interpreters[j]) && argv_is(p->cmdline, 1, name))
				return p;
	}
	return NULL;
}

/* ---- gathering ----------------------------------------------------------------------------- */

static int bool_param(const struct doctor *d, const char *name)
{
	char value[64];
	if (!d->has_cmdline || vmc_cmdline_param(d->cmdline, name, value, sizeof value) != 1)
		return -1;
	/* Several occurrences apply in order; vmc_cmdline_param returned the last one. An invalid
	 * last value is ignored by the kernel, which this approximates as "unknown". */
	bool newer = d->has_kernel && vmc_kernel_at_least(&d->kernel, 6, 2);
	bool v;
	if (vmc_kstrtobool(value, newer, &v) < 0)
		return -1;
	return v ? 1 : 0;
}

static int config_option(const struct doctor *d, const char *option)
{
	char path[256];
	char *buf;
	if (!d->has_kernel)
		return -1;
	snprintf(path, sizeof path, "/boot/config-%s", d->kernel.release);
	if (vmc_fs_read(path, &buf, NULL, 4u << 20) < 0)
		return -1;
	char key[96], unset[128];
	snprintf(key, sizeof key, "%s=", option);
	snprintf(unset, sizeof unset, "# %s is not set", option);
	const char *v = vmc_find_key(buf, key);
	int result = v ? (*v == 'y') : (vmc_find_key(buf, unset) ? 0 : -1);
	free(buf);
	return result;
}

static int scan_kmsg(const char *text, void *ctx)
{
	struct doctor_init_on_free *iof = ctx;
	if (strncmp(text, "mem auto-init:", 14) == 0) {
		if (strstr(text, "heap free:on"))
			iof->bootlog = 1;
		else if (strstr(text, "heap free:off"))
			iof->bootlog = 0;
		if (strstr(text, "CONFIG_PAGE_POISONING is on"))
			iof->poisoning = true;
	}
	if (strstr(text, "Free page reporting enabled"))
		iof->reporting_log = true;
	return 0;
}

static void gather_init_on_free(struct doctor *d)
{
	struct doctor_init_on_free *iof = &d->iof;
	iof->cmdline = bool_param(d, "init_on_free");
	iof->config = config_option(d, "CONFIG_INIT_ON_FREE_DEFAULT_ON");
	iof->bootlog = -1;
	iof->kmsg_read = vmc_kmsg_scan(scan_kmsg, iof) == 0;
	/* The boot log says what the kernel did; else reconstruct as early_init_on_free does. */
	if (iof->bootlog >= 0) {
		iof->effective = iof->bootlog;
		snprintf(iof->source, sizeof iof->source, "boot log");
	} else if (iof->cmdline >= 0) {
		iof->effective = iof->cmdline;
		snprintf(iof->source, sizeof iof->source, "kernel command line");
	} else if (iof->config >= 0) {
		iof->effective = iof->config;
		snprintf(iof->source, sizeof iof->source, "kernel config default");
	} else {
		iof->effective = -1;
		snprintf(iof->source, sizeof iof->source, "no source");
	}
	if (iof->poisoning)
		iof->effective = 0;
}

static void gather_vmm(struct doctor *d)
{
	char vendor[64] = "", product[64] = "";
	vmc_fs_read_line("/sys/class/dmi/id/sys_vendor", vendor, sizeof vendor);
	vmc_fs_read_line("/sys/class/dmi/id/product_name", product, sizeof product);
	if (strstr(vendor, "QEMU") || strstr(product, "QEMU")) {
		d->vmm = DOCTOR_VMM_QEMU;
		snprintf(d->vmm_evidence, sizeof d->vmm_evidence, "DMI vendor \"%s\"", vendor);
	} else if (strstr(vendor, "Apple") || strstr(product, "Apple Virtualization")) {
		d->vmm = DOCTOR_VMM_VZ;
		snprintf(d->vmm_evidence, sizeof d->vmm_evidence, "DMI \"%s %s\"", vendor, product);
	} else if (d->balloon.present && strcmp(d->balloon.dev.transport, "mmio") == 0) {
		/* libkrun and Firecracker attach their balloon over virtio-mmio. */
		d->vmm = DOCTOR_VMM_KRUN_OR_FIRECRACKER;
		snprintf(d->vmm_evidence, sizeof d->vmm_evidence, "balloon on virtio-mmio");
	} else {
		d->vmm = DOCTOR_VMM_UNKNOWN;
		snprintf(d->vmm_evidence, sizeof d->vmm_evidence, "no DMI vendor recognised");
	}
}

static void gather_procs(struct doctor *d)
{
	pid_t *pids;
	size_t n;
	if (vmc_proc_list(&pids, &n) < 0)
		return;
	d->procs = calloc(n ? n : 1, sizeof *d->procs);
	if (!d->procs) {
		free(pids);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct doctor_proc *p = &d->procs[d->nprocs];
		struct vmc_proc_status ps;
		if (vmc_proc_status_read(pids[i], &ps) < 0)
			continue;
		p->pid = pids[i];
		snprintf(p->comm, sizeof p->comm, "%s", ps.name);
		if (vmc_proc_cmdline_read(pids[i], p->cmdline, sizeof p->cmdline) < 0)
			p->cmdline[0] = '\0';
		d->nprocs++;
	}
	free(pids);
}

void doctor_gather(struct doctor *d)
{
	memset(d, 0, sizeof *d);
	d->has_kernel = vmc_kernel_version_read(&d->kernel) == 0;
	d->has_cmdline = vmc_cmdline_read(d->cmdline, sizeof d->cmdline) == 0;
	balloon_read(&d->balloon);
	gather_init_on_free(d);
	gather_vmm(d);
	gather_procs(d);
	if (vmc_fs_read("/proc/mounts", &d->mounts, NULL, 4u << 20) < 0)
		d->mounts = NULL;
}

void doctor_free(struct doctor *d)
{
	free(d->procs);
	free(d->mounts);
	memset(d, 0, sizeof *d);
}
