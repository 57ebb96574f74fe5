/* SPDX-License-Identifier: Apache-2.0 */
/* memtest's pre-flight checks: pure functions of gathered facts, and their reports. */
#include "measure/memtest_preflight.h"

#include "color.h"
#include "jsonutil.h"
#include "log.h"
#include "measure/pressure.h"
#include "measure/workload.h"
#include "message.h"
#include "units.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MIB	   (1024ull * 1024)
#define FILL_BLOCK WORKLOAD_FILL_BLOCK
#define MAX_MOUNTS 64

static void verdict(struct preflight_verdict *v, enum preflight_status status, int code,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void verdict(struct preflight_verdict *v, enum preflight_status status, int code,
		    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->message, sizeof v->message, fmt, ap); /* a long path may cut it */
	va_end(ap);
	v->status = status;
	v->exit_code = status == PREFLIGHT_FAIL ? code : VMC_EXIT_OK;
}

/*
 * A human size for a message, returned by value: the array of a struct returned by a call lives
 * until the end of the full expression (C11 6.2.4p8), so one verdict() call can format several
 * sizes, each in its own storage, with no shared buffer.
 */
struct size_text {
	char text[32];
};
static struct size_text bytes(uint64_t n)
{
	struct size_text t;
	vmc_format_bytes(n, t.text, sizeof t.text);
	return t;
}

static bool one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

enum preflight_fs_backing preflight_fs_backing(const struct vmc_mount *m)
{
	static const char *const ram[] = {"tmpfs",    "ramfs",	   "rootfs",
					  "devtmpfs", "hugetlbfs", NULL};
	static const char *const shared[] = {"9p",   "virtiofs", "nfs",	   "nfs4",  "cifs",
					     "smb3", "smbfs",	 "vboxsf", "sshfs", NULL};
	static const char *const disk[] = {"ext2", "ext3",     "ext4", "xfs",	 "btrfs",    "f2fs",
					   "jfs",  "reiserfs", "zfs",  "nilfs2", "bcachefs", NULL};
	/* A zram or brd block device is RAM whatever filesystem sits on it. */
	if (one_of(m->fstype, ram) || strncmp(m->source, "/dev/zram", 9) == 0 ||
	    strncmp(m->source, "/dev/ram", 8) == 0)
		return PREFLIGHT_FS_RAM;
	if (one_of(m->fstype, shared) || strncmp(m->fstype, "fuse", 4) == 0)
		return PREFLIGHT_FS_HOST_SHARED;
	return one_of(m->fstype, disk) ? PREFLIGHT_FS_DISK : PREFLIGHT_FS_OTHER;
}

static const struct preflight_guest_dir *find_dir(const struct preflight_guest_facts *g,
						  const char *path)
{
	for (size_t i = 0; g && i < g->n; i++)
		if (!g->dirs[i].from_mount && strcmp(g->dirs[i].path, path) == 0)
			return &g->dirs[i];
	return NULL;
}

static const char *tmpfs_path(const struct preflight_request *req)
{
	return req->tmpfs_dir ? req->tmpfs_dir : PREFLIGHT_DEFAULT_TMPFS_DIR;
}

static const char *fill_path(const struct preflight_request *req)
{
	return req->fill_dir ? req->fill_dir : PREFLIGHT_DEFAULT_FILL_DIR;
}

static uint64_t vm_memory(const struct preflight_request *req)
{
	/* As memtest always assumed when lima.yaml does not say. */
	return req->vm_memory ? req->vm_memory : 2048 * MIB;
}

/* A guest directory the probe could not see: why, as a failed verdict. */
static bool guest_missing(const struct preflight_guest_facts *g,
			  const struct preflight_guest_dir *d, const char *path,
			  struct preflight_verdict *v)
{
	if (g && g->not_asked) {
		verdict(v, PREFLIGHT_SKIP, 0,
			"not checked: the run is refused already, so the guest was not asked");
		return true;
	}
	if (!g || !g->ok) {
		verdict(v, PREFLIGHT_FAIL, g ? g->exit_code : VMC_EXIT_FAILURE,
			"cannot look at %s in the guest: %s", path,
			g ? g->error : "the guest was not asked");
		return true;
	}
	if (!d) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_FAILURE,
			"the guest's answer says nothing about %s", path);
		return true;
	}
	return false;
}

/* The tmpfs directory: there, a tmpfs, writable, its free space known; else NULL and why. */
static const struct preflight_guest_dir *usable_tmpfs(const struct preflight_request *req,
						      const struct preflight_guest_facts *g,
						      const char *path, struct preflight_verdict *v)
{
	const struct preflight_guest_dir *d = find_dir(g, path);
	if (guest_missing(g, d, path, v))
		return NULL;
	if (!d->exists || !d->is_dir) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_USAGE,
			"%s does not exist in the guest: pass --tmpfs DIR of a tmpfs (/dev/shm "
			"usually is one)",
			path);
		return NULL;
	}
	if (!d->has_mount || strcmp(d->mount.fstype, "tmpfs") != 0) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_USAGE,
			"%s is on %s (%s), not a tmpfs: the fill's first half must be guest RAM "
			"touched and freed; pass --tmpfs DIR of a tmpfs",
			path, d->has_mount ? d->mount.fstype : "an unknown filesystem",
			d->has_mount ? d->mount.target : "no mount found");
		return NULL;
	}
	if (!d->writable) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_PERMISSION,
			"%s is not writable for the user limactl shell %s runs as: pass --tmpfs "
			"DIR of a tmpfs that user may write",
			path, req->name);
		return NULL;
	}
	if (!d->has_space) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_FAILURE,
			"cannot read the free space of %s in the guest (stat -f failed)", path);
		return NULL;
	}
	return d;
}

/* SIZE in the tmpfs next to the seed: as asked, or the default lowered to what fits. */
static void size_in_tmpfs(const struct preflight_request *req, const struct preflight_guest_dir *d,
			  uint64_t *size, struct preflight_verdict *v)
{
	uint64_t peak, files;
	uint64_t want = req->size ? req->size : vm_memory(req) / 2;
	workload_fill_bytes(want, &peak, &files);
	if (peak <= d->available) {
		*size = want;
		verdict(v, PREFLIGHT_PASS, 0,
			"%s: tmpfs, %s free for %s (SIZE %s and a 64 MiB seed)", d->path,
			bytes(d->available).text, bytes(peak).text, bytes(files).text);
		return;
	}
	uint64_t fits =
	    d->available > FILL_BLOCK ? (d->available - FILL_BLOCK) / FILL_BLOCK * FILL_BLOCK : 0;
	if (req->size || fits < FILL_BLOCK) {
		char advice[80] = "free some of it";
		if (fits >= FILL_BLOCK)
			vmc_textf(advice, sizeof advice, "use --size %s or less", bytes(fits).text);
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_USAGE,
			"%s has %s free, the fill of %s needs %s there (SIZE and a 64 MiB seed): "
			"%s, or pass --tmpfs DIR of a larger tmpfs",
			d->path, bytes(d->available).text, bytes(want).text, bytes(peak).text,
			advice);
		return;
	}
	*size = fits;
	verdict(v, PREFLIGHT_PASS, 0,
		"%s: tmpfs, %s free: SIZE lowered to %s (half the VM's memory, %s, does not fit "
		"with the 64 MiB seed)",
		d->path, bytes(d->available).text, bytes(fits).text, bytes(want).text);
}

void preflight_check_tmpfs(const struct preflight_request *req,
			   const struct preflight_guest_facts *g, uint64_t *size,
			   struct preflight_verdict *v)
{
	*size = req->size;
	if (!req->fill) {
		verdict(v, PREFLIGHT_SKIP, 0,
			"not used: the pgbench workload writes no tmpfs file");
		return;
	}
	const char *path = tmpfs_path(req);
	uint64_t mem = vm_memory(req);
	if (req->size && req->size > mem / 4 * 3) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_USAGE,
			"--size %s is more than 3/4 of the VM's %s: the guest would run out of "
			"memory; use at most %s",
			bytes(req->size).text, bytes(mem).text, bytes(mem / 4 * 3).text);
		return;
	}
	if (path[0] != '/') {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_USAGE,
			"--tmpfs %s is not an absolute path: give the guest directory from /",
			path);
		return;
	}
	const struct preflight_guest_dir *d = usable_tmpfs(req, g, path, v);
	if (d)
		size_in_tmpfs(req, d, size, v);
}

/* Why a directory cannot hold the fill files: "" if it can. Sets *code. */
static void unfit_reason(const struct preflight_guest_dir *d, uint64_t need, char *why, size_t size,
			 int *code)
{
	why[0] = '\0';
	*code = VMC_EXIT_USAGE;
	if (!d->is_dir) {
		vmc_textf(why, size, "%s is a file, not a directory", d->at);
		return;
	}
	if (!d->has_mount) {
		vmc_textf(why, size, "no mount in /proc/mounts holds %s", d->at);
		*code = VMC_EXIT_FAILURE;
		return;
	}
	switch (preflight_fs_backing(&d->mount)) {
	case PREFLIGHT_FS_RAM:
		vmc_textf(why, size,
			  "it is on %s (%s, in RAM): files there are not page cache and take guest "
			  "memory",
			  d->mount.fstype, d->mount.target);
		return;
	case PREFLIGHT_FS_HOST_SHARED:
		vmc_textf(why, size,
			  "it is on %s (%s), a folder shared with the host: not the guest's own "
			  "page cache",
			  d->mount.fstype, d->mount.target);
		return;
	case PREFLIGHT_FS_OTHER:
		vmc_textf(why, size,
			  "it is on %s (%s), which vmcost does not know as a disk-backed "
			  "filesystem",
			  d->mount.fstype, d->mount.target);
		return;
	case PREFLIGHT_FS_DISK:
		break;
	}
	if (d->exists && d->others > 0) {
		vmc_textf(why, size,
			  "it exists and holds %u entr%s besides vmcost-fill.* files, and memtest "
			  "removes its fill directory afterwards",
			  d->others, d->others == 1 ? "y" : "ies");
		return;
	}
	if (!d->writable) {
		vmc_textf(why, size, "the limactl shell user cannot write in %s", d->at);
		*code = VMC_EXIT_PERMISSION;
		return;
	}
	if (!d->has_space) {
		vmc_textf(why, size, "the free space of %s cannot be read (stat -f failed)", d->at);
		*code = VMC_EXIT_FAILURE;
		return;
	}
	if (d->available < need)
		vmc_textf(why, size, "%s has %s free, the fill writes %s (and keeps a margin)",
			  d->mount.target, bytes(d->available).text, bytes(need).text);
}

/* The files plus 5 % (at least 64 MiB): a filesystem filled to the brim fails other writers. */
static uint64_t room_needed(uint64_t files)
{
	uint64_t margin = files / 20 > FILL_BLOCK ? files / 20 : FILL_BLOCK;
	return files + margin;
}

static bool mount_candidate(const struct preflight_guest_dir *d)
{
	const char *t = d->mount.target;
	return d->has_mount && (strncmp(t, "/mnt/", 5) == 0 || strncmp(t, "/media/", 7) == 0);
}

static int by_room(const void *a, const void *b)
{
	const struct preflight_guest_dir *x = *(const struct preflight_guest_dir *const *)a;
	const struct preflight_guest_dir *y = *(const struct preflight_guest_dir *const *)b;
	return x->available < y->available ? 1 : x->available > y->available ? -1 : 0;
}

static void describe_fit(const struct preflight_guest_dir *d, uint64_t files, char *buf,
			 size_t size)
{
	vmc_textf(buf, size, "%s on %s, %s free for %s", d->mount.fstype, d->mount.source,
		  bytes(d->available).text, bytes(files).text);
}

/*
 * When the default fill directory is not fit: /tmp/vmcost-fill, then <mount>/vmcost-fill of the
 * disks mounted under /mnt or /media (Lima's additional disks are /mnt/lima-NAME), most room
 * first; never a system directory such as /var/lib or /etc, even where those are on a disk.
 * The first that fits, or NULL with the candidates in tried.
 */
static const struct preflight_guest_dir *
pick_fill_dir(const struct preflight_guest_facts *g, uint64_t need, char *tried, size_t tried_size)
{
	const struct preflight_guest_dir *cands[MAX_MOUNTS + 1];
	size_t n = 0;
	const struct preflight_guest_dir *tmp = find_dir(g, "/tmp/vmcost-fill");
	if (tmp)
		cands[n++] = tmp;
	size_t first_mount = n;
	for (size_t i = 0; i < g->n && n < MAX_MOUNTS; i++)
		if (g->dirs[i].from_mount && mount_candidate(&g->dirs[i]))
			cands[n++] = &g->dirs[i];
	qsort(cands + first_mount, n - first_mount, sizeof cands[0], by_room);
	tried[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char why[400];
		int code;
		unfit_reason(cands[i], need, why, sizeof why, &code);
		if (!why[0])
			return cands[i];
		size_t len = strlen(tried);
		vmc_textf(tried + len, tried_size - len, "%s%s", len ? ", " : "", cands[i]->path);
	}
	return NULL;
}

void preflight_check_fill_dir(const struct preflight_request *req,
			      const struct preflight_guest_facts *g, uint64_t size, char *chosen,
			      size_t chosen_size, struct preflight_verdict *v)
{
	vmc_textf(chosen, chosen_size, "%s", fill_path(req));
	if (!req->fill) {
		verdict(v, PREFLIGHT_SKIP, 0, "not used: the pgbench workload writes no files");
		return;
	}
	const char *path = fill_path(req);
	if (path[0] != '/') {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_USAGE,
			"--fill-dir %s is not an absolute path: give the guest directory from /",
			path);
		return;
	}
	const struct preflight_guest_dir *d = find_dir(g, path);
	if (guest_missing(g, d, path, v))
		return;
	uint64_t peak, files;
	workload_fill_bytes(size ? size : vm_memory(req) / 2, &peak, &files);
	uint64_t need = room_needed(files);
	char why[400], fit[200];
	int code;
	unfit_reason(d, need, why, sizeof why, &code);
	if (!why[0]) {
		describe_fit(d, files, fit, sizeof fit);
		verdict(v, PREFLIGHT_PASS, 0, "%s: %s", path, fit);
		return;
	}
	if (req->fill_dir) {
		verdict(v, PREFLIGHT_FAIL, code,
			"--fill-dir %s cannot hold the fill: %s; pass --fill-dir DIR, a new "
			"directory on a disk-backed filesystem with %s free",
			path, why, bytes(need).text);
		return;
	}
	char tried[300];
	const struct preflight_guest_dir *pick = pick_fill_dir(g, need, tried, sizeof tried);
	if (pick) {
		vmc_textf(chosen, chosen_size, "%s", pick->path);
		describe_fit(pick, files, fit, sizeof fit);
		verdict(v, PREFLIGHT_PASS, 0, "%s: %s; picked because the default %s cannot: %s",
			pick->path, fit, path, why);
		return;
	}
	verdict(v, PREFLIGHT_FAIL, VMC_EXIT_USAGE,
		"the default fill directory %s cannot hold the fill: %s; no other disk-backed "
		"directory with %s free was found%s%s%s: pass --fill-dir DIR on a disk in the "
		"guest",
		path, why, bytes(need).text, tried[0] ? " (tried " : "", tried,
		tried[0] ? ")" : "");
}

void preflight_check_pgbench(const struct preflight_request *req,
			     const struct preflight_docker_facts *d, struct preflight_verdict *v)
{
	const char *image = req->image ? req->image : WORKLOAD_PG_IMAGE;
	if (req->fill) {
		verdict(v, PREFLIGHT_SKIP, 0, "not used: the fill workload needs no Docker");
		return;
	}
	if (!d) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_DOCKER, "Docker was not asked");
		return;
	}
	if (d->not_asked) {
		verdict(v, PREFLIGHT_SKIP, 0,
			"not checked: the run is refused already, so Docker was not asked");
		return;
	}
	if (!d->socket_exists) {
		verdict(
		    v, PREFLIGHT_FAIL, VMC_EXIT_DOCKER,
		    "instance \"%s\" has no sock/docker.sock: it runs no Docker (use a template "
		    "with dockerd, or --workload fill)",
		    req->name);
		return;
	}
	if (d->ping_rc != VMC_EXIT_OK) {
		verdict(v, PREFLIGHT_FAIL, d->ping_rc, "%s", d->ping_error);
		return;
	}
	if (d->present_rc != VMC_EXIT_OK) {
		verdict(v, PREFLIGHT_FAIL, d->present_rc, "%s", d->present_error);
		return;
	}
	if (d->present) {
		verdict(v, PREFLIGHT_PASS, 0, "Docker %s answers; %s is present", d->version,
			image);
		return;
	}
	if (req->no_pull) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_DOCKER,
			"image %s is not in the Docker of instance \"%s\" and --no-pull was given: "
			"docker pull %s (or docker load it) first",
			image, req->name, image);
		return;
	}
	if (!d->registry_checked || d->registry_rc != VMC_EXIT_OK) {
		verdict(
		    v, PREFLIGHT_FAIL, VMC_EXIT_DOCKER,
		    "image %s is not in the Docker of instance \"%s\" and cannot be pulled: %s; "
		    "docker load it in the guest, or pass --image of an image it has",
		    image, req->name,
		    d->registry_checked ? d->registry_error : "the registry was not asked");
		return;
	}
	verdict(v, PREFLIGHT_PASS, 0,
		"Docker %s answers; %s is not there yet and will be pulled (the "
		"registry has it)",
		d->version, image);
}

/* MemAvailable, or less when this process's memory cgroup leaves less room. */
static uint64_t usable(const struct preflight_host_memory_facts *h)
{
	uint64_t a = h->hm.available;
	if (h->limit.limited && h->limit.room < a)
		a = h->limit.room;
	return a;
}

uint64_t preflight_pressure_max(const struct preflight_host_memory_facts *h)
{
	uint64_t a = usable(h);
	if (h->hm.has_compressor) {
		/* The compressor makes room: the default asks available + RAM/8. */
		uint64_t m = a + h->hm.total / 4;
		return m < h->hm.total / 4 * 3 ? m : h->hm.total / 4 * 3;
	}
	/* Linux: anonymous pressure beyond what is available ends in the OOM killer. */
	return a > PREFLIGHT_HOST_MARGIN ? a - PREFLIGHT_HOST_MARGIN : 0;
}

static void describe_room(const struct preflight_host_memory_facts *h, char *buf, size_t size)
{
	if (h->limit.limited && h->limit.room < h->hm.available)
		vmc_textf(buf, size,
			  "this process's memory cgroup (%s) leaves %s of the host's %s "
			  "available",
			  h->limit.where, bytes(h->limit.room).text, bytes(h->hm.available).text);
	else
		vmc_textf(buf, size, "the host has %s available", bytes(h->hm.available).text);
}

void preflight_check_host_memory(const struct preflight_request *req,
				 const struct preflight_host_memory_facts *h, uint64_t *pressure,
				 struct preflight_verdict *v)
{
	*pressure = 0;
	if (req->pressure_none) {
		verdict(v, PREFLIGHT_SKIP, 0, "not used: --pressure none");
		return;
	}
	if (!h || !h->has_memory) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_FAILURE,
			"cannot read the host's memory figures");
		return;
	}
	if (req->canary < h->page_size) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_USAGE,
			"--canary %s is less than one page (%zu bytes): no page could ever be "
			"discarded, and the run would be INCONCLUSIVE; use --canary 1G",
			bytes(req->canary).text, h->page_size);
		return;
	}
	if (!h->canary_ok) {
		verdict(
		    v, PREFLIGHT_FAIL, VMC_EXIT_UNSUPPORTED,
		    "the MADV_FREE canary cannot be armed on this host (%s): run with --pressure "
		    "none",
		    h->canary_error);
		return;
	}
	char room[400];
	describe_room(h, room, sizeof room);
	uint64_t max = preflight_pressure_max(h);
	if (req->canary > max) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_USAGE,
			"the %s canary does not fit: %s; use a smaller --canary (at most %s)",
			bytes(req->canary).text, room, bytes(max).text);
		return;
	}
	if (req->pressure_set) {
		if (req->pressure > max) {
			verdict(v, PREFLIGHT_FAIL, VMC_EXIT_USAGE,
				"--pressure %s does not fit: %s, so at most %s can be held safely; "
				"use a smaller --pressure, or leave it out for the default",
				bytes(req->pressure).text, room, bytes(max).text);
			return;
		}
		*pressure = req->pressure;
		verdict(v, PREFLIGHT_PASS, 0, "%s of pressure and a %s canary: %s (at most %s)",
			bytes(*pressure).text, bytes(req->canary).text, room, bytes(max).text);
		return;
	}
	struct platform_host_memory hm = h->hm;
	hm.available = usable(h);
	uint64_t p = pressure_default_size(&hm, req->canary);
	if (p > max)
		p = max;
	if (p == 0) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_FAILURE,
			"no room for memory pressure: %s; run with --pressure none", room);
		return;
	}
	*pressure = p;
	verdict(v, PREFLIGHT_PASS, 0, "%s of pressure (the default) and a %s canary: %s",
		bytes(p).text, bytes(req->canary).text, room);
}

void preflight_check_stop(const struct preflight_request *req, const struct preflight_stop_facts *s,
			  struct preflight_verdict *v)
{
	if (!s->limactl_found) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_FAILURE,
			"limactl is not on PATH: memtest ends with limactl stop %s; install Lima "
			"or put it on PATH",
			req->name);
		return;
	}
	if (s->has_dir_owner && s->dir_owner != s->euid) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_PERMISSION,
			"instance \"%s\" is another user's (%s belongs to uid %u, this is uid %u): "
			"run memtest as that user",
			req->name, s->dir, (unsigned)s->dir_owner, (unsigned)s->euid);
		return;
	}
	if (s->ha_pid > 0 && s->ha_signal_errno == EPERM) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_PERMISSION,
			"the host agent of \"%s\" (pid %d) is another user's, so limactl stop "
			"cannot signal it: run memtest as that user",
			req->name, (int)s->ha_pid);
		return;
	}
	if (s->has_vm_owner && s->vm_owner != s->euid) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_PERMISSION,
			"the VM process of \"%s\" runs as uid %u, this is uid %u: run memtest as "
			"that user",
			req->name, (unsigned)s->vm_owner, (unsigned)s->euid);
		return;
	}
	if (!s->dir_writable) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_PERMISSION,
			"%s is not writable, so limactl stop %s could not remove its pid files and "
			"sockets: run memtest as the instance's owner",
			s->dir, req->name);
		return;
	}
	verdict(v, PREFLIGHT_PASS, 0,
		"limactl stop %s will be allowed: the instance is this user's "
		"(uid %u)",
		req->name, (unsigned)s->euid);
}

void preflight_check_results(const struct preflight_request *req,
			     const struct preflight_results_facts *r, struct preflight_verdict *v)
{
	const char *dir = req->results_dir ? req->results_dir : ".";
	if (r->none) {
		verdict(v, PREFLIGHT_SKIP, 0, "not used: --results none");
		return;
	}
	if (!r->is_dir) {
		verdict(v, PREFLIGHT_FAIL, VMC_EXIT_USAGE,
			"--results %s: %s is not a directory; pass --results DIR (or none)", dir,
			r->at);
		return;
	}
	if (r->access_errno) {
		int code = r->access_errno == EACCES || r->access_errno == EPERM ||
				   r->access_errno == EROFS
			       ? VMC_EXIT_PERMISSION
			       : VMC_EXIT_FAILURE;
		verdict(v, PREFLIGHT_FAIL, code,
			"--results %s is not writable (%s: %s): pass --results DIR of a directory "
			"you may write (or none)",
			dir, r->failed_at[0] ? r->failed_at : r->at, strerror(r->access_errno));
		return;
	}
	if (r->exists)
		verdict(v, PREFLIGHT_PASS, 0, "%s is writable", dir);
	else
		verdict(v, PREFLIGHT_PASS, 0, "%s will be created (in %s, which is writable)", dir,
			r->at);
}

/* ---- judging and reporting ------------------------------------------------------------------ */

void preflight_judge(const struct preflight_request *req, const struct preflight_guest_facts *g,
		     const struct preflight_docker_facts *d,
		     const struct preflight_host_memory_facts *h,
		     const struct preflight_stop_facts *s, const struct preflight_results_facts *r,
		     struct preflight *pf)
{
	memset(pf, 0, sizeof *pf);
	struct preflight_verdict *v = pf->verdicts;
	preflight_check_tmpfs(req, g, &pf->size, &v[PREFLIGHT_TMPFS]);
	preflight_check_fill_dir(req, g, pf->size, pf->fill_dir, sizeof pf->fill_dir,
				 &v[PREFLIGHT_FILL_DIR]);
	preflight_check_pgbench(req, d, &v[PREFLIGHT_PGBENCH]);
	preflight_check_host_memory(req, h, &pf->pressure, &v[PREFLIGHT_HOST_MEMORY]);
	if (s)
		preflight_check_stop(req, s, &v[PREFLIGHT_STOP]);
	else
		verdict(&v[PREFLIGHT_STOP], PREFLIGHT_FAIL, VMC_EXIT_FAILURE,
			"the stop was not checked");
	if (r)
		preflight_check_results(req, r, &v[PREFLIGHT_RESULTS]);
	else
		verdict(&v[PREFLIGHT_RESULTS], PREFLIGHT_FAIL, VMC_EXIT_FAILURE,
			"--results was not checked");
	pf->exit_code = VMC_EXIT_OK;
	for (int c = 0; c < PREFLIGHT_NCHECKS; c++)
		if (v[c].status == PREFLIGHT_FAIL) {
			pf->exit_code = v[c].exit_code;
			break;
		}
}

void preflight_judge_host_only(const struct preflight_request *req,
			       const struct preflight_host_memory_facts *h,
			       const struct preflight_stop_facts *s,
			       const struct preflight_results_facts *r, struct preflight *pf)
{
	struct preflight_guest_facts g = {.not_asked = true};
	struct preflight_docker_facts d = {.not_asked = true};
	preflight_judge(req, &g, &d, h, s, r, pf);
}

static const char *preflight_check_name(enum preflight_check c)
{
	static const char *const names[PREFLIGHT_NCHECKS] = {"tmpfs",	    "fill-dir", "pgbench",
							     "host-memory", "stop",	"results"};
	return c < PREFLIGHT_NCHECKS ? names[c] : "?";
}

static const char *status_name(enum preflight_status s)
{
	return s == PREFLIGHT_PASS ? "pass" : s == PREFLIGHT_FAIL ? "fail" : "skipped";
}

json_t *preflight_json(const struct preflight *pf)
{
	json_t *list = json_array();
	for (int c = 0; c < PREFLIGHT_NCHECKS; c++) {
		const struct preflight_verdict *v = &pf->verdicts[c];
		json_t *item = json_pack("{s:s, s:s, s:s}", "check", preflight_check_name(c),
					 "status", status_name(v->status), "message", v->message);
		if (v->status == PREFLIGHT_FAIL)
			json_object_set_new(item, "exit_code", json_integer(v->exit_code));
		json_array_append_new(list, item);
	}
	return list;
}

void preflight_print(FILE *f, const struct preflight *pf, bool color)
{
	for (int c = 0; c < PREFLIGHT_NCHECKS; c++) {
		const struct preflight_verdict *v = &pf->verdicts[c];
		const char *status = v->status == PREFLIGHT_PASS   ? "ok"
				     : v->status == PREFLIGHT_FAIL ? "fail"
								   : "skip";
		fprintf(f, "  %s%-4s%s  %-11s  %s\n", vmc_status_color(status, color),
			v->status == PREFLIGHT_FAIL ? "FAIL" : status, vmc_color_reset(color),
			preflight_check_name(c), v->message);
	}
}
