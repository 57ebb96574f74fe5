/* SPDX-License-Identifier: Apache-2.0 */
#include "procpid.h"

#include "procfs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * An optional "Key: N kB" line: absent leaves *v alone and returns 0 with *present false;
 * present but not a number is malformed (-1), so a truncated or corrupted file is not read as 0.
 */
static int optional_kb(const char *buf, const char *key, uint64_t *v, bool *present)
{
	*present = vmc_find_key(buf, key) != NULL;
	if (!*present)
		return 0;
	return vmc_key_kb(buf, key, v);
}

static int optional_u64(const char *buf, const char *key, uint64_t *v, bool *present)
{
	*present = vmc_find_key(buf, key) != NULL;
	if (!*present)
		return 0;
	return vmc_key_u64(buf, key, v);
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

static int parse_uid_line(const char *buf, struct vmc_proc_status *st)
{
	const char *v = vmc_find_key(buf, "Uid:");
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
	const char *name = vmc_find_key(buf, "Name:");
	if (!name)
		return -1;
	copy_line(st->name, sizeof st->name, name);
	const char *state = vmc_find_key(buf, "State:");
	if (state && *state != '\n')
		st->state = *state;
	uint64_t ppid = 0;
	bool present, anon, file, shmem, vol, nonvol, hwm, swap;
	if (optional_u64(buf, "PPid:", &ppid, &present) < 0 || ppid > INT32_MAX)
		return -1;
	st->ppid = (pid_t)ppid;
	if (parse_uid_line(buf, st) < 0)
		return -1;
	if (optional_kb(buf, "VmRSS:", &st->vm_rss, &st->has_mm) < 0 ||
	    optional_kb(buf, "VmHWM:", &st->vm_hwm, &hwm) < 0 ||
	    optional_kb(buf, "VmSwap:", &st->vm_swap, &swap) < 0 ||
	    optional_kb(buf, "RssAnon:", &st->rss_anon, &anon) < 0 ||
	    optional_kb(buf, "RssFile:", &st->rss_file, &file) < 0 ||
	    optional_kb(buf, "RssShmem:", &st->rss_shmem, &shmem) < 0 ||
	    optional_u64(buf, "voluntary_ctxt_switches:", &st->voluntary_ctxt_switches, &vol) < 0 ||
	    optional_u64(buf, "nonvoluntary_ctxt_switches:", &st->nonvoluntary_ctxt_switches,
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
	bool present;
	/* write_bytes is the figure vmcost exists to read: it must be there. */
	if (vmc_key_u64(buf, "write_bytes:", &io->write_bytes) < 0)
		return -1;
	if (optional_u64(buf, "rchar:", &io->rchar, &present) < 0 ||
	    optional_u64(buf, "wchar:", &io->wchar, &present) < 0 ||
	    optional_u64(buf, "read_bytes:", &io->read_bytes, &present) < 0 ||
	    optional_u64(buf, "cancelled_write_bytes:", &io->cancelled_write_bytes, &present) < 0)
		return -1;
	return 0;
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
	bool present, anon, file, shmem;
	/* The first line is the "[rollup]" pseudo-mapping header; Rss: is what makes it a rollup.
	 */
	if (vmc_key_kb(buf, "Rss:", &sr->rss) < 0)
		return -1;
	if (optional_kb(buf, "Pss:", &sr->pss, &present) < 0 ||
	    optional_kb(buf, "Pss_Anon:", &sr->pss_anon, &anon) < 0 ||
	    optional_kb(buf, "Pss_File:", &sr->pss_file, &file) < 0 ||
	    optional_kb(buf, "Pss_Shmem:", &sr->pss_shmem, &shmem) < 0 ||
	    optional_kb(buf, "Shared_Clean:", &sr->shared_clean, &present) < 0 ||
	    optional_kb(buf, "Shared_Dirty:", &sr->shared_dirty, &present) < 0 ||
	    optional_kb(buf, "Private_Clean:", &sr->private_clean, &present) < 0 ||
	    optional_kb(buf, "Private_Dirty:", &sr->private_dirty, &present) < 0 ||
	    optional_kb(buf, "Anonymous:", &sr->anonymous, &present) < 0 ||
	    optional_kb(buf, "AnonHugePages:", &sr->anon_huge_pages, &present) < 0 ||
	    optional_kb(buf, "Swap:", &sr->swap, &present) < 0 ||
	    optional_kb(buf, "SwapPss:", &sr->swap_pss, &present) < 0 ||
	    optional_kb(buf, "Locked:", &sr->locked, &present) < 0)
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
