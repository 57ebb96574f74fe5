/* SPDX-License-Identifier: Apache-2.0 */
#include "autostop/status.h"

#include "autostop/daemon.h"
#include "clock.h"
#include "jsonutil.h"
#include "message.h"
#include "units.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* A status document is a few hundred bytes; anything this large is not one. */
#define STATUS_MAX_BYTES (64 * 1024)

bool autostop_sock_path(const char *instance_dir, const char *name, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/sock/%s", instance_dir, name);
	return n > 0 && (size_t)n < size;
}

/* Reads until EOF, at most STATUS_MAX_BYTES, within AUTOSTOP_STATUS_TIMEOUT_MS. */
static char *read_all(int fd, size_t *len, bool *timed_out)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	double t0 = vmc_monotonic_s();
	*timed_out = false;
	while (buf) {
		long left = AUTOSTOP_STATUS_TIMEOUT_MS - (long)((vmc_monotonic_s() - t0) * 1000);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int pr = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			*timed_out = pr == 0;
			break;
		}
		if (n == cap) {
			if (cap >= STATUS_MAX_BYTES)
				break;
			char *grown = realloc(buf, cap * 2);
			if (!grown)
				break;
			buf = grown;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	return NULL;
}

int autostop_status_fetch(const char *instance_dir, json_t **doc, char *err, size_t errsize)
{
	*doc = NULL;
	char path[4200];
	if (!autostop_sock_path(instance_dir, AUTOSTOP_STATUS_SOCKET_NAME, path, sizeof path))
		return errorf(err, errsize, "%s: path too long", instance_dir), -1;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path)
		return errorf(err, errsize, "%s: too long for a unix socket", path), -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errorf(err, errsize, "socket:"), -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		if (e == ENOENT || e == ECONNREFUSED)
			return errorf(err, errsize,
				      "no vmcost autostop serves this instance (%s %s)", path,
				      e == ENOENT ? "does not exist" : "is stale"),
			       -1;
		return errorf(err, errsize, "%s:", path), -1;
	}
	size_t len = 0;
	bool timed_out;
	char *text = read_all(fd, &len, &timed_out);
	close(fd);
	if (!text)
		return errorf(err, errsize, "%s: %s", path,
			      timed_out ? "no answer within 2 s"
					: "read failed or answer too long"),
		       -1;
	json_error_t jerr;
	*doc = json_loadb(text, len, 0, &jerr);
	free(text);
	if (!json_is_object(*doc)) {
		json_decref(*doc);
		*doc = NULL;
		return errorf(err, errsize, "%s: the answer is not a status document (%s)", path,
			      jerr.text),
		       -1;
	}
	return 0;
}

static double num(const json_t *doc, const char *key, bool *present)
{
	json_t *v = json_object_get(doc, key);
	*present = json_is_number(v);
	return *present ? json_number_value(v) : 0;
}

static const char *str(const json_t *doc, const char *key)
{
	const char *s = vmc_json_get_str(doc, key);
	return s ? s : "?";
}

void autostop_status_cell(const json_t *doc, char *buf, size_t size)
{
	const char *state = str(doc, "state");
	bool has_idle, has_freed, has_start;
	double idle = num(doc, "idle_for_s", &has_idle);
	double freed = num(doc, "last_stop_ram_freed", &has_freed);
	double start = num(doc, "last_start_s", &has_start);
	char a[32], b[32];
	if (strcmp(state, "running") == 0 && has_idle && idle > 0)
		textf(buf, size, "idle %s", vmc_format_duration(idle, a, sizeof a));
	else if (strcmp(state, "stopped by autostop") == 0 && has_freed)
		textf(buf, size, "stopped, freed %s",
		      vmc_format_bytes_delta((int64_t)freed, a, sizeof a));
	else if (strcmp(state, "running") == 0 && has_start)
		textf(buf, size, "running, started in %s", vmc_format_duration(start, b, sizeof b));
	else
		textf(buf, size, "%s", state);
}

void autostop_status_print(const json_t *doc, FILE *f)
{
	bool present;
	char a[32], b[32];
	double period = num(doc, "idle_period_s", &present);
	double idle = num(doc, "idle_for_s", &present);
	double state_for = num(doc, "state_for_s", &present);
	json_int_t clients = json_integer_value(json_object_get(doc, "clients"));
	fprintf(f, "%s: %s for %s\n", str(doc, "instance"), str(doc, "state"),
		vmc_format_duration(state_for, a, sizeof a));
	if (idle > 0)
		fprintf(f, "  idle:        %s of %s (no client, no running container)\n",
			vmc_format_duration(idle, a, sizeof a),
			vmc_format_duration(period, b, sizeof b));
	else
		fprintf(f, "  idle:        no (%lld client%s open%s); idle period %s\n",
			(long long)clients, clients == 1 ? "" : "s",
			json_integer_value(json_object_get(doc, "containers_running")) > 0
			    ? ", containers running"
			    : "",
			vmc_format_duration(period, b, sizeof b));
	double start = num(doc, "last_start_s", &present);
	fprintf(f, "  last start:  %s\n",
		present ? vmc_format_duration(start, a, sizeof a) : "none yet");
	double freed = num(doc, "last_stop_ram_freed", &present);
	fprintf(f, "  last stop:   %s\n",
		present ? textf(b, sizeof b, "host free memory %s",
				vmc_format_bytes_delta((int64_t)freed, a, sizeof a))
			: "none yet");
	fprintf(f, "  decision:    %s\n", str(doc, "last_decision"));
	fprintf(f, "  daemon:      pid %lld, listening on %s\n",
		(long long)json_integer_value(json_object_get(doc, "pid")), str(doc, "listen"));
}
