/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One check of the idle doctor: an id, a status, what was observed, one sentence on why it
 * costs (with the published figure where one exists,
 * docs/published-measurements.md#the-lima-write-up) and the fix.
 */
#ifndef VMC_AGENT_CHECK_RESULT_H
#define VMC_AGENT_CHECK_RESULT_H

enum check_status {
	CHECK_STATUS_OK,
	CHECK_STATUS_WARN,
	CHECK_STATUS_FAIL,
	CHECK_STATUS_NA,
};
#define CHECK_STATUS_COUNT (CHECK_STATUS_NA + 1)

struct check {
	const char *id;
	const char *title;
	enum check_status status;
	char observed[256];
	char why[512];
	char fix[384];
};

/* "ok", "warn", "fail", "n/a": the documents' names. */
const char *check_status_name(enum check_status s);
__attribute__((format(printf, 2, 3))) void check_observed(struct check *c, const char *fmt, ...);
__attribute__((format(printf, 2, 3))) void check_why(struct check *c, const char *fmt, ...);
__attribute__((format(printf, 2, 3))) void check_fix(struct check *c, const char *fmt, ...);

#endif
