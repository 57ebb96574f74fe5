/* SPDX-License-Identifier: Apache-2.0 */
/* The memtest SVG: structure, labels, units, gaps, escaping; well-formed per xmllint if present. */
#include "check.h"
#include "log.h"
#include "measure/svg.h"
#include "print_capture.h"
#include "units.h"

#include <stdlib.h>
#include <unistd.h>

#define GiB ((uint64_t)1 << 30)
#define MiB ((uint64_t)1 << 20)

/* A fill run on a no-balloon VM: footprint climbs to 2 GiB, stays, the VM stops at t=90. */
static void build(struct timeline *tl)
{
	timeline_init(tl, 100.0);
	const char *names[] = {"baseline", "workload", "trim", "stop"};
	const char *labels[] = {"baseline", "fill 1 GiB", "trim", "limactl stop"};
	double starts[] = {0, 5, 60, 80};
	size_t p = 0;
	for (int t = 0; t <= 100; t++) {
		if (p < 4 && t >= starts[p]) {
			timeline_phase_begin(tl, names[p], labels[p], 100.0 + t);
			p++;
		}
		struct tl_sample s = {.t = t, .host_free = 20 * GiB, .host_available = 21 * GiB};
		if (t < 90) {
			s.has_vm = true;
			s.vm_footprint =
			    t < 5 ? 260 * MiB
				  : (t < 40 ? 260 * MiB + (uint64_t)t * 50 * MiB : 2 * GiB);
			s.host_free -= s.vm_footprint;
			s.host_available -= s.vm_footprint;
		}
		timeline_add(tl, s);
	}
}

static char *render(const struct timeline *tl, const struct svg_options *opt, size_t *len)
{
	struct capture cap;
	CHECK_INT(svg_timeline_write(capture_open(&cap), tl, opt), 0);
	char *svg = capture_close(&cap);
	*len = cap.len;
	return svg;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* xmllint --noout: well-formed XML. Returns -1 when xmllint is not installed. */
static int xmllint(const char *doc, size_t len)
{
	if (system("command -v xmllint >/dev/null 2>&1") != 0)
		return -1;
	char path[] = "/tmp/vmcost-svg-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, doc, len) != (ssize_t)len)
		return 1;
	close(fd);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "xmllint --noout %s", path);
	int rc = system(cmd);
	unlink(path);
	return rc == 0 ? 0 : 1;
}

TEST(renders_panels_bands_labels_and_units)
{
	struct timeline tl;
	build(&tl);
	struct svg_options opt = {.title = "vmcost memtest nob <lab> & co",
				  .subtitle = "qemu, 2 GiB, fill 1 GiB",
				  .has_stop_gain = true,
				  .stop_t = 90,
				  .stop_gain = (int64_t)(2 * GiB)};
	size_t len = 0;
	char *svg = render(&tl, &opt, &len);
	CHECK(strncmp(svg, "<?xml", 5) == 0);
	CHECK_CONTAINS(svg, "</svg>\n");
	CHECK_CONTAINS(svg, "vmcost memtest nob &lt;lab&gt; &amp; co");
	CHECK_CONTAINS(svg, "host free memory (GiB)");
	CHECK_CONTAINS(svg, "VM footprint (process holding guest RAM) (GiB)");
	CHECK_CONTAINS(svg, "time since start (s)");
	CHECK_CONTAINS(svg, ">fill 1 GiB<");
	CHECK_CONTAINS(svg, ">limactl stop<");
	CHECK_CONTAINS(svg, "VM stopped: host free +2.00 GiB");
	/* Line labels at their ends: the values of the last samples. */
	CHECK_CONTAINS(svg, ">free 20.0 GiB<");
	CHECK_CONTAINS(svg, ">available 21.0 GiB<");
	CHECK_CONTAINS(svg, ">VM 2.00 GiB<");
	/* Free, available: one line each; the VM line ends when the process is gone. */
	CHECK_INT(count(svg, "<polyline"), 3);
	CHECK_INT(count(svg, "<rect"), 1 + 4 + 2); /* background, 4 bands, 2 panel frames */
	int lint = xmllint(svg, len);
	free(svg);
	timeline_free(&tl);
	if (lint < 0)
		SKIP("the SVG's well-formedness: xmllint is missing (make deps)");
	CHECK_INT(lint, 0);
}

TEST(vm_gap_splits_the_line)
{
	struct timeline tl;
	timeline_init(&tl, 0);
	for (int t = 0; t < 10; t++) {
		struct tl_sample s = {.t = t,
				      .host_free = GiB,
				      .host_available = GiB,
				      .has_vm = t < 3 || t > 6,
				      .vm_footprint = 300 * MiB};
		timeline_add(&tl, s);
	}
	size_t len;
	char *svg = render(&tl, NULL, &len);
	CHECK_INT(count(svg, "<polyline"), 4); /* free, available, VM before and after the gap */
	CHECK_CONTAINS(svg, "(MiB)");	       /* a 300 MiB VM is drawn in MiB, not 0.3 GiB */
	CHECK_CONTAINS(svg, ">vmcost memtest<");
	free(svg);
	timeline_free(&tl);
}

TEST(empty_timeline_is_still_a_document)
{
	struct timeline tl;
	timeline_init(&tl, 0);
	size_t len;
	char *svg = render(&tl, NULL, &len);
	CHECK_CONTAINS(svg, "</svg>");
	CHECK_INT(count(svg, "<polyline"), 0);
	CHECK(strstr(svg, "nan") == NULL && strstr(svg, "inf") == NULL);
	int lint = xmllint(svg, len);
	free(svg);
	timeline_free(&tl);
	if (lint < 0)
		SKIP("the SVG's well-formedness: xmllint is missing (make deps)");
	CHECK_INT(lint, 0);
}

TEST(nice_steps)
{
	CHECK_DBL(svg_nice_step(0.7), 1, 1e-12);
	CHECK_DBL(svg_nice_step(1.3), 2, 1e-12);
	CHECK_DBL(svg_nice_step(2.0), 2, 1e-12);
	CHECK_DBL(svg_nice_step(3.1), 5, 1e-12);
	CHECK_DBL(svg_nice_step(7), 10, 1e-12);
	CHECK_DBL(svg_nice_step(130), 200, 1e-9);
	CHECK_DBL(svg_nice_step(0), 1, 1e-12);
}

TEST(escape_strips_control_characters)
{
	char buf[64];
	CHECK_STR(svg_escape("a\"b'c\x01"
			     "d",
			     buf, sizeof buf),
		  "a&quot;b&apos;cd");
	char tiny[8];
	svg_escape("&&&&&&", tiny, sizeof tiny); /* never splits an entity, always terminated */
	CHECK_STR(tiny, "&amp;");
}

TEST(timeline_json_shape)
{
	struct timeline tl;
	build(&tl);
	json_t *j = timeline_json(&tl);
	json_t *phases = json_object_get(j, "phases");
	CHECK_INT(json_array_size(phases), 4);
	CHECK_STR(json_string_value(json_object_get(json_array_get(phases, 1), "label")),
		  "fill 1 GiB");
	json_t *samples = json_object_get(j, "samples");
	CHECK_INT(json_array_size(samples), 101);
	json_t *last = json_array_get(samples, 100);
	CHECK(json_is_null(json_object_get(last, "vm_footprint")));
	CHECK_STR(json_string_value(json_object_get(last, "phase")), "stop");
	CHECK_DBL(timeline_vm_gone_at(&tl, 0), 89.5, 1e-9);
	CHECK_DBL(timeline_vm_gone_at(&tl, 95), -1, 1e-9);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(samples, 50), "vm_footprint")),
		  2 * GiB);
	json_decref(j);
	timeline_free(&tl);
}

int main(void)
{
	vmc_log_init("host_svg");
	RUN(renders_panels_bands_labels_and_units);
	RUN(vm_gap_splits_the_line);
	RUN(empty_timeline_is_still_a_document);
	RUN(nice_steps);
	RUN(escape_strips_control_characters);
	RUN(timeline_json_shape);
	return check_done();
}
