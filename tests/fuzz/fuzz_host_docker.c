/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What dockerd (and the programs it runs) send back: the multiplexed exec stream, the pull
 * progress JSON Lines, pgbench's summary, the fill script's last line. The first byte picks the
 * parser and the chunk size, so split points are fuzzed too.
 */
#include "clients/docker.h"
#include "measure/workload.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t frames_seen;

static void on_frame(int stream, const char *data, size_t len, void *ctx)
{
	(void)ctx;
	if (stream < 0 || stream > 2 || (len && !data))
		abort();
	frames_seen += len;
}

static void on_event(const struct docker_pull_event *ev, void *ctx)
{
	(void)ctx;
	if (ev->status)
		frames_seen += strlen(ev->status);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned mode = data[0] & 3, piece = (data[0] >> 2) + 1u;
	const char *body = (const char *)data + 1;
	size_t len = size - 1;
	if (mode == 0) {
		struct docker_demux dm;
		docker_demux_init(&dm, on_frame, NULL);
		size_t fed = 0;
		for (size_t off = 0; off < len; off += piece) {
			size_t n = len - off < piece ? len - off : piece;
			docker_demux_feed(&dm, body + off, n);
			fed += n;
		}
		if (frames_seen > fed * 2 + 1)
			abort();
		(void)docker_demux_complete(&dm);
	} else if (mode == 1) {
		struct docker_lines dl;
		docker_lines_init(&dl, on_event, NULL);
		for (size_t off = 0; off < len; off += piece)
			docker_lines_feed(&dl, body + off, len - off < piece ? len - off : piece);
		docker_lines_finish(&dl);
	} else {
		char *text = malloc(len + 1);
		if (!text)
			return 0;
		memcpy(text, body, len);
		text[len] = '\0';
		if (mode == 2) {
			struct workload_pg_run run = {0};
			workload_pgbench_parse(text, &run);
		} else {
			struct workload_fill_result fr = {0};
			workload_fill_parse(text, &fr);
		}
		free(text);
	}
	frames_seen = 0;
	return 0;
}
