/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memtest's pre-flight: before the baseline, every precondition of a run is checked, so a run
 * that cannot succeed or cannot mean anything is refused in the first second, with what to do,
 * and leaves nothing behind (no file in the guest, no pressure allocated, the VM untouched).
 *
 * Facts are gathered first (the guest through one `limactl shell` call, Docker through its API,
 * the host through platform.h); the checks are pure functions of those facts, so tests drive
 * them with fake ones. The verdicts come in the order a run needs them: tmpfs, fill directory,
 * pgbench, host memory, stop permission, results. A refused run exits with the code of the
 * first failed verdict. Every name here starts with preflight_ (PREFLIGHT_ for constants).
 */
#ifndef VMC_MEMTEST_PREFLIGHT_H
#define VMC_MEMTEST_PREFLIGHT_H

#include "clients/lima.h"
#include "mounts.h"
#include "platform/platform.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define PREFLIGHT_DEFAULT_FILL_DIR  "/var/tmp/vmcost-fill"
#define PREFLIGHT_DEFAULT_TMPFS_DIR "/dev/shm"
/* Kept free on the host beyond the pressure (vmcost itself, page tables, the kernel). */
#define PREFLIGHT_HOST_MARGIN (128ull << 20)

enum preflight_check {
	PREFLIGHT_TMPFS,
	PREFLIGHT_FILL_DIR,
	PREFLIGHT_PGBENCH,
	PREFLIGHT_HOST_MEMORY,
	PREFLIGHT_STOP,
	PREFLIGHT_RESULTS,
	PREFLIGHT_NCHECKS,
};

enum preflight_status { PREFLIGHT_PASS, PREFLIGHT_FAIL, PREFLIGHT_SKIP };

struct preflight_verdict {
	enum preflight_status status;
	int exit_code;	   /* VMC_EXIT_* of a failure, VMC_EXIT_OK otherwise */
	char message[700]; /* what was found; for a failure, also what to do */
};

/* What memtest was asked to do (its options after parsing). */
struct preflight_request {
	const char *name;      /* instance name, for messages */
	bool fill;	       /* --workload fill (else pgbench) */
	uint64_t vm_memory;    /* the instance's memory (0: unknown) */
	uint64_t size;	       /* --size; 0 = the default (half the VM's memory, as fits) */
	const char *fill_dir;  /* --fill-dir; NULL = default, and another one may be picked */
	const char *tmpfs_dir; /* --tmpfs; NULL = /dev/shm */
	const char *image;     /* --image; NULL = WORKLOAD_PG_IMAGE */
	bool no_pull;
	bool pressure_none, pressure_set;
	uint64_t pressure, canary;
	const char *results_dir; /* "none" = no files */
};

/* ---- facts ---------------------------------------------------------------------------------- */

/* One guest directory as the probe script saw it, as the `limactl shell` user. */
struct preflight_guest_dir {
	char path[PATH_MAX];	/* as asked */
	char at[PATH_MAX];	/* path itself, or its nearest existing parent */
	bool exists;		/* path itself exists */
	bool is_dir;		/* at is a directory (else a file is in the way) */
	bool writable;		/* the shell user may write in at */
	unsigned others;	/* entries in path other than vmcost-fill.* */
	bool has_space;		/* statfs of at worked */
	uint64_t available;	/* bytes an unprivileged writer may still use */
	uint64_t size;		/* bytes of the filesystem */
	bool has_mount;		/* /proc/mounts has the mount holding at */
	struct vmc_mount mount; /* that mount */
	bool from_mount;	/* a candidate made from a mount point (<mount>/vmcost-fill) */
};

struct preflight_guest_facts {
	bool not_asked;	 /* the run was refused before the guest was asked: skip */
	bool ok;	 /* the probe ran and its output parsed */
	int exit_code;	 /* why not (VMC_EXIT_*) */
	char error[512]; /* and the message */
	struct preflight_guest_dir
	    *dirs; /* the asked paths first, in order, then mount candidates */
	size_t n;
};

struct preflight_docker_facts {
	bool not_asked; /* the run was refused before Docker was asked: skip */
	bool socket_exists;
	int ping_rc; /* docker_version's exit code */
	char ping_error[512];
	char version[64];
	int present_rc; /* docker_image_present's */
	bool present;
	char present_error[512];
	bool registry_checked;
	int registry_rc; /* docker_registry_has_image's */
	char registry_error[512];
};

struct preflight_host_memory_facts {
	bool has_memory;
	struct platform_host_memory hm;
	struct platform_memory_limit limit;
	size_t page_size;
	bool canary_ok;
	char canary_error[256];
};

struct preflight_stop_facts {
	bool limactl_found; /* limactl is on PATH */
	char dir[PATH_MAX]; /* the instance directory */
	uid_t euid;
	bool has_dir_owner;
	uid_t dir_owner;
	bool dir_writable;
	pid_t ha_pid;
	int ha_signal_errno; /* kill(ha_pid, 0): 0 or EPERM / ESRCH */
	bool has_vm_owner;
	uid_t vm_owner;
};

/*
 * --results DIR, tried for real: permission bits do not stop root, and neither they nor access()
 * know a read-only mount or /proc, so the pre-flight makes the directory (as mkdir -p) and a probe
 * file in it, then removes the probe and the directories it made.
 */
struct preflight_results_facts {
	bool none;		  /* --results none */
	bool exists;		  /* the directory itself existed */
	bool is_dir;		  /* it (or the nearest existing parent) is a directory */
	char at[PATH_MAX];	  /* the nearest existing path */
	int access_errno;	  /* making the directory or the probe file: 0 or errno */
	char failed_at[PATH_MAX]; /* the path that could not be made ("" when all could) */
};

/* ---- the checks (pure) ---------------------------------------------------------------------- */

/* Where a filesystem keeps its files: on a disk, in RAM, on the host (shared), or unknown. */
enum preflight_fs_backing {
	PREFLIGHT_FS_DISK,
	PREFLIGHT_FS_RAM,
	PREFLIGHT_FS_HOST_SHARED,
	PREFLIGHT_FS_OTHER
};
enum preflight_fs_backing preflight_fs_backing(const struct vmc_mount *m);

/*
 * tmpfs: the directory is a tmpfs the shell user can write, SIZE fits 3/4 of the VM's memory
 * and the tmpfs; without --size, SIZE is half the VM's memory, lowered to what the tmpfs holds.
 * *size gets SIZE.
 */
void preflight_check_tmpfs(const struct preflight_request *req,
			   const struct preflight_guest_facts *g, uint64_t *size,
			   struct preflight_verdict *v);

/*
 * Fill directory: on a disk-backed filesystem (not tmpfs, ramfs, rootfs, nor the host's
 * shared folders), writable, empty or new (memtest removes it afterwards), with room for the
 * files of SIZE. Without --fill-dir, the first candidate that qualifies is picked: the default,
 * /tmp/vmcost-fill, then <mount>/vmcost-fill for disks mounted under /mnt or /media, most room
 * first. chosen gets the directory.
 */
void preflight_check_fill_dir(const struct preflight_request *req,
			      const struct preflight_guest_facts *g, uint64_t size, char *chosen,
			      size_t chosen_size, struct preflight_verdict *v);

void preflight_check_pgbench(const struct preflight_request *req,
			     const struct preflight_docker_facts *d, struct preflight_verdict *v);

/*
 * Host memory: the pressure (the default, or --pressure) and the canary fit what the host (and
 * this process's memory cgroup) has available, less PREFLIGHT_HOST_MARGIN; the canary works.
 * *pressure gets the pressure a run uses.
 */
void preflight_check_host_memory(const struct preflight_request *req,
				 const struct preflight_host_memory_facts *h, uint64_t *pressure,
				 struct preflight_verdict *v);

/* The largest pressure this host takes safely (0: none). */
uint64_t preflight_pressure_max(const struct preflight_host_memory_facts *h);

void preflight_check_stop(const struct preflight_request *req, const struct preflight_stop_facts *s,
			  struct preflight_verdict *v);

void preflight_check_results(const struct preflight_request *req,
			     const struct preflight_results_facts *r, struct preflight_verdict *v);

/* ---- the guest probe ------------------------------------------------------------------------ */

/*
 * The guest side of the fill checks (POSIX sh, busybox-compatible, read-only): for each
 * argument path and for <mount>/vmcost-fill of every block device mounted under /mnt or
 * /media, three lines
 *   vmcost-dir TAG EXISTS ISDIR WRITABLE OTHERS AVAIL_BLOCKS BLOCK_SIZE BLOCKS
 *   vmcost-at NEAREST-EXISTING-PATH
 *   vmcost-path PATH
 * (TAG arg or mount; "-" for statfs figures it could not read), then "vmcost-mounts" and
 * /proc/mounts.
 */
extern const char preflight_probe_script[];

/* Parses the probe's output into g->dirs (malloc'd) and sets g->ok; -1 when it is not the probe's
 * output. */
int preflight_parse_probe(const char *out, struct preflight_guest_facts *g);
void preflight_guest_facts_free(struct preflight_guest_facts *g);

/* ---- the whole pre-flight ------------------------------------------------------------------- */

struct preflight {
	struct preflight_verdict verdicts[PREFLIGHT_NCHECKS];
	uint64_t size;		 /* fill SIZE the run uses */
	char fill_dir[PATH_MAX]; /* fill directory the run uses */
	uint64_t pressure;	 /* pressure the run uses (0 with --pressure none) */
	int exit_code;		 /* the first failed verdict's, or VMC_EXIT_OK */
};

/* Runs the checks on gathered facts (any may be NULL when not gathered: that check skips). */
void preflight_judge(const struct preflight_request *req, const struct preflight_guest_facts *g,
		     const struct preflight_docker_facts *d,
		     const struct preflight_host_memory_facts *h,
		     const struct preflight_stop_facts *s, const struct preflight_results_facts *r,
		     struct preflight *pf);

/*
 * Every check as far as it needs neither the guest nor Docker: host memory, stop, results, and
 * what the options alone settle (--size beyond 3/4 of the VM, a relative path); what the guest
 * or Docker would have to answer is skipped as not asked. preflight_run asks the guest only
 * when this passes, so a run refused here is refused at once, without a `limactl shell` call.
 */
void preflight_judge_host_only(const struct preflight_request *req,
			       const struct preflight_host_memory_facts *h,
			       const struct preflight_stop_facts *s,
			       const struct preflight_results_facts *r, struct preflight *pf);

/*
 * The --results facts (see struct preflight_results_facts): dir is made, probed and tidied again;
 * what existed before stays as it was. "none" is not a directory but --results none.
 */
void preflight_gather_results(const char *dir, struct preflight_results_facts *r);

/*
 * Gathers every fact and judges: first what this host tells by itself (the results directory,
 * tried; host memory; the stop), and when that already refuses the run, nothing else (see
 * preflight_judge_host_only); otherwise one `limactl shell` call for the fill workload, the
 * Docker API for pgbench. Returns pf->exit_code. Leaves nothing anywhere: the results probe is
 * removed with the directories it made.
 */
int preflight_run(const struct preflight_request *req, const struct lima_instance *inst,
		  pid_t vm_pid, struct preflight *pf);

/* [{"check": "tmpfs", "status": "pass|fail|skipped", "message": "...", "exit_code": N}, ...] */
json_t *preflight_json(const struct preflight *pf);
/* One line per check: "  ok    tmpfs        /dev/shm: ..." (FAIL in red when color). */
void preflight_print(FILE *f, const struct preflight *pf, bool color);

#endif
