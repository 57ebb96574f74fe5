/* SPDX-License-Identifier: Apache-2.0 */
#include "checks.h"

#include "agent.h"
#include "color.h"
#include "jsonutil.h"
#include "kmsg.h"
#include "procfs.h"
#include "proclist.h"
#include "procpid.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *check_status_name(enum check_status s)
{
	static const char *const names[] = {"ok", "warn", "fail", "n/a"};
	return names[s];
}

const char *vmm_name(enum vmm_kind v)
{
	static const char *const names[] = {"unknown", "qemu", "vz", "libkrun-or-firecracker"};
	return names[v];
}

#define DEFINE_SETTER(name, field)                                                                 \
	void name(struct check *c, const char *fmt, ...)                                           \
	{                                                                                          \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		vsnprintf(c->field, sizeof c->field, fmt, ap);                                     \
		va_end(ap);                                                                        \
	}
DEFINE_SETTER(check_observed, observed)
DEFINE_SETTER(check_why, why)
DEFINE_SETTER(check_fix, fix)

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
	struct init_on_free *iof = ctx;
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
	struct init_on_free *iof = &d->iof;
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
		d->vmm = VMM_QEMU;
		snprintf(d->vmm_evidence, sizeof d->vmm_evidence, "DMI vendor \"%s\"", vendor);
	} else if (strstr(vendor, "Apple") || strstr(product, "Apple Virtualization")) {
		d->vmm = VMM_VZ;
		snprintf(d->vmm_evidence, sizeof d->vmm_evidence, "DMI \"%s %s\"", vendor, product);
	} else if (d->balloon.present && strcmp(d->balloon.dev.transport, "mmio") == 0) {
		/* libkrun and Firecracker attach their balloon over virtio-mmio. */
		d->vmm = VMM_KRUN_OR_FIRECRACKER;
		snprintf(d->vmm_evidence, sizeof d->vmm_evidence, "balloon on virtio-mmio");
	} else {
		d->vmm = VMM_UNKNOWN;
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

size_t doctor_run(const struct doctor *d, struct check *out)
{
	size_t n = checks_memory(d, out);
	n += checks_system(d, out + n);
	return n;
}

/* ---- output --------------------------------------------------------------------------------- */

json_t *checks_to_json(const struct doctor *d, const struct check *c, size_t n)
{
	json_t *doc = json_object();
	json_t *vmm = json_object();
	json_object_set_new(vmm, "guess", json_string(vmm_name(d->vmm)));
	json_object_set_new(vmm, "evidence", json_string(d->vmm_evidence));
	json_object_set_new(doc, "vmm", vmm);
	int counts[4] = {0};
	json_t *list = json_array();
	for (size_t i = 0; i < n; i++) {
		counts[c[i].status]++;
		json_t *j = json_object();
		json_object_set_new(j, "id", json_string(c[i].id));
		json_object_set_new(j, "title", json_string(c[i].title));
		json_object_set_new(j, "status", json_string(check_status_name(c[i].status)));
		json_object_set_new(j, "observed", json_string(c[i].observed));
		json_object_set_new(j, "why", json_string(c[i].why));
		json_object_set_new(j, "fix", c[i].fix[0] ? json_string(c[i].fix) : json_null());
		json_array_append_new(list, j);
	}
	json_t *summary = json_object();
	for (int s = 0; s < 4; s++)
		json_object_set_new(summary, check_status_name((enum check_status)s),
				    json_integer(counts[s]));
	json_object_set_new(doc, "summary", summary);
	json_object_set_new(doc, "checks", list);
	return doc;
}

json_t *agent_checks(char *err, size_t errsize)
{
	(void)err;
	(void)errsize;
	struct doctor d;
	doctor_gather(&d);
	struct check *c = calloc(CHECKS_MAX, sizeof *c);
	if (!c) {
		doctor_free(&d);
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	size_t n = doctor_run(&d, c);
	json_t *doc = checks_to_json(&d, c, n);
	free(c);
	doctor_free(&d);
	return doc;
}

void checks_print(FILE *f, const json_t *doc, bool color)
{
	const json_t *list = json_object_get(doc, "checks");
	size_t i;
	const json_t *c;
	fprintf(f, "%-6s %-26s %s\n", "STATUS", "CHECK", "OBSERVED");
	json_array_foreach(list, i, c)
	{
		const char *status = vmc_json_get_str_or(c, "status", "?");
		fprintf(f, "%s%-6s%s %-26s %s\n", vmc_status_color(status, color), status,
			vmc_color_reset(color), vmc_json_get_str_or(c, "id", "?"),
			vmc_json_get_str_or(c, "observed", ""));
	}
	bool header = false;
	json_array_foreach(list, i, c)
	{
		const char *status = vmc_json_get_str_or(c, "status", "?");
		if (strcmp(status, "warn") != 0 && strcmp(status, "fail") != 0)
			continue;
		if (!header) {
			fputc('\n', f);
			header = true;
		}
		fprintf(f, "%s%s%s %s: %s\n", vmc_status_color(status, color), status,
			vmc_color_reset(color), vmc_json_get_str_or(c, "id", "?"),
			vmc_json_get_str_or(c, "why", ""));
		const char *fix = vmc_json_get_str(c, "fix");
		if (fix)
			fprintf(f, "     fix: %s\n", fix);
	}
	const json_t *s = json_object_get(doc, "summary");
	const json_t *vmm = json_object_get(doc, "vmm");
	fprintf(f, "\n%lld ok, %lld warn, %lld fail, %lld n/a (VMM: %s, %s)\n",
		(long long)json_integer_value(json_object_get(s, "ok")),
		(long long)json_integer_value(json_object_get(s, "warn")),
		(long long)json_integer_value(json_object_get(s, "fail")),
		(long long)json_integer_value(json_object_get(s, "n/a")),
		vmc_json_get_str_or(vmm, "guess", "unknown"),
		vmc_json_get_str_or(vmm, "evidence", "no evidence"));
}
