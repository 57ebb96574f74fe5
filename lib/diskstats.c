/* SPDX-License-Identifier: Apache-2.0 */
#include "diskstats.h"

#include "procfs.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* "vd" + letters, and the like: a partition ends in a digit (vda1) or pN (nvme0n1p1). */
static bool letters_after(const char *name, const char *prefix)
{
	size_t len = strlen(prefix);
	if (strncmp(name, prefix, len) != 0 || !name[len])
		return false;
	for (const char *p = name + len; *p; p++)
		if (!islower((unsigned char)*p))
			return false;
	return true;
}

/* prefix + digits + mid + digits, nothing after (nvme0n1, mmcblk0 with mid ""). */
static bool digits_form(const char *name, const char *prefix, const char *mid)
{
	size_t len = strlen(prefix);
	if (strncmp(name, prefix, len) != 0)
		return false;
	const char *p = name + len;
	if (!isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	if (*mid) {
		size_t mlen = strlen(mid);
		if (strncmp(p, mid, mlen) != 0)
			return false;
		p += mlen;
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return *p == '\0';
}

bool vmc_disk_is_whole(const char *name)
{
	return letters_after(name, "vd") || letters_after(name, "sd") ||
	       letters_after(name, "xvd") || letters_after(name, "hd") ||
	       digits_form(name, "nvme", "n") || digits_form(name, "mmcblk", "");
}

static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static int parse_line(const char *line, struct vmc_disk_io *io, bool *whole)
{
	const char *p = skip_blanks(line);
	uint64_t major, minor, f[7];
	if (vmc_parse_u64(&p, &major) < 0)
		return -1;
	p = skip_blanks(p);
	if (vmc_parse_u64(&p, &minor) < 0)
		return -1;
	p = skip_blanks(p);
	size_t len = strcspn(p, " \t\n");
	if (len == 0 || len >= sizeof io->name)
		return -1;
	memcpy(io->name, p, len);
	io->name[len] = '\0';
	*whole = vmc_disk_is_whole(io->name);
	if (!*whole)
		return 0;
	p += len;
	/* reads, reads merged, sectors read, ms reading, writes, writes merged, sectors written */
	for (int i = 0; i < 7; i++) {
		p = skip_blanks(p);
		if (vmc_parse_u64(&p, &f[i]) < 0)
			return -1;
	}
	if (f[2] > UINT64_MAX / 512 || f[6] > UINT64_MAX / 512)
		return -1;
	io->read_bytes = f[2] * 512;
	io->writes = f[4];
	io->written_bytes = f[6] * 512;
	return 0;
}

int vmc_diskstats_parse(const char *buf, struct vmc_diskstats *ds)
{
	memset(ds, 0, sizeof *ds);
	const char *line = buf;
	while (line && *line) {
		if (*skip_blanks(line) != '\n' && *skip_blanks(line) != '\0') {
			struct vmc_disk_io io;
			bool whole = false;
			if (parse_line(line, &io, &whole) < 0)
				return -1;
			if (whole && ds->n < VMC_DISKSTATS_MAX)
				ds->disk[ds->n++] = io;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return 0;
}

int vmc_diskstats_read(struct vmc_diskstats *ds)
{
	char *buf;
	if (vmc_fs_read("/proc/diskstats", &buf, NULL, 1u << 20) < 0)
		return -1;
	int rc = vmc_diskstats_parse(buf, ds);
	free(buf);
	if (rc < 0)
		errno = EINVAL;
	return rc;
}

const struct vmc_disk_io *vmc_diskstats_find(const struct vmc_diskstats *ds, const char *name)
{
	for (size_t i = 0; i < ds->n; i++)
		if (strcmp(ds->disk[i].name, name) == 0)
			return &ds->disk[i];
	return NULL;
}
