/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host memory pressure with a positive control
 * (docs/published-measurements.md#pressure-methodology): a MADV_FREE canary is armed first, then
 * SIZE of incompressible memory is allocated, touched and held, then released. If the kernel
 * never discarded a canary page, the pressure never reached the point where the host reclaims
 * memory, and the run is INCONCLUSIVE rather than a result.
 * Everything is released when *stop becomes non-zero (SIGINT/SIGTERM handlers set it).
 */
#ifndef VMC_PRESSURE_H
#define VMC_PRESSURE_H

#include "platform/platform.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRESSURE_DEFAULT_CANARY (1024 * 1024 * 1024ull)
#define PRESSURE_DEFAULT_HOLD	40.0

struct pressure_plan {
	uint64_t size;	      /* bytes to allocate and touch */
	uint64_t canary_size; /* bytes of MADV_FREE canary */
	double hold_seconds;  /* how long the touched memory is held */
};

enum pressure_stage {
	PRESSURE_ARMING,   /* writing and MADV_FREE-ing the canary */
	PRESSURE_TOUCHING, /* allocating and writing the pressure */
	PRESSURE_HOLDING,
	PRESSURE_RELEASED,
};

/* What a progress callback sees (about every 0.5 s). */
struct pressure_status {
	enum pressure_stage stage;
	uint64_t touched;	  /* bytes of pressure touched so far */
	uint64_t canary_pages;	  /* pages in the canary */
	uint64_t canary_resident; /* pages still resident (mincore) */
	double elapsed;		  /* seconds since pressure_run started */
	double hold_left;	  /* seconds of holding left */
};
typedef void (*pressure_tick_fn)(const struct pressure_status *st, void *ctx);

struct pressure_result {
	uint64_t size;	  /* requested */
	uint64_t touched; /* really touched (less if interrupted) */
	uint64_t canary_pages;
	uint64_t canary_discarded;    /* pages that read back as zero after the hold */
	uint64_t canary_min_resident; /* lowest mincore count seen while holding */
	double touch_seconds, hold_seconds, total_seconds;
	bool interrupted;
	bool conclusive; /* canary_discarded > 0 */
};

/* "arming", "touching", "holding", "released". */
const char *pressure_stage_name(enum pressure_stage stage);

/*
 * Default pressure for this host. macOS (has_compressor): available + total/8, so the
 * compressor has to work (the write-up's `memory_pressure -l warn`), capped at 3/4 of RAM.
 * Linux: MemAvailable minus half the canary, so reclaim has to take at least that much from
 * the file LRU, where MADV_FREE pages live; capped at 7/8 of RAM. 0 if there is no room.
 */
uint64_t pressure_default_size(const struct platform_host_memory *hm, uint64_t canary_size);

/*
 * The canary's whole mechanism on one page (map, write, MADV_FREE, mincore, unmap), so a run
 * can be refused before it starts where it could never be conclusive. 0, or -1 with a message
 * (a kernel without MADV_FREE says EINVAL). Leaves nothing mapped.
 */
int pressure_canary_probe(char *err, size_t errsize);

/*
 * Runs the plan. Returns 0 (see res->interrupted and res->conclusive), or -1 with a message in
 * err when memory could not even be mapped. Never leaves anything mapped behind.
 */
int pressure_run(const struct pressure_plan *plan, pressure_tick_fn tick, void *ctx,
		 volatile sig_atomic_t *stop, struct pressure_result *res, char *err,
		 size_t errsize);

#endif
