/* SPDX-License-Identifier: Apache-2.0 */
/* memtest's results files: the markdown report, the JSON document and the timeline SVG. */
#include "measure/memtest.h"

#include "log.h"
#include "measure/memtest_report.h"
#include "measure/results.h"
#include "measure/svg.h"
#include "message.h"
#include "units.h"

#include <stdio.h>
#include <string.h>

static int write_svg(FILE *f, void *ctx)
{
	struct memtest *m = ctx;
	char subtitle[512], title[300];
	snprintf(title, sizeof title, "vmcost memtest %s", m->inst.name);
	const char *machine = memtest_str(m->doc, "machine_line");
	const char *wl = memtest_str(m->doc, "settings.workload_text");
	char mem[32];
	snprintf(subtitle, sizeof subtitle, "%s, %s, %d CPUs; %s", m->inst.vm_type,
		 vmc_format_bytes(m->inst.memory, mem, sizeof mem), m->inst.cpus, wl ? wl : "");
	double gain = 0;
	memtest_num(m->doc, "result.ram_freed_by_stop", &gain);
	struct svg_options opt = {.title = title,
				  .subtitle = subtitle,
				  .machine = machine,
				  .has_stop_gain = m->has_stop,
				  .stop_t = m->stop_t,
				  .stop_gain = (int64_t)gain};
	return svg_timeline_write(f, &m->tl, &opt);
}

static int write_markdown(FILE *f, void *ctx)
{
	return memtest_report_markdown(f, ctx);
}

int memtest_write_results(struct memtest *m, const char *dir, char *err, size_t errsize)
{
	int rc = results_ensure_dir(dir, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	char base[4096], md[4200], js[4200], svg[4200];
	if (results_base(dir, "memtest", m->inst.name, m->started, base, sizeof base) != 0) {
		snprintf(err, errsize, "results path too long");
		return VMC_EXIT_FAILURE;
	}
	snprintf(md, sizeof md, "%s.md", base);
	snprintf(js, sizeof js, "%s.json", base);
	snprintf(svg, sizeof svg, "%s.svg", base);
	json_object_set_new(m->doc, "files",
			    json_pack("{s:s, s:s, s:s}", "markdown", md, "json", js, "svg", svg));
	json_object_set_new(m->doc, "timeline", timeline_json(&m->tl));
	if (results_write_file(svg, write_svg, m) != 0 ||
	    results_write_file(md, write_markdown, m->doc) != 0 ||
	    results_write_json(js, m->doc) != 0) {
		vmc_errorf(err, errsize, "cannot write results in %s:", dir);
		return VMC_EXIT_FAILURE;
	}
	return VMC_EXIT_OK;
}
