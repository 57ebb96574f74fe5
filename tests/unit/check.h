/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A tiny test harness: CHECK-style assertions that count, keep going, and a summary line
 * "N passed, N failed, N skipped" (the format every suite in vmcost ends with). Header-only on
 * purpose. SKIP("why") ends a test that cannot run here; it is counted and shown, never passed.
 *
 *   TEST(parses_total) { CHECK_U64(mi.total, 2048 * 1024); }
 *   int main(void) { RUN(parses_total); return check_done(); }
 */
#ifndef VMC_CHECK_H
#define VMC_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_passed, check_failed, check_skipped;
static const char *check_current = "";

static inline void check_report(int ok, const char *file, int line, const char *what)
{
	if (ok) {
		check_passed++;
		return;
	}
	check_failed++;
	fprintf(stderr, "FAIL %s (%s:%d): %s\n", check_current, file, line, what);
}

#define TEST(name) static void name(void)
#define RUN(name)                                                                                  \
	do {                                                                                       \
		check_current = #name;                                                             \
		int failed_ = check_failed, skipped_ = check_skipped;                              \
		name();                                                                            \
		printf("%s %s\n",                                                                  \
		       check_failed != failed_	   ? "FAIL"                                        \
		       : check_skipped != skipped_ ? "skip"                                        \
						   : "ok  ",                                       \
		       #name);                                                                     \
	} while (0)

/* Ends the current test as skipped, with the reason (what is missing here). */
#define SKIP(why)                                                                                  \
	do {                                                                                       \
		check_skipped++;                                                                   \
		printf("     skipped: %s\n", (why));                                               \
		return;                                                                            \
	} while (0)

#define CHECK(cond) check_report(!!(cond), __FILE__, __LINE__, #cond)

#define CHECK_INT(actual, expected)                                                                \
	do {                                                                                       \
		long long a_ = (long long)(actual), e_ = (long long)(expected);                    \
		char m_[256];                                                                      \
		snprintf(m_, sizeof m_, "%s == %lld, expected %lld", #actual, a_, e_);             \
		check_report(a_ == e_, __FILE__, __LINE__, m_);                                    \
	} while (0)

#define CHECK_U64(actual, expected)                                                                \
	do {                                                                                       \
		uint64_t a_ = (uint64_t)(actual), e_ = (uint64_t)(expected);                       \
		char m_[256];                                                                      \
		snprintf(m_, sizeof m_, "%s == %" PRIu64 ", expected %" PRIu64, #actual, a_, e_);  \
		check_report(a_ == e_, __FILE__, __LINE__, m_);                                    \
	} while (0)

#define CHECK_DBL(actual, expected, tolerance)                                                     \
	do {                                                                                       \
		double a_ = (double)(actual), e_ = (double)(expected);                             \
		char m_[256];                                                                      \
		snprintf(m_, sizeof m_, "%s == %g, expected %g", #actual, a_, e_);                 \
		check_report(a_ - e_ <= (tolerance) && e_ - a_ <= (tolerance), __FILE__, __LINE__, \
			     m_);                                                                  \
	} while (0)

#define CHECK_STR(actual, expected)                                                                \
	do {                                                                                       \
		const char *a_ = (actual), *e_ = (expected);                                       \
		char m_[512];                                                                      \
		snprintf(m_, sizeof m_, "%s == \"%s\", expected \"%s\"", #actual,                  \
			 a_ ? a_ : "(null)", e_ ? e_ : "(null)");                                  \
		check_report(a_ &&e_ ? strcmp(a_, e_) == 0 : a_ == e_, __FILE__, __LINE__, m_);    \
	} while (0)

/* Substring check for human output. */
#define CHECK_CONTAINS(haystack, needle)                                                           \
	do {                                                                                       \
		const char *h_ = (haystack), *n_ = (needle);                                       \
		char m_[512];                                                                      \
		snprintf(m_, sizeof m_, "%s contains \"%s\"", #haystack, n_);                      \
		check_report(h_ &&strstr(h_, n_) != NULL, __FILE__, __LINE__, m_);                 \
	} while (0)

static inline int check_done(void)
{
	printf("%d passed, %d failed, %d skipped\n", check_passed, check_failed, check_skipped);
	/* A suite that only skipped said why; tests/run-suite decides what that is worth. */
	return check_failed == 0 && check_passed + check_skipped > 0 ? 0 : 1;
}

#endif
