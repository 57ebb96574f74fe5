/* SPDX-License-Identifier: Apache-2.0 */
#include "commands/table.h"

#include "commands/cli.h"

#include <stdlib.h>
#include <string.h>

void table_init(struct table *t, size_t ncols, const char *const *headers, const char *align)
{
	memset(t, 0, sizeof *t);
	t->ncols = ncols > TABLE_MAX_COLS ? TABLE_MAX_COLS : ncols;
	for (size_t i = 0; i < t->ncols; i++) {
		t->headers[i] = headers[i];
		t->align[i] = align && align[i] == 'r' ? 'r' : 'l';
	}
}

int table_add(struct table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		char **grown = realloc(t->cells, cap * t->ncols * sizeof *grown);
		if (!grown)
			return -1;
		t->cells = grown;
		t->cap = cap;
	}
	char **row = t->cells + t->nrows * t->ncols;
	for (size_t i = 0; i < t->ncols; i++) {
		row[i] = strdup(cells[i] ? cells[i] : "-");
		if (!row[i]) {
			while (i-- > 0)
				free(row[i]);
			return -1;
		}
	}
	t->nrows++;
	return 0;
}

static void print_cell(FILE *f, const char *text, size_t width, char align, bool last)
{
	size_t len = strlen(text);
	int pad = width > len ? (int)(width - len) : 0;
	if (align == 'r')
		fprintf(f, "%*s%s", pad, "", text);
	else
		fprintf(f, "%s%*s", text, last ? 0 : pad, "");
	if (!last)
		fputs("  ", f);
}

void table_print(const struct table *t, FILE *f)
{
	size_t width[TABLE_MAX_COLS];
	for (size_t c = 0; c < t->ncols; c++) {
		width[c] = strlen(t->headers[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t len = strlen(t->cells[r * t->ncols + c]);
			if (len > width[c])
				width[c] = len;
		}
	}
	fputs(cli_bold(), f);
	for (size_t c = 0; c < t->ncols; c++)
		print_cell(f, t->headers[c], width[c], t->align[c], c + 1 == t->ncols);
	fprintf(f, "%s\n", cli_reset());
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++)
			print_cell(f, t->cells[r * t->ncols + c], width[c], t->align[c],
				   c + 1 == t->ncols);
		fputc('\n', f);
	}
}

void table_free(struct table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}
