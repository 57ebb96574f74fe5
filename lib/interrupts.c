/* SPDX-License-Identifier: Apache-2.0 */
#include "interrupts.h"

#include "procfs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t count_cpu_columns(const char *line, const char *end)
{
	size_t n = 0;
	for (const char *p = line; p + 3 <= end; p++)
		if (strncmp(p, "CPU", 3) == 0 && (p == line || p[-1] == ' ' || p[-1] == '\t'))
			n++;
	return n;
}

/* Copies [p, end) into out with runs of blanks collapsed and both ends trimmed. */
static void copy_collapsed(const char *p, const char *end, char *out, size_t size)
{
	size_t used = 0;
	bool blank = false;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	for (; p < end && used + 1 < size; p++) {
		if (*p == ' ' || *p == '\t') {
			blank = true;
			continue;
		}
		if (blank && used > 0 && used + 2 < size)
			out[used++] = ' ';
		blank = false;
		out[used++] = *p;
	}
	out[used] = '\0';
}

/* One row; 0 if it parsed, -1 to skip the line (no "name:"). */
static int parse_row(const char *line, const char *end, size_t ncpu, struct vmc_irq_row *row)
{
	const char *p = line;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	const char *colon = memchr(p, ':', (size_t)(end - p));
	if (!colon || colon == p)
		return -1;
	for (const char *c = p; c < colon; c++)
		if (*c == ' ' || *c == '\t')
			return -1;
	size_t name_len = (size_t)(colon - p);
	if (name_len >= sizeof row->name)
		name_len = sizeof row->name - 1;
	memcpy(row->name, p, name_len);
	row->name[name_len] = '\0';
	row->total = 0;
	p = colon + 1;
	/* ERR: and MIS: carry a single number whatever the CPU count. */
	for (size_t cpu = 0; cpu < ncpu; cpu++) {
		const char *q = p;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		uint64_t v;
		if (q >= end || vmc_parse_u64(&q, &v) < 0)
			break;
		row->total = row->total + v < row->total ? UINT64_MAX : row->total + v;
		p = q;
	}
	copy_collapsed(p, end, row->desc, sizeof row->desc);
	return 0;
}

int vmc_irq_table_parse(const char *buf, struct vmc_irq_table *t)
{
	memset(t, 0, sizeof *t);
	const char *line = buf, *end = strchr(line, '\n');
	if (!end)
		end = line + strlen(line);
	t->ncpu = count_cpu_columns(line, end);
	if (t->ncpu == 0)
		return -1;
	size_t cap = 0;
	while (*end) {
		line = end + 1;
		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		struct vmc_irq_row row;
		if (parse_row(line, end, t->ncpu, &row) < 0)
			continue;
		if (t->n == cap) {
			size_t grown_cap = cap ? cap * 2 : 32;
			struct vmc_irq_row *grown = realloc(t->rows, grown_cap * sizeof *grown);
			if (!grown) {
				vmc_irq_table_free(t);
				errno = ENOMEM;
				return -1;
			}
			t->rows = grown;
			cap = grown_cap;
		}
		t->rows[t->n++] = row;
	}
	return 0;
}

int vmc_irq_table_read(const char *abs_path, struct vmc_irq_table *t)
{
	char *buf;
	if (vmc_fs_read(abs_path, &buf, NULL, 4u << 20) < 0)
		return -1;
	int rc = vmc_irq_table_parse(buf, t);
	free(buf);
	if (rc < 0 && errno != ENOMEM)
		errno = EINVAL;
	return rc;
}

void vmc_irq_table_free(struct vmc_irq_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof *t);
}

const struct vmc_irq_row *vmc_irq_table_find(const struct vmc_irq_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->rows[i].name, name) == 0)
			return &t->rows[i];
	return NULL;
}

/* The action name is the last word of the description. */
static bool action_is(const struct vmc_irq_row *row, const char *action)
{
	const char *last = strrchr(row->desc, ' ');
	last = last ? last + 1 : row->desc;
	return strcmp(last, action) == 0;
}

const struct vmc_irq_row *vmc_irq_timer_row(const struct vmc_irq_table *t)
{
	const struct vmc_irq_row *loc = vmc_irq_table_find(t, "LOC");
	if (loc)
		return loc;
	for (size_t i = 0; i < t->n; i++)
		if (action_is(&t->rows[i], "arch_timer") || action_is(&t->rows[i], "riscv-timer"))
			return &t->rows[i];
	return NULL;
}
