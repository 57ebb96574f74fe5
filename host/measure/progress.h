/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Progress of a long run on stderr. On a TTY: one status line redrawn in place with the elapsed
 * time, the phase, what it is doing and the latest readings. Otherwise: quiet, parseable
 * "PROG: t=12.3 phase=workload event=start key=value..." lines at phase boundaries only.
 */
#ifndef VMC_PROGRESS_H
#define VMC_PROGRESS_H

#include "measure/timeline.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

struct progress {
	pthread_mutex_t lock;
	FILE *out;
	bool tty;
	double t0;
	const char *prog;
	char phase[32];
	char detail[200];
	char readings[96];
	bool line_open;
};

/* tty: redraw in place (normally isatty(stderr)). */
void progress_init(struct progress *p, FILE *out, bool tty, const char *prog, double t0);
void progress_destroy(struct progress *p);
/* A phase starts: TTY redraws; otherwise "t=… phase=NAME event=start". */
void progress_phase(struct progress *p, const char *phase);
/* key=value pairs (already formatted) at the end of a phase or for an event. */
__attribute__((format(printf, 3, 4))) void progress_event(struct progress *p, const char *event,
							  const char *fmt, ...);
/* What the phase is doing now (TTY only). */
void progress_note(struct progress *p, const char *text);
/* Latest VM / host readings (TTY only). */
void progress_sample(struct progress *p, const struct tl_sample *s);
/* Ends the status line so normal output can follow. */
void progress_clear(struct progress *p);

#endif
