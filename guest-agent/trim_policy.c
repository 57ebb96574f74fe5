/* SPDX-License-Identifier: Apache-2.0 */
#include "trim_policy.h"

#include "units.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 3, 4))) static void append(char *buf, size_t size, const char *fmt,
							 ...)
{
	size_t used = strlen(buf);
	if (used >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + used, size - used, fmt, ap);
	va_end(ap);
}

void trim_judge_idle(const struct agent_config *cfg, const struct trim_idle_inputs *in,
		     struct trim_idle_verdict *v)
{
	memset(v, 0, sizeof *v);
	v->cpu_busy = in->cpu_busy_percent < 0 || in->cpu_busy_percent > cfg->idle_cpu_percent;
	v->load_busy = in->load1 < 0 || in->load1 > cfg->idle_load1;
	if (in->psi_enabled)
		v->psi_busy = in->psi_cpu > cfg->idle_psi_percent ||
			      in->psi_io > cfg->idle_psi_percent ||
			      in->psi_memory > cfg->idle_psi_percent;
	v->idle = !v->cpu_busy && !v->load_busy && !v->psi_busy;

	const char *sep = v->idle ? ", " : "; ";
	snprintf(v->reason, sizeof v->reason, "%s", v->idle ? "idle: " : "busy: ");
	bool first = true;
	if (v->idle || v->cpu_busy) {
		if (in->cpu_busy_percent < 0)
			append(v->reason, sizeof v->reason,
			       "cpu share unknown (no /proc/stat delta)");
		else
			append(v->reason, sizeof v->reason, "cpu %.2f %% %s %.2f %% over %.0f s",
			       in->cpu_busy_percent,
			       v->cpu_busy ? ">" : "<=", cfg->idle_cpu_percent, in->window_s);
		first = false;
	}
	if (v->idle || v->load_busy) {
		if (in->load1 < 0)
			append(v->reason, sizeof v->reason, "%sload1 unknown", first ? "" : sep);
		else
			append(v->reason, sizeof v->reason, "%sload1 %.2f %s %.2f",
			       first ? "" : sep, in->load1,
			       v->load_busy ? ">" : "<=", cfg->idle_load1);
		first = false;
	}
	if (in->psi_enabled && (v->idle || v->psi_busy))
		append(v->reason, sizeof v->reason,
		       "%sPSI some cpu/io/memory %.2f/%.2f/%.2f %% %s %.2f %%", first ? "" : sep,
		       in->psi_cpu, in->psi_io, in->psi_memory,
		       v->psi_busy ? "(limit" : "<=", cfg->idle_psi_percent);
	if (in->psi_enabled && v->psi_busy)
		append(v->reason, sizeof v->reason, ")");
}

uint64_t trim_step_bytes(const struct agent_config *cfg, uint64_t mem_total)
{
	if (cfg->step_bytes > 0)
		return cfg->step_bytes;
	uint64_t step = mem_total / 32;
	if (step < 256 * VMC_MIB)
		step = 256 * VMC_MIB;
	if (step > VMC_GIB)
		step = VMC_GIB;
	return step;
}

uint64_t trim_next_ask(uint64_t remaining, uint64_t step)
{
	/* The kernel reclaims in batches and overshoots (6.1 in the lab: asked 128 MiB, got
	 * 212): never ask for more than half of what is left above the floor, so it holds. */
	uint64_t ask = remaining / 2 < step ? remaining / 2 : step;
	return ask > TRIM_MIN_ASK ? ask : TRIM_MIN_ASK;
}

uint64_t trim_reclaimable(const struct vmc_meminfo *mi)
{
	return vmc_meminfo_file_cache(mi) + mi->sreclaimable;
}

uint64_t trim_target_bytes(const struct vmc_meminfo *mi, uint64_t floor)
{
	uint64_t r = trim_reclaimable(mi);
	return r > floor ? r - floor : 0;
}

void trim_idle_inputs(const struct trim_idle_sample *a, const struct trim_idle_sample *b,
		      double load1, struct trim_idle_inputs *in)
{
	memset(in, 0, sizeof *in);
	in->window_s = b->t - a->t;
	in->cpu_busy_percent = a->cpu_ok && b->cpu_ok ? vmc_cpu_busy_percent(&a->cpu, &b->cpu) : -1;
	in->load1 = load1;
	in->psi_enabled = a->psi_ok && b->psi_ok;
	if (in->psi_enabled && in->window_s > 0) {
		/* Cumulative stall time over the window: the whole interval, not PSI's 60 s
		 * average. */
		double *out[3] = {&in->psi_cpu, &in->psi_io, &in->psi_memory};
		for (int i = 0; i < 3; i++) {
			uint64_t d = b->psi_total_us[i] >= a->psi_total_us[i]
					 ? b->psi_total_us[i] - a->psi_total_us[i]
					 : 0;
			*out[i] = 100.0 * (double)d / (in->window_s * 1e6);
		}
	}
}

unsigned trim_planned_steps(uint64_t target, uint64_t step)
{
	unsigned steps = 0;
	for (uint64_t left = target; left >= 2 * TRIM_MIN_ASK && steps < TRIM_MAX_STEPS; steps++)
		left -= trim_next_ask(left, step);
	return steps;
}

void trim_choose_method(enum trim_method configured, bool reclaim_exists,
			enum trim_reclaim_format known, bool swap_on,
			struct trim_method_choice *choice)
{
	choice->fallback[0] = '\0';
	if (configured != TRIM_METHOD_AUTO) {
		choice->method = configured;
		return;
	}
	choice->method = TRIM_METHOD_RECLAIM;
	if (!reclaim_exists) {
		choice->method = TRIM_METHOD_DROP_CACHES;
		snprintf(choice->fallback, sizeof choice->fallback,
			 "no %s (cgroup2 with the memory controller is not mounted there)",
			 TRIM_RECLAIM_PATH);
	} else if (known == TRIM_FORMAT_BYTES && swap_on) {
		choice->method = TRIM_METHOD_DROP_CACHES;
		snprintf(choice->fallback, sizeof choice->fallback,
			 "memory.reclaim takes no swappiness= on this kernel and swap is on: "
			 "drop_caches never swaps");
	}
}

const char *trim_method_name(enum trim_method m)
{
	switch (m) {
	case TRIM_METHOD_RECLAIM:
		return "memory.reclaim";
	case TRIM_METHOD_DROP_CACHES:
		return "drop_caches";
	case TRIM_METHOD_AUTO:
		break;
	}
	return "auto";
}

const char *trim_format_name(enum trim_reclaim_format f)
{
	switch (f) {
	case TRIM_FORMAT_SWAPPINESS:
		return "<bytes> swappiness=0";
	case TRIM_FORMAT_BYTES:
		return "<bytes>";
	case TRIM_FORMAT_UNKNOWN:
		break;
	}
	return "unknown";
}
