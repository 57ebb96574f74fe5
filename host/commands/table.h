/* SPDX-License-Identifier: Apache-2.0 */
/* Aligned text tables for the human output (the --json output never goes through here). */
#ifndef VMC_TABLE_H
#define VMC_TABLE_H

#include <stddef.h>
#include <stdio.h>

#define TABLE_MAX_COLS 12

struct table {
	size_t ncols;
	const char *headers[TABLE_MAX_COLS];
	char align[TABLE_MAX_COLS]; /* 'l' or 'r' */
	char **cells;		    /* nrows * ncols, malloc'd copies */
	size_t nrows, cap;
};

/* align: one 'l' or 'r' per column ("lrr"). */
void table_init(struct table *t, size_t ncols, const char *const *headers, const char *align);
/* Copies ncols strings (NULL prints as "-"). Returns 0 or -1 (out of memory). */
int table_add(struct table *t, const char *const *cells);
/* Header in bold when stdout takes colour; columns separated by two spaces. */
void table_print(const struct table *t, FILE *f);
void table_free(struct table *t);

#endif
