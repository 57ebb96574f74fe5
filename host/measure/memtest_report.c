/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/memtest_report.h"

#include "jsonutil.h"
#include "units.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

static const json_t *at_path(const json_t *doc, const char *path)
{
	char key[64];
	const json_t *cur = doc;
	while (cur && *path) {
		size_t len = strcspn(path, ".");
		if (len >= sizeof key)
			return NULL;
		memcpy(key, path, len);
		key[len] = '\0';
		cur = json_object_get(cur, key);
		path += len;
		if (*path == '.')
			path++;
	}
	return cur;
}

bool memtest_num(const json_t *doc, const char *path, double *v)
{
	const json_t *j = at_path(doc, path);
	if (!json_is_number(j))
		return false;
	*v = json_number_value(j);
	return true;
}

const char *memtest_str(const json_t *doc, const char *path)
{
	return json_string_value(at_path(doc, path));
}

static char *bytes_at(const json_t *doc, const char *path, char *buf, size_t size)
{
	double v;
	if (!memtest_num(doc, path, &v) || v < 0)
		return strcpy(buf, "-");
	return vmc_format_bytes((uint64_t)v, buf, size);
}

static char *delta_at(const json_t *doc, const char *path, char *buf, size_t size)
{
	double v;
	if (!memtest_num(doc, path, &v))
		return strcpy(buf, "-");
	return vmc_format_bytes_delta((int64_t)v, buf, size);
}

/* "; the VM's footprint fell by 1.20 GiB under it" and, on krunkit, what that fall means. */
static void pressure_return_text(const json_t *doc, char *buf, size_t size)
{
	double fell;
	if (!memtest_num(doc, "result.footprint_fell_under_pressure", &fell))
		return;
	char b[32];
	size_t len = strlen(buf);
	snprintf(buf + len, size - len, "; the VM's footprint %s %s under it",
		 fell >= 0 ? "fell by" : "rose by",
		 vmc_format_bytes((uint64_t)(fell >= 0 ? fell : -fell), b, sizeof b));
	const char *vm_type = memtest_str(doc, "instance.vm_type");
	if (vm_type && strcmp(vm_type, "krunkit") == 0) {
		len = strlen(buf);
		snprintf(buf + len, size - len,
			 " (krunkit: what free-page reporting gave back, MADV_FREE'd pages the "
			 "footprint counts until pressure)");
	}
}

void memtest_pressure_text(const json_t *doc, char *buf, size_t size)
{
	const char *verdict = memtest_str(doc, "result.pressure");
	double pages = 0, discarded = 0, bytes = 0, hold = 0;
	memtest_num(doc, "result.canary_pages", &pages);
	memtest_num(doc, "result.canary_discarded", &discarded);
	memtest_num(doc, "settings.pressure", &bytes);
	memtest_num(doc, "settings.pressure_hold_s", &hold);
	char b[32];
	vmc_format_bytes((uint64_t)bytes, b, sizeof b);
	if (!verdict || strcmp(verdict, "skipped") == 0) {
		snprintf(buf, size, "skipped (--pressure none)");
	} else if (strcmp(verdict, "conclusive") == 0) {
		snprintf(buf, size,
			 "conclusive: %s held %.0f s, canary %.0f of %.0f pages discarded", b, hold,
			 discarded, pages);
		pressure_return_text(doc, buf, size);
	} else if (strcmp(verdict, "INCONCLUSIVE") == 0) {
		snprintf(buf, size,
			 "INCONCLUSIVE: %s held %.0f s never made the host discard the MADV_FREE "
			 "canary (0 of %.0f pages), so it says nothing about what pressure takes "
			 "back; raise --pressure",
			 b, hold, pages);
	} else {
		snprintf(buf, size, "%s", verdict);
	}
}

static void compressor_text(const json_t *doc, char *buf, size_t size)
{
	double before, after;
	if (!memtest_num(doc, "result.compressor_before", &before) ||
	    !memtest_num(doc, "result.compressor_after", &after)) {
		snprintf(buf, size, "n/a (no memory compressor on this host)");
		return;
	}
	char a[32], b[32];
	snprintf(buf, size, "%s -> %s", vmc_format_bytes((uint64_t)before, a, sizeof a),
		 vmc_format_bytes((uint64_t)after, b, sizeof b));
}

static void pgbench_text(const json_t *doc, char *buf, size_t size)
{
	const json_t *runs = at_path(doc, "result.pgbench");
	if (!json_is_array(runs) || json_array_size(runs) == 0) {
		snprintf(buf, size, "-");
		return;
	}
	size_t o = 0;
	buf[0] = '\0';
	size_t i;
	const json_t *run;
	json_array_foreach(runs, i, run)
	{
		double tps = 0, clients = 0, lat = -1;
		memtest_num(run, "tps", &tps);
		memtest_num(run, "clients", &clients);
		memtest_num(run, "latency_ms", &lat);
		int n = snprintf(buf + o, size - o, "%s%.0f tps (%.0f client%s", i ? "; " : "", tps,
				 clients, clients == 1 ? "" : "s");
		if (n > 0 && (size_t)n < size - o)
			o += (size_t)n;
		n = lat >= 0 ? snprintf(buf + o, size - o, ", %.2f ms)", lat)
			     : snprintf(buf + o, size - o, ")");
		if (n > 0 && (size_t)n < size - o)
			o += (size_t)n;
	}
}

struct row {
	const char *label;
	char value[320];
};

static size_t summary_rows(const json_t *doc, struct row rows[6])
{
	char a[32], b[32];
	delta_at(doc, "result.ram_freed_by_stop", a, sizeof a);
	delta_at(doc, "result.available_gained_by_stop", b, sizeof b);
	rows[0].label = "RAM freed on the host by stopping the VM (its real cost)";
	snprintf(rows[0].value, sizeof rows[0].value, "%s free (%s available)", a, b);
	const json_t *noise = at_path(doc, "result.noise");
	if (json_is_true(json_object_get(noise, "noisy"))) {
		size_t len = strlen(rows[0].value);
		snprintf(rows[0].value + len, sizeof rows[0].value - len, "; NOISY: %s",
			 memtest_str(noise, "reason") ? memtest_str(noise, "reason") : "?");
	}
	bytes_at(doc, "result.footprint_before_stop", a, sizeof a);
	bytes_at(doc, "result.peak_footprint", b, sizeof b);
	rows[1].label = "VM footprint before stop";
	snprintf(rows[1].value, sizeof rows[1].value, "%s (peak %s)", a, b);
	rows[2].label = "guest memory freed by trim";
	bytes_at(doc, "result.guest_freed_by_trim", a, sizeof a);
	const char *how = memtest_str(doc, "result.trim_method");
	snprintf(rows[2].value, sizeof rows[2].value, "%s%s%s%s", a, how ? " (" : "",
		 how ? how : "", how ? ")" : "");
	rows[3].label = "compressor before -> after pressure";
	compressor_text(doc, rows[3].value, sizeof rows[3].value);
	rows[4].label = "pgbench";
	pgbench_text(doc, rows[4].value, sizeof rows[4].value);
	rows[5].label = "host pressure (positive control)";
	memtest_pressure_text(doc, rows[5].value, sizeof rows[5].value);
	return 6;
}

/* One phase row: when, VM footprint, host free/available, guest used, and a note. */
struct phase_row {
	char name[32], at[24], vm[24], free[24], avail[24], guest[24], note[256];
};

static void reading_cells(const json_t *reading, struct phase_row *r)
{
	double t;
	if (memtest_num(reading, "t", &t))
		snprintf(r->at, sizeof r->at, "%.1f s", t);
	else
		strcpy(r->at, "-");
	if (json_is_null(json_object_get(reading, "vm")))
		strcpy(r->vm, "(gone)");
	else
		bytes_at(reading, "vm.footprint", r->vm, sizeof r->vm);
	bytes_at(reading, "host.free", r->free, sizeof r->free);
	bytes_at(reading, "host.available", r->avail, sizeof r->avail);
	double total, free;
	if (memtest_num(reading, "guest.total", &total) &&
	    memtest_num(reading, "guest.free", &free))
		vmc_format_bytes((uint64_t)(total - free), r->guest, sizeof r->guest);
	else
		strcpy(r->guest, "-");
}

static size_t phase_rows(const json_t *doc, struct phase_row *rows, size_t max)
{
	const json_t *phases = json_object_get(doc, "phases");
	size_t n = 0, i;
	const json_t *p;
	json_array_foreach(phases, i, p)
	{
		const char *name = memtest_str(p, "name");
		const char *note = memtest_str(p, "note");
		const json_t *readings[2] = {json_object_get(p, "reading"), NULL};
		const char *names[2] = {name, NULL};
		if (name && strcmp(name, "stop") == 0) {
			readings[0] = json_object_get(p, "before");
			readings[1] = json_object_get(p, "after");
			names[0] = "before stop";
			names[1] = "after stop";
		}
		for (int k = 0; k < 2 && n < max; k++) {
			if (!names[k])
				continue;
			struct phase_row *r = &rows[n++];
			memset(r, 0, sizeof *r);
			snprintf(r->name, sizeof r->name, "%s", names[k]);
			if (json_is_object(readings[k])) {
				reading_cells(readings[k], r);
			} else {
				strcpy(r->at, "-");
				strcpy(r->vm, "-");
				strcpy(r->free, "-");
				strcpy(r->avail, "-");
				strcpy(r->guest, "-");
			}
			bool last = k == 1 || !names[1];
			snprintf(r->note, sizeof r->note, "%s", last && note ? note : "");
		}
	}
	return n;
}

static void heading(FILE *f, bool color, const char *text)
{
	fprintf(f, "%s%s%s\n", color ? "\033[1m" : "", text, color ? "\033[0m" : "");
}

void memtest_report_human(FILE *f, const json_t *doc, bool color)
{
	char line[512], mem[32];
	const char *name = memtest_str(doc, "instance.name");
	snprintf(line, sizeof line, "vmcost memtest %s: the real RAM cost of the VM",
		 name ? name : "?");
	heading(f, color, line);
	double memory = 0, cpus = 0;
	memtest_num(doc, "instance.memory", &memory);
	memtest_num(doc, "instance.cpus", &cpus);
	const char *vm_type = memtest_str(doc, "instance.vm_type");
	const char *wl = memtest_str(doc, "settings.workload_text");
	fprintf(f, "  %s, %.0f CPUs, %s; workload %s\n", vm_type ? vm_type : "?", cpus,
		vmc_format_bytes((uint64_t)memory, mem, sizeof mem), wl ? wl : "?");
	const char *lv = memtest_str(doc, "lima.limactl_version");
	const char *cmdline = memtest_str(doc, "guest.kernel_cmdline");
	fprintf(f, "  %s; guest cmdline: %s\n\n", lv ? lv : "limactl version unknown",
		cmdline ? cmdline : "unknown");

	struct phase_row rows[16];
	size_t n = phase_rows(doc, rows, 16);
	snprintf(line, sizeof line, "%-12s %9s %12s %11s %14s %11s  %s", "phase", "at",
		 "VM footprint", "host free", "host available", "guest used", "note");
	heading(f, color, line);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%-12s %9s %12s %11s %14s %11s  %s\n", rows[i].name, rows[i].at,
			rows[i].vm, rows[i].free, rows[i].avail, rows[i].guest, rows[i].note);
	fputc('\n', f);

	struct row sum[6];
	size_t ns = summary_rows(doc, sum);
	for (size_t i = 0; i < ns; i++)
		fprintf(f, "%-57s %s\n", sum[i].label, sum[i].value);
	const char *md = memtest_str(doc, "files.markdown");
	if (md)
		fprintf(f, "\nresults: %s (+ .json, .svg)\n", md);
}

static const char *basename_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path;
}

int memtest_report_markdown(FILE *f, const json_t *doc)
{
	const char *name = memtest_str(doc, "instance.name");
	const char *when = memtest_str(doc, "started_at");
	fprintf(f, "# vmcost memtest: %s, %s\n\n", name ? name : "?", when ? when : "?");
	const char *machine = memtest_str(doc, "machine_line");
	fprintf(f, "- Machine: %s\n", machine ? machine : "unknown");
	const char *lv = memtest_str(doc, "lima.limactl_version");
	double memory = 0, cpus = 0;
	memtest_num(doc, "instance.memory", &memory);
	memtest_num(doc, "instance.cpus", &cpus);
	char mem[32];
	const char *vm_type = memtest_str(doc, "instance.vm_type");
	const char *arch = memtest_str(doc, "instance.arch");
	fprintf(f, "- Lima: %s; vmType %s, %s, %.0f CPUs, %s\n", lv ? lv : "unknown",
		vm_type ? vm_type : "?", arch ? arch : "?", cpus,
		vmc_format_bytes((uint64_t)memory, mem, sizeof mem));
	const char *cmdline = memtest_str(doc, "guest.kernel_cmdline");
	const char *kernel = memtest_str(doc, "guest.kernel");
	fprintf(f, "- Guest kernel: %s, cmdline `%s`\n", kernel && *kernel ? kernel : "unknown",
		cmdline ? cmdline : "unknown");
	const char *wl = memtest_str(doc, "settings.workload_text");
	fprintf(f, "- Workload: %s\n", wl ? wl : "?");
	const char *pid_method = memtest_str(doc, "vm_process.method");
	double pid = 0;
	memtest_num(doc, "vm_process.pid", &pid);
	fprintf(f, "- VM process: pid %.0f (%s)\n", pid, pid_method ? pid_method : "?");
	const char *version = memtest_str(doc, "version");
	fprintf(f, "- vmcost %s; single run\n\n", version ? version : "?");

	fprintf(f, "| | %s |\n|---|---|\n", name ? name : "?");
	struct row sum[6];
	size_t ns = summary_rows(doc, sum);
	for (size_t i = 0; i < ns; i++)
		fprintf(f, "| %s | %s |\n", sum[i].label, sum[i].value);

	fprintf(f, "\n## Phases\n\n| phase | at | VM footprint | host free | host available | "
		   "guest used | note |\n|---|---|---|---|---|---|---|\n");
	struct phase_row rows[16];
	size_t n = phase_rows(doc, rows, 16);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "| %s | %s | %s | %s | %s | %s | %s |\n", rows[i].name, rows[i].at,
			rows[i].vm, rows[i].free, rows[i].avail, rows[i].guest, rows[i].note);
	const char *svg = memtest_str(doc, "files.svg");
	const char *json = memtest_str(doc, "files.json");
	if (svg)
		fprintf(f, "\n![memtest timeline of %s](%s)\n", name ? name : "?",
			basename_of(svg));
	if (json)
		fprintf(f, "\nEvery reading, and the timeline sampled every second: `%s`.\n",
			basename_of(json));
	return ferror(f) ? -1 : 0;
}
