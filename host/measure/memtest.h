/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One memtest run: its settings, the instance and process it measures, and everything it
 * records (the JSON document, the timeline the sampler fills, what is left in the guest to
 * clean up). cmd_memtest.c fills the settings from the command line and drives the run; the
 * phases are memtest.c, the verdicts memtest_noise.c, the files memtest_results.c.
 */
#ifndef VMC_MEMTEST_H
#define VMC_MEMTEST_H

#include "clients/lima.h"
#include "clients/vmproc.h"
#include "measure/progress.h"
#include "measure/timeline.h"
#include "measure/workload.h"

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum memtest_workload { MEMTEST_AUTO, MEMTEST_PGBENCH, MEMTEST_FILL };

struct memtest_settings {
	enum memtest_workload workload;
	uint64_t size; /* fill */
	const char *fill_dir, *tmpfs_dir;
	const char *image; /* pgbench */
	bool no_pull;
	int scale, clients;
	double duration;
	bool pressure_none, pressure_set;
	uint64_t pressure, canary;
	double hold, settle_max;
	bool restart;
};

struct memtest {
	struct memtest_settings o;
	struct lima_instance inst;
	struct vmproc vp;
	volatile sig_atomic_t *stop; /* SIGINT/SIGTERM: every phase ends early when it is set */
	struct timeline tl;
	struct tl_sampler sampler;
	struct progress prog;
	json_t *doc, *phases, *result;
	time_t started;
	struct workload_fill_plan fill;
	bool fill_pending; /* files may be in the guest: remove them */
	struct workload_pg_session pg;
	uint64_t guest_free_before_trim;
	bool has_guest_free_before_trim;
	double stop_t; /* when the VM process was gone, on the timeline */
	bool has_stop;
};

/* The document's header: machine, versions, instance, guest kernel command line, settings. */
void memtest_build_header(struct memtest *m);
/* baseline, workload, trim, pressure, stop (and restart): an exit code, the reason in err. */
int memtest_run_phases(struct memtest *m, char *err, size_t errsize);
/* Removes what a failed or interrupted run left in the guest (fill files, the container). */
void memtest_cleanup_guest(struct memtest *m);
/* The .md, .json and .svg in dir (after "files" and "timeline" are added to the document). */
int memtest_write_results(struct memtest *m, const char *dir, char *err, size_t errsize);

#endif
