/* SPDX-License-Identifier: Apache-2.0 */
/* vmcost-agent: the guest half of vmcost (trim, checks, wakeups, balloon, HTTP API). */
#include "agent.h"
#include "balloon.h"
#include "checks.h"
#include "config.h"
#include "engine.h"
#include "jsonutil.h"
#include "log.h"
#include "status.h"
#include "trim.h"
#include "trim_policy.h"
#include "units.h"
#include "wakeups.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: vmcost-agent [--json] COMMAND [OPTIONS]\n"
    "\n"
    "The guest half of vmcost: trims page cache when the guest is idle, checks every idle\n"
    "tuning, profiles who wakes the guest and drives free-page reporting.\n"
    "\n"
    "commands:\n"
    "  status                          memory, PSI, trim history, page-reporting state\n"
    "  trim [--dry-run] [--force] [--config FILE]\n"
    "                                  one trim pass now (idle only, unless --force)\n"
    "  check                           the idle doctor: what the guest's tunings cost\n"
    "  wakeups [SECONDS]               who wakes the guest (default 30 s; 500ms, 2m...)\n"
    "  balloon [--order N]             virtio-balloon and free-page reporting; N sets\n"
    "                                  page_reporting_order (9 = 2 MiB blocks)\n"
    "  engine status|freeze|thaw [--config FILE]\n"
    "                                  deep idle: freeze the idle Docker engine (cgroup v2),\n"
    "                                  refused while a container runs; thaw it\n"
    "  run [--config FILE]             the daemon: trim timer + HTTP API on a unix socket\n"
    "\n"
    "options:\n"
    "  --json       print the JSON document the HTTP API returns\n"
    "  --help, -h   this text\n"
    "  --version    the version\n"
    "\n"
    "config: " AGENT_DEFAULT_CONFIG " (defaults apply when it is missing)\n";

struct cli {
	bool json;
	const char *command;
	char **args; /* command arguments, --json removed */
	int nargs;
};

static void usage(FILE *f)
{
	fputs(usage_text, f);
}

__attribute__((noreturn)) static void usage_error(const char *command, const char *what)
{
	vmc_die(VMC_EXIT_USAGE, "%s%s%s: see vmcost-agent --help", command ? command : "",
		command ? ": " : "", what);
}

/* A core builder failed: its errno (agent.h) says which exit code. */
static int failure_code(int errnum)
{
	return errnum == EACCES || errnum == EPERM ? VMC_EXIT_PERMISSION : VMC_EXIT_FAILURE;
}

static void emit(const struct cli *cli, json_t *doc, void (*print)(FILE *, const json_t *))
{
	if (cli->json)
		vmc_json_write(stdout, doc);
	else
		print(stdout, doc);
	json_decref(doc);
}

static void load_config(const char *path, struct agent_config *cfg)
{
	char err[512];
	int rc = agent_config_load(path ? path : AGENT_DEFAULT_CONFIG, path != NULL, cfg, err,
				   sizeof err);
	if (rc != VMC_EXIT_OK)
		vmc_die(rc, "%s", err);
}

/* --config FILE / --config=FILE; returns 1 if consumed (advancing *i), 0 otherwise. */
static int config_option(const struct cli *cli, int *i, const char **path)
{
	const char *a = cli->args[*i];
	if (strncmp(a, "--config=", 9) == 0) {
		*path = a + 9;
		return 1;
	}
	if (strcmp(a, "--config") != 0)
		return 0;
	if (*i + 1 >= cli->nargs)
		usage_error(cli->command, "--config needs a file");
	*path = cli->args[++*i];
	return 1;
}

static int cmd_status(const struct cli *cli)
{
	if (cli->nargs > 0)
		usage_error("status", "takes no arguments");
	char err[256];
	json_t *doc = agent_status(NULL, err, sizeof err);
	if (!doc)
		vmc_die(VMC_EXIT_FAILURE, "%s", err);
	emit(cli, doc, status_print);
	return 0;
}

static int cmd_trim(const struct cli *cli)
{
	bool dry_run = false, force = false;
	const char *config = NULL;
	for (int i = 0; i < cli->nargs; i++) {
		if (strcmp(cli->args[i], "--dry-run") == 0)
			dry_run = true;
		else if (strcmp(cli->args[i], "--force") == 0)
			force = true;
		else if (!config_option(cli, &i, &config))
			usage_error("trim", "unknown option");
	}
	struct agent_config cfg;
	load_config(config, &cfg);
	struct agent_state *st = agent_state_new();
	if (!st)
		vmc_die(VMC_EXIT_FAILURE, "out of memory");
	if (!force && !cli->json && isatty(STDERR_FILENO))
		fprintf(stderr,
			"watching the CPU for %.0f s before deciding (--force skips this)\n",
			TRIM_MIN_WINDOW_S);
	char err[512];
	json_t *doc = agent_trim(st, &cfg, dry_run, force, err, sizeof err);
	int errnum = errno;
	agent_state_free(st);
	if (!doc)
		vmc_die(failure_code(errnum), "%s", err);
	emit(cli, doc, trim_print);
	return 0;
}

static void print_checks(FILE *f, const json_t *doc)
{
	checks_print(f, doc, vmc_use_color(f));
}

static int cmd_check(const struct cli *cli)
{
	if (cli->nargs > 0)
		usage_error("check", "takes no arguments");
	char err[256];
	json_t *doc = agent_checks(err, sizeof err);
	if (!doc)
		vmc_die(VMC_EXIT_FAILURE, "%s", err);
	emit(cli, doc, print_checks);
	return 0;
}

static void progress(double left, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "\rmeasuring wakeups: %3.0f s left ", left);
	fflush(stderr);
}

static int cmd_wakeups(const struct cli *cli)
{
	double seconds = 30;
	if (cli->nargs > 1)
		usage_error("wakeups", "takes at most one argument, SECONDS");
	if (cli->nargs == 1 &&
	    (vmc_parse_duration(cli->args[0], &seconds) < 0 || seconds <= 0 || seconds > 86400))
		usage_error("wakeups",
			    "SECONDS must be a duration in (0, 24h] such as 30, 500ms, 2m");
	bool show = !cli->json && isatty(STDERR_FILENO);
	char err[256];
	json_t *doc = wakeups_measure(seconds, show ? progress : NULL, NULL, err, sizeof err);
	if (show)
		fprintf(stderr, "\r%*s\r", 30, "");
	if (!doc)
		vmc_die(VMC_EXIT_FAILURE, "%s", err);
	emit(cli, doc, wakeups_print);
	return 0;
}

static int cmd_balloon(const struct cli *cli)
{
	const char *order_arg = NULL;
	for (int i = 0; i < cli->nargs; i++) {
		if (strncmp(cli->args[i], "--order=", 8) == 0)
			order_arg = cli->args[i] + 8;
		else if (strcmp(cli->args[i], "--order") == 0 && i + 1 < cli->nargs)
			order_arg = cli->args[++i];
		else
			usage_error("balloon", strcmp(cli->args[i], "--order") == 0
						   ? "--order needs a number"
						   : "unknown option");
	}
	char err[512];
	json_t *doc;
	if (order_arg) {
		char *end;
		errno = 0;
		long order = strtol(order_arg, &end, 10);
		if (errno || end == order_arg || *end || order < 0 || order > BALLOON_MAX_ORDER)
			usage_error("balloon",
				    "--order takes 0..10 (9 = 2 MiB blocks with 4 KiB pages)");
		doc = agent_balloon_set_order((int)order, err, sizeof err);
		if (!doc)
			vmc_die(failure_code(errno), "%s", err);
		const char *note = vmc_json_get_str(doc, "note");
		if (note && !cli->json)
			vmc_warn("%s", note);
	} else {
		doc = agent_balloon(err, sizeof err);
		if (!doc)
			vmc_die(VMC_EXIT_FAILURE, "%s", err);
	}
	emit(cli, doc, balloon_print);
	return 0;
}

/* A refusal (EBUSY, ENOENT, ENOTSUP, ENOTSOCK) is not a failure of the agent, but it is not a
 * freeze. */
static int cmd_engine(const struct cli *cli)
{
	if (cli->nargs < 1)
		usage_error("engine", "needs status, freeze or thaw");
	const char *action = cli->args[0];
	const char *config = NULL;
	struct cli rest = *cli;
	rest.args = cli->args + 1;
	rest.nargs = cli->nargs - 1;
	for (int i = 0; i < rest.nargs; i++)
		if (!config_option(&rest, &i, &config))
			usage_error("engine", "unknown option");
	struct agent_config cfg;
	load_config(config, &cfg);
	char err[512] = "";
	json_t *doc;
	if (strcmp(action, "guard") == 0)
		return engine_guard_main(&cfg);
	engine_use_guard_process();
	if (strcmp(action, "status") == 0)
		doc = engine_status(&cfg, err, sizeof err);
	else if (strcmp(action, "freeze") == 0)
		doc = engine_freeze(&cfg, err, sizeof err);
	else if (strcmp(action, "thaw") == 0)
		doc = engine_thaw_for(&cfg, "command line", err, sizeof err);
	else
		usage_error("engine", "needs status, freeze or thaw");
	if (!doc)
		vmc_die(failure_code(errno), "%s", err);
	emit(cli, doc, engine_print);
	return 0;
}

static int cmd_run(const struct cli *cli)
{
	const char *config = NULL;
	for (int i = 0; i < cli->nargs; i++)
		if (!config_option(cli, &i, &config))
			usage_error("run", "unknown option");
	if (cli->json)
		usage_error("run", "--json does not apply to the daemon");
	struct agent_config cfg;
	load_config(config, &cfg);
	return agent_run(&cfg);
}

static const struct {
	const char *name;
	int (*fn)(const struct cli *);
} commands[] = {
    {"status", cmd_status},   {"trim", cmd_trim},	{"check", cmd_check},
    {"wakeups", cmd_wakeups}, {"balloon", cmd_balloon}, {"engine", cmd_engine},
    {"run", cmd_run},
};

int main(int argc, char **argv)
{
	vmc_log_init(argv[0]);
	struct cli cli = {0};
	cli.args = calloc((size_t)argc, sizeof *cli.args);
	if (!cli.args)
		vmc_die(VMC_EXIT_FAILURE, "out of memory");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--json") == 0) {
			cli.json = true;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--version") == 0) {
			printf("vmcost-agent %s\n", VMCOST_VERSION);
			return 0;
		} else if (!cli.command && a[0] == '-') {
			vmc_die(VMC_EXIT_USAGE, "unknown option \"%s\": see vmcost-agent --help",
				a);
		} else if (!cli.command) {
			cli.command = a;
		} else {
			cli.args[cli.nargs++] = argv[i];
		}
	}
	if (!cli.command) {
		usage(stderr);
		return VMC_EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(cli.command, commands[i].name) == 0) {
			int rc = commands[i].fn(&cli);
			free(cli.args);
			return rc;
		}
	vmc_die(VMC_EXIT_USAGE, "unknown command \"%s\": see vmcost-agent --help", cli.command);
}
