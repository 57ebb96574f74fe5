/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost load's report from a fixed document in the shape cmd_load builds (its pgbench runs
 * from workload_pg_run_json): the terminal table and the results file's markdown, compared with
 * golden files (tests/unit/fixtures/output/vmcost-load*.txt). The command itself needs a Docker
 * engine with postgres and pgbench (tests/lab/memtest_docker.sh runs it).
 */
#include "check.h"
#include "golden.h"
#include "measure/load_report.h"
#include "measure/workload.h"
#include "print_capture.h"

#include <stdlib.h>

/* A load document; the 1-client run without a latency line when latency is false. */
static json_t *load_doc(bool latency, bool pulled)
{
	struct workload_pg_run eight = {.clients = 8,
					.threads = 8,
					.duration = 60,
					.tps = 1234.5678,
					.latency_ms = 6.4812,
					.has_latency = true,
					.transactions = 74074};
	struct workload_pg_run one = {.clients = 1,
				      .threads = 1,
				      .duration = 20,
				      .tps = 401.2,
				      .latency_ms = 2.49,
				      .has_latency = latency,
				      .transactions = 8024};
	json_t *doc = json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:i, s:I}}", "command", "load", "version",
	    "1.0", "started_at", "2026-12-03T10:00:00Z", "limactl_version", "2.2.0", "machine_line",
	    "Debian 12, Linux 6.1.0 x86_64, 2 x Intel Xeon, 7.8 GiB RAM", "instance", "name", "dev",
	    "vm_type", "qemu", "cpus", 2, "memory", (json_int_t)2147483648ll);
	json_object_set_new(doc, "pgbench",
			    json_pack("{s:s, s:b, s:s, s:i, s:f, s:f, s:[o, o], s:b}", "image",
				      "postgres:17-alpine", "pulled", pulled, "docker_version",
				      "27.3.1", "scale", 50, "ready_seconds", 4.2, "init_seconds",
				      31.6, "runs", workload_pg_run_json(&eight),
				      workload_pg_run_json(&one), "kept", false));
	json_object_set_new(doc, "idle_cpu",
			    json_pack("{s:f, s:f, s:f, s:f, s:i, s:[f, f, f]}", "median_percent",
				      1.25, "min_percent", 0.98, "max_percent", 2.5, "interval_s",
				      10.0, "intervals", 3, "percent", 0.98, 1.25, 2.5));
	return doc;
}

TEST(the_terminal_table)
{
	struct capture cap;
	FILE *f = capture_open(&cap);
	json_t *doc = load_doc(true, false);
	load_report_human(f, doc, "./load-dev-20261203-100000.md");
	json_decref(doc);
	/* A pulled image, a run without a latency line, no results file (--results none). */
	fputs("---\n", f);
	doc = load_doc(false, true);
	load_report_human(f, doc, NULL);
	json_decref(doc);
	char *text = capture_close(&cap);
	CHECK_GOLDEN(text, "vmcost-load");
	free(text);
}

TEST(the_results_markdown)
{
	struct capture cap;
	FILE *f = capture_open(&cap);
	json_t *doc = load_doc(true, false);
	CHECK_INT(load_report_markdown(f, doc), 0);
	json_decref(doc);
	fputs("---\n", f);
	doc = load_doc(false, true);
	CHECK_INT(load_report_markdown(f, doc), 0);
	json_decref(doc);
	char *text = capture_close(&cap);
	CHECK_GOLDEN(text, "vmcost-load-md");
	free(text);
}

/* A document with members missing (an older vmcost's file): placeholders, never "(null)". */
TEST(a_document_with_members_missing)
{
	json_t *doc = json_loads("{\"pgbench\": {\"runs\": [{}]}}", 0, NULL);
	struct capture cap;
	load_report_human(capture_open(&cap), doc, NULL);
	char *text = capture_close(&cap);
	CHECK(text && strstr(text, "(null)") == NULL);
	free(text);
	CHECK_INT(load_report_markdown(capture_open(&cap), doc), 0);
	text = capture_close(&cap);
	CHECK(text && strstr(text, "(null)") == NULL);
	free(text);
	json_decref(doc);
}

int main(void)
{
	RUN(the_terminal_table);
	RUN(the_results_markdown);
	RUN(a_document_with_members_missing);
	return check_done();
}
