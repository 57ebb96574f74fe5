/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost report: a user's measured runs on their own machine in one Markdown and one JSON file,
 * in the results/ format (machine and versions first), so Mac figures can come from Macs. Nothing
 * in it may point back at the person: paths under their home become "~", the host's name
 * "<host>" (docs/commands.md#vmcost-report).
 */
#ifndef VMC_USER_REPORT_H
#define VMC_USER_REPORT_H

#include <jansson.h>
#include <stdio.h>

/* What to take out of every string: the home directory and the host's names. */
struct user_report_private {
	char home[4096];    /* "/Users/alice" (no trailing slash); "" when unknown */
	char hosts[2][256]; /* the host name and its first label ("mac.local", "mac") */
};

/* $HOME (else the password entry's) and gethostname(). */
void user_report_private_read(struct user_report_private *p);

/*
 * A copy of text with every path under home written from "~" and every whole-word host name as
 * "<host>"; malloc'd. Host names shorter than 3 characters are left (they would hit words).
 */
char *user_report_redact_text(const char *text, const struct user_report_private *p);

/* Redacts every string in doc, keys included, in place. */
void user_report_redact(json_t *doc, const struct user_report_private *p);

/*
 * One run of a vmcost command as the report keeps it: {"command": "vmcost doctor dev --json",
 * "exit": N, "result": the command's JSON (or null), "message": its last stderr line}.
 */
json_t *user_report_run(const char *command, int exit_code, const char *out, const char *err);

/* The Markdown page of a report document (the JSON written beside it). 0 or -1 (write error). */
int user_report_markdown(FILE *f, const json_t *doc);

#endif
