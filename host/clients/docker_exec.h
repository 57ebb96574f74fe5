/* SPDX-License-Identifier: Apache-2.0 */
/*
 * docker exec over the Docker Engine API: POST /containers/ID/exec, POST /exec/EID/start
 * (Docker's multiplexed stdout/stderr stream, demultiplexed), GET /exec/EID/json for the exit
 * code. Returns VMC_EXIT_OK or VMC_EXIT_DOCKER with a one-line message in err, as docker.h.
 */
#ifndef VMC_DOCKER_EXEC_H
#define VMC_DOCKER_EXEC_H

#include "clients/docker_call.h"

#include <stdbool.h>
#include <stddef.h>

/* What an exec printed and how it ended. out/err are NUL-terminated, malloc'd. */
struct docker_exec_result {
	long exit_code;
	char *out;
	size_t out_len;
	char *errout;
	size_t errout_len;
	bool truncated; /* output beyond DOCKER_EXEC_MAX_OUTPUT was dropped */
};
#define DOCKER_EXEC_MAX_OUTPUT (1u << 20)

/*
 * Exec argv (NULL-terminated) in a running container. env may be NULL ("KEY=value" strings,
 * NULL-terminated). timeout_ms 0 = none. A non-zero exit code is not an error here: the caller
 * reads res->exit_code.
 */
int docker_exec(const struct docker *d, const char *id, const char *const *argv,
		const char *const *env, long timeout_ms, struct docker_exec_result *res, char *err,
		size_t errsize);
/* Same, and on_output (may be NULL) sees every piece of output as it arrives (progress). */
typedef void (*docker_output_fn)(int stream, const char *data, size_t len, void *ctx);
int docker_exec_stream(const struct docker *d, const char *id, const char *const *argv,
		       const char *const *env, long timeout_ms, docker_output_fn on_output,
		       void *ctx, struct docker_exec_result *res, char *err, size_t errsize);
void docker_exec_result_free(struct docker_exec_result *res);

#endif
