/* SPDX-License-Identifier: Apache-2.0 */
/*
 * struct agent_state: what the daemon's timer, API requests and CLI runs share about trims.
 * Internal to the agent core (trim.c, status.c); agent.h keeps it opaque. The history is also
 * kept in TRIM_STATE_FILE (tmpfs) so a CLI `status` shows what the daemon did.
 */
#ifndef VMC_AGENT_STATE_H
#define VMC_AGENT_STATE_H

#include "trim.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

enum reclaim_format {
	RECLAIM_FORMAT_UNKNOWN,	   /* not tried yet: try "<bytes> swappiness=0" first */
	RECLAIM_FORMAT_SWAPPINESS, /* "<bytes> swappiness=0" accepted */
	RECLAIM_FORMAT_BYTES,	   /* EINVAL for swappiness=: bytes only (6.1) */
};

struct trim_record {
	time_t when; /* wall clock, for people */
	double at;   /* io.now() at the start: for "never more often than the interval" */
	double duration_s;
	char method[16]; /* "memory.reclaim", "drop_caches" */
	char format[32]; /* what was written: "<bytes> swappiness=0", "<bytes>", "1" */
	uint64_t target_bytes, reclaimed_bytes, freed_bytes;
	unsigned steps;
	bool eagain, compacted, forced;
};

struct trim_decision {
	time_t when;
	double at;
	char outcome[16]; /* "trimmed", "skipped", "nothing-to-do" */
	char reason[256];
};

struct idle_sample {
	double t;
	bool cpu_ok;
	struct vmc_cpu_times cpu;
	bool psi_ok;
	uint64_t psi_total_us[3]; /* cpu, io, memory "some" */
};

struct agent_state {
	pthread_mutex_t lock;
	struct agent_io io;
	struct idle_sample baseline;
	bool running; /* a pass is in progress (only one at a time) */
	enum reclaim_format format;
	struct trim_record history[TRIM_HISTORY_MAX]; /* oldest first */
	size_t nhistory;
	bool has_decision;
	struct trim_decision last_decision;
	bool has_last_trim;
	double last_trim_at;
	char boot_id[40];
};

void idle_sample_take(struct agent_state *st, struct idle_sample *s);
const char *reclaim_format_name(enum reclaim_format f);
/* Caller holds st->lock. */
void state_push_record(struct agent_state *st, const struct trim_record *r);
void state_set_decision(struct agent_state *st, const char *outcome, const char *reason);
/* Adopts what another process saved since (a CLI trim next to the daemon). Holds st->lock. */
void state_refresh(struct agent_state *st);
/* Writes TRIM_STATE_FILE; failures only cost the CLI its view of the history. */
void state_save(struct agent_state *st);

#endif
