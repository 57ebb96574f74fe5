/* SPDX-License-Identifier: Apache-2.0 */
#include "balloon.h"

#include "agent.h"
#include "jsonutil.h"
#include "meminfo.h"
#include "message.h"
#include "procfs.h"
#include "units.h"
#include "vmstat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void read_order(struct balloon_info *b)
{
	char line[64];
	b->has_order = vmc_fs_read_line(BALLOON_ORDER_PATH, line, sizeof line) == 0;
	if (!b->has_order)
		return;
	char *end;
	errno = 0;
	long v = strtol(line, &end, 10);
	if (errno || end == line) {
		b->has_order = false;
		return;
	}
	b->order = v;
	b->order_valid = v >= 0 && v <= BALLOON_MAX_ORDER;
	if (b->order_valid)
		b->report_block_bytes = b->page_size << v;
}

int balloon_read(struct balloon_info *b)
{
	memset(b, 0, sizeof *b);
	long page = sysconf(_SC_PAGESIZE);
	b->page_size = page > 0 ? (uint64_t)page : 4096;
	b->has_kernel = vmc_kernel_version_read(&b->kernel) == 0;
	if (vmc_virtio_find(VMC_VIRTIO_ID_BALLOON, &b->dev) == 0) {
		b->present = true;
		b->driver_bound = strcmp(b->dev.driver, "virtio_balloon") == 0;
		b->stats_vq = vmc_virtio_has_feature(&b->dev, BALLOON_F_STATS_VQ);
		b->deflate_on_oom = vmc_virtio_has_feature(&b->dev, BALLOON_F_DEFLATE_ON_OOM);
		b->free_page_hint = vmc_virtio_has_feature(&b->dev, BALLOON_F_FREE_PAGE_HINT);
		b->page_poison = vmc_virtio_has_feature(&b->dev, BALLOON_F_PAGE_POISON);
		b->reporting = vmc_virtio_has_feature(&b->dev, BALLOON_F_REPORTING);
	}
	read_order(b);
	struct vmc_vmstat vs;
	if (vmc_vmstat_read(&vs) == 0 && vs.has_balloon) {
		b->has_vmstat = true;
		b->inflate_pages = vs.balloon_inflate;
		b->deflate_pages = vs.balloon_deflate;
		b->migrate_pages = vs.balloon_migrate;
		b->balloon_bytes = vmc_vmstat_balloon_pages(&vs) * b->page_size;
	}
	struct vmc_meminfo mi;
	if (vmc_meminfo_read(&mi) == 0 && mi.has_balloon) {
		b->has_meminfo_balloon = true;
		b->meminfo_balloon = mi.balloon;
	}
	return 0;
}

bool balloon_reporting_active(const struct balloon_info *b)
{
	return b->present && b->driver_bound && b->reporting;
}

/*
 * 6.1 starts at MAX_ORDER (11) and overwrites the value when a reporting device registers;
 * 6.18 starts at -1 and keeps a value written before registration. A -1 or a 6.18 kernel means
 * the newer rule.
 */
static bool is_61_semantics(const struct balloon_info *b)
{
	if (b->has_order && b->order == -1)
		return false;
	return !(b->has_kernel && vmc_kernel_at_least(&b->kernel, 6, 18));
}

void balloon_order_meaning(const struct balloon_info *b, char *buf, size_t size)
{
	char block[32];
	if (!b->has_order) {
		snprintf(buf, size,
			 "no page_reporting parameter: kernel built without "
			 "CONFIG_PAGE_REPORTING");
	} else if (b->order_valid && !balloon_reporting_active(b) && is_61_semantics(b) &&
		   b->present && !b->driver_bound) {
		snprintf(buf, size,
			 "order %ld, but 6.1 overwrites it when virtio_balloon probes (no driver "
			 "bound yet)",
			 b->order);
	} else if (b->order_valid) {
		snprintf(buf, size, "free blocks of %s (order %ld) are reported",
			 vmc_format_bytes(b->report_block_bytes, block, sizeof block), b->order);
	} else if (b->order < 0) {
		snprintf(buf, size, "unset (-1): no reporting device has registered");
	} else {
		snprintf(buf, size,
			 "order %ld is beyond the largest buddy block (10): nothing is ever "
			 "reported%s",
			 b->order,
			 is_61_semantics(b) && !balloon_reporting_active(b)
			     ? " (6.1's value before a reporting device registers)"
			     : "");
	}
}

json_t *balloon_to_json(const struct balloon_info *b)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "present", json_boolean(b->present));
	if (b->present) {
		json_t *dev = json_object();
		json_object_set_new(dev, "name", json_string(b->dev.name));
		json_object_set_new(dev, "driver",
				    b->dev.driver[0] ? json_string(b->dev.driver) : json_null());
		json_object_set_new(dev, "transport",
				    b->dev.transport[0] ? json_string(b->dev.transport)
							: json_null());
		json_object_set_new(dev, "features", json_string(b->dev.features));
		json_object_set_new(dev, "features_bits",
				    json_integer((json_int_t)b->dev.nfeatures));
		json_object_set_new(doc, "device", dev);
	} else {
		json_object_set_new(doc, "device", json_null());
	}
	json_object_set_new(doc, "driver_bound", json_boolean(b->driver_bound));
	json_t *feat = json_object();
	json_object_set_new(feat, "stats_vq", json_boolean(b->stats_vq));
	json_object_set_new(feat, "deflate_on_oom", json_boolean(b->deflate_on_oom));
	json_object_set_new(feat, "free_page_hint", json_boolean(b->free_page_hint));
	json_object_set_new(feat, "page_poison", json_boolean(b->page_poison));
	json_object_set_new(feat, "reporting", json_boolean(b->reporting));
	json_object_set_new(doc, "features", feat);
	json_object_set_new(doc, "page_reporting", json_boolean(balloon_reporting_active(b)));

	json_t *order = json_object();
	char meaning[160];
	balloon_order_meaning(b, meaning, sizeof meaning);
	json_object_set_new(order, "value", b->has_order ? json_integer(b->order) : json_null());
	json_object_set_new(order, "block_bytes",
			    b->order_valid ? vmc_json_u64(b->report_block_bytes) : json_null());
	json_object_set_new(order, "meaning", json_string(meaning));
	json_object_set_new(doc, "page_reporting_order", order);

	json_t *size = json_object();
	json_object_set_new(size, "bytes",
			    b->has_vmstat ? vmc_json_u64(b->balloon_bytes) : json_null());
	json_object_set_new(size, "inflate_pages", vmc_json_u64(b->inflate_pages));
	json_object_set_new(size, "deflate_pages", vmc_json_u64(b->deflate_pages));
	json_object_set_new(size, "migrate_pages", vmc_json_u64(b->migrate_pages));
	json_object_set_new(size, "meminfo_balloon_bytes",
			    b->has_meminfo_balloon ? vmc_json_u64(b->meminfo_balloon)
						   : json_null());
	json_object_set_new(doc, "balloon", size);
	json_object_set_new(doc, "kernel", json_string(b->has_kernel ? b->kernel.release : ""));
	json_object_set_new(doc, "page_size", vmc_json_u64(b->page_size));
	return doc;
}

static const char *yes_no(const json_t *obj, const char *key)
{
	return json_is_true(json_object_get(obj, key)) ? "yes" : "no";
}

void balloon_print(FILE *f, const json_t *doc)
{
	const json_t *dev = json_object_get(doc, "device");
	const json_t *feat = json_object_get(doc, "features");
	const json_t *order = json_object_get(doc, "page_reporting_order");
	const json_t *size = json_object_get(doc, "balloon");
	char buf[32];
	if (!json_is_true(json_object_get(doc, "present"))) {
		fprintf(f,
			"virtio-balloon      none: the host cannot take freed guest memory back\n");
	} else {
		fprintf(f, "virtio-balloon      %s (%s), driver %s\n",
			vmc_json_get_str_or(dev, "name", "?"),
			vmc_json_get_str_or(dev, "transport", "unknown transport"),
			vmc_json_get_str_or(dev, "driver", "NOT BOUND (modprobe virtio_balloon)"));
		fprintf(f, "features            %s (%d bits)\n",
			vmc_json_get_str_or(dev, "features", "?"),
			(int)json_integer_value(json_object_get(dev, "features_bits")));
		fprintf(f,
			"negotiated          reporting %s, page_poison %s, stats_vq %s, "
			"deflate_on_oom %s, free_page_hint %s\n",
			yes_no(feat, "reporting"), yes_no(feat, "page_poison"),
			yes_no(feat, "stats_vq"), yes_no(feat, "deflate_on_oom"),
			yes_no(feat, "free_page_hint"));
	}
	fprintf(f, "free-page reporting %s\n",
		json_is_true(json_object_get(doc, "page_reporting")) ? "active" : "off");
	const json_t *value = json_object_get(order, "value");
	if (json_is_integer(value))
		fprintf(f, "reporting order     %lld: %s\n", (long long)json_integer_value(value),
			vmc_json_get_str_or(order, "meaning", ""));
	else
		fprintf(f, "reporting order     %s\n",
			vmc_json_get_str_or(order, "meaning", "unknown"));
	uint64_t bytes;
	if (vmc_json_get_u64(size, "bytes", &bytes) == 0)
		fprintf(f, "balloon size        %s (inflated %lld, deflated %lld pages)\n",
			vmc_format_bytes(bytes, buf, sizeof buf),
			(long long)json_integer_value(json_object_get(size, "inflate_pages")),
			(long long)json_integer_value(json_object_get(size, "deflate_pages")));
	else
		fprintf(f, "balloon size        unknown (no balloon counters in /proc/vmstat)\n");
	if (vmc_json_get_u64(size, "meminfo_balloon_bytes", &bytes) == 0)
		fprintf(f, "meminfo Balloon:    %s\n", vmc_format_bytes(bytes, buf, sizeof buf));
}

/*
 * Validates and writes page_reporting_order. 0 with a note (6.1 before the driver probed:
 * the value will be overwritten), or -1 with err naming the fix.
 */
static int balloon_set_order(int order, char *note, size_t notesize, char *err, size_t errsize)
{
	note[0] = '\0';
	if (order < 0 || order > BALLOON_MAX_ORDER) {
		snprintf(
		    err, errsize,
		    "page_reporting_order %d is out of range: use 0..%d (9 = 2 MiB blocks with "
		    "4 KiB pages)",
		    order, BALLOON_MAX_ORDER);
		errno = EINVAL;
		return -1;
	}
	struct balloon_info b;
	balloon_read(&b);
	if (!b.has_order) {
		snprintf(err, errsize,
			 "%s does not exist: this kernel has no free-page reporting "
			 "(CONFIG_PAGE_REPORTING)",
			 BALLOON_ORDER_PATH);
		errno = ENOENT;
		return -1;
	}
	char value[16];
	snprintf(value, sizeof value, "%d", order);
	if (vmc_fs_write(BALLOON_ORDER_PATH, value) < 0) {
		if (errno == EACCES || errno == EPERM)
			vmc_errorf(err, errsize,
				   "cannot write %s (run as root):", BALLOON_ORDER_PATH);
		else
			vmc_errorf(err, errsize,
				   "the kernel refused page_reporting_order %d:", order);
		return -1;
	}
	if (is_61_semantics(&b) && !balloon_reporting_active(&b))
		snprintf(note, notesize,
			 "kernel %s: the value is overwritten when virtio_balloon registers "
			 "reporting; set it again after the driver is bound",
			 b.kernel.release);
	return 0;
}

json_t *agent_balloon(char *err, size_t errsize)
{
	(void)err;
	(void)errsize;
	struct balloon_info b;
	balloon_read(&b);
	return balloon_to_json(&b);
}

json_t *agent_balloon_set_order(int order, char *err, size_t errsize)
{
	char note[256];
	if (balloon_set_order(order, note, sizeof note, err, errsize) < 0)
		return NULL;
	json_t *doc = agent_balloon(err, errsize);
	if (doc && note[0])
		json_object_set_new(doc, "note", json_string(note));
	return doc;
}
