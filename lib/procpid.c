/* SPDX-License-Identifier: Apache-2.0 */
#include "procpid.h"

#include "procfs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * /proc files list their keys in a fixed order, so each lookup starts on the line after the
 * previous hit (one pass over the file instead of one per key: this runs once per sample). If
 * a kernel ever reorders them, the lookup falls back to the whole buffer, so order is a speed
 * hint, never an assumption.
 */
struct key_cursor {
	const char *buf, *pos;
};

static const char *cursor_find(struct key_cursor *c, const char *key)
{
	const char *v = vmc_find_key(c->pos, key);
	if (!v && c->pos != c->buf)
		v = vmc_find_key(c->buf, key);
	if (v) {
		const char *nl = strchr(v, '\n');
		c->pos = nl ? nl + 1 : v + strlen(v);
	}
	return v;
}

/*
 * An optional "Key: N [kB]" line: absent leaves *v alone with *present false; present but not
 * a number is malformed (-1), so a truncated or corrupted file is not read as 0.
 */
static int cursor_u64(struct key_cursor *c, const char *key, bool kb, uint64_t *v, bool *present)
{
	const char *p = cursor_find(c, key);
	*present = p != NULL;
	if (!p)
		return 0;
	uint64_t n;
	if (vmc_parse_u64(&p, &n) < 0 || (kb && n > UINT64_MAX / 1024))
		return -1;
	*v = kb ? n * 1024 : n;
	return 0;
}

/* Copies the rest of the line at v (up to a newline) into dst, truncating. */
static void copy_line(char *dst, size_t size, const char *v)
{
	size_t len = strcspn(v, "\n");
	if (len >= size)
		len = size - 1;
	memcpy(dst, v, len);
	dst[len] = '\0';
}

static int parse_uid_line(struct key_cursor *c, struct vmc_proc_status *st)
{
	const char *v = cursor_find(c, "Uid:");
	if (!v)
		return 0;
	uint64_t real, effective;
	if (vmc_parse_u64(&v, &real) < 0)
		return -1;
	while (*v == ' ' || *v == '\t')
		v++;
	if (vmc_parse_u64(&v, &effective) < 0)
		return -1;
	if (real > (uid_t)-1 || effective > (uid_t)-1)
		return -1;
	st->uid_real = (uid_t)real;
	st->uid_effective = (uid_t)effective;
	return 0;
}

int vmc_proc_status_parse(const char *buf, struct vmc_proc_status *st)
{
	memset(st, 0, sizeof *st);
	struct key_cursor c = {buf, buf};
	const char *name = cursor_find(&c, "Name:");
	if (!name)
		return -1;
	copy_line(st->name, sizeof st->name, name);
	const char *state = cursor_find(&c, "State:");
	if (state && *state != '\n')
		st->state = *state;
	uint64_t ppid = 0;
	bool present, anon, file, shmem, vol, nonvol;
	if (cursor_u64(&c, "PPid:", false, &ppid, &present) < 0 || ppid > INT32_MAX)
		return -1;
	st->ppid = (pid_t)ppid;
	if (parse_uid_line(&c, st) < 0)
		return -1;
	if (cursor_u64(&c, "VmHWM:", true, &st->vm_hwm, &present) < 0 ||
	    cursor_u64(&c, "VmRSS:", true, &st->vm_rss, &st->has_mm) < 0 ||
	    cursor_u64(&c, "RssAnon:", true, &st->rss_anon, &anon) < 0 ||
	    cursor_u64(&c, "RssFile:", true, &st->rss_file, &file) < 0 ||
	    cursor_u64(&c, "RssShmem:", true, &st->rss_shmem, &shmem) < 0 ||
	    cursor_u64(&c, "VmSwap:", true, &st->vm_swap, &present) < 0 ||
	    cursor_u64(&c, "voluntary_ctxt_switches:", false, &st->voluntary_ctxt_switches, &vol) <
		0 ||
	    cursor_u64(&c, "nonvoluntary_ctxt_switches:", false, &st->nonvoluntary_ctxt_switches,
		       &nonvol) < 0)
		return -1;
	st->has_rss_split = anon && file && shmem;
	st->has_ctxt = vol && nonvol;
	return 0;
}

/* Every /proc/PID file vmcost reads fits in a page or two; a bigger one is not what we expect. */
#define PROCPID_BUF 8192

static int read_pid_file(pid_t pid, const char *leaf, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, leaf);
	return vmc_fs_read_buf(path, buf, size, NULL);
}

int vmc_proc_status_read(pid_t pid, struct vmc_proc_status *st)
{
	char buf[PROCPID_BUF];
	if (read_pid_file(pid, "status", buf, sizeof buf) < 0)
		return -1;
	if (vmc_proc_status_parse(buf, st) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Skips one blank-separated field; returns NULL at the end of the buffer. */
static const char *next_field(const char *p)
{
	while (*p && *p != ' ' && *p != '\n')
		p++;
	while (*p == ' ')
		p++;
	return *p && *p != '\n' ? p : NULL;
}

static int field_u64(const char *p, uint64_t *v)
{
	if (vmc_parse_u64(&p, v) < 0)
		return -1;
	return *p == ' ' || *p == '\n' || *p == '\0' ? 0 : -1;
}

int vmc_proc_stat_parse(const char *buf, struct vmc_proc_stat *st)
{
	memset(st, 0, sizeof *st);
	const char *open = strchr(buf, '(');
	const char *close = strrchr(buf, ')');
	if (!open || !close || close < open || close[1] != ' ')
		return -1;
	size_t len = (size_t)(close - open - 1);
	if (len >= sizeof st->comm)
		len = sizeof st->comm - 1;
	memcpy(st->comm, open + 1, len);
	st->comm[len] = '\0';

	/* Field 3 (state) starts two characters after ')'. */
	const char *p = close + 2;
	st->state = *p;
	uint64_t ppid = 0;
	for (int field = 3; field <= 24; field++) {
		if (!p)
			return -1;
		uint64_t *dst = NULL;
		switch (field) {
		case 4:
			dst = &ppid;
			break;
		case 14:
			dst = &st->utime;
			break;
		case 15:
			dst = &st->stime;
			break;
		case 22:
			dst = &st->starttime;
			break;
		case 24:
			dst = &st->rss_pages;
			break;
		default:
			break;
		}
		if (dst && field_u64(p, dst) < 0)
			return -1;
		if (field < 24)
			p = next_field(p);
	}
	if (ppid > INT32_MAX)
		return -1;
	st->ppid = (pid_t)ppid;
	return 0;
}

int vmc_proc_stat_read(pid_t pid, struct vmc_proc_stat *st)
{
	char buf[2048];
	if (read_pid_file(pid, "stat", buf, sizeof buf) < 0)
		return -1;
	if (vmc_proc_stat_parse(buf, st) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int vmc_proc_io_parse(const char *buf, struct vmc_proc_io *io)
{
	memset(io, 0, sizeof *io);
	struct key_cursor c = {buf, buf};
	bool present, written;
	if (cursor_u64(&c, "rchar:", false, &io->rchar, &present) < 0 ||
	    cursor_u64(&c, "wchar:", false, &io->wchar, &present) < 0 ||
	    cursor_u64(&c, "read_bytes:", false, &io->read_bytes, &present) < 0 ||
	    cursor_u64(&c, "write_bytes:", false, &io->write_bytes, &written) < 0 ||
	    cursor_u64(&c, "cancelled_write_bytes:", false, &io->cancelled_write_bytes, &present) <
		0)
		return -1;
	/* write_bytes is the figure vmcost exists to read: it must be there. */
	return written ? 0 : -1;
}

int vmc_proc_io_read(pid_t pid, struct vmc_proc_io *io)
{
	char buf[1024];
	if (read_pid_file(pid, "io", buf, sizeof buf) < 0)
		return -1;
	if (vmc_proc_io_parse(buf, io) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int vmc_smaps_rollup_parse(const char *buf, struct vmc_smaps_rollup *sr)
{
	memset(sr, 0, sizeof *sr);
	struct key_cursor c = {buf, buf};
	bool rss, present, anon, file, shmem;
	/* The first line is the "[rollup]" pseudo-mapping header; Rss: is what makes it a rollup.
	 */
	if (cursor_u64(&c, "Rss:", true, &sr->rss, &rss) < 0 || !rss)
		return -1;
	if (cursor_u64(&c, "Pss:", true, &sr->pss, &present) < 0 ||
	    cursor_u64(&c, "Pss_Anon:", true, &sr->pss_anon, &anon) < 0 ||
	    cursor_u64(&c, "Pss_File:", true, &sr->pss_file, &file) < 0 ||
	    cursor_u64(&c, "Pss_Shmem:", true, &sr->pss_shmem, &shmem) < 0 ||
	    cursor_u64(&c, "Shared_Clean:", true, &sr->shared_clean, &present) < 0 ||
	    cursor_u64(&c, "Shared_Dirty:", true, &sr->shared_dirty, &present) < 0 ||
	    cursor_u64(&c, "Private_Clean:", true, &sr->private_clean, &present) < 0 ||
	    cursor_u64(&c, "Private_Dirty:", true, &sr->private_dirty, &present) < 0 ||
	    cursor_u64(&c, "Anonymous:", true, &sr->anonymous, &present) < 0 ||
	    cursor_u64(&c, "AnonHugePages:", true, &sr->anon_huge_pages, &present) < 0 ||
	    cursor_u64(&c, "Swap:", true, &sr->swap, &present) < 0 ||
	    cursor_u64(&c, "SwapPss:", true, &sr->swap_pss, &present) < 0 ||
	    cursor_u64(&c, "Locked:", true, &sr->locked, &present) < 0)
		return -1;
	sr->has_pss_split = anon && file && shmem;
	return 0;
}

int vmc_smaps_rollup_read(pid_t pid, struct vmc_smaps_rollup *sr)
{
	char buf[4096];
	if (read_pid_file(pid, "smaps_rollup", buf, sizeof buf) < 0)
		return -1;
	if (vmc_smaps_rollup_parse(buf, sr) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

uint64_t vmc_ticks_to_ns(uint64_t ticks, long hz)
{
	if (hz <= 0)
		hz = 100;
	uint64_t uhz = (uint64_t)hz;
	/* Split the multiply so large tick counts do not overflow. */
	return ticks / uhz * 1000000000ull + ticks % uhz * 1000000000ull / uhz;
}

long vmc_clk_tck(void)
{
	long hz = sysconf(_SC_CLK_TCK);
	return hz > 0 ? hz : 100;
}
