/* SPDX-License-Identifier: Apache-2.0 */
/* The idle doctor's registry: gathers the facts, runs every check group, builds the document. */
#include "checks.h"

#include "agent.h"
#include "check_groups.h"
#include "check_result.h"
#include "color.h"
#include "doctor.h"
#include "jsonutil.h"

#include <stdlib.h>
#include <string.h>

/* Every check of every group, in the order the documents list them. */
#define CHECKS_MAX CHECK_GROUPS_TOTAL

/* Fills out (CHECKS_MAX entries); returns how many. */
static size_t run_checks(const struct doctor *d, struct check out[CHECKS_MAX])
{
	check_group_memory(d, out);
	check_group_system(d, out + CHECK_GROUP_MEMORY_COUNT);
	return CHECKS_MAX;
}

/* ---- output --------------------------------------------------------------------------------- */

static json_t *checks_json(const struct doctor *d, const struct check *c, size_t n)
{
	json_t *doc = json_object();
	json_t *vmm = json_object();
	json_object_set_new(vmm, "guess", json_string(doctor_vmm_name(d->vmm)));
	json_object_set_new(vmm, "evidence", json_string(d->vmm_evidence));
	json_object_set_new(doc, "vmm", vmm);
	int counts[CHECK_STATUS_COUNT] = {0};
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
	for (int s = 0; s < CHECK_STATUS_COUNT; s++)
		json_object_set_new(summary, check_status_name((enum check_status)s),
				    json_integer(counts[s]));
	json_object_set_new(doc, "summary", summary);
	json_object_set_new(doc, "checks", list);
	return doc;
}

json_t *agent_checks(char *err, size_t errsize)
{
	struct doctor d;
	doctor_gather(&d);
	struct check *c = calloc(CHECKS_MAX, sizeof *c);
	if (!c) {
		doctor_free(&d);
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	size_t n = run_checks(&d, c);
	json_t *doc = checks_json(&d, c, n);
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
