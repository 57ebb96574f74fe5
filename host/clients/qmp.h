/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A QMP client for $LIMA_HOME/NAME/qmp.sock (qemu instances only; docs/lima.md#qmp,
 * docs/linux-guest.md#qmp-balloon): greeting, qmp_capabilities, then commands. Asynchronous events
 * (BALLOON_CHANGE...) that arrive between a command and its answer are skipped.
 */
#ifndef VMC_QMP_H
#define VMC_QMP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct qmp {
	int fd;
	long timeout_ms;
	char buf[65536]; /* bytes read but not yet consumed (one message per line) */
	size_t len;
	char version[32]; /* "7.2.22" from the greeting */
};

/*
 * Connects, reads the greeting and negotiates capabilities. Returns VMC_EXIT_OK, or an exit
 * code with a message in err (socket missing: instance stopped; refused: QEMU busy...).
 */
int qmp_open(struct qmp *q, const char *socket_path, long timeout_ms, char *err, size_t errsize);
void qmp_close(struct qmp *q);

/*
 * Runs one command (args may be NULL; borrowed). On success *ret is a new reference to the
 * "return" value. A QMP error gives VMC_EXIT_FAILURE with "Class: desc" in err and its class in
 * error_class (if not NULL), e.g. "DeviceNotActive" when the VM has no balloon.
 */
int qmp_execute(struct qmp *q, const char *command, json_t *args, json_t **ret, char *error_class,
		size_t class_size, char *err, size_t errsize);

/* query-balloon: the guest's logical RAM size now (bytes). */
int qmp_query_balloon(struct qmp *q, uint64_t *actual, char *error_class, size_t class_size,
		      char *err, size_t errsize);
/* balloon: set the target logical RAM size (bytes). Asynchronous in the guest. */
int qmp_balloon(struct qmp *q, uint64_t target, char *error_class, size_t class_size, char *err,
		size_t errsize);

/* Splits one received line into a message: exposed for the fuzzer and tests. */
json_t *qmp_parse_message(const char *line, size_t len);

#endif
