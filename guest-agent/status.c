/* SPDX-License-Identifier: Apache-2.0 */
#include "status.h"

#include "agent.h"
#include "balloon.h"
#include "diskstats.h"
#include "jsonutil.h"
#include "kernel.h"
#include "loadavg.h"
#include "meminfo.h"
#include "message.h"
#include "psi.h"
#include "state.h"
#include "units.h"

#include <errno.h>
#include <string.h>
#include <time.h>

static json_t *memory_json(const struct vmc_meminfo *mi, const struct balloon_info *b)
{
	json_t *m = json_object();
	json_object_set_new(m, "total", vmc_json_u64(mi->total));
	json_object_set_new(m, "free", vmc_json_u64(mi->free));
	json_object_set_new(m, "available", vmc_json_u64(mi->available));
	json_object_set_new(m, "file_cache", vmc_json_u64(vmc_meminfo_file_cache(mi)));
	json_object_set_new(m, "cached", vmc_json_u64(mi->cached));
	json_object_set_new(m, "buffers", vmc_json_u64(mi->buffers));
	json_object_set_new(m, "shmem", vmc_json_u64(mi->shmem));
	json_object_set_new(m, "sreclaimable", vmc_json_u64(mi->sreclaimable));
	json_object_set_new(m, "anon", vmc_json_u64(mi->anon));
	json_object_set_new(m, "swap_total", vmc_json_u64(mi->swap_total));
	json_object_set_new(m, "swap_free", vmc_json_u64(mi->swap_free));
	/* 6.18 has a Balloon: line; 6.1 only the vmstat counters */
	if (mi->has_balloon)
		json_object_set_new(m, "balloon", vmc_json_u64(mi->balloon));
	else if (b->has_vmstat)
		json_object_set_new(m, "balloon", vmc_json_u64(b->balloon_bytes));
	else
		json_object_set_new(m, "balloon", json_null());
	return m;
}

static json_t *psi_line_json(const struct vmc_psi_line *l)
{
	json_t *j = json_object();
	json_object_set_new(j, "avg10", json_real(l->avg10));
	json_object_set_new(j, "avg60", json_real(l->avg60));
	json_object_set_new(j, "avg300", json_real(l->avg300));
	json_object_set_new(j, "total_us", vmc_json_u64(l->total_us));
	return j;
}

static json_t *psi_json(void)
{
	static const char *const resources[] = {"cpu", "io", "memory"};
	if (!vmc_psi_enabled())
		return json_null();
	json_t *p = json_object();
	for (size_t i = 0; i < 3; i++) {
		struct vmc_psi psi;
		if (vmc_psi_read(resources[i], &psi) < 0) {
			json_object_set_new(p, resources[i], json_null());
			continue;
		}
		json_t *r = json_object();
		json_object_set_new(r, "some", psi_line_json(&psi.some));
		json_object_set_new(r, "full",
				    psi.has_full ? psi_line_json(&psi.full) : json_null());
		json_object_set_new(p, resources[i], r);
	}
	return p;
}

static json_t *reporting_json(const struct balloon_info *b)
{
	json_t *r = json_object();
	char meaning[160];
	balloon_order_meaning(b, meaning, sizeof meaning);
	json_object_set_new(r, "active", json_boolean(balloon_reporting_active(b)));
	json_object_set_new(r, "balloon_present", json_boolean(b->present));
	json_object_set_new(r, "driver_bound", json_boolean(b->driver_bound));
	json_object_set_new(r, "page_poison", json_boolean(b->page_poison));
	json_object_set_new(r, "order", b->has_order ? json_integer(b->order) : json_null());
	json_object_set_new(r, "block_bytes",
			    b->order_valid ? vmc_json_u64(b->report_block_bytes) : json_null());
	json_object_set_new(r, "order_meaning", json_string(meaning));
	return r;
}

/* Bytes written per whole disk since boot: the guest side of "vmcost disk" (an idle guest
 * should write 0), read here so the host need not log in to the guest to count them. */
static json_t *disks_json(void)
{
	struct vmc_diskstats ds;
	if (vmc_diskstats_read(&ds) < 0)
		return json_null();
	json_t *arr = json_array();
	for (size_t i = 0; i < ds.n; i++) {
		json_t *d = json_object();
		json_object_set_new(d, "name", json_string(ds.disk[i].name));
		json_object_set_new(d, "written_bytes", vmc_json_u64(ds.disk[i].written_bytes));
		json_object_set_new(d, "writes", vmc_json_u64(ds.disk[i].writes));
		json_object_set_new(d, "read_bytes", vmc_json_u64(ds.disk[i].read_bytes));
		json_array_append_new(arr, d);
	}
	return arr;
}

json_t *agent_status(struct agent_state *st, char *err, size_t errsize)
{
	struct vmc_meminfo mi;
	if (vmc_meminfo_read(&mi) < 0) {
		vmc_errorf(err, errsize, "cannot read /proc/meminfo:");
		return NULL;
	}
	struct balloon_info b;
	balloon_read(&b);
	json_t *doc = json_object();
	struct vmc_kernel_version kv;
	json_object_set_new(doc, "kernel",
			    vmc_kernel_version_read(&kv) == 0 ? json_string(kv.release)
							      : json_null());
	json_object_set_new(doc, "memory", memory_json(&mi, &b));
	struct vmc_loadavg la;
	if (vmc_loadavg_read(&la) == 0) {
		json_t *l = json_object();
		json_object_set_new(l, "load1", json_real(la.load1));
		json_object_set_new(l, "load5", json_real(la.load5));
		json_object_set_new(l, "load15", json_real(la.load15));
		json_object_set_new(doc, "load", l);
	} else {
		json_object_set_new(doc, "load", json_null());
	}
	json_object_set_new(doc, "psi", psi_json());
	json_object_set_new(doc, "page_reporting", reporting_json(&b));
	struct agent_state_snapshot snap;
	agent_state_snapshot(st, &snap);
	json_object_set_new(doc, "trim", agent_state_history_json(&snap));
	json_object_set_new(doc, "disks", disks_json());
	return doc;
}

/* ---- human output ------------------------------------------------------------------------ */

static uint64_t u64(const json_t *obj, const char *key)
{
	uint64_t v = 0;
	vmc_json_get_u64(obj, key, &v);
	return v;
}

static const char *bytes(const json_t *obj, const char *key, char *buf, size_t size)
{
	return vmc_format_bytes(u64(obj, key), buf, size);
}

static double avg60(const json_t *psi, const char *resource)
{
	return json_number_value(
	    json_object_get(json_object_get(json_object_get(psi, resource), "some"), "avg60"));
}

static void print_trim(FILE *f, const json_t *trim)
{
	char a[32], b[32];
	const json_t *last = json_object_get(trim, "last_trim");
	if (json_is_object(last)) {
		fprintf(f, "last trim     %s ago: %s via %s in %lld step%s%s%s\n",
			vmc_format_duration(json_number_value(json_object_get(last, "age_s")), a,
					    sizeof a),
			bytes(last, "reclaimed_bytes", b, sizeof b),
			vmc_json_get_str_or(last, "method", "?"),
			(long long)json_integer_value(json_object_get(last, "steps")),
			json_integer_value(json_object_get(last, "steps")) == 1 ? "" : "s",
			json_is_true(json_object_get(last, "compacted")) ? ", compacted" : "",
			json_is_true(json_object_get(last, "forced")) ? ", forced" : "");
	} else {
		fprintf(f, "last trim     none yet\n");
	}
	const json_t *d = json_object_get(trim, "last_decision");
	if (json_is_object(d))
		fprintf(f, "last decision %s ago: %s: %s\n",
			vmc_format_duration(json_number_value(json_object_get(d, "age_s")), a,
					    sizeof a),
			vmc_json_get_str_or(d, "outcome", "?"),
			vmc_json_get_str_or(d, "reason", ""));
	size_t n = json_array_size(json_object_get(trim, "history"));
	if (n > 1)
		fprintf(f, "history       %zu trims kept (vmcost-agent status --json)\n", n);
}

void status_print(FILE *f, const json_t *doc)
{
	char a[32], b[32], c[32], d[32];
	const json_t *m = json_object_get(doc, "memory");
	fprintf(f, "kernel        %s\n", vmc_json_get_str_or(doc, "kernel", "unknown"));
	fprintf(f, "memory        total %s, free %s, available %s\n",
		bytes(m, "total", a, sizeof a), bytes(m, "free", b, sizeof b),
		bytes(m, "available", c, sizeof c));
	fprintf(f, "cache         file %s, reclaimable slab %s, shmem %s; anon %s\n",
		bytes(m, "file_cache", a, sizeof a), bytes(m, "sreclaimable", b, sizeof b),
		bytes(m, "shmem", c, sizeof c), bytes(m, "anon", d, sizeof d));
	if (u64(m, "swap_total") > 0)
		fprintf(f, "swap          %s of %s free\n", bytes(m, "swap_free", a, sizeof a),
			bytes(m, "swap_total", b, sizeof b));
	else
		fprintf(f, "swap          none\n");
	const json_t *r = json_object_get(doc, "page_reporting");
	if (!json_is_true(json_object_get(r, "balloon_present")))
		fprintf(f, "balloon       none: freed memory stays with the VM process\n");
	else if (json_is_null(json_object_get(m, "balloon")))
		fprintf(f, "balloon       present, size unknown\n");
	else
		fprintf(f, "balloon       %s inflated\n", bytes(m, "balloon", a, sizeof a));
	fprintf(f, "reporting     %s; %s\n",
		json_is_true(json_object_get(r, "active")) ? "active" : "off",
		vmc_json_get_str_or(r, "order_meaning", "order unknown"));
	const json_t *load = json_object_get(doc, "load");
	if (json_is_object(load))
		fprintf(f, "load          %.2f %.2f %.2f\n",
			json_number_value(json_object_get(load, "load1")),
			json_number_value(json_object_get(load, "load5")),
			json_number_value(json_object_get(load, "load15")));
	const json_t *psi = json_object_get(doc, "psi");
	if (json_is_object(psi))
		fprintf(f, "PSI avg60     cpu %.2f %%, io %.2f %%, memory %.2f %% (some)\n",
			avg60(psi, "cpu"), avg60(psi, "io"), avg60(psi, "memory"));
	else
		fprintf(f, "PSI           off (boot with psi=1 so trims can see stalls)\n");
	print_trim(f, json_object_get(doc, "trim"));
}
