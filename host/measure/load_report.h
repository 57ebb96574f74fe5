/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost load's report, rendered from its JSON document (the one --json prints and the results
 * file keeps), as memtest's is: the terminal table and the markdown never disagree with it.
 */
#ifndef VMC_LOAD_REPORT_H
#define VMC_LOAD_REPORT_H

#include <jansson.h>
#include <stdio.h>

/* The load table for a terminal: both pgbench runs, the idle CPU, how long the set-up took, and
 * md_path (the results file) when not NULL. */
void load_report_human(FILE *f, const json_t *doc, const char *md_path);
/* The results file's markdown: machine, versions, the table, the idle CPU. 0, or -1 on a write
 * error. */
int load_report_markdown(FILE *f, const json_t *doc);

#endif
