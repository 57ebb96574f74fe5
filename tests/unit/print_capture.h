/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a human-output printer writes, as a malloc'd string, for golden files (golden.h), and so
 * suites can feed the printers documents with members missing (an older agent, a hand-made --json
 * file) and check that nothing prints "(null)" or crashes. Header-only.
 */
#ifndef VMC_PRINT_CAPTURE_H
#define VMC_PRINT_CAPTURE_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * For printers of any other shape:
 *   struct capture cap; FILE *f = capture_open(&cap); preflight_print(f, ...);
 *   char *text = capture_close(&cap);   (malloc'd, NULL if the stream could not be opened)
 */
struct capture {
	char *text;
	size_t len;
	FILE *f;
};

static inline FILE *capture_open(struct capture *c)
{
	c->text = NULL;
	c->len = 0;
	c->f = open_memstream(&c->text, &c->len);
	return c->f ? c->f : stderr;
}

static inline char *capture_close(struct capture *c)
{
	if (!c->f)
		return NULL;
	fclose(c->f);
	return c->text;
}

/* A printer as the agent's *_print functions are, and the documents every one must survive. */
typedef void (*doc_printer)(FILE *f, const json_t *doc);

static inline char *print_capture(doc_printer print, const json_t *doc)
{
	struct capture cap;
	FILE *f = capture_open(&cap);
	if (!cap.f)
		return NULL;
	print(f, doc);
	return capture_close(&cap);
}

/* The JSON texts of odd documents: empty, members of the wrong type, members missing. */
static const char *const print_odd_documents[] = {
    "{}",
    "{\"decision\": \"trimmed\"}",
    "{\"decision\": 7, \"reason\": [], \"idle\": {}}",
    "{\"checks\": [{}, {\"status\": \"warn\"}, {\"status\": \"fail\", \"id\": 1}], "
    "\"summary\": {}, \"vmm\": {}}",
    "{\"present\": true, \"device\": {}, \"page_reporting_order\": {}}",
    "{\"trim\": {\"last_trim\": {}, \"last_decision\": {}}, \"page_reporting\": {}}",
    "{\"interrupts\": [{}], \"softirqs\": [{}], \"threads\": [{}, {\"process\": \"a\"}], "
    "\"totals\": {\"timer\": {}}}",
};

/* How many of the odd documents print badly (no output, or "(null)" in it) through print. */
static inline int print_odd_failures(doc_printer print)
{
	int failures = 0;
	for (size_t i = 0; i < sizeof print_odd_documents / sizeof print_odd_documents[0]; i++) {
		json_t *doc = json_loads(print_odd_documents[i], 0, NULL);
		char *text = print_capture(print, doc);
		if (!text || strstr(text, "(null)")) {
			fprintf(stderr, "printing %s: %s\n", print_odd_documents[i],
				text ? text : "(no output)");
			failures++;
		}
		free(text);
		json_decref(doc);
	}
	return failures;
}

#endif
