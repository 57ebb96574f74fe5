/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Linux hosts: QEMU holds guest RAM in its own anonymous memory, so /proc tells the whole story.
 * A sample reads status (RSS, swap, HWM, anon/file/shmem split), stat (CPU ticks) and io
 * (write_bytes): three small files, no page-table walk. smaps_rollup is detail only.
 */
#include "platform/platform.h"

#include "clock.h"
#include "meminfo.h"
#include "platform/cgroup.h"
#include "procfs.h"
#include "procpid.h"
#include "zoneinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

const char *platform_os_name(void)
{
	return "linux";
}

/* A process that vanished between two reads is "no such process", whatever file failed. */
static int proc_errno(void)
{
	return errno == ENOENT ? ESRCH : errno;
}

int platform_proc_sample(pid_t pid, struct platform_proc_sample *out)
{
	static long hz;
	if (!hz)
		hz = vmc_clk_tck();
	memset(out, 0, sizeof *out);
	struct vmc_proc_status st;
	struct vmc_proc_stat ps;
	struct vmc_proc_io io;
	out->taken_at = vmc_monotonic_s();
	if (vmc_proc_status_read(pid, &st) < 0 || vmc_proc_stat_read(pid, &ps) < 0) {
		errno = proc_errno();
		return -1;
	}
	if (!st.has_mm || st.state == 'Z') {
		/* A kernel thread or a zombie holds no guest RAM: not the process we look for. */
		errno = ESRCH;
		return -1;
	}
	/* io is readable only by the owner or root: that is the "another user's VM" case. */
	if (vmc_proc_io_read(pid, &io) < 0) {
		errno = proc_errno();
		return -1;
	}
	out->footprint = st.vm_rss + st.vm_swap;
	out->resident = st.vm_rss;
	out->peak_footprint = st.vm_hwm > out->footprint ? st.vm_hwm : out->footprint;
	out->cpu_ns = vmc_ticks_to_ns(ps.utime + ps.stime, hz);
	out->disk_written = io.write_bytes;
	out->anon = st.rss_anon;
	out->file = st.rss_file;
	out->shmem = st.rss_shmem;
	out->swap = st.vm_swap;
	out->has_split = st.has_rss_split;
	return 0;
}

int platform_proc_detail(pid_t pid, struct platform_proc_detail *out)
{
	memset(out, 0, sizeof *out);
	struct vmc_smaps_rollup sr;
	if (vmc_smaps_rollup_read(pid, &sr) < 0) {
		errno = proc_errno();
		return -1;
	}
	out->rss = sr.rss;
	out->pss = sr.pss;
	out->anon_huge = sr.anon_huge_pages;
	out->swap = sr.swap;
	out->has_pss = true;
	return 0;
}

int platform_host_memory(struct platform_host_memory *out)
{
	memset(out, 0, sizeof *out);
	struct vmc_meminfo mi;
	if (vmc_meminfo_read(&mi) < 0)
		return -1;
	out->total = mi.total;
	/* The per-CPU lists' free pages are free too, and the first to be handed out; MemFree
	 * leaves them out (lib/zoneinfo.h). Without /proc/zoneinfo, MemFree alone. */
	uint64_t percpu = 0;
	if (vmc_zoneinfo_percpu_free_read(&percpu) < 0)
		percpu = 0;
	out->free = mi.free + percpu;
	out->available = mi.available;
	long page = sysconf(_SC_PAGESIZE);
	out->page_size = page > 0 ? (uint64_t)page : 4096;
	return 0;
}

bool platform_pid_alive(pid_t pid)
{
	if (pid <= 0)
		return false;
	return kill(pid, 0) == 0 || errno == EPERM;
}

int platform_proc_path(pid_t pid, char *buf, size_t size)
{
	char link[4096];
	if (!vmc_fs_path(link, sizeof link, "/proc/%ld/exe", (long)pid)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (size == 0) {
		errno = EINVAL;
		return -1;
	}
	ssize_t n = readlink(link, buf, size - 1);
	if (n < 0) {
		errno = proc_errno();
		return -1;
	}
	buf[n] = '\0';
	return 0;
}

int platform_proc_uid(pid_t pid, uid_t *uid)
{
	struct vmc_proc_status st;
	if (vmc_proc_status_read(pid, &st) < 0) {
		errno = proc_errno();
		return -1;
	}
	*uid = st.uid_effective;
	return 0;
}

int platform_vz_helpers(pid_t *pids, size_t max, size_t *n)
{
	(void)pids;
	(void)max;
	*n = 0;
	errno = ENOTSUP;
	return -1;
}

pid_t platform_responsible_pid(pid_t pid)
{
	(void)pid;
	return -1;
}

bool platform_has_responsibility(void)
{
	return false;
}

int platform_proc_switches(pid_t pid, uint64_t *voluntary, uint64_t *involuntary)
{
	*voluntary = *involuntary = 0;
	char dir[4096];
	if (!vmc_fs_path(dir, sizeof dir, "/proc/%ld/task", (long)pid)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	DIR *d = opendir(dir);
	if (!d) {
		errno = proc_errno();
		return -1;
	}
	struct dirent *e;
	size_t threads = 0;
	while ((e = readdir(d))) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (end == e->d_name || *end || tid <= 0)
			continue;
		char path[128], buf[8192];
		snprintf(path, sizeof path, "/proc/%ld/task/%ld/status", (long)pid, tid);
		struct vmc_proc_status st;
		/* A thread that exited between readdir and open simply no longer counts. */
		if (vmc_fs_read_buf(path, buf, sizeof buf, NULL) < 0 ||
		    vmc_proc_status_parse(buf, &st) < 0 || !st.has_ctxt)
			continue;
		*voluntary += st.voluntary_ctxt_switches;
		*involuntary += st.nonvoluntary_ctxt_switches;
		threads++;
	}
	closedir(d);
	if (threads == 0) {
		errno = ESRCH;
		return -1;
	}
	return 0;
}

/* systemd's protocol (sd_listen_fds(3)): the first passed descriptor is 3. */
#define LISTEN_FDS_START 3

int platform_activated_socket(const char *name)
{
	(void)name; /* one socket per unit: no FileDescriptorName needed */
	const char *pid_text = getenv("LISTEN_PID"), *fds_text = getenv("LISTEN_FDS");
	long pid = pid_text ? strtol(pid_text, NULL, 10) : 0;
	long fds = fds_text ? strtol(fds_text, NULL, 10) : 0;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (pid != (long)getpid() || fds < 1) {
		errno = ENOENT;
		return -1;
	}
	int fd = LISTEN_FDS_START, type = 0, listening = 0;
	socklen_t len = sizeof type;
	struct sockaddr_storage sa;
	socklen_t salen = sizeof sa;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM ||
	    getsockname(fd, (struct sockaddr *)&sa, &salen) < 0 || sa.ss_family != AF_UNIX) {
		errno = EINVAL;
		return -1;
	}
	len = sizeof listening;
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0 || !listening) {
		errno = EINVAL;
		return -1;
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

int platform_memory_limit(struct platform_memory_limit *out)
{
	struct vmc_memory_limit l;
	memset(out, 0, sizeof *out);
	if (vmc_cgroup_memory_limit(&l) != 0)
		return -1;
	out->limited = l.limited;
	out->limit = l.limit;
	out->room = l.room;
	snprintf(out->where, sizeof out->where, "%s", l.where);
	return 0;
}

int platform_release_pages(void *addr, size_t len)
{
	return madvise(addr, len, MADV_DONTNEED);
}

const char *platform_release_method(void)
{
	return "MADV_DONTNEED";
}

int platform_tick_clock_check(double seconds, struct platform_clock_check *out)
{
	(void)seconds;
	memset(out, 0, sizeof *out);
	errno = ENOTSUP;
	return -1;
}
