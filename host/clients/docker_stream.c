/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The two streams Docker answers with, parsed as they arrive in arbitrary chunks and with no
 * I/O of their own (fuzzed by tests/fuzz/fuzz_host_docker.c): pull progress as JSON Lines, and
 * the multiplexed stdout/stderr of exec.
 */
#include "clients/docker_stream.h"

#include "jsonutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A progress line longer than this is not Docker's: dropped. */
#define DOCKER_LINE_MAX (64u << 10)

/* ---- JSON Lines (pull progress) ------------------------------------------------------------ */

void docker_lines_init(struct docker_lines *dl, docker_pull_progress_fn progress, void *ctx)
{
	memset(dl, 0, sizeof *dl);
	dl->progress = progress;
	dl->ctx = ctx;
}

static void parse_event_line(struct docker_lines *dl, const char *line, size_t len)
{
	json_t *j = json_loadb(line, len, 0, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		return;
	}
	struct docker_pull_event ev = {
	    .status = vmc_json_get_str(j, "status"),
	    .id = vmc_json_get_str(j, "id"),
	};
	json_t *detail = json_object_get(j, "progressDetail");
	if (json_is_object(detail)) {
		vmc_json_get_u64(detail, "current", &ev.current);
		vmc_json_get_u64(detail, "total", &ev.total);
	}
	json_t *errdetail = json_object_get(j, "errorDetail");
	const char *msg = json_is_object(errdetail) ? vmc_json_get_str(errdetail, "message") : NULL;
	if (!msg)
		msg = vmc_json_get_str(j, "error");
	if (msg) {
		ev.error = msg;
		if (!dl->error[0])
			snprintf(dl->error, sizeof dl->error, "%s", msg);
	}
	dl->events++;
	if (dl->progress)
		dl->progress(&ev, dl->ctx);
	json_decref(j);
}

static void flush_line(struct docker_lines *dl)
{
	size_t len = dl->len;
	while (len > 0 && (dl->buf[len - 1] == '\r' || dl->buf[len - 1] == ' '))
		len--;
	if (!dl->overlong && len > 0)
		parse_event_line(dl, dl->buf, len);
	dl->len = 0;
	dl->overlong = false;
}

void docker_lines_feed(struct docker_lines *dl, const char *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = data[i];
		if (c == '\n') {
			flush_line(dl);
			continue;
		}
		if (dl->overlong)
			continue;
		if (dl->len >= DOCKER_LINE_MAX) {
			dl->overlong = true;
			continue;
		}
		if (dl->len + 1 > dl->cap) {
			size_t cap = dl->cap ? dl->cap * 2 : 1024;
			char *grown = realloc(dl->buf, cap);
			if (!grown) {
				dl->overlong = true;
				continue;
			}
			dl->buf = grown;
			dl->cap = cap;
		}
		dl->buf[dl->len++] = c;
	}
}

void docker_lines_finish(struct docker_lines *dl)
{
	if (dl->len > 0)
		flush_line(dl);
	free(dl->buf);
	dl->buf = NULL;
	dl->cap = 0;
}

/* ---- the multiplexed stream ------------------------------------------------------------------ */

void docker_demux_init(struct docker_demux *dm,
		       void (*on_frame)(int stream, const char *data, size_t len, void *ctx),
		       void *ctx)
{
	memset(dm, 0, sizeof *dm);
	dm->on_frame = on_frame;
	dm->ctx = ctx;
}

static int demux_header_done(struct docker_demux *dm)
{
	const unsigned char *h = dm->header;
	if (h[0] > 2 || h[1] || h[2] || h[3]) {
		dm->broken = true;
		return -1;
	}
	dm->stream = h[0];
	dm->remaining = (uint32_t)h[4] << 24 | (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | h[7];
	dm->header_len = 0;
	return 0;
}

int docker_demux_feed(struct docker_demux *dm, const char *data, size_t len)
{
	size_t i = 0;
	while (i < len && !dm->broken) {
		if (dm->remaining == 0) {
			dm->header[dm->header_len++] = (unsigned char)data[i++];
			if (dm->header_len == sizeof dm->header && demux_header_done(dm) != 0)
				return -1;
			continue;
		}
		size_t take = len - i;
		if (take > dm->remaining)
			take = dm->remaining;
		if (dm->on_frame)
			dm->on_frame(dm->stream, data + i, take, dm->ctx);
		dm->remaining -= (uint32_t)take;
		i += take;
	}
	return dm->broken ? -1 : 0;
}

bool docker_demux_complete(const struct docker_demux *dm)
{
	return !dm->broken && dm->remaining == 0 && dm->header_len == 0;
}
