/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runs limactl (shell, stop, start, --version) for memtest and load: output captured and
 * bounded, a timeout, and an abort flag (SIGINT/SIGTERM) that stops the child instead of
 * waiting for it, so an interrupted run leaves nothing behind in the guest that it cannot clean.
 */
#ifndef VMC_LIMACTL_RUN_H
#define VMC_LIMACTL_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

struct limactl_result {
	int exit_code; /* exit status; 128+N when killed by signal N; -1 if it did not run */
	char *out;     /* stdout (NUL-terminated, malloc'd, at most LIMACTL_MAX_OUTPUT) */
	size_t out_len;
	char *err; /* stderr, same bounds */
	size_t err_len;
	bool timed_out;
	bool interrupted; /* *stop became non-zero; the child was terminated */
};

#define LIMACTL_MAX_OUTPUT (1u << 20)

/*
 * Runs `limactl ARGS...` (args NULL-terminated, without "limactl"). timeout_ms 0 = none; stop
 * may be NULL. Returns 0 when it ran (see exit_code), -1 with errno when it could not start
 * (ENOENT: limactl is not on PATH).
 */
int limactl_run(const char *const *args, long timeout_ms, volatile sig_atomic_t *stop,
		struct limactl_result *res);
void limactl_result_free(struct limactl_result *res);

/* The last non-empty line of text (limactl's "level=fatal msg=..." line) into buf. */
void limactl_last_line(const char *text, char *buf, size_t size);

/* First line of `limactl --version` ("limactl version 2.2.0"), or "limactl version unknown". */
void limactl_version_line(char *buf, size_t size);

#endif
