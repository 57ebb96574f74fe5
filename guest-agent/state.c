/* SPDX-License-Identifier: Apache-2.0 */
#include "state.h"

#include "clock.h"
#include "jsonutil.h"
#include "log.h"
#include "procfs.h"
#include "psi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int default_write(void *ctx, const char *abs_path, const char *data)
{
	(void)ctx;
	return vmc_fs_write(abs_path, data);
}

/* CLOCK_BOOTTIME: one clock for every process of this boot (daemon and CLI compare times). */
static double default_now(void *ctx)
{
	(void)ctx;
	return vmc_boottime_s();
}

static void default_sleep(void *ctx, double seconds)
{
	(void)ctx;
	vmc_sleep_s(seconds);
}

const char *reclaim_format_name(enum reclaim_format f)
{
	switch (f) {
	case RECLAIM_FORMAT_SWAPPINESS:
		return "<bytes> swappiness=0";
	case RECLAIM_FORMAT_BYTES:
		return "<bytes>";
	default:
		return "unknown";
	}
}

static enum reclaim_format reclaim_format_parse(const char *s)
{
	if (s && strcmp(s, "<bytes> swappiness=0") == 0)
		return RECLAIM_FORMAT_SWAPPINESS;
	if (s && strcmp(s, "<bytes>") == 0)
		return RECLAIM_FORMAT_BYTES;
	return RECLAIM_FORMAT_UNKNOWN;
}

void idle_sample_take(struct agent_state *st, struct idle_sample *s)
{
	static const char *const resources[3] = {"cpu", "io", "memory"};
	memset(s, 0, sizeof *s);
	s->t = st->io.now(st->io.ctx);
	struct vmc_procstat ps;
	s->cpu_ok = vmc_procstat_read(&ps) == 0;
	if (s->cpu_ok)
		s->cpu = ps.cpu;
	s->psi_ok = true;
	for (int i = 0; i < 3; i++) {
		struct vmc_psi psi;
		if (vmc_psi_read(resources[i], &psi) < 0) {
			s->psi_ok = false;
			break;
		}
		s->psi_total_us[i] = psi.some.total_us;
	}
}

/* ---- persistence ---------------------------------------------------------------------- */

static json_t *record_json(const struct trim_record *r)
{
	json_t *j = json_object();
	json_object_set_new(j, "when", json_integer((json_int_t)r->when));
	json_object_set_new(j, "at", json_real(r->at));
	json_object_set_new(j, "duration_s", json_real(r->duration_s));
	json_object_set_new(j, "method", json_string(r->method));
	json_object_set_new(j, "format", json_string(r->format));
	json_object_set_new(j, "target_bytes", vmc_json_u64(r->target_bytes));
	json_object_set_new(j, "reclaimed_bytes", vmc_json_u64(r->reclaimed_bytes));
	json_object_set_new(j, "freed_bytes", vmc_json_u64(r->freed_bytes));
	json_object_set_new(j, "steps", json_integer(r->steps));
	json_object_set_new(j, "eagain", json_boolean(r->eagain));
	json_object_set_new(j, "compacted", json_boolean(r->compacted));
	json_object_set_new(j, "forced", json_boolean(r->forced));
	return j;
}

static void copy_str(char *out, size_t size, const json_t *obj, const char *key)
{
	const char *s = vmc_json_get_str(obj, key);
	snprintf(out, size, "%s", s ? s : "");
}

static void record_from_json(const json_t *j, struct trim_record *r)
{
	memset(r, 0, sizeof *r);
	r->when = (time_t)json_integer_value(json_object_get(j, "when"));
	r->at = json_number_value(json_object_get(j, "at"));
	r->duration_s = json_number_value(json_object_get(j, "duration_s"));
	copy_str(r->method, sizeof r->method, j, "method");
	copy_str(r->format, sizeof r->format, j, "format");
	vmc_json_get_u64(j, "target_bytes", &r->target_bytes);
	vmc_json_get_u64(j, "reclaimed_bytes", &r->reclaimed_bytes);
	vmc_json_get_u64(j, "freed_bytes", &r->freed_bytes);
	r->steps = (unsigned)json_integer_value(json_object_get(j, "steps"));
	r->eagain = json_is_true(json_object_get(j, "eagain"));
	r->compacted = json_is_true(json_object_get(j, "compacted"));
	r->forced = json_is_true(json_object_get(j, "forced"));
}

static json_t *decision_json(const struct trim_decision *d)
{
	json_t *j = json_object();
	json_object_set_new(j, "when", json_integer((json_int_t)d->when));
	json_object_set_new(j, "at", json_real(d->at));
	json_object_set_new(j, "outcome", json_string(d->outcome));
	json_object_set_new(j, "reason", json_string(d->reason));
	return j;
}

static void read_boot_id(char *out, size_t size)
{
	if (vmc_fs_read_line("/proc/sys/kernel/random/boot_id", out, size) < 0)
		out[0] = '\0';
}

static void state_load(struct agent_state *st)
{
	char *buf;
	size_t len;
	if (vmc_fs_read(TRIM_STATE_FILE, &buf, &len, 256 * 1024) < 0)
		return;
	json_t *doc = json_loadb(buf, len, 0, NULL);
	free(buf);
	if (!json_is_object(doc)) {
		json_decref(doc);
		return;
	}
	/* Times are CLOCK_BOOTTIME: meaningless after a reboot (if /run was not a tmpfs). */
	const char *boot_id = vmc_json_get_str(doc, "boot_id");
	if (!boot_id || strcmp(boot_id, st->boot_id) != 0) {
		json_decref(doc);
		return;
	}
	st->format = reclaim_format_parse(vmc_json_get_str(doc, "reclaim_format"));
	const json_t *last = json_object_get(doc, "last_trim_at");
	if (json_is_number(last)) {
		st->has_last_trim = true;
		st->last_trim_at = json_number_value(last);
	}
	const json_t *d = json_object_get(doc, "last_decision");
	if (json_is_object(d)) {
		st->has_decision = true;
		st->last_decision.when = (time_t)json_integer_value(json_object_get(d, "when"));
		st->last_decision.at = json_number_value(json_object_get(d, "at"));
		copy_str(st->last_decision.outcome, sizeof st->last_decision.outcome, d, "outcome");
		copy_str(st->last_decision.reason, sizeof st->last_decision.reason, d, "reason");
	}
	const json_t *hist = json_object_get(doc, "history");
	size_t i;
	const json_t *rec;
	json_array_foreach(hist, i, rec)
	{
		if (!json_is_object(rec))
			continue;
		struct trim_record r;
		record_from_json(rec, &r);
		state_push_record(st, &r);
	}
	json_decref(doc);
}

void state_refresh(struct agent_state *st)
{
	struct agent_state *disk = calloc(1, sizeof *disk);
	if (!disk)
		return;
	snprintf(disk->boot_id, sizeof disk->boot_id, "%s", st->boot_id);
	state_load(disk);
	/* Another process (a CLI trim) saved after us: its file holds our history plus its own. */
	if (disk->has_last_trim && (!st->has_last_trim || disk->last_trim_at > st->last_trim_at)) {
		memcpy(st->history, disk->history, sizeof st->history);
		st->nhistory = disk->nhistory;
		st->has_last_trim = true;
		st->last_trim_at = disk->last_trim_at;
	}
	if (disk->has_decision &&
	    (!st->has_decision || disk->last_decision.at > st->last_decision.at)) {
		st->has_decision = true;
		st->last_decision = disk->last_decision;
	}
	if (st->format == RECLAIM_FORMAT_UNKNOWN)
		st->format = disk->format;
	free(disk);
}

void state_save(struct agent_state *st)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "boot_id", json_string(st->boot_id));
	json_object_set_new(doc, "reclaim_format", json_string(reclaim_format_name(st->format)));
	json_object_set_new(doc, "last_trim_at",
			    st->has_last_trim ? json_real(st->last_trim_at) : json_null());
	json_object_set_new(doc, "last_decision",
			    st->has_decision ? decision_json(&st->last_decision) : json_null());
	json_t *hist = json_array();
	for (size_t i = 0; i < st->nhistory; i++)
		json_array_append_new(hist, record_json(&st->history[i]));
	json_object_set_new(doc, "history", hist);

	char dir[4096], path[4096], tmp[4200];
	if (!vmc_fs_path(dir, sizeof dir, TRIM_STATE_DIR) ||
	    !vmc_fs_path(path, sizeof path, TRIM_STATE_FILE)) {
		json_decref(doc);
		return;
	}
	snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		debug("cannot create %s:", dir);
	/* Write then rename: a CLI reading concurrently never sees half a file. */
	if (json_dump_file(doc, tmp, JSON_COMPACT) == 0 && rename(tmp, path) == 0) {
		json_decref(doc);
		return;
	}
	debug("cannot save the trim history to %s:", path);
	unlink(tmp);
	json_decref(doc);
}

void state_push_record(struct agent_state *st, const struct trim_record *r)
{
	if (st->nhistory == TRIM_HISTORY_MAX) {
		memmove(&st->history[0], &st->history[1],
			(TRIM_HISTORY_MAX - 1) * sizeof st->history[0]);
		st->nhistory--;
	}
	st->history[st->nhistory++] = *r;
}

void state_set_decision(struct agent_state *st, const char *outcome, const char *reason)
{
	st->has_decision = true;
	st->last_decision.when = time(NULL);
	st->last_decision.at = st->io.now(st->io.ctx);
	snprintf(st->last_decision.outcome, sizeof st->last_decision.outcome, "%s", outcome);
	snprintf(st->last_decision.reason, sizeof st->last_decision.reason, "%s", reason);
}

/* ---- agent.h -------------------------------------------------------------------------- */

struct agent_state *agent_state_new(void)
{
	struct agent_state *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	pthread_mutex_init(&st->lock, NULL);
	st->io = (struct agent_io){default_write, default_now, default_sleep, NULL};
	read_boot_id(st->boot_id, sizeof st->boot_id);
	state_load(st);
	idle_sample_take(st, &st->baseline);
	return st;
}

void agent_state_free(struct agent_state *st)
{
	if (!st)
		return;
	pthread_mutex_destroy(&st->lock);
	free(st);
}

void agent_state_set_io(struct agent_state *st, const struct agent_io *io)
{
	pthread_mutex_lock(&st->lock);
	st->io = *io;
	pthread_mutex_unlock(&st->lock);
}

void agent_state_rebase(struct agent_state *st)
{
	struct idle_sample s;
	idle_sample_take(st, &s);
	pthread_mutex_lock(&st->lock);
	st->baseline = s;
	pthread_mutex_unlock(&st->lock);
}

json_t *trim_history_json(struct agent_state *st)
{
	struct agent_state *own = NULL;
	if (!st) {
		own = agent_state_new();
		if (!own)
			return json_null();
		st = own;
	}
	pthread_mutex_lock(&st->lock);
	if (!own)
		state_refresh(st);
	double now = st->io.now(st->io.ctx);
	json_t *doc = json_object();
	if (st->nhistory > 0) {
		json_t *last = record_json(&st->history[st->nhistory - 1]);
		json_object_set_new(last, "age_s",
				    json_real(now - st->history[st->nhistory - 1].at));
		json_object_set_new(doc, "last_trim", last);
	} else {
		json_object_set_new(doc, "last_trim", json_null());
	}
	if (st->has_decision) {
		json_t *d = decision_json(&st->last_decision);
		json_object_set_new(d, "age_s", json_real(now - st->last_decision.at));
		json_object_set_new(doc, "last_decision", d);
	} else {
		json_object_set_new(doc, "last_decision", json_null());
	}
	json_t *hist = json_array();
	for (size_t i = st->nhistory; i-- > 0;)
		json_array_append_new(hist, record_json(&st->history[i]));
	json_object_set_new(doc, "history", hist);
	json_object_set_new(doc, "reclaim_format", json_string(reclaim_format_name(st->format)));
	pthread_mutex_unlock(&st->lock);
	agent_state_free(own);
	return doc;
}
