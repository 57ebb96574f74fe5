/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-process Linux readers: /proc/PID/status, stat, io and smaps_rollup. Each has a parser that
 * works on a buffer (fuzzable, testable) and a reader that takes its path through the fs root
 * (lib/procfs.h), so tests run on fake /proc trees. All sizes are bytes.
 */
#ifndef VMC_PROCPID_H
#define VMC_PROCPID_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* /proc/PID/status. Kernel threads have no Vm* lines: has_mm is false and sizes stay 0. */
struct vmc_proc_status {
	char name[64];	     /* Name: (comm, at most 15 characters, may contain spaces) */
	char state;	     /* first letter of State: ('R', 'S', 'Z' ...), 0 if absent */
	pid_t ppid;	     /* PPid: */
	uid_t uid_real;	     /* first field of Uid: */
	uid_t uid_effective; /* second field of Uid: */
	uint64_t vm_rss;     /* VmRSS: */
	uint64_t vm_hwm;     /* VmHWM: peak resident */
	uint64_t vm_swap;    /* VmSwap: */
	uint64_t rss_anon;   /* RssAnon: (4.5+) */
	uint64_t rss_file;   /* RssFile: */
	uint64_t rss_shmem;  /* RssShmem: */
	uint64_t voluntary_ctxt_switches;
	uint64_t nonvoluntary_ctxt_switches;
	bool has_mm;	    /* VmRSS: present (a user process) */
	bool has_rss_split; /* RssAnon/RssFile/RssShmem present */
	bool has_ctxt;	    /* both *_ctxt_switches present */
};

/* Returns 0, or -1 when the buffer is not a status file (no Name: line, garbage in a field). */
int vmc_proc_status_parse(const char *buf, struct vmc_proc_status *st);
/* Reads <root>/proc/PID/status. -1 with errno (ENOENT: no such process, EACCES, EINVAL). */
int vmc_proc_status_read(pid_t pid, struct vmc_proc_status *st);

/* /proc/PID/stat: the fields vmcost needs. comm is found by the LAST ')' (it may contain any). */
struct vmc_proc_stat {
	char comm[64];
	char state;
	pid_t ppid;
	uint64_t utime;	    /* clock ticks (field 14) */
	uint64_t stime;	    /* clock ticks (field 15) */
	uint64_t starttime; /* clock ticks after boot (field 22) */
	uint64_t rss_pages; /* field 24 */
};

int vmc_proc_stat_parse(const char *buf, struct vmc_proc_stat *st);
int vmc_proc_stat_read(pid_t pid, struct vmc_proc_stat *st);

/* /proc/PID/io (needs the same uid or CAP_SYS_PTRACE; EACCES otherwise). */
struct vmc_proc_io {
	uint64_t rchar, wchar; /* bytes through read/write syscalls */
	uint64_t read_bytes;   /* bytes fetched from the block layer */
	uint64_t write_bytes;  /* bytes sent (or dirtied for write-back) to the block layer */
	uint64_t cancelled_write_bytes;
};

int vmc_proc_io_parse(const char *buf, struct vmc_proc_io *io);
int vmc_proc_io_read(pid_t pid, struct vmc_proc_io *io);

/*
 * /proc/PID/smaps_rollup (4.14+): exact sums over every mapping. Costs a page-table walk (ms for
 * GiBs of RAM), so samplers read status instead and use this for one-shot detail.
 */
struct vmc_smaps_rollup {
	uint64_t rss, pss, pss_anon, pss_file, pss_shmem;
	uint64_t shared_clean, shared_dirty, private_clean, private_dirty;
	uint64_t anonymous, anon_huge_pages, swap, swap_pss, locked;
	bool has_pss_split; /* Pss_Anon/Pss_File/Pss_Shmem present (5.8+) */
};

int vmc_smaps_rollup_parse(const char *buf, struct vmc_smaps_rollup *sr);
int vmc_smaps_rollup_read(pid_t pid, struct vmc_smaps_rollup *sr);

/* Clock ticks to nanoseconds with the given USER_HZ (sysconf(_SC_CLK_TCK), 100 on Linux). */
uint64_t vmc_ticks_to_ns(uint64_t ticks, long hz);
/* sysconf(_SC_CLK_TCK), 100 if it fails. */
long vmc_clk_tck(void);

#endif
