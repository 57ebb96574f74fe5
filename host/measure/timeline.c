/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/timeline.h"

#include "clock.h"
#include "jsonutil.h"
#include "platform/platform.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void timeline_init(struct timeline *tl, double t0)
{
	memset(tl, 0, sizeof *tl);
	pthread_mutex_init(&tl->lock, NULL);
	tl->t0 = t0;
}

void timeline_free(struct timeline *tl)
{
	free(tl->samples);
	tl->samples = NULL;
	tl->n = tl->cap = 0;
	pthread_mutex_destroy(&tl->lock);
}

static void end_running(struct timeline *tl, double t)
{
	if (tl->nphases > 0 && tl->phases[tl->nphases - 1].end < 0)
		tl->phases[tl->nphases - 1].end = t;
}

int timeline_phase_begin(struct timeline *tl, const char *name, const char *label, double now)
{
	pthread_mutex_lock(&tl->lock);
	double t = now - tl->t0;
	end_running(tl, t);
	int rc = -1;
	if (tl->nphases < TL_MAX_PHASES) {
		struct tl_phase *p = &tl->phases[tl->nphases++];
		snprintf(p->name, sizeof p->name, "%s", name);
		snprintf(p->label, sizeof p->label, "%s", label ? label : name);
		p->start = t;
		p->end = -1;
		rc = 0;
	}
	pthread_mutex_unlock(&tl->lock);
	return rc;
}

int timeline_add(struct timeline *tl, struct tl_sample s)
{
	pthread_mutex_lock(&tl->lock);
	int rc = 0;
	if (tl->n == tl->cap) {
		size_t cap = tl->cap ? tl->cap * 2 : 256;
		struct tl_sample *grown = realloc(tl->samples, cap * sizeof *grown);
		if (!grown) {
			rc = -1;
			goto out;
		}
		tl->samples = grown;
		tl->cap = cap;
	}
	s.phase = -1;
	if (tl->nphases > 0 && tl->phases[tl->nphases - 1].end < 0)
		s.phase = (int)tl->nphases - 1;
	tl->samples[tl->n++] = s;
out:
	pthread_mutex_unlock(&tl->lock);
	return rc;
}

int timeline_sample_now(struct timeline *tl, pid_t pid, struct tl_sample *out)
{
	struct tl_sample s = {.t = vmc_monotonic_s() - tl->t0};
	struct platform_proc_sample ps;
	if (pid > 0 && platform_proc_sample(pid, &ps) == 0) {
		s.has_vm = true;
		s.vm_footprint = ps.footprint;
		s.vm_resident = ps.resident;
	}
	struct platform_host_memory hm;
	if (platform_host_memory(&hm) != 0)
		return -1;
	s.host_free = hm.free;
	s.host_available = hm.available;
	s.has_compressor = hm.has_compressor;
	s.compressor_used = hm.compressor_used;
	if (timeline_add(tl, s) != 0)
		return -1;
	if (out) {
		pthread_mutex_lock(&tl->lock);
		*out = tl->samples[tl->n - 1];
		pthread_mutex_unlock(&tl->lock);
	}
	return 0;
}

/*
 * Waits up to seconds on the monotonic clock; true when timeline_sampler_stop asked to stop (a
 * byte in the pipe). poll() takes a relative timeout, so a wall clock set back or forward (NTP,
 * a user, a Mac waking up) changes nothing; pthread_cond_timedwait would wait on CLOCK_REALTIME,
 * and macOS has no pthread_condattr_setclock to change that.
 */
static bool wait_for_stop(int fd, double seconds)
{
	double deadline = vmc_monotonic_s() + seconds;
	for (;;) {
		double left = deadline - vmc_monotonic_s();
		if (left <= 0)
			return false;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n = poll(&p, 1, (int)(left * 1000) + 1);
		if (n > 0)
			return true;
		if (n < 0 && errno != EINTR)
			return true; /* the pipe is broken: stopping is the safe answer */
	}
}

static void *sampler_main(void *arg)
{
	struct tl_sampler *s = arg;
	do {
		struct tl_sample sample;
		if (timeline_sample_now(s->tl, s->pid, &sample) == 0 && s->on_sample)
			s->on_sample(&sample, s->ctx);
	} while (!wait_for_stop(s->wake[0], s->interval));
	return NULL;
}

int timeline_sampler_start(struct tl_sampler *s)
{
	if (pipe(s->wake) != 0)
		return -1;
	fcntl(s->wake[0], F_SETFD, FD_CLOEXEC);
	fcntl(s->wake[1], F_SETFD, FD_CLOEXEC);
	if (pthread_create(&s->thread, NULL, sampler_main, s) != 0) {
		close(s->wake[0]);
		close(s->wake[1]);
		return -1;
	}
	s->running = true;
	return 0;
}

void timeline_sampler_stop(struct tl_sampler *s)
{
	if (!s->running)
		return;
	while (write(s->wake[1], "x", 1) < 0 && errno == EINTR)
		;
	pthread_join(s->thread, NULL);
	close(s->wake[0]);
	close(s->wake[1]);
	s->running = false;
}

double timeline_vm_gone_at(struct timeline *tl, double after)
{
	double at = -1;
	pthread_mutex_lock(&tl->lock);
	for (size_t i = 1; i < tl->n; i++) {
		const struct tl_sample *a = &tl->samples[i - 1], *b = &tl->samples[i];
		if (b->t >= after && a->has_vm && !b->has_vm) {
			at = (a->t + b->t) / 2;
			break;
		}
	}
	pthread_mutex_unlock(&tl->lock);
	return at;
}

static json_t *seconds(double v)
{
	return json_real((double)(long long)(v * 1000.0 + 0.5) / 1000.0);
}

json_t *timeline_json(const struct timeline *tl)
{
	json_t *phases = json_array(), *samples = json_array();
	for (size_t i = 0; i < tl->nphases; i++) {
		const struct tl_phase *p = &tl->phases[i];
		json_array_append_new(phases,
				      json_pack("{s:s, s:s, s:o, s:o}", "name", p->name, "label",
						p->label, "start", seconds(p->start), "end",
						p->end < 0 ? json_null() : seconds(p->end)));
	}
	for (size_t i = 0; i < tl->n; i++) {
		const struct tl_sample *s = &tl->samples[i];
		json_t *o =
		    json_pack("{s:o, s:o, s:o, s:o}", "t", seconds(s->t), "phase",
			      s->phase >= 0 ? json_string(tl->phases[s->phase].name) : json_null(),
			      "host_free", vmc_json_u64(s->host_free), "host_available",
			      vmc_json_u64(s->host_available));
		json_object_set_new(o, "vm_footprint",
				    s->has_vm ? vmc_json_u64(s->vm_footprint) : json_null());
		json_object_set_new(o, "vm_resident",
				    s->has_vm ? vmc_json_u64(s->vm_resident) : json_null());
		if (s->has_compressor)
			json_object_set_new(o, "compressor_used", vmc_json_u64(s->compressor_used));
		json_array_append_new(samples, o);
	}
	return json_pack("{s:o, s:o}", "phases", phases, "samples", samples);
}
