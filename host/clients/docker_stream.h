/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Docker's streamed answers, parsed incrementally and without I/O: pull progress (JSON Lines)
 * and exec's multiplexed stdout/stderr. docker.c feeds them from libcurl's write callback.
 */
#ifndef VMC_DOCKER_STREAM_H
#define VMC_DOCKER_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One progress event of a pull, as Docker streams them (JSON Lines). */
struct docker_pull_event {
	const char *status; /* "Downloading", "Pull complete", ... (may be NULL) */
	const char *id;	    /* layer id (may be NULL) */
	uint64_t current;   /* progressDetail.current (0 if absent) */
	uint64_t total;	    /* progressDetail.total (0 if absent) */
	const char *error;  /* errorDetail.message or error: the pull failed */
};
typedef void (*docker_pull_progress_fn)(const struct docker_pull_event *ev, void *ctx);

/*
 * Docker's multiplexed stream (stdout/stderr over one connection): frames of an 8-byte header
 * [stream, 0, 0, 0, size as big-endian u32] and size bytes of payload. The demuxer is fed
 * arbitrary chunks and calls on_frame for every payload piece (stream 1 = stdout, 2 = stderr).
 * A header with an unknown stream type or nonzero padding is a protocol error.
 */
struct docker_demux {
	unsigned char header[8];
	size_t header_len;
	uint32_t remaining; /* payload bytes left in the current frame */
	int stream;
	bool broken;
	void (*on_frame)(int stream, const char *data, size_t len, void *ctx);
	void *ctx;
};
void docker_demux_init(struct docker_demux *dm,
		       void (*on_frame)(int stream, const char *data, size_t len, void *ctx),
		       void *ctx);
/* Returns 0, or -1 once the stream is broken (further input is ignored). */
int docker_demux_feed(struct docker_demux *dm, const char *data, size_t len);
/* True if the stream ended on a frame boundary. */
bool docker_demux_complete(const struct docker_demux *dm);

/*
 * Pull progress stream: JSON Lines fed in arbitrary chunks; each complete line is parsed and
 * handed to progress. Lines that are not JSON objects are skipped; the first error message is
 * kept. Bounded: a line longer than 64 KiB is dropped.
 */
struct docker_lines {
	char *buf;
	size_t len, cap;
	bool overlong;
	char error[512];
	size_t events;
	docker_pull_progress_fn progress;
	void *ctx;
};
void docker_lines_init(struct docker_lines *dl, docker_pull_progress_fn progress, void *ctx);
void docker_lines_feed(struct docker_lines *dl, const char *data, size_t len);
/* Parses a final line without newline, frees the buffer. */
void docker_lines_finish(struct docker_lines *dl);

#endif
