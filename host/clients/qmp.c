/* SPDX-License-Identifier: Apache-2.0 */
/* QMP framing is one JSON object per line ("\r\n"); the objects themselves go to jansson. */
#include "clients/qmp.h"

#include "clock.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* macOS has no MSG_NOSIGNAL; vmcost ignores SIGPIPE in main() for the same effect. */
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

json_t *qmp_parse_message(const char *line, size_t len)
{
	json_error_t jerr;
	json_t *j = json_loadb(line, len, 0, &jerr);
	if (j && !json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* Next complete line as a JSON object; NULL with err on timeout, EOF or garbage. */
static json_t *read_message(struct qmp *q, char *err, size_t errsize)
{
	double deadline = (vmc_monotonic_s() * 1000.0) + (double)q->timeout_ms;
	for (;;) {
		char *nl = memchr(q->buf, '\n', q->len);
		if (nl) {
			size_t line_len = (size_t)(nl - q->buf) + 1;
			json_t *msg = qmp_parse_message(q->buf, line_len);
			memmove(q->buf, q->buf + line_len, q->len - line_len);
			q->len -= line_len;
			if (!msg) {
				vmc_textf(err, errsize,
					  "QEMU sent something that is not a QMP message");
				return NULL;
			}
			return msg;
		}
		if (q->len == sizeof q->buf) {
			vmc_textf(err, errsize, "QMP message longer than %zu bytes", sizeof q->buf);
			return NULL;
		}
		double left = deadline - (vmc_monotonic_s() * 1000.0);
		struct pollfd pfd = {.fd = q->fd, .events = POLLIN};
		int rc = left > 0 ? poll(&pfd, 1, (int)left + 1) : 0;
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0) {
			vmc_textf(err, errsize, "QEMU did not answer on QMP within %ld ms",
				  q->timeout_ms);
			return NULL;
		}
		ssize_t n = read(q->fd, q->buf + q->len, sizeof q->buf - q->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			vmc_textf(err, errsize,
				  "QEMU closed the QMP connection (is another client attached?)");
			return NULL;
		}
		q->len += (size_t)n;
	}
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int qmp_execute(struct qmp *q, const char *command, json_t *args, json_t **ret, char *error_class,
		size_t class_size, char *err, size_t errsize)
{
	*ret = NULL;
	if (error_class && class_size)
		error_class[0] = '\0';
	json_t *req = json_pack("{s:s}", "execute", command);
	if (args)
		json_object_set(req, "arguments", args);
	char *text = vmc_json_compact(req);
	json_decref(req);
	if (!text) {
		vmc_textf(err, errsize, "out of memory");
		return VMC_EXIT_FAILURE;
	}
	int sent = write_all(q->fd, text, strlen(text)) == 0 && write_all(q->fd, "\n", 1) == 0;
	free(text);
	if (!sent) {
		vmc_errorf(err, errsize, "cannot send %s over QMP:", command);
		return VMC_EXIT_FAILURE;
	}
	for (;;) {
		json_t *msg = read_message(q, err, errsize);
		if (!msg)
			return VMC_EXIT_FAILURE;
		json_t *value = json_object_get(msg, "return");
		json_t *error = json_object_get(msg, "error");
		if (value) {
			*ret = json_incref(value);
			json_decref(msg);
			return VMC_EXIT_OK;
		}
		if (error) {
			const char *cls = json_string_value(json_object_get(error, "class"));
			const char *desc = json_string_value(json_object_get(error, "desc"));
			if (error_class && class_size)
				vmc_textf(error_class, class_size, "%s", cls ? cls : "");
			vmc_textf(err, errsize, "QMP %s failed: %s%s%s", command, cls ? cls : "",
				  cls ? ": " : "", desc ? desc : "no description");
			json_decref(msg);
			return VMC_EXIT_FAILURE;
		}
		/* {"event": ...} and anything else: not our answer. */
		json_decref(msg);
	}
}

static void read_version(struct qmp *q, json_t *greeting)
{
	json_t *v =
	    json_object_get(json_object_get(json_object_get(greeting, "QMP"), "version"), "qemu");
	json_int_t major = json_integer_value(json_object_get(v, "major"));
	json_int_t minor = json_integer_value(json_object_get(v, "minor"));
	json_int_t micro = json_integer_value(json_object_get(v, "micro"));
	vmc_textf(q->version, sizeof q->version, "%lld.%lld.%lld", (long long)major,
		  (long long)minor, (long long)micro);
}

int qmp_open(struct qmp *q, const char *socket_path, long timeout_ms, char *err, size_t errsize)
{
	memset(q, 0, sizeof *q);
	q->fd = -1;
	q->timeout_ms = timeout_ms > 0 ? timeout_ms : 5000;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(socket_path) >= sizeof addr.sun_path) {
		vmc_textf(err, errsize, "QMP socket path %s is too long (%zu bytes max)",
			  socket_path, sizeof addr.sun_path - 1);
		return VMC_EXIT_FAILURE;
	}
	memcpy(addr.sun_path, socket_path, strlen(socket_path) + 1);
	q->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (q->fd < 0) {
		vmc_errorf(err, errsize, "socket:");
		return VMC_EXIT_FAILURE;
	}
	fcntl(q->fd, F_SETFD, FD_CLOEXEC);
	if (connect(q->fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
		int e = errno;
		close(q->fd);
		q->fd = -1;
		if (e == EACCES || e == EPERM) {
			vmc_textf(
			    err, errsize,
			    "cannot open %s: permission denied (another user's instance? run as "
			    "that user or root)",
			    socket_path);
			return VMC_EXIT_PERMISSION;
		}
		errno = e;
		vmc_errorf(err, errsize,
			   "cannot connect to QEMU's QMP socket %s (is the instance running?):",
			   socket_path);
		return e == ENOENT ? VMC_EXIT_STOPPED : VMC_EXIT_FAILURE;
	}
	json_t *greeting = read_message(q, err, errsize);
	if (!greeting || !json_object_get(greeting, "QMP")) {
		if (greeting)
			vmc_textf(err, errsize, "%s did not greet like QEMU's QMP", socket_path);
		json_decref(greeting);
		qmp_close(q);
		return VMC_EXIT_FAILURE;
	}
	read_version(q, greeting);
	json_decref(greeting);
	json_t *ret;
	int rc = qmp_execute(q, "qmp_capabilities", NULL, &ret, NULL, 0, err, errsize);
	json_decref(ret);
	if (rc != VMC_EXIT_OK)
		qmp_close(q);
	return rc;
}

void qmp_close(struct qmp *q)
{
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	q->len = 0;
}

int qmp_query_balloon(struct qmp *q, uint64_t *actual, char *error_class, size_t class_size,
		      char *err, size_t errsize)
{
	json_t *ret;
	int rc = qmp_execute(q, "query-balloon", NULL, &ret, error_class, class_size, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	rc = vmc_json_get_u64(ret, "actual", actual) == 0 ? VMC_EXIT_OK : VMC_EXIT_MALFORMED;
	if (rc != VMC_EXIT_OK)
		vmc_textf(err, errsize, "query-balloon answered without an \"actual\" size");
	json_decref(ret);
	return rc;
}

int qmp_balloon(struct qmp *q, uint64_t target, char *error_class, size_t class_size, char *err,
		size_t errsize)
{
	json_t *args = json_pack("{s:o}", "value", vmc_json_u64(target));
	json_t *ret;
	int rc = qmp_execute(q, "balloon", args, &ret, error_class, class_size, err, errsize);
	json_decref(args);
	json_decref(ret);
	return rc;
}
