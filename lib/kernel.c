/* SPDX-License-Identifier: Apache-2.0 */
#include "kernel.h"

#include "procfs.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int parse_small(const char **p, unsigned *out)
{
	uint64_t v;
	if (vmc_parse_u64(p, &v) < 0 || v > 100000)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int vmc_kernel_version_parse(const char *s, struct vmc_kernel_version *v)
{
	memset(v, 0, sizeof *v);
	snprintf(v->release, sizeof v->release, "%.*s", (int)strcspn(s, "\n"), s);
	const char *p = s;
	if (parse_small(&p, &v->major) < 0 || *p++ != '.' || parse_small(&p, &v->minor) < 0)
		return -1;
	if (*p == '.') {
		p++;
		if (parse_small(&p, &v->patch) < 0)
			v->patch = 0;
	}
	return 0;
}

int vmc_kernel_version_read(struct vmc_kernel_version *v)
{
	char buf[160];
	if (vmc_fs_read_line("/proc/sys/kernel/osrelease", buf, sizeof buf) < 0)
		return -1;
	if (vmc_kernel_version_parse(buf, v) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

bool vmc_kernel_at_least(const struct vmc_kernel_version *v, unsigned major, unsigned minor)
{
	return v->major > major || (v->major == major && v->minor >= minor);
}

/* Next blank-separated word, honouring double quotes as the kernel's next_arg() does. */
static const char *next_word(const char *p, const char **start, size_t *len)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (!*p)
		return NULL;
	*start = p;
	bool quoted = false;
	for (; *p; p++) {
		if (*p == '"')
			quoted = !quoted;
		else if (!quoted && (*p == ' ' || *p == '\t' || *p == '\n'))
			break;
	}
	*len = (size_t)(p - *start);
	return p;
}

static void copy_unquoted(const char *s, size_t len, char *out, size_t size)
{
	size_t used = 0;
	for (size_t i = 0; i < len && used + 1 < size; i++)
		if (s[i] != '"')
			out[used++] = s[i];
	out[used] = '\0';
}

int vmc_cmdline_param(const char *cmdline, const char *name, char *value, size_t size)
{
	size_t name_len = strlen(name);
	int found = 0;
	const char *p = cmdline, *word;
	size_t len;
	while ((p = next_word(p, &word, &len))) {
		const char *w = word;
		size_t wlen = len;
		if (*w == '"') { /* "name=value with blanks" */
			w++;
			wlen--;
		}
		if (wlen < name_len || strncmp(w, name, name_len) != 0)
			continue;
		if (wlen == name_len || (wlen == name_len + 1 && w[name_len] == '"')) {
			if (!found)
				found = 2;
			continue;
		}
		if (w[name_len] != '=')
			continue;
		copy_unquoted(w + name_len + 1, wlen - name_len - 1, value, size);
		found = 1;
	}
	return found;
}

int vmc_cmdline_read(char *buf, size_t size)
{
	return vmc_fs_read_line("/proc/cmdline", buf, size);
}

int vmc_kstrtobool(const char *s, bool accepts_enable_disable, bool *value)
{
	if (!s || !*s)
		return -1;
	switch (s[0]) {
	case 'y':
	case 'Y':
	case 't':
	case 'T':
	case '1':
		*value = true;
		return 0;
	case 'n':
	case 'N':
	case 'f':
	case 'F':
	case '0':
		*value = false;
		return 0;
	case 'e':
	case 'E':
		if (!accepts_enable_disable)
			return -1;
		*value = true;
		return 0;
	case 'd':
	case 'D':
		if (!accepts_enable_disable)
			return -1;
		*value = false;
		return 0;
	case 'o':
	case 'O':
		if (s[1] == 'n' || s[1] == 'N') {
			*value = true;
			return 0;
		}
		if (s[1] == 'f' || s[1] == 'F') {
			*value = false;
			return 0;
		}
		return -1;
	default:
		return -1;
	}
}
