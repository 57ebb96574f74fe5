/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Exact checks of human output against golden files, as the Docker fixtures check request bytes:
 * CHECK_GOLDEN(text, "NAME") compares text with tests/unit/fixtures/output/NAME.txt byte for
 * byte and prints a unified diff when they differ, so a changed message is one diff to read.
 * With VMC_RECORD_OUTPUT=1 the text is written as the new golden file instead (review the diff
 * before committing it). Suites run from the repository root. Header-only.
 *
 * golden_replace() and golden_mask() turn what differs from run to run (a temporary directory, a
 * pid, "3 s ago") into a fixed word before the comparison.
 */
#ifndef VMC_GOLDEN_H
#define VMC_GOLDEN_H

#include "check.h"
#include "print_capture.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define GOLDEN_DIR "tests/unit/fixtures/output"

/* The whole file as a malloc'd string, NULL if it cannot be read. */
static inline char *golden_read(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct capture cap;
	FILE *out = capture_open(&cap);
	char buf[4096];
	size_t n;
	while (cap.f && (n = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, n, out);
	fclose(f);
	return capture_close(&cap);
}

static inline bool golden_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	bool ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok;
}

/* diff -u GOLDEN ACTUAL on stderr, the actual text in a temporary file. */
static inline void golden_show_diff(const char *path, const char *text)
{
	char actual[] = "/tmp/vmc-golden-XXXXXX";
	int fd = mkstemp(actual);
	if (fd < 0)
		return;
	close(fd);
	if (golden_write(actual, text)) {
		char cmd[1024];
		/* Suites may set PATH to a fake bin directory only. */
		snprintf(cmd, sizeof cmd, "PATH=\"$PATH:/usr/bin:/bin\" diff -u '%s' '%s' >&2",
			 path, actual);
		fflush(stderr);
		int rc = system(cmd);
		if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) > 1)
			fprintf(stderr, "(no diff) actual output:\n%s", text);
	}
	unlink(actual);
}

static inline void check_golden(const char *text, const char *name, const char *file, int line)
{
	char path[512], what[640];
	snprintf(path, sizeof path, "%s/%s.txt", GOLDEN_DIR, name);
	snprintf(what, sizeof what, "output matches %s (VMC_RECORD_OUTPUT=1 re-records it)", path);
	if (!text) {
		check_report(0, file, line, "output captured");
		return;
	}
	if (getenv("VMC_RECORD_OUTPUT")) {
		if (!golden_write(path, text)) {
			check_report(0, file, line, "golden file written");
			return;
		}
		printf("     recorded %s\n", path);
		check_report(1, file, line, what);
		return;
	}
	char *golden = golden_read(path);
	bool same = golden && strcmp(golden, text) == 0;
	if (!same) {
		if (golden)
			golden_show_diff(path, text);
		else
			fprintf(stderr, "%s is missing; actual output:\n%s", path, text);
	}
	free(golden);
	check_report(same, file, line, what);
}

#define CHECK_GOLDEN(text, name) check_golden((text), (name), __FILE__, __LINE__)

/* text with every from replaced by to, malloc'd; frees text. NULL stays NULL. */
static inline char *golden_replace(char *text, const char *from, const char *to)
{
	if (!text || !*from)
		return text;
	struct capture cap;
	FILE *f = capture_open(&cap);
	if (!cap.f)
		return text;
	size_t flen = strlen(from);
	const char *p = text;
	for (const char *hit; (hit = strstr(p, from)); p = hit + flen) {
		fwrite(p, 1, (size_t)(hit - p), f);
		fputs(to, f);
	}
	fputs(p, f);
	free(text);
	return capture_close(&cap);
}

/* text with the decimal number n, where no other digit touches it, replaced by word; frees text. */
static inline char *golden_replace_number(char *text, long n, const char *word)
{
	if (!text)
		return text;
	char num[32];
	snprintf(num, sizeof num, "%ld", n);
	struct capture cap;
	FILE *f = capture_open(&cap);
	if (!cap.f)
		return text;
	size_t nlen = strlen(num);
	const char *p = text;
	for (const char *hit; (hit = strstr(p, num)); p = hit + nlen) {
		bool alone = (hit == text || hit[-1] < '0' || hit[-1] > '9') &&
			     (hit[nlen] < '0' || hit[nlen] > '9');
		fwrite(p, 1, (size_t)(hit - p), f);
		fputs(alone ? word : num, f);
	}
	fputs(p, f);
	free(text);
	return capture_close(&cap);
}

/*
 * text with what lies between each start and the next end on the same line replaced by word
 * (golden_mask(text, "last trim ", " ago", "T") turns "last trim 3 s ago" into "last trim T ago"),
 * malloc'd; frees text.
 */
static inline char *golden_mask(char *text, const char *start, const char *end, const char *word)
{
	if (!text || !*start || !*end)
		return text;
	struct capture cap;
	FILE *f = capture_open(&cap);
	if (!cap.f)
		return text;
	size_t slen = strlen(start);
	const char *p = text;
	for (const char *hit; (hit = strstr(p, start));) {
		const char *from = hit + slen, *to = strstr(from, end), *eol = strchr(from, '\n');
		fwrite(p, 1, (size_t)(from - p), f);
		p = from;
		if (to && (!eol || to <= eol)) {
			fputs(word, f);
			p = to;
		}
	}
	fputs(p, f);
	free(text);
	return capture_close(&cap);
}

#endif
