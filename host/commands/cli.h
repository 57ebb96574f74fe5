/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every subcommand shares: option parsing (--json, --help, --pid, --watch, positional
 * arguments), errors that are returned rather than exiting (so tests can call commands), JSON
 * output, progress on a TTY, and interruption by SIGINT/SIGTERM.
 */
#ifndef VMC_CLI_H
#define VMC_CLI_H

#include "clients/lima.h"
#include "clients/vmproc.h"

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum cli_flags {
	CLI_PID = 1 << 0,   /* --pid PID */
	CLI_WATCH = 1 << 1, /* --watch SECONDS */
};

/* The kinds of value a command's own long option takes (checked by cli_parse). */
enum cli_value {
	CLI_FLAG,    /* no value: *flag = true */
	CLI_TEXT,    /* any text: *text points into argv */
	CLI_COUNT,   /* a whole number 1..100000: *count */
	CLI_SECONDS, /* a positive duration ("40", "40s", "2m", "500ms"): *seconds */
	CLI_SIZE,    /* a size ("1G", "512MiB", "4096"): *size */
};

/*
 * A command's own option, --name VALUE or --name=VALUE. The target matching kind is written;
 * given (optional) becomes true when the option is on the command line; none (optional) makes
 * the word "none" a valid value that sets *none instead of the target.
 */
struct cli_option {
	const char *name; /* "--size" */
	enum cli_value kind;
	union {
		bool *flag;
		const char **text;
		int *count;
		double *seconds;
		uint64_t *size;
	};
	bool *given;
	bool *none;
};

struct cli_spec {
	const char *name;     /* "footprint" */
	const char *synopsis; /* "NAME [--watch SECONDS] [--pid PID] [--json]" */
	const char *help;     /* what it does, its arguments, an example (printed by --help) */
	unsigned flags;
	int min_args, max_args;
	const struct cli_option *options; /* the command's own, ended by {0}; may be NULL */
};

struct cli_opts {
	bool json;
	pid_t pid;    /* --pid, 0 if not given */
	double watch; /* --watch seconds, 0 if not given */
	int nargs;
	char *args[8];
};

/* Returned by cli_parse when the command should go on. */
#define CLI_CONTINUE (-1)

/* Parses argv (argv[0] is the subcommand). Returns CLI_CONTINUE, or the exit code to return. */
int cli_parse(const struct cli_spec *spec, int argc, char **argv, struct cli_opts *o);

/* A usage error found after cli_parse (a value that does not fit the others): the usage line
 * on stderr, then cli_fail with VMC_EXIT_USAGE. Returns VMC_EXIT_USAGE. */
__attribute__((format(printf, 3, 4))) int
cli_usage_error(const struct cli_spec *spec, const struct cli_opts *o, const char *fmt, ...);

/*
 * Reports an error and returns code: "vmcost: error: MSG" on stderr and, with --json, also
 * {"error": {"code": N, "message": MSG}} on stdout so scripts parsing stdout see it. A format
 * ending in ':' appends strerror(errno), as vmc_errorf() and vmc_die() do.
 */
__attribute__((format(printf, 3, 4))) int cli_fail(const struct cli_opts *o, int code,
						   const char *fmt, ...);

/* Prints j (indented) on stdout and releases it. Returns VMC_EXIT_OK, or FAILURE if writing
 * failed (a closed pipe). */
int cli_print_json(json_t *j);
/* One compact line (JSON Lines for --watch); releases j. */
int cli_print_json_line(json_t *j);

/* Loads the named instance and insists that it runs: returns an exit code (cli_fail done). */
int cli_running_instance(const struct cli_opts *o, const char *name, struct lima_instance *inst);
/* Same, plus the RAM-holding process (honours --pid). */
int cli_vm_process(const struct cli_opts *o, const char *name, struct lima_instance *inst,
		   struct vmproc *vp);

/* SIGINT/SIGTERM set a flag instead of killing us, so long runs clean up and exit 130. The flag
 * itself is shared so long-running helpers (process_run, pressure_run, workloads) can poll it. */
extern volatile sig_atomic_t cli_stop;
void cli_catch_signals(void);
/* Non-zero once SIGINT/SIGTERM arrived (the shape docker_set_abort_check() takes). */
int cli_stop_requested(void);
/* Sleeps, waking early on a signal; false if interrupted. */
bool cli_sleep(double seconds);

/* Progress on stderr, rewritten in place, only when stderr is a TTY; cli_progress_done clears. */
__attribute__((format(printf, 1, 2))) void cli_progress(const char *fmt, ...);
void cli_progress_done(void);

/* Colour for table headers and statuses when stdout is a TTY and NO_COLOR is unset. */
const char *cli_bold(void);
const char *cli_reset(void);

/* Basename of a process's executable (the comm on failure), for "qemu-system-x86_64 pid 123". */
void cli_proc_name(pid_t pid, char *buf, size_t size);

/* Parses a positive duration argument ("20", "2m", "500ms"). */
int cli_duration(const char *s, double *seconds);

#endif
