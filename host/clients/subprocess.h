/* SPDX-License-Identifier: Apache-2.0 */
/* Run a program (limactl) and capture what it prints, without a shell in between. */
#ifndef VMC_SUBPROCESS_H
#define VMC_SUBPROCESS_H

#include <stdbool.h>
#include <stddef.h>

struct spawn_result {
	char *out; /* stdout, NUL-terminated, malloc'd */
	size_t out_len;
	char *err; /* stderr, NUL-terminated, malloc'd */
	size_t err_len;
	int exit_code;	/* exit status, 128+N when killed by signal N, -1 if it did not run */
	bool timed_out; /* killed after timeout_ms */
};

/*
 * Runs argv[0] (looked up on PATH) with argv, stdin from /dev/null, and waits at most
 * timeout_ms (0 = no limit). unset_env names variables removed from the child's environment
 * (NULL-terminated list or NULL). Returns 0 when the program ran (whatever its exit code), -1
 * with errno when it could not be started (ENOENT: not on PATH).
 */
int spawn_capture(char *const argv[], const char *const *unset_env, long timeout_ms,
		  struct spawn_result *res);
void spawn_result_free(struct spawn_result *res);

/* Full path of an executable found on PATH into buf; false if none. */
bool spawn_find_on_path(const char *name, char *buf, size_t size);

#endif
