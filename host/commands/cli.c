/* SPDX-License-Identifier: Apache-2.0 */
#include "commands/cli.h"

#include "clock.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"
#include "platform/platform.h"
#include "units.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage_line(FILE *f, const struct cli_spec *spec)
{
	fprintf(f, "usage: vmcost %s %s\n", spec->name, spec->synopsis);
}

static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || *end || errno || v <= 0 || v > INT32_MAX)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

int cli_duration(const char *s, double *seconds)
{
	return vmc_parse_duration(s, seconds) == 0 && *seconds > 0 ? 0 : -1;
}

/* "--pid=5" or "--pid 5": the value, advancing *i; NULL if missing. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t len = strlen(name);
	if (argv[*i][len] == '=')
		return argv[*i] + len + 1;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static bool is_option(const char *arg, const char *name)
{
	size_t len = strlen(name);
	return strncmp(arg, name, len) == 0 && (arg[len] == '\0' || arg[len] == '=');
}

static int usage_error(const struct cli_spec *spec, struct cli_opts *o, const char *what)
{
	usage_line(stderr, spec);
	return cli_fail(o, VMC_EXIT_USAGE, "%s (see vmcost %s --help)", what, spec->name);
}

int cli_usage_error(const struct cli_spec *spec, const struct cli_opts *o, const char *fmt, ...)
{
	char what[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	usage_line(stderr, spec);
	return cli_fail(o, VMC_EXIT_USAGE, "%s", what);
}

static const struct cli_option *find_option(const struct cli_spec *spec, const char *arg)
{
	for (const struct cli_option *opt = spec->options; opt && opt->name; opt++)
		if (is_option(arg, opt->name))
			return opt;
	return NULL;
}

/* Stores v for opt; on a value that does not fit, a message in what and -1. */
static int set_option(const struct cli_option *opt, const char *v, char *what, size_t size)
{
	if (opt->given)
		*opt->given = true;
	if (opt->none && strcmp(v, "none") == 0) {
		*opt->none = true;
		return 0;
	}
	char *end;
	long count;
	switch (opt->kind) {
	case CLI_FLAG:
		*opt->flag = true;
		return 0;
	case CLI_TEXT:
		*opt->text = v;
		return 0;
	case CLI_COUNT:
		errno = 0;
		count = strtol(v, &end, 10);
		if (*v == '\0' || *end || errno || count <= 0 || count > 100000) {
			vmc_textf(what, size, "%s needs a positive whole number, not \"%s\"",
				  opt->name, v);
			return -1;
		}
		*opt->count = (int)count;
		return 0;
	case CLI_SECONDS:
		if (cli_duration(v, opt->seconds) != 0) {
			vmc_textf(what, size,
				  "%s needs a duration (\"40\", \"40s\", \"2m\"), not \"%s\"",
				  opt->name, v);
			return -1;
		}
		return 0;
	case CLI_SIZE:
		if (vmc_parse_size(v, opt->size) != 0) {
			vmc_textf(what, size, "%s needs a size (\"1G\", \"512MiB\")%s, not \"%s\"",
				  opt->name, opt->none ? " or none" : "", v);
			return -1;
		}
		return 0;
	}
	return -1;
}

int cli_parse(const struct cli_spec *spec, int argc, char **argv, struct cli_opts *o)
{
	memset(o, 0, sizeof *o);
	bool options_done = false;
	char what[300];
	const struct cli_option *opt;
	/* --json anywhere applies to errors about other arguments too. */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--json") == 0)
			o->json = true;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!options_done && a[0] == '-' && a[1] != '\0') {
			if (strcmp(a, "--") == 0) {
				options_done = true;
			} else if (strcmp(a, "--json") == 0) {
				o->json = true;
			} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
				usage_line(stdout, spec);
				printf("\n%s", spec->help);
				return VMC_EXIT_OK;
			} else if ((spec->flags & CLI_PID) && is_option(a, "--pid")) {
				const char *v = option_value(argc, argv, &i, "--pid");
				if (!v || parse_pid(v, &o->pid) < 0) {
					vmc_textf(what, sizeof what,
						  "--pid needs a process id, got \"%s\"",
						  v ? v : "");
					return usage_error(spec, o, what);
				}
			} else if ((spec->flags & CLI_WATCH) && is_option(a, "--watch")) {
				const char *v = option_value(argc, argv, &i, "--watch");
				if (!v || cli_duration(v, &o->watch) < 0) {
					vmc_textf(
					    what, sizeof what,
					    "--watch needs an interval such as 2 or 500ms, got "
					    "\"%s\"",
					    v ? v : "");
					return usage_error(spec, o, what);
				}
			} else if ((opt = find_option(spec, a))) {
				const char *v = "";
				if (opt->kind != CLI_FLAG) {
					v = option_value(argc, argv, &i, opt->name);
					if (!v) {
						vmc_textf(what, sizeof what, "%s needs a value",
							  opt->name);
						return usage_error(spec, o, what);
					}
				} else if (a[strlen(opt->name)] == '=') {
					vmc_textf(what, sizeof what, "%s takes no value",
						  opt->name);
					return usage_error(spec, o, what);
				}
				if (set_option(opt, v, what, sizeof what) != 0)
					return usage_error(spec, o, what);
			} else {
				vmc_textf(what, sizeof what, "unknown option \"%s\"", a);
				return usage_error(spec, o, what);
			}
			continue;
		}
		if (o->nargs >= spec->max_args ||
		    o->nargs >= (int)(sizeof o->args / sizeof o->args[0])) {
			vmc_textf(what, sizeof what, "unexpected argument \"%s\"", a);
			return usage_error(spec, o, what);
		}
		o->args[o->nargs++] = argv[i];
	}
	if (o->nargs < spec->min_args)
		return usage_error(spec, o, "missing argument");
	return CLI_CONTINUE;
}

int cli_fail(const struct cli_opts *o, int code, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vmc_verrorf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fflush(stdout);
	cli_progress_done();
	fprintf(stderr, "vmcost: error: %s\n", msg);
	if (o && o->json) {
		json_t *j = json_pack("{s:{s:i,s:s}}", "error", "code", code, "message", msg);
		if (j)
			cli_print_json(j);
	}
	return code;
}

int cli_print_json(json_t *j)
{
	int rc = vmc_json_write(stdout, j);
	json_decref(j);
	return rc == 0 && fflush(stdout) == 0 ? VMC_EXIT_OK : VMC_EXIT_FAILURE;
}

int cli_print_json_line(json_t *j)
{
	char *text = vmc_json_compact(j);
	json_decref(j);
	if (!text)
		return VMC_EXIT_FAILURE;
	int rc = printf("%s\n", text) < 0 || fflush(stdout) != 0 ? VMC_EXIT_FAILURE : VMC_EXIT_OK;
	free(text);
	return rc;
}

int cli_running_instance(const struct cli_opts *o, const char *name, struct lima_instance *inst)
{
	char err[1024];
	int rc = lima_instance_require_running(name, inst, err, sizeof err);
	if (rc != VMC_EXIT_OK)
		return cli_fail(o, rc, "%s", err);
	return VMC_EXIT_OK;
}

int cli_vm_process(const struct cli_opts *o, const char *name, struct lima_instance *inst,
		   struct vmproc *vp)
{
	int rc = cli_running_instance(o, name, inst);
	if (rc != VMC_EXIT_OK)
		return rc;
	char err[1024];
	rc = vmproc_find(inst, o->pid, vp, err, sizeof err);
	if (rc != VMC_EXIT_OK)
		return cli_fail(o, rc, "%s", err);
	return VMC_EXIT_OK;
}

volatile sig_atomic_t cli_stop;

static void on_signal(int sig)
{
	(void)sig;
	cli_stop = 1;
}

void cli_catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int cli_stop_requested(void)
{
	return cli_stop != 0;
}

bool cli_sleep(double seconds)
{
	double end = vmc_monotonic_s() + seconds;
	while (!cli_stop) {
		double left = end - vmc_monotonic_s();
		if (left <= 0)
			return true;
		/* Short naps so a signal that lands between the check and the sleep costs little.
		 */
		if (left > 0.25)
			left = 0.25;
		struct timespec ts = {.tv_sec = (time_t)left,
				      .tv_nsec = (long)((left - (double)(time_t)left) * 1e9)};
		nanosleep(&ts, NULL);
	}
	return false;
}

static bool progress_shown;

void cli_progress(const char *fmt, ...)
{
	if (!isatty(STDERR_FILENO))
		return;
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\r\033[K%s", msg);
	fflush(stderr);
	progress_shown = true;
}

void cli_progress_done(void)
{
	if (!progress_shown)
		return;
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
	progress_shown = false;
}

const char *cli_bold(void)
{
	return vmc_use_color(stdout) ? "\033[1m" : "";
}

const char *cli_reset(void)
{
	return vmc_use_color(stdout) ? "\033[0m" : "";
}

void cli_proc_name(pid_t pid, char *buf, size_t size)
{
	char path[4096];
	if (platform_proc_path(pid, path, sizeof path) == 0) {
		const char *slash = strrchr(path, '/');
		vmc_textf(buf, size, "%s", slash ? slash + 1 : path);
		/* Linux appends " (deleted)" when the binary was upgraded under a running VM. */
		char *deleted = strstr(buf, " (deleted)");
		if (deleted)
			*deleted = '\0';
		return;
	}
	vmc_textf(buf, size, "pid %ld", (long)pid);
}
