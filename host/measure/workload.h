/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The workloads memtest and load put on a guest: "fill" through `limactl shell` (no Docker
 * needed) and pgbench in a postgres container through the Docker Engine API.
 */
#ifndef VMC_WORKLOAD_H
#define VMC_WORKLOAD_H

#include "clients/docker.h"
#include "clients/lima.h"

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Progress text for the status line ("pulling postgres:17-alpine: 12 MiB / 98 MiB"). */
typedef void (*workload_note_fn)(const char *text, void *ctx);

/* ---- fill ----------------------------------------------------------------------------------- */

struct workload_fill_plan {
	uint64_t size;	       /* bytes written to tmpfs, and again read into page cache */
	const char *tmpfs_dir; /* default /dev/shm */
	const char *dir;       /* where the page-cache files go; default /var/tmp/vmcost-fill */
};

struct workload_fill_result {
	uint64_t tmpfs_bytes; /* really written (rounded up to whole 64 MiB blocks) */
	uint64_t cache_bytes;
	double seconds;
};

/*
 * The guest script (POSIX sh, busybox-compatible): SIZE of incompressible data written to a
 * tmpfs file and deleted again (guest RAM touched and freed, as a build does), then SIZE of
 * files written to dir and read back, so they sit in page cache. Arguments: $1 MiB, $2 tmpfs
 * dir, $3 files dir, $4 the run's id (in every file name: vmcost-fill.RUN.seed, .tmp, .RUN.N).
 * The last line is "vmcost-fill tmpfs_mib=N cache_mib=N".
 */
extern const char workload_fill_script[];
/* Removes dir and the run's tmpfs leftovers ($1 tmpfs dir, $2 files dir, $3 the run's id). */
extern const char workload_fill_cleanup_script[];

/* The script's block (blk=64): SIZE is written in whole blocks, or one smaller block. */
#define WORKLOAD_FILL_BLOCK (64ull << 20)

/*
 * What the script writes for size: the tmpfs at its peak (the seed block next to the data) and
 * the files (SIZE rounded up to whole blocks), so a pre-flight can check that they fit.
 */
void workload_fill_bytes(uint64_t size, uint64_t *tmpfs_peak, uint64_t *files);

int workload_fill(const struct lima_instance *inst, const struct workload_fill_plan *plan,
		  volatile sig_atomic_t *stop, struct workload_fill_result *res, char *err,
		  size_t errsize);
int workload_fill_cleanup(const struct lima_instance *inst, const struct workload_fill_plan *plan,
			  char *err, size_t errsize);
/* Parses the script's last line; -1 if it is not there. */
int workload_fill_parse(const char *out, struct workload_fill_result *res);

/* ---- pgbench through Docker ----------------------------------------------------------------- */

#define WORKLOAD_PG_IMAGE     "postgres:17-alpine"
#define WORKLOAD_PG_CONTAINER "vmcost-pgbench"

struct workload_pg_run {
	int clients;
	int threads;
	double duration;   /* seconds requested (-T) */
	double tps;	   /* without initial connection time */
	double latency_ms; /* latency average */
	bool has_latency;
	uint64_t transactions; /* number of transactions actually processed */
};

/* Parses pgbench's summary ("tps = ...", "latency average = ... ms", "number of transactions
 * actually processed: N"). Returns 0 when tps was found. */
int workload_pgbench_parse(const char *out, struct workload_pg_run *run);

struct workload_pg_session {
	struct docker docker;
	char image[256];
	char id[80]; /* container id, "" when none */
	bool pulled; /* the image had to be pulled */
	char server_version[64];
	double ready_seconds; /* create + start + ready */
	double init_seconds;  /* pgbench -i */
	int scale;
	volatile sig_atomic_t *stop;
	workload_note_fn note;
	void *note_ctx;
};

/*
 * Checks dockerd, pulls image if missing (pull false: image-missing error instead), creates
 * and starts the postgres container and waits until it accepts TCP connections (timeout_s).
 */
int workload_pg_start(struct workload_pg_session *pg, const struct lima_instance *inst,
		      const char *image, bool pull, double timeout_s, char *err, size_t errsize);
/* pgbench -i -s scale. */
int workload_pg_init(struct workload_pg_session *pg, int scale, char *err, size_t errsize);
/* pgbench -c clients -j clients -T seconds. */
int workload_pg_bench(struct workload_pg_session *pg, int clients, double seconds,
		      struct workload_pg_run *run, char *err, size_t errsize);
/* Stops and removes the container (safe to call twice, or after a failed start). */
int workload_pg_remove(struct workload_pg_session *pg, char *err, size_t errsize);

json_t *workload_pg_run_json(const struct workload_pg_run *run);

#endif
