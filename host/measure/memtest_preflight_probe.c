/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The guest side of memtest's pre-flight: a read-only sh script run through `limactl shell` (the
 * way the fill itself reaches the guest, as the same user), and the parser of what it prints.
 */
#include "measure/memtest_preflight.h"

#include "message.h"
#include "mounts.h"
#include "procfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Read-only: it creates nothing. No single quote in it, so any quoting of limactl shell's
 * arguments carries it unchanged. Shell builtins wherever they do (under emulation every process
 * costs tens of milliseconds): one stat per directory. "others" counts what `rm -rf` of the fill
 * directory would take besides memtest's own files. Mount points with a backslash (an escaped
 * blank) are left out rather than probed under a wrong name.
 */
const char preflight_probe_script[] =
    "probe() {\n"
    "\ta=$2\n"
    "\twhile [ ! -e \"$a\" ] && [ ! -L \"$a\" ]; do\n"
    "\t\tcase $a in */*) a=${a%/*}; [ -n \"$a\" ] || a=/ ;; *) a=. ;; esac\n"
    "\tdone\n"
    "\td=0; [ -d \"$a\" ] && d=1\n"
    "\tw=0; [ -w \"$a\" ] && w=1\n"
    "\te=0; [ \"$a\" = \"$2\" ] && e=1\n"
    "\to=0\n"
    "\tif [ $e = 1 ] && [ $d = 1 ]; then\n"
    "\t\tfor f in \"$a\"/* \"$a\"/.[!.]* \"$a\"/..?*; do\n"
    "\t\t\t[ -e \"$f\" ] || [ -L \"$f\" ] || continue\n"
    "\t\t\tcase ${f##*/} in vmcost-fill.*) ;; *) o=$((o + 1)) ;; esac\n"
    "\t\tdone\n"
    "\tfi\n"
    "\ts=$(stat -f -c \"%a %S %b\" \"$a\" 2>/dev/null) || s=\"- - -\"\n"
    "\tprintf \"vmcost-dir %s %s %s %s %s %s\\n\" \"$1\" $e $d $w $o \"$s\"\n"
    "\tprintf \"vmcost-at %s\\nvmcost-path %s\\n\" \"$a\" \"$2\"\n"
    "}\n"
    "for p in \"$@\"; do probe arg \"$p\"; done\n"
    "while read -r src target rest; do\n"
    "\tcase $src in /dev/*) ;; *) continue ;; esac\n"
    "\tcase $target in /mnt/*|/media/*) ;; *) continue ;; esac\n"
    "\tcase $target in *\\\\*) continue ;; esac\n"
    "\tprobe mount \"$target/vmcost-fill\"\n"
    "done </proc/mounts\n"
    "echo vmcost-mounts\n"
    "while IFS= read -r line; do printf \"%s\\n\" \"$line\"; done </proc/mounts\n";

static const char *next_line(const char *p, char *line, size_t size)
{
	size_t len = strcspn(p, "\n");
	snprintf(line, size, "%.*s", (int)(len < size ? len : size - 1), p);
	return p[len] ? p + len + 1 : p + len;
}

/* "-" (statfs failed) or a decimal. */
static bool number(const char *s, uint64_t *v)
{
	const char *p = s;
	return strcmp(s, "-") != 0 && vmc_parse_u64(&p, v) == 0 && *p == '\0';
}

static int parse_dir(const char *fields, struct preflight_guest_dir *d)
{
	char tag[16], avail[32], bsize[32], blocks[32];
	int e, isdir, w;
	unsigned others;
	if (sscanf(fields, "%15s %d %d %d %u %31s %31s %31s", tag, &e, &isdir, &w, &others, avail,
		   bsize, blocks) != 8)
		return -1;
	if (strcmp(tag, "arg") != 0 && strcmp(tag, "mount") != 0)
		return -1;
	d->from_mount = strcmp(tag, "mount") == 0;
	d->exists = e == 1;
	d->is_dir = isdir == 1;
	d->writable = w == 1;
	d->others = others;
	uint64_t a, b, n;
	d->has_space = number(avail, &a) && number(bsize, &b) && number(blocks, &n);
	if (d->has_space) {
		d->available = a * b;
		d->size = n * b;
	}
	return 0;
}

int preflight_parse_probe(const char *out, struct preflight_guest_facts *g)
{
	g->ok = false;
	g->dirs = NULL;
	g->n = 0;
	size_t cap = 0;
	const char *p = out ? out : "";
	const char *mounts = NULL;
	char line[PATH_MAX + 32];
	while (*p) {
		p = next_line(p, line, sizeof line);
		if (strcmp(line, "vmcost-mounts") == 0) {
			mounts = p;
			break;
		}
		if (strncmp(line, "vmcost-dir ", 11) != 0)
			continue;
		if (g->n == cap) {
			cap = cap ? cap * 2 : 8;
			struct preflight_guest_dir *grown = realloc(g->dirs, cap * sizeof *grown);
			if (!grown)
				goto bad;
			g->dirs = grown;
		}
		struct preflight_guest_dir *d = &g->dirs[g->n];
		memset(d, 0, sizeof *d);
		if (parse_dir(line + 11, d) != 0)
			goto bad;
		p = next_line(p, line, sizeof line);
		if (strncmp(line, "vmcost-at ", 10) != 0)
			goto bad;
		vmc_textf(d->at, sizeof d->at, "%s", line + 10);
		p = next_line(p, line, sizeof line);
		if (strncmp(line, "vmcost-path ", 12) != 0)
			goto bad;
		vmc_textf(d->path, sizeof d->path, "%s", line + 12);
		g->n++;
	}
	if (!mounts)
		goto bad;
	for (size_t i = 0; i < g->n; i++)
		g->dirs[i].has_mount = vmc_mount_for(mounts, g->dirs[i].at, &g->dirs[i].mount) == 0;
	g->ok = true;
	return 0;
bad:
	preflight_guest_facts_free(g);
	return -1;
}

void preflight_guest_facts_free(struct preflight_guest_facts *g)
{
	free(g->dirs);
	g->dirs = NULL;
	g->n = 0;
}
