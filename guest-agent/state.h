/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's shared state: what the daemon's timer, API requests and CLI runs share about
 * trims (struct agent_state of agent.h). This file's functions are the only way to it: they take
 * its lock, so callers never hold it and never see the struct. One trim pass at a time:
 * agent_state_begin_pass() claims it, agent_state_end_pass() records how it ended and releases
 * it. The history is also kept in AGENT_STATE_FILE (tmpfs) so a CLI `status` shows what the
 * daemon did.
 *
 * Something new to share: a member of struct agent_state (state.c), a function here that takes
 * the lock to change it, and its copy in struct agent_state_snapshot for readers.
 */
#ifndef VMC_AGENT_STATE_H
#define VMC_AGENT_STATE_H

#include "agent.h"
#include "trim_pass.h"
#include "trim_policy.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Trim history shared by the daemon and CLI runs; /run is tmpfs, so this is no disk write. */
#define AGENT_STATE_DIR		"/run/vmcost-agent"
#define AGENT_STATE_FILE	"/run/vmcost-agent/trim.json"
#define AGENT_STATE_HISTORY_MAX 8

/* One trim that ran. */
struct agent_state_trim {
	time_t when; /* wall clock, for people */
	double at;   /* io.now() at the start: for "never more often than the interval" */
	double duration_s;
	char method[16]; /* "memory.reclaim", "drop_caches" */
	char format[32]; /* what was written: "<bytes> swappiness=0", "<bytes>", "1" */
	uint64_t target_bytes, reclaimed_bytes, freed_bytes;
	unsigned steps;
	bool eagain, compacted, forced;
};

/* How a trim decision ended. */
enum agent_state_outcome {
	AGENT_STATE_OUTCOME_NONE, /* a dry run or a failed pass: nothing is recorded */
	AGENT_STATE_OUTCOME_SKIPPED,
	AGENT_STATE_OUTCOME_NOTHING_TO_DO,
	AGENT_STATE_OUTCOME_TRIMMED,
};

/* What a pass starts from, copied by agent_state_begin_pass(). */
struct agent_state_pass {
	struct trim_io io;
	struct trim_idle_sample baseline; /* the start of the window the pass judges */
	enum trim_reclaim_format format;  /* what memory.reclaim is known to take */
	bool has_last_trim;
	double last_trim_at;
};

/* How a pass ended, for agent_state_end_pass(). Members left zero change nothing. */
struct agent_state_pass_end {
	enum agent_state_outcome outcome;
	const char *reason;		       /* the decision's reason, with an outcome */
	const struct trim_idle_sample *rebase; /* a new idle baseline (the window restarts) */
	const struct agent_state_trim *trim;   /* the trim that ran */
	enum trim_reclaim_format format;       /* what the pass learned about memory.reclaim */
};

/* The trim decision last made. */
struct agent_state_decision {
	time_t when;
	double at;
	char outcome[16]; /* "trimmed", "skipped", "nothing-to-do" */
	char reason[256];
};

/* A consistent copy of what readers show. */
struct agent_state_snapshot {
	double now; /* io.now() when taken: ages are relative to it */
	struct agent_state_trim history[AGENT_STATE_HISTORY_MAX]; /* oldest first */
	size_t nhistory;
	bool has_decision;
	struct agent_state_decision decision;
	enum trim_reclaim_format format;
};

/*
 * Replaces the default io (trim_io_default; tests: a fake kernel and clock); io is copied. The
 * idle window restarts on the new clock.
 */
void agent_state_set_io(struct agent_state *st, const struct trim_io *io);
/*
 * Claims the one trim pass after adopting what other processes saved (a CLI trim next to the
 * daemon) and copies what the pass starts from. False when another pass is running.
 */
bool agent_state_begin_pass(struct agent_state *st, struct agent_state_pass *pass);
/*
 * Records how the claimed pass ended (saved to AGENT_STATE_FILE unless the outcome is NONE) and
 * releases the claim.
 */
void agent_state_end_pass(struct agent_state *st, const struct agent_state_pass_end *end);
/* Copies the state after adopting what other processes saved. st NULL: what AGENT_STATE_FILE holds.
 */
void agent_state_snapshot(struct agent_state *st, struct agent_state_snapshot *snap);
/* {"last_trim", "last_decision", "history" (newest first), "reclaim_format"}: GET /v1/status. */
json_t *agent_state_history_json(const struct agent_state_snapshot *snap);

#endif
