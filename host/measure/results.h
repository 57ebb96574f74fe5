/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Results files (markdown + JSON + SVG) named with the command, instance and date, and the
 * description of the machine they were measured on, so a figure never travels without it.
 */
#ifndef VMC_RESULTS_H
#define VMC_RESULTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

/*
 * This machine: {"os": "Debian GNU/Linux 12 (bookworm)", "kernel": "Linux 6.1.0 x86_64",
 * "cpu": "...", "cpus": 2, "memory": bytes}. Linux: /etc/os-release and /proc/cpuinfo below
 * the fs root; macOS: sw_vers and sysctl (run, not linked, so no #ifdef is needed).
 */
json_t *results_machine(void);
/* One line: "Debian GNU/Linux 12 (bookworm), Linux 6.1.0 x86_64, 2 × AMD EPYC ..., 23.5 GiB". */
void results_machine_line(const json_t *machine, char *buf, size_t size);

/* "DIR/KIND-INSTANCE-YYYYmmdd-HHMMSS" (local time) into buf; -1 if it does not fit. */
int results_base(const char *dir, const char *kind, const char *instance, time_t when, char *buf,
		 size_t size);
/* ISO 8601 UTC ("2026-12-02T11:30:00Z"). */
void results_iso_time(time_t when, char *buf, size_t size);

/* mkdir -p DIR; VMC_EXIT_OK or VMC_EXIT_FAILURE with a message. */
int results_ensure_dir(const char *dir, char *err, size_t errsize);

/*
 * Writes path atomically (path.tmp, then rename) through a writer; 0 or -1 with errno.
 * The writer returns 0 or -1.
 */
int results_write_file(const char *path, int (*writer)(FILE *f, void *ctx), void *ctx);
int results_write_json(const char *path, const json_t *doc);

#endif
