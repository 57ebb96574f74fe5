/* SPDX-License-Identifier: Apache-2.0 */
/* One error idiom for both programs: vmc_die()/vmc_warn()/vmc_info()/vmc_debug(), documented exit
 * codes. */
#ifndef VMC_LOG_H
#define VMC_LOG_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Exit codes. The README's table is generated from this list by hand: keep them in sync.
 * Distinct codes let scripts (bench/, CI) tell "instance stopped" from "agent down".
 */
enum vmc_exit {
	VMC_EXIT_OK = 0,
	VMC_EXIT_FAILURE = 1,	    /* anything not listed below */
	VMC_EXIT_USAGE = 2,	    /* bad command line */
	VMC_EXIT_NO_INSTANCE = 3,   /* unknown Lima instance */
	VMC_EXIT_STOPPED = 4,	    /* instance exists but is not running */
	VMC_EXIT_AGENT = 5,	    /* vmcost-agent not reachable or answered an error */
	VMC_EXIT_HELPER = 6,	    /* RAM-holding process not found or ambiguous */
	VMC_EXIT_PERMISSION = 7,    /* permission denied (another user's VM, not root) */
	VMC_EXIT_MALFORMED = 8,	    /* malformed lima.yaml, limactl output or config file */
	VMC_EXIT_UNSUPPORTED = 9,   /* not available on this OS / vmType */
	VMC_EXIT_DOCKER = 10,	    /* Docker Engine API failure */
	VMC_EXIT_INCONCLUSIVE = 11, /* measurement ran but its control failed */
	VMC_EXIT_INTERRUPTED = 130, /* SIGINT/SIGTERM */
};

enum vmc_level { VMC_LOG_ERROR, VMC_LOG_WARN, VMC_LOG_INFO, VMC_LOG_DEBUG };

/* progname prefixes every message ("vmcost: ..."). */
void vmc_log_init(const char *progname);
void vmc_log_set_level(enum vmc_level level);
enum vmc_level vmc_log_level(void);
/* Daemon mode: messages go to syslog(3) instead of stderr (never to a file on disk). */
void vmc_log_use_syslog(bool on);
/* Parse "error", "warn", "info", "debug"; returns -1 on anything else. */
int vmc_log_level_parse(const char *s);

/*
 * A format ending in ':' appends " strerror(errno)" (the rule of vmc_errorf() in message.h, which
 * keeps a message in a buffer instead of printing it). vmc_die() exits with code; the message
 * should say what to do next. errno is left as it was.
 */
__attribute__((noreturn, format(printf, 2, 3))) void vmc_die(int code, const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void vmc_warn(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void vmc_info(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void vmc_debug(const char *fmt, ...);

/* True when colour escapes may be written to f: a TTY and NO_COLOR unset or empty. */
bool vmc_use_color(FILE *f);

#endif
