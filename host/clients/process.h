/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Running a program (limactl, sw_vers) and capturing what it prints, without a shell in between:
 * stdin from /dev/null, stdout and stderr captured and bounded, an optional timeout and stop
 * flag. The child runs in its own process group, so a timeout or a stop reaches what it started
 * too (limactl shell's ssh, a guest command's children): SIGTERM, SIGKILL 3 s later.
 */
#ifndef VMC_PROCESS_H
#define VMC_PROCESS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/* Every field may be left zero. */
struct process_options {
	long timeout_ms;	      /* 0: no limit */
	volatile sig_atomic_t *stop;  /* when it becomes non-zero the child is terminated */
	const char *const *unset_env; /* variables removed from the child's environment */
	size_t max_output;	      /* bytes kept per stream; 0: PROCESS_MAX_OUTPUT */
};

/* limactl's JSON for dozens of instances is a few hundred KiB; more is not limactl talking. */
#define PROCESS_MAX_OUTPUT ((size_t)16 << 20)

struct process_result {
	char *out; /* stdout, NUL-terminated, malloc'd */
	size_t out_len;
	char *err; /* stderr, the same */
	size_t err_len;
	int exit_code;	  /* exit status, 128+N when killed by signal N */
	bool timed_out;	  /* terminated after timeout_ms */
	bool interrupted; /* terminated because *stop became non-zero */
	bool truncated;	  /* a stream said more than max_output: the rest was read and dropped */
};

/*
 * Runs argv[0] (looked up on PATH) with argv (NULL-terminated). Returns 0 when the program ran,
 * whatever its exit code; -1 with errno when it could not be started (ENOENT: not on PATH).
 * opt may be NULL.
 */
int process_run(const char *const argv[], const struct process_options *opt,
		struct process_result *res);
void process_result_free(struct process_result *res);

/*
 * The first line a program prints on stdout when it exits 0 (`limactl --version`, `sw_vers
 * -productVersion`) into buf; 0, or -1 with buf "" (not found, failed, silent).
 */
int process_first_line(const char *const argv[], long timeout_ms, char *buf, size_t size);

/* The last non-empty line of text (limactl's "level=fatal msg=..." line) into buf; "" if none. */
void process_last_line(const char *text, char *buf, size_t size);

/* Full path of an executable found on PATH into buf; false if none. */
bool process_find_on_path(const char *name, char *buf, size_t size);

#endif
