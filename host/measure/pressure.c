/* SPDX-License-Identifier: Apache-2.0 */
/* Host memory pressure with a MADV_FREE canary as positive control. POSIX only: no #ifdefs. */
#include "measure/pressure.h"

#include "clock.h"
#include "log.h"
#include "message.h"
#include "procfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Touch in steps this big so progress and SIGINT are seen within a fraction of a second. */
#define TOUCH_STEP   (16ull << 20)
#define TICK_SECONDS 0.5
#define CANARY_MARK  0x7663616e61727921ull /* "vcanary!" */

const char *pressure_stage_name(enum pressure_stage stage)
{
	switch (stage) {
	case PRESSURE_ARMING:
		return "arming";
	case PRESSURE_TOUCHING:
		return "touching";
	case PRESSURE_HOLDING:
		return "holding";
	case PRESSURE_RELEASED:
		return "released";
	}
	return "?";
}

uint64_t pressure_default_size(const struct platform_host_memory *hm, uint64_t canary_size)
{
	uint64_t size, cap;
	if (hm->has_compressor) {
		size = hm->available + hm->total / 8;
		cap = hm->total / 4 * 3;
	} else {
		uint64_t keep = canary_size / 2;
		size = hm->available > keep ? hm->available - keep : 0;
		cap = hm->total / 8 * 7;
	}
	if (size > cap)
		size = cap;
	return size;
}

static size_t page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	return ps > 0 ? (size_t)ps : 4096;
}

static bool stopped(volatile sig_atomic_t *stop)
{
	return stop && *stop;
}

/* Pages of [addr, addr+len) the kernel still maps; UINT64_MAX if mincore is unavailable. */
static uint64_t resident_pages(void *addr, size_t len, size_t ps)
{
	size_t pages = len / ps;
	void *vec = malloc(pages ? pages : 1);
	if (!vec)
		return UINT64_MAX;
	/* vec is char * on macOS and unsigned char * on Linux: void * converts to either. */
	if (mincore(addr, len, vec) != 0) {
		free(vec);
		return UINT64_MAX;
	}
	uint64_t n = 0;
	const unsigned char *v = vec;
	for (size_t i = 0; i < pages; i++)
		n += v[i] & 1;
	free(vec);
	return n;
}

struct run {
	const struct pressure_plan *plan;
	pressure_tick_fn tick;
	void *ctx;
	volatile sig_atomic_t *stop;
	struct pressure_result *res;
	size_t ps;
	double started, last_tick;
	char *canary;
	size_t canary_len;
	char *mem;
	size_t mem_len;
	char saved_oom[32];
};

static void report(struct run *r, enum pressure_stage stage, double hold_left, bool force)
{
	double t = vmc_monotonic_s();
	if (!r->tick || (!force && t - r->last_tick < TICK_SECONDS))
		return;
	r->last_tick = t;
	struct pressure_status st = {
	    .stage = stage,
	    .touched = r->res->touched,
	    .canary_pages = r->res->canary_pages,
	    .canary_resident = r->canary ? resident_pages(r->canary, r->canary_len, r->ps) : 0,
	    .elapsed = t - r->started,
	    .hold_left = hold_left,
	};
	r->tick(&st, r->ctx);
}

static int arm_canary(struct run *r, char *err, size_t errsize)
{
	r->canary_len = (size_t)(r->plan->canary_size / r->ps * r->ps);
	if (r->canary_len == 0)
		return 0;
	void *p =
	    mmap(NULL, r->canary_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		vmc_errorf(err, errsize, "cannot map the %zu MiB canary:", r->canary_len >> 20);
		return -1;
	}
	r->canary = p;
	size_t pages = r->canary_len / r->ps;
	for (size_t i = 0; i < pages; i++)
		*(volatile uint64_t *)(r->canary + i * r->ps) = CANARY_MARK ^ i;
	if (madvise(r->canary, r->canary_len, MADV_FREE) != 0) {
		vmc_errorf(err, errsize, "madvise(MADV_FREE) on the canary failed:");
		return -1;
	}
	r->res->canary_pages = pages;
	r->res->canary_min_resident = pages;
	return 0;
}

int pressure_canary_probe(char *err, size_t errsize)
{
	size_t ps = page_size();
	void *p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		vmc_errorf(err, errsize, "cannot map one page for the canary:");
		return -1;
	}
	int rc = 0;
	*(volatile uint64_t *)p = CANARY_MARK;
	if (madvise(p, ps, MADV_FREE) != 0) {
		vmc_errorf(err, errsize,
			   "madvise(MADV_FREE) failed (the canary needs Linux 4.5 or macOS):");
		rc = -1;
	} else if (resident_pages(p, ps, ps) == UINT64_MAX) {
		vmc_errorf(err, errsize, "mincore on the canary failed:");
		rc = -1;
	}
	munmap(p, ps);
	return rc;
}

/* Fills a page with xorshift words: the macOS compressor must not shrink pressure pages. */
static void fill_page(char *page, size_t ps, uint64_t *state)
{
	uint64_t x = *state;
	for (size_t off = 0; off + sizeof x <= ps; off += sizeof x) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(page + off, &x, sizeof x);
	}
	*state = x;
}

static int touch_pressure(struct run *r, char *err, size_t errsize)
{
	r->mem_len = (size_t)(r->plan->size / r->ps * r->ps);
	if (r->mem_len == 0)
		return 0;
	void *p =
	    mmap(NULL, r->mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		vmc_errorf(
		    err, errsize,
		    "cannot map %zu MiB of pressure (try a smaller --pressure):", r->mem_len >> 20);
		return -1;
	}
	r->mem = p;
	double t0 = vmc_monotonic_s();
	uint64_t state = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	for (size_t off = 0; off < r->mem_len && !stopped(r->stop);) {
		size_t end = off + TOUCH_STEP < r->mem_len ? off + TOUCH_STEP : r->mem_len;
		for (; off < end; off += r->ps)
			fill_page(r->mem + off, r->ps, &state);
		r->res->touched = off;
		/* The first step is always reported: progress shows at once. */
		report(r, PRESSURE_TOUCHING, r->plan->hold_seconds,
		       off == end && off <= TOUCH_STEP);
	}
	r->res->touch_seconds = vmc_monotonic_s() - t0;
	return 0;
}

static void hold(struct run *r)
{
	double t0 = vmc_monotonic_s();
	for (;;) {
		double left = r->plan->hold_seconds - (vmc_monotonic_s() - t0);
		if (left <= 0 || stopped(r->stop))
			break;
		struct timespec nap = {0, 250 * 1000 * 1000};
		if (left < 0.25)
			nap.tv_nsec = (long)(left * 1e9);
		nanosleep(&nap, NULL);
		if (r->canary) {
			uint64_t res = resident_pages(r->canary, r->canary_len, r->ps);
			if (res < r->res->canary_min_resident)
				r->res->canary_min_resident = res;
		}
		report(r, PRESSURE_HOLDING, left > 0 ? left : 0, false);
	}
	r->res->hold_seconds = vmc_monotonic_s() - t0;
}

/* A discarded MADV_FREE page reads back as zeros; a surviving one still has its mark. */
static uint64_t count_discarded(const struct run *r)
{
	uint64_t discarded = 0;
	size_t pages = r->canary_len / r->ps;
	for (size_t i = 0; i < pages; i++)
		if (*(volatile uint64_t *)(r->canary + i * r->ps) != (CANARY_MARK ^ i))
			discarded++;
	return discarded;
}

/* The OOM killer should pick the pressure, never a VM or an editor (Linux; ignored elsewhere). */
static void oom_first(struct run *r)
{
	if (vmc_fs_read_line("/proc/self/oom_score_adj", r->saved_oom, sizeof r->saved_oom) != 0) {
		r->saved_oom[0] = '\0';
		return;
	}
	if (vmc_fs_write("/proc/self/oom_score_adj", "1000") != 0)
		r->saved_oom[0] = '\0';
}

static void oom_restore(struct run *r)
{
	if (r->saved_oom[0] && vmc_fs_write("/proc/self/oom_score_adj", r->saved_oom) != 0)
		vmc_debug("could not restore oom_score_adj %s", r->saved_oom);
}

static void release(struct run *r)
{
	if (r->mem)
		munmap(r->mem, r->mem_len);
	r->mem = NULL;
	if (r->canary) {
		r->res->canary_discarded = count_discarded(r);
		munmap(r->canary, r->canary_len);
	}
	r->canary = NULL;
}

int pressure_run(const struct pressure_plan *plan, pressure_tick_fn tick, void *ctx,
		 volatile sig_atomic_t *stop, struct pressure_result *res, char *err,
		 size_t errsize)
{
	memset(res, 0, sizeof *res);
	res->size = plan->size;
	struct run r = {.plan = plan, .tick = tick, .ctx = ctx, .stop = stop, .res = res};
	r.ps = page_size();
	r.started = vmc_monotonic_s();
	oom_first(&r);
	int rc = arm_canary(&r, err, errsize);
	report(&r, PRESSURE_ARMING, plan->hold_seconds, true);
	if (rc == 0)
		rc = touch_pressure(&r, err, errsize);
	if (rc == 0 && !stopped(stop))
		hold(&r);
	res->interrupted = stopped(stop);
	release(&r);
	oom_restore(&r);
	res->total_seconds = vmc_monotonic_s() - r.started;
	res->conclusive = rc == 0 && !res->interrupted && res->canary_discarded > 0;
	if (tick) {
		struct pressure_status st = {.stage = PRESSURE_RELEASED,
					     .touched = res->touched,
					     .canary_pages = res->canary_pages,
					     .canary_resident =
						 res->canary_pages - res->canary_discarded,
					     .elapsed = res->total_seconds};
		tick(&st, ctx);
	}
	return rc;
}
