/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What memtest saw over time: samples of the VM process's footprint and of host memory, and the
 * phases they fall in. A sampler thread fills it while the main thread runs the phases; the SVG
 * and the results files read it afterwards.
 */
#ifndef VMC_TIMELINE_H
#define VMC_TIMELINE_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TL_MAX_PHASES 12

struct tl_sample {
	double t;    /* seconds since the run started */
	int phase;   /* index into phases, -1 before the first */
	bool has_vm; /* the VM process existed */
	uint64_t vm_footprint;
	uint64_t vm_resident;
	uint64_t host_free;
	uint64_t host_available;
	uint64_t compressor_used; /* has_compressor (macOS) */
	bool has_compressor;
};

struct tl_phase {
	char name[24];	   /* "baseline", "workload", "trim", "pressure", "stop", "restart" */
	char label[64];	   /* what the SVG band says ("fill 1 GiB", "pressure 8 GiB") */
	double start, end; /* end < 0 while running */
};

struct timeline {
	pthread_mutex_t lock;
	struct tl_sample *samples;
	size_t n, cap;
	struct tl_phase phases[TL_MAX_PHASES];
	size_t nphases;
	double t0; /* vmc_monotonic_s() at the start */
};

void timeline_init(struct timeline *tl, double t0);
void timeline_free(struct timeline *tl);
/* Ends the running phase (if any) and starts a new one at now (monotonic). */
int timeline_phase_begin(struct timeline *tl, const char *name, const char *label, double now);
/* Copies s in (s->phase is set to the running phase); 0 or -1 (out of memory). */
int timeline_add(struct timeline *tl, struct tl_sample s);

/* Reads the VM process (pid <= 0: none) and host memory now, and adds the sample. */
int timeline_sample_now(struct timeline *tl, pid_t pid, struct tl_sample *out);

/* A thread sampling every interval seconds until timeline_sampler_stop. */
struct tl_sampler {
	struct timeline *tl;
	pid_t pid;
	double interval;
	void (*on_sample)(const struct tl_sample *s, void *ctx); /* progress; may be NULL */
	void *ctx;
	pthread_t thread;
	int wake[2]; /* a pipe: stop writes a byte, the thread polls it between samples */
	bool running;
};
int timeline_sampler_start(struct tl_sampler *s);
void timeline_sampler_stop(struct tl_sampler *s);

/*
 * When the VM process disappeared after time `after`: midway between the last sample that saw
 * it and the first that did not; -1 if no such pair.
 */
double timeline_vm_gone_at(struct timeline *tl, double after);

/* {"phases":[{name,label,start,end}], "samples":[{t,phase,vm_footprint,...}]} */
json_t *timeline_json(const struct timeline *tl);

#endif
