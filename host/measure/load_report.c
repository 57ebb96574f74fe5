/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/load_report.h"

#include "jsonutil.h"

#include <stdio.h>

/* A string member, "?" when it is missing (never NULL for %s). */
static const char *str(const json_t *obj, const char *key)
{
	const char *s = vmc_json_get_str(obj, key);
	return s ? s : "?";
}

void load_report_human(FILE *f, const json_t *doc, const char *md_path)
{
	const json_t *pg = json_object_get(doc, "pgbench");
	fprintf(f, "vmcost load %s: pgbench through the Docker API (%s, Docker %s)\n",
		str(json_object_get(doc, "instance"), "name"), str(pg, "image"),
		str(pg, "docker_version"));
	fprintf(f, "\n%-26s %12s %14s\n", "run", "tps", "mean latency");
	size_t i;
	json_t *run;
	json_array_foreach(json_object_get(pg, "runs"), i, run)
	{
		char what[64];
		long long clients = json_integer_value(json_object_get(run, "clients"));
		snprintf(what, sizeof what, "%lld client%s x %.0f s", clients,
			 clients == 1 ? "" : "s",
			 json_number_value(json_object_get(run, "duration_s")));
		json_t *lat = json_object_get(run, "latency_ms");
		char latency[32] = "-";
		if (json_is_number(lat))
			snprintf(latency, sizeof latency, "%.2f ms", json_number_value(lat));
		fprintf(f, "%-26s %12.0f %14s\n", what,
			json_number_value(json_object_get(run, "tps")), latency);
	}
	const json_t *idle = json_object_get(doc, "idle_cpu");
	fprintf(f,
		"\nidle with the container running: %.2f %% of a core (median of %lld x %.0f s; "
		"min %.2f, max %.2f)\n",
		json_number_value(json_object_get(idle, "median_percent")),
		json_integer_value(json_object_get(idle, "intervals")),
		json_number_value(json_object_get(idle, "interval_s")),
		json_number_value(json_object_get(idle, "min_percent")),
		json_number_value(json_object_get(idle, "max_percent")));
	fprintf(f, "pgbench -i -s %lld took %.0f s; postgres was ready in %.0f s%s\n",
		json_integer_value(json_object_get(pg, "scale")),
		json_number_value(json_object_get(pg, "init_seconds")),
		json_number_value(json_object_get(pg, "ready_seconds")),
		json_is_true(json_object_get(pg, "pulled")) ? " (image pulled first)" : "");
	if (md_path)
		fprintf(f, "\nresults: %s (+ .json)\n", md_path);
}

int load_report_markdown(FILE *f, const json_t *doc)
{
	const json_t *inst = json_object_get(doc, "instance");
	const json_t *pg = json_object_get(doc, "pgbench");
	fprintf(f, "# vmcost load: %s, %s\n\n", str(inst, "name"), str(doc, "started_at"));
	fprintf(f, "- Machine: %s\n", str(doc, "machine_line"));
	fprintf(f, "- Lima: %s; vmType %s\n", str(doc, "limactl_version"), str(inst, "vm_type"));
	fprintf(f, "- Image: %s, Docker %s; pgbench -s %lld\n", str(pg, "image"),
		str(pg, "docker_version"), json_integer_value(json_object_get(pg, "scale")));
	fprintf(f, "- vmcost %s; single run\n\n| run | tps | mean latency |\n|---|---|---|\n",
		str(doc, "version"));
	size_t i;
	json_t *run;
	json_array_foreach(json_object_get(pg, "runs"), i, run)
	{
		json_t *lat = json_object_get(run, "latency_ms");
		fprintf(f, "| %lld clients x %.0f s | %.0f | %s%.2f ms |\n",
			json_integer_value(json_object_get(run, "clients")),
			json_number_value(json_object_get(run, "duration_s")),
			json_number_value(json_object_get(run, "tps")),
			json_is_number(lat) ? "" : "- ",
			json_is_number(lat) ? json_number_value(lat) : 0.0);
	}
	const json_t *idle = json_object_get(doc, "idle_cpu");
	fprintf(f,
		"\nIdle with the container running: %.2f %% of a host core (median; min %.2f, "
		"max %.2f over %lld x %.0f s).\n",
		json_number_value(json_object_get(idle, "median_percent")),
		json_number_value(json_object_get(idle, "min_percent")),
		json_number_value(json_object_get(idle, "max_percent")),
		json_integer_value(json_object_get(idle, "intervals")),
		json_number_value(json_object_get(idle, "interval_s")));
	return ferror(f) ? -1 : 0;
}
