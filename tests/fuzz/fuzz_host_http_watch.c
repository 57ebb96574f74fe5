/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What autostop's relay reads from both sides (host/autostop/http_watch.c): any bytes from a
 * client or from docker.sock, in any pieces. Each piece starts with a byte that says its side
 * and length, so the interleaving and the split points are fuzzed too. The activity must stay
 * one of the three, work must never be forgotten while the connection is raw, and where each
 * request ends must lie within the client's bytes, in order.
 */
#include "autostop/http_watch.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_watch w;
	http_watch_init(&w);
	size_t i = 0;
	while (i < size) {
		uint8_t ctl = data[i++];
		size_t piece = (size_t)(ctl & 0x7f) + 1;
		if (piece > size - i)
			piece = size - i;
		if (ctl & 0x80)
			http_watch_upstream(&w, (const char *)data + i, piece);
		else
			http_watch_client(&w, (const char *)data + i, piece);
		i += piece;
		enum autostop_activity a = http_watch_activity(&w);
		if (a != AUTOSTOP_QUIET && a != AUTOSTOP_POLLING && a != AUTOSTOP_WORKING)
			abort();
		if (w.raw && a != AUTOSTOP_WORKING)
			abort();
		if (w.count > HTTP_WATCH_PENDING_MAX || w.working + w.polling != w.count)
			abort();
		/* Where each request ends is within what the client sent, in order. */
		uint64_t last_end = 0;
		for (unsigned k = 0; k < w.count; k++) {
			const struct http_watch_request *q =
			    &w.pending[(w.head + k) % HTTP_WATCH_PENDING_MAX];
			if (!q->complete)
				continue;
			if (q->end > w.client_bytes || q->end < last_end)
				abort();
			last_end = q->end;
		}
	}
	http_watch_upstream_eof(&w);
	return 0;
}
