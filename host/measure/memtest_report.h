/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memtest's report, rendered from its JSON document (the same one --json prints and the
 * results file keeps), so the terminal table, the markdown and the JSON never disagree.
 */
#ifndef VMC_MEMTEST_REPORT_H
#define VMC_MEMTEST_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* The published table plus one row per phase, for a terminal (bold headings when color). */
void memtest_report_human(FILE *f, const json_t *doc, bool color);
/* The results file: machine, versions, the published table, phases, the SVG. 0 or -1. */
int memtest_report_markdown(FILE *f, const json_t *doc);

/* One line for the result's pressure verdict ("conclusive: canary 21902 of 32768 pages
 * discarded", "INCONCLUSIVE: ...", "skipped (--pressure none)"). */
void memtest_pressure_text(const json_t *doc, char *buf, size_t size);

/* Number at a dotted path ("result.ram_freed_by_stop"); false if absent or not a number. */
bool memtest_num(const json_t *doc, const char *path, double *v);
/* String at a dotted path, or NULL. */
const char *memtest_str(const json_t *doc, const char *path);

#endif
