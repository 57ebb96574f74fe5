/* SPDX-License-Identifier: Apache-2.0 */
#include "autostop/status.h"

#include "autostop/sockfile.h"
#include "clock.h"
#include "jsonutil.h"
#include "log.h"
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

/* ---- the daemon's side ------------------------------------------------------------------- */

json_t *autostop_status_document(const struct autostop *a, const char *listen, const char *upstream,
				 double now)
{
	json_t *j = json_object();
	json_object_set_new(j, "instance", json_string(a->name));
	json_object_set_new(j, "pid", json_integer(getpid()));
	json_object_set_new(j, "listen", json_string(listen));
	json_object_set_new(j, "upstream", json_string(upstream));
	json_object_set_new(j, "state", json_string(autostop_state_name(a->state)));
	json_object_set_new(j, "state_for_s", json_real(now - a->state_since));
	json_object_set_new(j, "clients", json_integer(a->clients));
	json_object_set_new(j, "clients_working", json_integer(a->working));
	json_object_set_new(j, "clients_polling", json_integer(a->polling));
	json_object_set_new(j, "idle_period_s", json_real(a->idle_period));
	json_object_set_new(j, "idle_for_s", json_real(autostop_idle_for(a, now)));
	json_object_set_new(j, "containers_running",
			    a->checked_once ? json_integer(a->containers) : json_null());
	json_object_set_new(j, "last_start_s",
			    a->has_last_start ? json_real(a->last_start_s) : json_null());
	json_object_set_new(j, "last_stop_ram_freed",
			    a->has_last_freed ? json_integer(a->last_freed) : json_null());
	json_object_set_new(j, "starts", json_integer(a->starts));
	json_object_set_new(j, "stops", json_integer(a->stops));
	/* deep idle: what autostop froze (--freeze-after), and for how long */
	json_object_set_new(j, "freeze_after_s", json_real(a->freeze_after));
	json_object_set_new(j, "engine", json_string(autostop_engine_name(a->engine)));
	json_object_set_new(j, "engine_freezes", json_integer(a->freezes));
	double frozen_for = autostop_frozen_for(a, now);
	json_object_set_new(j, "engine_frozen_for_s",
			    a->engine == AUTOSTOP_ENGINE_FROZEN ||
				    a->engine == AUTOSTOP_ENGINE_THAWING
				? json_real(frozen_for)
				: json_null());
	json_object_set_new(j, "engine_frozen_total_s", json_real(a->frozen_total + frozen_for));
	json_object_set_new(j, "snapshot",
			    a->snapshot ? json_pack("{s:s,s:I}", "taken", a->snapshot_taken,
						    "answered", (json_int_t)a->snapshot_answers)
					: json_null());
	json_object_set_new(j, "last_decision", json_string(a->decision));
	json_object_set_new(j, "version", json_string(VMCOST_VERSION));
	return j;
}

struct status_write {
	uv_write_t req;
	uv_pipe_t pipe;
	char *text;
};

static void on_status_closed(uv_handle_t *h)
{
	struct status_write *w = h->data;
	free(w->text);
	free(w);
}

static void on_status_written(uv_write_t *req, int status)
{
	(void)status;
	struct status_write *w = (struct status_write *)req;
	uv_close((uv_handle_t *)&w->pipe, on_status_closed);
}

static void on_status_client(uv_stream_t *server, int status)
{
	struct autostop_status_server *s = server->data;
	if (status < 0)
		return;
	struct status_write *w = calloc(1, sizeof *w);
	if (!w)
		return;
	uv_pipe_init(server->loop, &w->pipe, 0);
	w->pipe.data = w;
	if (uv_accept(server, (uv_stream_t *)&w->pipe) < 0) {
		uv_close((uv_handle_t *)&w->pipe, on_status_closed);
		return;
	}
	json_t *j = s->document(s->ctx);
	w->text = j ? vmc_json_compact(j) : NULL;
	json_decref(j);
	if (!w->text) {
		uv_close((uv_handle_t *)&w->pipe, on_status_closed);
		return;
	}
	uv_buf_t buf = uv_buf_init(w->text, (unsigned)strlen(w->text));
	if (uv_write(&w->req, (uv_stream_t *)&w->pipe, &buf, 1, on_status_written) < 0)
		uv_close((uv_handle_t *)&w->pipe, on_status_closed);
}

int autostop_status_serve(uv_loop_t *loop, struct autostop_status_server *s, const char *path,
			  char *err, size_t errsize)
{
	int rc = sockfile_prepare(path, "status socket", err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	rc = sockfile_listen(loop, &s->pipe, path, s, on_status_client, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	vmc_textf(s->path, sizeof s->path, "%s", path);
	s->open = s->unlink_on_close = true;
	return VMC_EXIT_OK;
}

void autostop_status_close(struct autostop_status_server *s)
{
	if (!s->open)
		return;
	uv_close((uv_handle_t *)&s->pipe, NULL);
	s->open = false;
	if (s->unlink_on_close)
		unlink(s->path);
}

/* ---- a reader's side --------------------------------------------------------------------- */

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
		return vmc_errorf(err, errsize, "%s: path too long", instance_dir), -1;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path)
		return vmc_errorf(err, errsize, "%s: too long for a unix socket", path), -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return vmc_errorf(err, errsize, "socket:"), -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		if (e == ENOENT || e == ECONNREFUSED)
			return vmc_errorf(err, errsize,
					  "no vmcost autostop serves this instance (%s %s)", path,
					  e == ENOENT ? "does not exist" : "is stale"),
			       -1;
		return vmc_errorf(err, errsize, "%s:", path), -1;
	}
	size_t len = 0;
	bool timed_out;
	char *text = read_all(fd, &len, &timed_out);
	close(fd);
	if (!text)
		return vmc_errorf(err, errsize, "%s: %s", path,
				  timed_out ? "no answer within 2 s"
					    : "read failed or answer too long"),
		       -1;
	json_error_t jerr;
	*doc = json_loadb(text, len, 0, &jerr);
	free(text);
	if (!json_is_object(*doc)) {
		json_decref(*doc);
		*doc = NULL;
		return vmc_errorf(err, errsize, "%s: the answer is not a status document (%s)",
				  path, jerr.text),
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
	const char *engine = vmc_json_get_str(doc, "engine");
	bool has_idle, has_freed, has_start;
	double idle = num(doc, "idle_for_s", &has_idle);
	double freed = num(doc, "last_stop_ram_freed", &has_freed);
	double start = num(doc, "last_start_s", &has_start);
	char a[32], b[32];
	/* Only a frozen (or freezing, thawing) engine is news in one short cell. */
	bool engine_news = engine && strcmp(state, "running") == 0 &&
			   strcmp(engine, "running") != 0 && strcmp(engine, "unknown") != 0;
	if (strcmp(state, "running") == 0 && has_idle && idle > 0 && engine_news)
		vmc_textf(buf, size, "idle %s, engine %s", vmc_format_duration(idle, a, sizeof a),
			  engine);
	else if (strcmp(state, "running") == 0 && has_idle && idle > 0)
		vmc_textf(buf, size, "idle %s", vmc_format_duration(idle, a, sizeof a));
	else if (strcmp(state, "stopped by autostop") == 0 && has_freed)
		vmc_textf(buf, size, "stopped, freed %s",
			  vmc_format_bytes_delta((int64_t)freed, a, sizeof a));
	else if (strcmp(state, "running") == 0 && has_start)
		vmc_textf(buf, size, "running, started in %s",
			  vmc_format_duration(start, b, sizeof b));
	else
		vmc_textf(buf, size, "%s", state);
}

/* "engine:      frozen for 12 s (deep idle after 30 s idle; 2 freezes, 1 min 4 s frozen in all)" */
static void print_engine(const json_t *doc, FILE *f)
{
	const char *engine = vmc_json_get_str(doc, "engine");
	if (!engine)
		return; /* a daemon from before deep idle */
	bool present;
	char a[32], b[32], c[32];
	double after = num(doc, "freeze_after_s", &present);
	double frozen_for = num(doc, "engine_frozen_for_s", &present);
	bool has_frozen_for = present;
	double total = num(doc, "engine_frozen_total_s", &present);
	json_int_t freezes = json_integer_value(json_object_get(doc, "engine_freezes"));
	char policy[64];
	if (after > 0)
		vmc_textf(policy, sizeof policy, "deep idle after %s idle",
			  vmc_format_duration(after, c, sizeof c));
	else
		vmc_textf(policy, sizeof policy, "deep idle off");
	if (has_frozen_for)
		fprintf(f, "  engine:      %s for %s (%s; %lld freeze%s, %s frozen in all)\n",
			engine, vmc_format_duration(frozen_for, a, sizeof a), policy,
			(long long)freezes, freezes == 1 ? "" : "s",
			vmc_format_duration(total, b, sizeof b));
	else if (freezes > 0)
		fprintf(f, "  engine:      %s (%s; %lld freeze%s, %s frozen in all)\n", engine,
			policy, (long long)freezes, freezes == 1 ? "" : "s",
			vmc_format_duration(total, b, sizeof b));
	else
		fprintf(f, "  engine:      %s (%s; not frozen yet)\n", engine, policy);
}

void autostop_status_print(const json_t *doc, FILE *f)
{
	bool present;
	char a[32], b[32];
	double period = num(doc, "idle_period_s", &present);
	double idle = num(doc, "idle_for_s", &present);
	double state_for = num(doc, "state_for_s", &present);
	json_int_t clients = json_integer_value(json_object_get(doc, "clients"));
	json_int_t working = json_integer_value(json_object_get(doc, "clients_working"));
	json_int_t containers = json_integer_value(json_object_get(doc, "containers_running"));
	const char *state = str(doc, "state");
	fprintf(f, "%s: %s for %s\n", str(doc, "instance"), state,
		vmc_format_duration(state_for, a, sizeof a));
	if (idle > 0)
		fprintf(f, "  idle:        %s of %s (no client at work, no running container)\n",
			vmc_format_duration(idle, a, sizeof a),
			vmc_format_duration(period, b, sizeof b));
	else if (working == 0 && containers == 0 && strcmp(state, "running") == 0)
		/* Work ended a moment ago: the period begins once Docker has said that no
		 * container runs (asked a second after the last work). */
		fprintf(f,
			"  idle:        not yet (no client at work; the idle period begins once "
			"Docker reports no running container); idle period %s\n",
			vmc_format_duration(period, b, sizeof b));
	else if (working == 0 && containers == 0)
		fprintf(f, "  idle:        not counted while %s; idle period %s\n", state,
			vmc_format_duration(period, b, sizeof b));
	else
		fprintf(f, "  idle:        no (%lld of %lld client%s at work%s); idle period %s\n",
			(long long)working, (long long)clients, clients == 1 ? "" : "s",
			containers > 0 ? ", containers running" : "",
			vmc_format_duration(period, b, sizeof b));
	double start = num(doc, "last_start_s", &present);
	fprintf(f, "  last start:  %s\n",
		present ? vmc_format_duration(start, a, sizeof a) : "none yet");
	double freed = num(doc, "last_stop_ram_freed", &present);
	fprintf(f, "  last stop:   %s\n",
		present ? vmc_textf(b, sizeof b, "host free memory %s",
				    vmc_format_bytes_delta((int64_t)freed, a, sizeof a))
			: "none yet");
	print_engine(doc, f);
	json_t *snap = json_object_get(doc, "snapshot");
	if (json_is_object(snap))
		fprintf(f, "  snapshot:    taken %s; %lld poll%s answered from it\n",
			str(snap, "taken"),
			(long long)json_integer_value(json_object_get(snap, "answered")),
			json_integer_value(json_object_get(snap, "answered")) == 1 ? "" : "s");
	fprintf(f, "  decision:    %s\n", str(doc, "last_decision"));
	fprintf(f, "  daemon:      pid %lld, listening on %s\n",
		(long long)json_integer_value(json_object_get(doc, "pid")), str(doc, "listen"));
}
