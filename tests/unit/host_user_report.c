/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost report's privacy and its page: paths under the home directory written from "~", the
 * host's names as "<host>" (whole words only, keys too), and the Markdown laid out from the JSON.
 */
#include "check.h"
#include "golden.h"
#include "measure/user_report.h"
#include "print_capture.h"

#include <stdlib.h>

static struct user_report_private alice(void)
{
	struct user_report_private p;
	memset(&p, 0, sizeof p);
	strcpy(p.home, "/Users/alice");
	strcpy(p.hosts[0], "alices-mbp.local");
	strcpy(p.hosts[1], "alices-mbp");
	return p;
}

static void check_redacted(const char *in, const char *want)
{
	struct user_report_private p = alice();
	char *out = user_report_redact_text(in, &p);
	CHECK_STR(out, want);
	free(out);
}

TEST(home_paths_start_from_tilde)
{
	check_redacted("/Users/alice/.lima/dev/sock/docker.sock", "~/.lima/dev/sock/docker.sock");
	check_redacted("cannot reach /Users/alice/.lima/dev: gone",
		       "cannot reach ~/.lima/dev: gone");
	check_redacted("/Users/alice", "~");
	check_redacted("a:/Users/alice/x b:/Users/alice/y", "a:~/x b:~/y");
	/* Another user whose name starts the same is not this home. */
	check_redacted("/Users/alice2/.lima", "/Users/alice2/.lima");
	check_redacted("/opt/Users/alice/x", "/opt~/x");
}

TEST(host_names_are_whole_words)
{
	check_redacted("ssh alices-mbp.local:22", "ssh <host>:22");
	check_redacted("on alices-mbp today", "on <host> today");
	check_redacted("ALICES-MBP", "<host>");
	/* Inside a longer name it is another host. */
	check_redacted("alices-mbp2 and xalices-mbp", "alices-mbp2 and xalices-mbp");
	struct user_report_private p = alice();
	strcpy(p.hosts[0], "mc");
	strcpy(p.hosts[1], "mc");
	char *out = user_report_redact_text("mc 2 mcs", &p);
	CHECK_STR(out, "mc 2 mcs"); /* two letters would hit words: left */
	free(out);
}

TEST(every_string_of_a_document_keys_too)
{
	struct user_report_private p = alice();
	json_t *doc = json_pack("{s:s, s:[s, i], s:{s:s}}", "dir", "/Users/alice/.lima/dev", "list",
				"alices-mbp", 3, "/Users/alice/x", "k", "alices-mbp.local");
	user_report_redact(doc, &p);
	char *text = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
	CHECK_STR(text,
		  "{\"dir\":\"~/.lima/dev\",\"list\":[\"<host>\",3],\"~/x\":{\"k\":\"<host>\"}}");
	free(text);
	json_decref(doc);
}

TEST(a_run_keeps_its_json_and_last_message)
{
	json_t *run = user_report_run("vmcost doctor dev --json", 5, "{\"checks\": []}",
				      "vmcost: warning: x\nvmcost: error: agent down\n");
	CHECK_INT(json_integer_value(json_object_get(run, "exit")), 5);
	CHECK(json_is_array(json_object_get(json_object_get(run, "result"), "checks")));
	CHECK_STR(json_string_value(json_object_get(run, "message")), "vmcost: error: agent down");
	json_decref(run);
	run = user_report_run("vmcost idle dev 5s --json", 1, "not json", "");
	CHECK(json_is_null(json_object_get(run, "result")));
	json_decref(run);
}

static void markdown(FILE *f, const json_t *doc)
{
	user_report_markdown(f, doc);
}

/* The page of a report whose runs went every way: a result, a failure with its message, one not
 * run. */
TEST(markdown_page)
{
	json_t *doc = json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:i, s:I}, s:{s:o, s:o, s:o}}", "instance",
	    "dev", "vm_type", "vz", "time", "2026-12-03T10:00:00Z", "vmcost_version", "1.0",
	    "lima_version", "2.2.0", "machine", "os", "macOS 26.1", "kernel", "Darwin 25.1.0 arm64",
	    "cpu", "Apple M5", "cpus", 10, "memory", (json_int_t)17179869184ll, "runs", "selftest",
	    user_report_run("vmcost selftest --json", 0, "{\"failed\": 0}", ""), "doctor",
	    user_report_run("vmcost doctor dev --json", 5, "",
			    "vmcost: error: vmcost-agent does not answer on ~/.lima/dev/sock/"
			    "vmcost-agent.sock\n"),
	    "memtest", user_report_run("vmcost memtest NAME", 0, NULL, "not included"));
	json_object_set_new(json_object_get(json_object_get(doc, "runs"), "memtest"), "exit",
			    json_null());
	char *page = print_capture(markdown, doc);
	CHECK_GOLDEN(page, "vmcost-report-page");
	free(page);
	json_decref(doc);
}

int main(void)
{
	RUN(home_paths_start_from_tilde);
	RUN(host_names_are_whole_words);
	RUN(every_string_of_a_document_keys_too);
	RUN(a_run_keeps_its_json_and_last_message);
	RUN(markdown_page);
	return check_done();
}
