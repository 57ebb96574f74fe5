/* SPDX-License-Identifier: Apache-2.0 */
/* vmcost report NAME: a user's measured runs on their machine in one results/-style file. */
#include "clients/lima.h"
#include "clients/process.h"
#include "commands/cli.h"
#include "commands/commands.h"
#include "log.h"
#include "measure/results.h"
#include "measure/user_report.h"
#include "message.h"
#include "platform/platform.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double window = 20;
static bool window_given;
static const char *results_dir = "results";
static const char *memtest_file;

static const struct cli_option options[] = {
    {.name = "--duration", .kind = CLI_SECONDS, .seconds = &window, .given = &window_given},
    {.name = "--results", .kind = CLI_TEXT, .text = &results_dir},
    {.name = "--memtest", .kind = CLI_TEXT, .text = &memtest_file},
    {0},
};

static const struct cli_spec spec = {
    .name = "report",
    .synopsis = "NAME [--duration DURATION] [--memtest FILE.json] [--results DIR] [--json]",
    .help =
	"Measures instance NAME on this machine and writes one Markdown and one JSON file\n"
	"in the results/ format: the machine, macOS or Linux, Lima, vmType, and the runs of\n"
	"vmcost selftest, doctor, idle and disk (DURATION each), the autostop daemon's\n"
	"status and, when given, a memtest you ran before (its results JSON). Paths under your\n"
	"home are written from ~ and the host's name as <host>, so the files can be shared as\n"
	"they are.\n\n"
	"  --duration DURATION  how long idle and disk measure (default 20s)\n"
	"  --memtest FILE.json  a memtest results file to include (vmcost memtest writes it)\n"
	"  --results DIR        where the files go (default results)\n"
	"  --json               print the report's JSON too\n\n"
	"Example: vmcost report dev --memtest results/memtest-dev-20261203-101500.json\n",
    .min_args = 1,
    .max_args = 1,
    .options = options,
};

/* Runs this vmcost again with args (the command's own --json); the run as the report keeps it. */
static json_t *run_self(const char *self, const char *const args[])
{
	const char *argv[16] = {self};
	char command[1024] = "vmcost";
	size_t n = 1;
	for (; args[n - 1] && n < 15; n++) {
		argv[n] = args[n - 1];
		size_t len = strlen(command);
		vmc_textf(command + len, sizeof command - len, " %s", args[n - 1]);
	}
	argv[n] = NULL;
	cli_progress("report: %s ...", command);
	struct process_options opt = {.stop = &cli_stop};
	struct process_result res;
	if (process_run(argv, &opt, &res) < 0) {
		char why[512];
		vmc_errorf(why, sizeof why, "cannot run %s:", self);
		return user_report_run(command, VMC_EXIT_FAILURE, NULL, why);
	}
	json_t *run = user_report_run(command, res.exit_code, res.out, res.err);
	process_result_free(&res);
	return run;
}

static json_t *memtest_run(void)
{
	if (!memtest_file) {
		json_t *run = user_report_run("vmcost memtest NAME", 0, NULL,
					      "not included: run vmcost memtest NAME, then pass "
					      "its results JSON with --memtest");
		json_object_set_new(run, "exit", json_null());
		return run;
	}
	json_error_t jerr;
	json_t *doc = json_load_file(memtest_file, 0, &jerr);
	char command[600];
	vmc_textf(command, sizeof command, "vmcost memtest (%s)", memtest_file);
	json_t *run =
	    user_report_run(command, doc ? 0 : VMC_EXIT_MALFORMED, NULL, doc ? "" : jerr.text);
	if (doc)
		json_object_set_new(run, "result", doc);
	return run;
}

static json_t *gather(const struct lima_instance *inst, const char *self, const char *duration)
{
	json_t *runs = json_object();
	const char *selftest[] = {"selftest", "--json", NULL};
	const char *doctor[] = {"doctor", inst->name, "--json", NULL};
	const char *idle[] = {"idle", inst->name, duration, "--json", NULL};
	const char *disk[] = {"disk", inst->name, duration, "--json", NULL};
	const char *autostop[] = {"autostop", inst->name, "--status", "--json", NULL};
	json_object_set_new(runs, "selftest", run_self(self, selftest));
	json_object_set_new(runs, "doctor", run_self(self, doctor));
	json_object_set_new(runs, "idle", run_self(self, idle));
	json_object_set_new(runs, "disk", run_self(self, disk));
	json_object_set_new(runs, "autostop", run_self(self, autostop));
	json_object_set_new(runs, "memtest", memtest_run());
	return runs;
}

static int write_markdown(FILE *f, void *doc)
{
	return user_report_markdown(f, doc);
}

int cmd_report(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse(&spec, argc, argv, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	struct lima_instance inst;
	if ((rc = cli_running_instance(&o, o.args[0], &inst)) != VMC_EXIT_OK)
		return rc;
	char err[1024], self[4096], duration[32];
	if (platform_proc_path(getpid(), self, sizeof self) < 0)
		return cli_fail(&o, VMC_EXIT_FAILURE, "cannot find this vmcost's own path:");
	if ((rc = results_ensure_dir(results_dir, err, sizeof err)) != VMC_EXIT_OK)
		return cli_fail(&o, rc, "%s", err);
	vmc_textf(duration, sizeof duration, "%gs", window);
	cli_catch_signals();
	time_t now = time(NULL);
	char when[64], lima_version[128];
	results_iso_time(now, when, sizeof when);
	lima_limactl_version(lima_version, sizeof lima_version);
	json_t *doc = json_object();
	json_object_set_new(doc, "kind", json_string("vmcost-report"));
	json_object_set_new(doc, "time", json_string(when));
	json_object_set_new(doc, "instance", json_string(inst.name));
	json_object_set_new(doc, "vm_type", json_string(inst.vm_type));
	json_object_set_new(doc, "arch", json_string(inst.arch));
	json_object_set_new(doc, "vmcost_version", json_string(VMCOST_VERSION));
	json_object_set_new(doc, "lima_version",
			    json_string(*inst.lima_version ? inst.lima_version : lima_version));
	json_object_set_new(doc, "limactl", json_string(lima_version));
	json_object_set_new(doc, "machine", results_machine());
	json_object_set_new(doc, "runs", gather(&inst, self, duration));
	cli_progress_done();
	if (cli_stop) {
		json_decref(doc);
		return cli_fail(&o, VMC_EXIT_INTERRUPTED, "interrupted: no report written");
	}
	struct user_report_private priv;
	user_report_private_read(&priv);
	user_report_redact(doc, &priv);
	char base[4096], md[4200], js[4200];
	if (results_base(results_dir, "report", inst.name, now, base, sizeof base) < 0) {
		json_decref(doc);
		return cli_fail(&o, VMC_EXIT_USAGE, "--results %s: path too long", results_dir);
	}
	vmc_textf(md, sizeof md, "%s.md", base);
	vmc_textf(js, sizeof js, "%s.json", base);
	if (results_write_json(js, doc) < 0 || results_write_file(md, write_markdown, doc) < 0) {
		json_decref(doc);
		return cli_fail(&o, VMC_EXIT_FAILURE,
				"cannot write the report in %s:", results_dir);
	}
	if (o.json) {
		json_object_set_new(doc, "files", json_pack("[ss]", md, js));
		return cli_print_json(doc);
	}
	json_decref(doc);
	printf("wrote %s\n      %s\n", md, js);
	return VMC_EXIT_OK;
}
