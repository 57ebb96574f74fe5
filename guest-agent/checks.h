/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The idle doctor: every tuning that decides what an idle guest costs its host. Each check has
 * an id, a status, what was observed, one sentence on why it costs (with the published figure
 * where one exists, docs/published-measurements.md#the-lima-write-up) and the fix. The facts
 * are gathered once into struct doctor so each check is a small function of it.
 */
#ifndef VMC_AGENT_CHECKS_H
#define VMC_AGENT_CHECKS_H

#include "balloon.h"
#include "kernel.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

enum check_status { CHECK_OK, CHECK_WARN, CHECK_FAIL, CHECK_NA };

struct check {
	const char *id;
	const char *title;
	enum check_status status;
	char observed[256];
	char why[512];
	char fix[384];
};

/* Which hypervisor offers the balloon: decides what init_on_free does to reporting. */
enum vmm_kind { VMM_UNKNOWN, VMM_QEMU, VMM_VZ, VMM_KRUN_OR_FIRECRACKER };

struct doctor_proc {
	pid_t pid;
	char comm[64];
	char cmdline[256];
};

/* init_on_free from each source: -1 unknown, 0 off, 1 on. */
struct init_on_free {
	int cmdline, config, bootlog, effective;
	bool poisoning;	    /* "CONFIG_PAGE_POISONING is on" in the boot log */
	bool reporting_log; /* "Free page reporting enabled" in the boot log */
	bool kmsg_read;
	char source[48]; /* where the effective value came from */
};

struct doctor {
	bool has_kernel;
	struct vmc_kernel_version kernel;
	char cmdline[4096];
	bool has_cmdline;
	struct balloon_info balloon;
	struct init_on_free iof;
	enum vmm_kind vmm;
	char vmm_evidence[200];
	struct doctor_proc *procs;
	size_t nprocs;
	char *mounts; /* /proc/mounts, or NULL */
};

const char *check_status_name(enum check_status s);
const char *vmm_name(enum vmm_kind v);

/* Gathers the facts (cheap: a few /proc and /sys reads, the kernel log once). */
void doctor_gather(struct doctor *d);
void doctor_free(struct doctor *d);
/* Runs every check into out (at least CHECKS_MAX entries); returns how many. */
#define CHECKS_MAX 32
size_t doctor_run(const struct doctor *d, struct check *out);
json_t *checks_to_json(const struct doctor *d, const struct check *c, size_t n);
void checks_print(FILE *f, const json_t *doc, bool color);

/* Helpers for the check functions. */
__attribute__((format(printf, 2, 3))) void check_observed(struct check *c, const char *fmt, ...);
__attribute__((format(printf, 2, 3))) void check_why(struct check *c, const char *fmt, ...);
__attribute__((format(printf, 2, 3))) void check_fix(struct check *c, const char *fmt, ...);
const struct doctor_proc *doctor_find_proc(const struct doctor *d, const char *name);

/* The check groups (checks_memory.c, checks_system.c). */
size_t checks_memory(const struct doctor *d, struct check *out);
size_t checks_system(const struct doctor *d, struct check *out);

#endif
