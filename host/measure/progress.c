/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/progress.h"

#include "clock.h"
#include "platform/platform.h"
#include "units.h"

#include <stdarg.h>
#include <string.h>

void progress_init(struct progress *p, FILE *out, bool tty, const char *prog, double t0)
{
	memset(p, 0, sizeof *p);
	pthread_mutex_init(&p->lock, NULL);
	p->out = out;
	p->tty = tty;
	p->prog = prog;
	p->t0 = t0;
}

void progress_destroy(struct progress *p)
{
	progress_clear(p);
	pthread_mutex_destroy(&p->lock);
}

/* Caller holds the lock. Long lines are cut so the line never wraps (it could not redraw). */
static void redraw(struct progress *p)
{
	if (!p->tty)
		return;
	char line[400];
	snprintf(line, sizeof line, "[%7.1f s] %s%s%s%s%s", vmc_monotonic_s() - p->t0, p->phase,
		 *p->detail ? ": " : "", p->detail, *p->readings ? " · " : "", p->readings);
	if (strlen(line) > 118)
		memcpy(line + 115, "...", 4);
	fprintf(p->out, "\r\033[K%s", line);
	fflush(p->out);
	p->line_open = true;
}

void progress_phase(struct progress *p, const char *phase)
{
	pthread_mutex_lock(&p->lock);
	snprintf(p->phase, sizeof p->phase, "%s", phase);
	p->detail[0] = '\0';
	if (p->tty)
		redraw(p);
	else
		fprintf(p->out, "%s: t=%.1f phase=%s event=start\n", p->prog,
			vmc_monotonic_s() - p->t0, phase);
	pthread_mutex_unlock(&p->lock);
}

void progress_event(struct progress *p, const char *event, const char *fmt, ...)
{
	char kv[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(kv, sizeof kv, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&p->lock);
	if (p->tty) {
		/* Events stay on screen: end the status line, print, redraw below. */
		fprintf(p->out, "\r\033[K[%7.1f s] %s %s%s%s\n", vmc_monotonic_s() - p->t0,
			p->phase, event, *kv ? ": " : "", kv);
		redraw(p);
	} else {
		fprintf(p->out, "%s: t=%.1f phase=%s event=%s%s%s\n", p->prog,
			vmc_monotonic_s() - p->t0, p->phase, event, *kv ? " " : "", kv);
	}
	fflush(p->out);
	pthread_mutex_unlock(&p->lock);
}

void progress_note(struct progress *p, const char *text)
{
	pthread_mutex_lock(&p->lock);
	snprintf(p->detail, sizeof p->detail, "%s", text);
	redraw(p);
	pthread_mutex_unlock(&p->lock);
}

void progress_sample(struct progress *p, const struct tl_sample *s)
{
	char vm[32], fr[32];
	pthread_mutex_lock(&p->lock);
	if (s->has_vm)
		snprintf(p->readings, sizeof p->readings, "VM %s · host free %s",
			 vmc_format_bytes(s->vm_footprint, vm, sizeof vm),
			 vmc_format_bytes(s->host_free, fr, sizeof fr));
	else
		snprintf(p->readings, sizeof p->readings, "VM stopped · host free %s",
			 vmc_format_bytes(s->host_free, fr, sizeof fr));
	redraw(p);
	pthread_mutex_unlock(&p->lock);
}

void progress_clear(struct progress *p)
{
	pthread_mutex_lock(&p->lock);
	if (p->tty && p->line_open) {
		fprintf(p->out, "\r\033[K");
		fflush(p->out);
	}
	p->line_open = false;
	pthread_mutex_unlock(&p->lock);
}
