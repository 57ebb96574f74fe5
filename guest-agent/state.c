/* SPDX-License-Identifier: Apache-2.0 */
#include "state.h"

#include "jsonutil.h"
#include "log.h"
#include "procfs.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct agent_state {
	pthread_mutex_t lock; /* over everything below; taken in this file only */
	struct trim_io io;
	struct trim_idle_sample baseline;
	bool pass_running; /* one trim pass at a time */
	enum trim_reclaim_format format;
	struct agent_state_trim history[AGENT_STATE_HISTORY_MAX]; /* oldest first */
	size_t nhistory;
	bool has_decision;
	struct agent_state_decision last_decision;
	bool has_last_trim;
	double last_trim_at;
	char boot_id[40];
};

static enum trim_reclaim_format format_parse(const char *s)
{
	if (s && strcmp(s, trim_format_name(TRIM_FORMAT_SWAPPINESS)) == 0)
		return TRIM_FORMAT_SWAPPINESS;
	if (s && strcmp(s, trim_format_name(TRIM_FORMAT_BYTES)) == 0)
		return TRIM_FORMAT_BYTES;
	return TRIM_FORMAT_UNKNOWN;
}

static const char *outcome_name(enum agent_state_outcome o)
{
	switch (o) {
	case AGENT_STATE_OUTCOME_SKIPPED:
		return "skipped";
	case AGENT_STATE_OUTCOME_NOTHING_TO_DO:
		return "nothing-to-do";
	case AGENT_STATE_OUTCOME_TRIMMED:
		return "trimmed";
	case AGENT_STATE_OUTCOME_NONE:
		break;
	}
	return "none";
}

/* ---- persistence ---------------------------------------------------------------------- */

static json_t *record_json(const struct agent_state_trim *r)
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

static void record_from_json(const json_t *j, struct agent_state_trim *r)
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

static json_t *decision_json(const struct agent_state_decision *d)
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

static void push_trim(struct agent_state *st, const struct agent_state_trim *r)
{
	if (st->nhistory == AGENT_STATE_HISTORY_MAX) {
		memmove(&st->history[0], &st->history[1],
			(AGENT_STATE_HISTORY_MAX - 1) * sizeof st->history[0]);
		st->nhistory--;
	}
	st->history[st->nhistory++] = *r;
}

static void load(struct agent_state *st)
{
	char *buf;
	size_t len;
	if (vmc_fs_read(AGENT_STATE_FILE, &buf, &len, 256 * 1024) < 0)
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
	st->format = format_parse(vmc_json_get_str(doc, "reclaim_format"));
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
		struct agent_state_trim r;
		record_from_json(rec, &r);
		push_trim(st, &r);
	}
	json_decref(doc);
}

/* Adopts what another process saved since (a CLI trim next to the daemon). */
static void refresh(struct agent_state *st)
{
	struct agent_state *disk = calloc(1, sizeof *disk);
	if (!disk)
		return;
	snprintf(disk->boot_id, sizeof disk->boot_id, "%s", st->boot_id);
	load(disk);
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
	if (st->format == TRIM_FORMAT_UNKNOWN)
		st->format = disk->format;
	free(disk);
}

/* Writes AGENT_STATE_FILE; failures only cost the CLI its view of the history. */
static void save(struct agent_state *st)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "boot_id", json_string(st->boot_id));
	json_object_set_new(doc, "reclaim_format", json_string(trim_format_name(st->format)));
	json_object_set_new(doc, "last_trim_at",
			    st->has_last_trim ? json_real(st->last_trim_at) : json_null());
	json_object_set_new(doc, "last_decision",
			    st->has_decision ? decision_json(&st->last_decision) : json_null());
	json_t *hist = json_array();
	for (size_t i = 0; i < st->nhistory; i++)
		json_array_append_new(hist, record_json(&st->history[i]));
	json_object_set_new(doc, "history", hist);

	char dir[4096], path[4096], tmp[4200];
	if (!vmc_fs_path(dir, sizeof dir, AGENT_STATE_DIR) ||
	    !vmc_fs_path(path, sizeof path, AGENT_STATE_FILE)) {
		json_decref(doc);
		return;
	}
	snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		vmc_debug("cannot create %s:", dir);
	/* Write then rename: a CLI reading concurrently never sees half a file. */
	if (json_dump_file(doc, tmp, JSON_COMPACT) == 0 && rename(tmp, path) == 0) {
		json_decref(doc);
		return;
	}
	vmc_debug("cannot save the trim history to %s:", path);
	unlink(tmp);
	json_decref(doc);
}

static void set_decision(struct agent_state *st, enum agent_state_outcome outcome,
			 const char *reason)
{
	st->has_decision = true;
	st->last_decision.when = time(NULL);
	st->last_decision.at = st->io.now(st->io.ctx);
	snprintf(st->last_decision.outcome, sizeof st->last_decision.outcome, "%s",
		 outcome_name(outcome));
	snprintf(st->last_decision.reason, sizeof st->last_decision.reason, "%s",
		 reason ? reason : "");
}

/* ---- agent.h -------------------------------------------------------------------------- */

struct agent_state *agent_state_new(void)
{
	struct agent_state *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	pthread_mutex_init(&st->lock, NULL);
	st->io = trim_io_default;
	read_boot_id(st->boot_id, sizeof st->boot_id);
	load(st);
	trim_sample_idle(&st->baseline, st->io.now(st->io.ctx));
	return st;
}

void agent_state_free(struct agent_state *st)
{
	if (!st)
		return;
	pthread_mutex_destroy(&st->lock);
	free(st);
}

/* ---- state.h -------------------------------------------------------------------------- */

void agent_state_set_io(struct agent_state *st, const struct trim_io *io)
{
	struct trim_idle_sample s;
	trim_sample_idle(&s, io->now(io->ctx));
	pthread_mutex_lock(&st->lock);
	st->io = *io;
	st->baseline = s;
	pthread_mutex_unlock(&st->lock);
}

bool agent_state_begin_pass(struct agent_state *st, struct agent_state_pass *pass)
{
	pthread_mutex_lock(&st->lock);
	bool claimed = !st->pass_running;
	if (claimed) {
		st->pass_running = true;
		refresh(st);
		*pass = (struct agent_state_pass){.io = st->io,
						  .baseline = st->baseline,
						  .format = st->format,
						  .has_last_trim = st->has_last_trim,
						  .last_trim_at = st->last_trim_at};
	}
	pthread_mutex_unlock(&st->lock);
	return claimed;
}

void agent_state_end_pass(struct agent_state *st, const struct agent_state_pass_end *end)
{
	pthread_mutex_lock(&st->lock);
	if (end->format != TRIM_FORMAT_UNKNOWN)
		st->format = end->format;
	if (end->trim) {
		push_trim(st, end->trim);
		st->has_last_trim = true;
		st->last_trim_at = end->trim->at;
	}
	if (end->rebase)
		st->baseline = *end->rebase;
	if (end->outcome != AGENT_STATE_OUTCOME_NONE) {
		set_decision(st, end->outcome, end->reason);
		save(st);
	}
	st->pass_running = false;
	pthread_mutex_unlock(&st->lock);
}

void agent_state_snapshot(struct agent_state *st, struct agent_state_snapshot *snap)
{
	struct agent_state *own = NULL;
	memset(snap, 0, sizeof *snap);
	if (!st) {
		own = agent_state_new();
		if (!own)
			return;
		st = own;
	}
	pthread_mutex_lock(&st->lock);
	if (!own)
		refresh(st);
	snap->now = st->io.now(st->io.ctx);
	memcpy(snap->history, st->history, sizeof snap->history);
	snap->nhistory = st->nhistory;
	snap->has_decision = st->has_decision;
	snap->decision = st->last_decision;
	snap->format = st->format;
	pthread_mutex_unlock(&st->lock);
	agent_state_free(own);
}

json_t *agent_state_history_json(const struct agent_state_snapshot *snap)
{
	json_t *doc = json_object();
	if (snap->nhistory > 0) {
		const struct agent_state_trim *newest = &snap->history[snap->nhistory - 1];
		json_t *last = record_json(newest);
		json_object_set_new(last, "age_s", json_real(snap->now - newest->at));
		json_object_set_new(doc, "last_trim", last);
	} else {
		json_object_set_new(doc, "last_trim", json_null());
	}
	if (snap->has_decision) {
		json_t *d = decision_json(&snap->decision);
		json_object_set_new(d, "age_s", json_real(snap->now - snap->decision.at));
		json_object_set_new(doc, "last_decision", d);
	} else {
		json_object_set_new(doc, "last_decision", json_null());
	}
	json_t *hist = json_array();
	for (size_t i = snap->nhistory; i-- > 0;)
		json_array_append_new(hist, record_json(&snap->history[i]));
	json_object_set_new(doc, "history", hist);
	json_object_set_new(doc, "reclaim_format", json_string(trim_format_name(snap->format)));
	return doc;
}
