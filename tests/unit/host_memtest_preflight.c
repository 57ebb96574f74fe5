/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memtest's pre-flight on fake facts: each precondition broken on its own gives a failed verdict
 * with the documented exit code and a message that says what to do; the probe's output recorded
 * from a lab guest parses; the probe script itself runs here, creates nothing and counts what
 * rm -rf of the fill directory would take.
 */
#include "check.h"
#include "golden.h"
#include "log.h"
#include "measure/memtest_preflight.h"
#include "measure/workload.h"
#include "print_capture.h"

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIX "tests/unit/fixtures/memtest"
#define MIB (1024ull * 1024)
#define GIB (1024 * MIB)

/* CHECK_STR for PATH_MAX-sized fields: quotes at most 200 characters of each side. */
#define CHECK_TEXT(actual, expected)                                                               \
	do {                                                                                       \
		char m_[512];                                                                      \
		snprintf(m_, sizeof m_, "%s == \"%.200s\", expected \"%.200s\"", #actual,          \
			 (actual), (expected));                                                    \
		check_report(strcmp((actual), (expected)) == 0, __FILE__, __LINE__, m_);           \
	} while (0)

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	size_t got = fread(buf, 1, (size_t)n, f);
	buf[got] = '\0';
	fclose(f);
	return buf;
}

/* A fill run on a 2 GiB instance with every option at its default. */
static struct preflight_request fill_request(void)
{
	return (struct preflight_request){
	    .name = "dev", .fill = true, .vm_memory = 2 * GIB, .canary = GIB, .results_dir = "."};
}

static struct preflight_request pgbench_request(void)
{
	struct preflight_request r = fill_request();
	r.fill = false;
	return r;
}

/* One guest directory: on a mount of fstype, with avail free, writable, nothing in it. */
static struct preflight_guest_dir dir(const char *path, const char *at, const char *source,
				      const char *target, const char *fstype, uint64_t avail)
{
	struct preflight_guest_dir d = {.exists = strcmp(path, at) == 0,
					.is_dir = true,
					.writable = true,
					.has_space = true,
					.available = avail,
					.size = avail * 2,
					.has_mount = true};
	snprintf(d.path, sizeof d.path, "%s", path);
	snprintf(d.at, sizeof d.at, "%s", at);
	snprintf(d.mount.source, sizeof d.mount.source, "%s", source);
	snprintf(d.mount.target, sizeof d.mount.target, "%s", target);
	snprintf(d.mount.fstype, sizeof d.mount.fstype, "%s", fstype);
	return d;
}

/* The lab's tiny guest: root in RAM (rootfs), /dev/shm a 1.45 GiB tmpfs, a 4 GiB ext4 disk. */
static struct preflight_guest_dir lab_dirs[4];
static struct preflight_guest_facts lab_guest(void)
{
	lab_dirs[0] = dir("/dev/shm", "/dev/shm", "shm", "/dev/shm", "tmpfs", 1520268 * 1024ull);
	lab_dirs[1] = dir("/var/tmp/vmcost-fill", "/", "rootfs", "/", "rootfs", 980 * MIB);
	lab_dirs[2] = dir("/tmp/vmcost-fill", "/tmp", "rootfs", "/", "rootfs", 980 * MIB);
	lab_dirs[3] = dir("/mnt/scratch/vmcost-fill", "/mnt/scratch", "/dev/vda", "/mnt/scratch",
			  "ext4", 3730 * MIB);
	lab_dirs[3].from_mount = true;
	return (struct preflight_guest_facts){.ok = true, .dirs = lab_dirs, .n = 4};
}

static bool contains(const char *s, const char *part)
{
	return strstr(s, part) != NULL;
}

/* ---- building blocks ------------------------------------------------------------------------ */

TEST(filesystems_by_backing)
{
	struct vmc_mount m = {.source = "/dev/vda1"};
	const char *disk[] = {"ext4", "xfs", "btrfs", "f2fs"};
	for (size_t i = 0; i < 4; i++) {
		snprintf(m.fstype, sizeof m.fstype, "%s", disk[i]);
		CHECK_INT(preflight_fs_backing(&m), PREFLIGHT_FS_DISK);
	}
	const char *ram[] = {"tmpfs", "ramfs", "rootfs", "devtmpfs"};
	for (size_t i = 0; i < 4; i++) {
		snprintf(m.fstype, sizeof m.fstype, "%s", ram[i]);
		CHECK_INT(preflight_fs_backing(&m), PREFLIGHT_FS_RAM);
	}
	const char *shared[] = {"virtiofs", "9p", "fuse.sshfs", "nfs4"};
	for (size_t i = 0; i < 4; i++) {
		snprintf(m.fstype, sizeof m.fstype, "%s", shared[i]);
		CHECK_INT(preflight_fs_backing(&m), PREFLIGHT_FS_HOST_SHARED);
	}
	/* ext4 on a compressed RAM disk is still RAM. */
	struct vmc_mount z = {.source = "/dev/zram0", .fstype = "ext4"};
	CHECK_INT(preflight_fs_backing(&z), PREFLIGHT_FS_RAM);
	struct vmc_mount o = {.source = "overlay", .fstype = "overlay"};
	CHECK_INT(preflight_fs_backing(&o), PREFLIGHT_FS_OTHER);
}

TEST(fill_bytes_match_the_script)
{
	uint64_t peak, files;
	/* 3 MiB: one 3 MiB block, seed + data. */
	workload_fill_bytes(3 * MIB, &peak, &files);
	CHECK_U64(files, 3 * MIB);
	CHECK_U64(peak, 6 * MIB);
	/* 70 MiB: two 64 MiB blocks (the script rounds up: tests/unit/host_memtest.c). */
	workload_fill_bytes(70 * MIB, &peak, &files);
	CHECK_U64(files, 128 * MIB);
	CHECK_U64(peak, 192 * MIB);
	workload_fill_bytes(GIB, &peak, &files);
	CHECK_U64(files, GIB);
	CHECK_U64(peak, GIB + 64 * MIB);
}

TEST(probe_output_from_the_lab_guest_parses)
{
	char *out = slurp(FIX "/preflight-probe-lab.out");
	CHECK(out != NULL);
	struct preflight_guest_facts g = {0};
	CHECK_INT(preflight_parse_probe(out, &g), 0);
	CHECK_INT(g.n, 4);
	CHECK_TEXT(g.dirs[0].path, "/dev/shm");
	CHECK(g.dirs[0].exists && g.dirs[0].is_dir && g.dirs[0].writable);
	CHECK_TEXT(g.dirs[0].mount.fstype, "tmpfs");
	CHECK_U64(g.dirs[0].available, 380067ull * 4096);
	CHECK_TEXT(g.dirs[1].path, "/var/tmp/vmcost-fill");
	CHECK_TEXT(g.dirs[1].at, "/");
	CHECK(!g.dirs[1].exists);
	CHECK_TEXT(g.dirs[1].mount.fstype, "rootfs");
	CHECK(g.dirs[3].from_mount);
	CHECK_TEXT(g.dirs[3].path, "/mnt/scratch/vmcost-fill");
	CHECK_TEXT(g.dirs[3].mount.source, "/dev/vda");
	CHECK_U64(g.dirs[3].size, 1011640ull * 4096);
	/* And judged: the default fill directory is RAM, the scratch disk is picked. */
	struct preflight_request req = fill_request();
	struct preflight_verdict v;
	uint64_t size;
	char chosen[PATH_MAX];
	preflight_check_tmpfs(&req, &g, &size, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK_U64(size, GIB);
	preflight_check_fill_dir(&req, &g, size, chosen, sizeof chosen, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK_TEXT(chosen, "/mnt/scratch/vmcost-fill");
	preflight_guest_facts_free(&g);
	free(out);
}

/* The lab's Docker guest: a Debian root on ext4 (/var/tmp fits), /tmp a tmpfs. */
TEST(probe_output_from_the_docker_guest_keeps_the_default)
{
	char *out = slurp(FIX "/preflight-probe-lab-docker.out");
	CHECK(out != NULL);
	struct preflight_guest_facts g = {0};
	CHECK_INT(preflight_parse_probe(out, &g), 0);
	CHECK_TEXT(g.dirs[1].at, "/var/tmp");
	CHECK_TEXT(g.dirs[1].mount.fstype, "ext4");
	CHECK_TEXT(g.dirs[2].mount.fstype, "tmpfs");
	struct preflight_request req = fill_request();
	struct preflight_verdict v;
	char chosen[PATH_MAX];
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK_TEXT(chosen, "/var/tmp/vmcost-fill");
	preflight_guest_facts_free(&g);
	free(out);
}

TEST(probe_output_that_is_not_the_probe)
{
	struct preflight_guest_facts g = {0};
	CHECK_INT(preflight_parse_probe("", &g), -1);
	CHECK_INT(preflight_parse_probe(NULL, &g), -1);
	/* Cut short: no mounts section. */
	CHECK_INT(preflight_parse_probe("vmcost-dir arg 1 1 1 0 1 4096 2\nvmcost-at /x\n"
					"vmcost-path /x\n",
					&g),
		  -1);
	/* A record without its path lines. */
	CHECK_INT(preflight_parse_probe("vmcost-dir arg 1 1 1 0 1 4096 2\nvmcost-mounts\n", &g),
		  -1);
	CHECK_INT(preflight_parse_probe("vmcost-dir what 1 1 1 0 1 4096 2\nvmcost-at /x\n"
					"vmcost-path /x\nvmcost-mounts\n",
					&g),
		  -1);
	/* statfs that failed ("-") is no space figure, not zero. */
	CHECK_INT(preflight_parse_probe("vmcost-dir arg 1 1 0 2 - - -\nvmcost-at /x y\n"
					"vmcost-path /x y\nvmcost-mounts\n/dev/vda / ext4 rw 0 0\n",
					&g),
		  0);
	CHECK_INT(g.n, 1);
	CHECK(!g.dirs[0].has_space && !g.dirs[0].writable);
	CHECK_INT(g.dirs[0].others, 2);
	CHECK_TEXT(g.dirs[0].path, "/x y");
	CHECK_TEXT(g.dirs[0].mount.fstype, "ext4");
	preflight_guest_facts_free(&g);
}

/* The probe is plain sh: run it here, on a temp tree, and see that it changes nothing. */
TEST(probe_script_runs_here_and_creates_nothing)
{
	/* limactl shell quotes its arguments for the guest's shell: no quote to get wrong. */
	CHECK(strchr(preflight_probe_script, '\'') == NULL);
	char root[] = "/tmp/vmcost-probe-XXXXXX";
	CHECK(mkdtemp(root) != NULL);
	char script[128], cmd[1024], path[256];
	snprintf(script, sizeof script, "%s/probe.sh", root);
	FILE *f = fopen(script, "w");
	fputs(preflight_probe_script, f);
	fclose(f);
	snprintf(path, sizeof path, "%s/full", root);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/full/keep.txt", root);
	fclose(fopen(path, "w"));
	snprintf(path, sizeof path, "%s/full/vmcost-fill.0", root);
	fclose(fopen(path, "w"));
	snprintf(cmd, sizeof cmd,
		 "sh %s %s/new/a/b %s/full %s/probe.sh > %s/out 2>&1; ls -A %s > %s/after", script,
		 root, root, root, root, root, root);
	CHECK_INT(system(cmd), 0);
	snprintf(path, sizeof path, "%s/out", root);
	char *out = slurp(path);
	struct preflight_guest_facts g = {0};
	CHECK_INT(preflight_parse_probe(out, &g), 0);
	CHECK(g.n >= 3);
	/* new/a/b does not exist: its nearest existing parent is the temp dir. */
	CHECK(!g.dirs[0].exists);
	CHECK_TEXT(g.dirs[0].at, root);
	CHECK(g.dirs[0].has_space && g.dirs[0].available > 0);
	CHECK(g.dirs[0].has_mount);
	/* full holds keep.txt besides a vmcost-fill file: one other entry. */
	CHECK(g.dirs[1].exists && g.dirs[1].is_dir);
	CHECK_INT(g.dirs[1].others, 1);
	/* A file in the way. */
	CHECK(g.dirs[2].exists && !g.dirs[2].is_dir);
	preflight_guest_facts_free(&g);
	free(out);
	snprintf(path, sizeof path, "%s/after", root);
	char *after = slurp(path);
	CHECK_TEXT(after, "after\nfull\nout\nprobe.sh\n"); /* no "new" */
	free(after);
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
}

/* ---- tmpfs ---------------------------------------------------------------------------------- */

TEST(tmpfs_passes_and_default_size_is_half_the_vm)
{
	struct preflight_request req = fill_request();
	struct preflight_guest_facts g = lab_guest();
	struct preflight_verdict v;
	uint64_t size = 0;
	preflight_check_tmpfs(&req, &g, &size, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK_U64(size, GIB);
	CHECK(contains(v.message, "/dev/shm: tmpfs"));
}

TEST(tmpfs_that_is_not_a_tmpfs)
{
	struct preflight_request req = fill_request();
	req.tmpfs_dir = "/var/tmp/vmcost-fill"; /* rootfs in the lab */
	struct preflight_guest_facts g = lab_guest();
	lab_dirs[1].exists = true;
	snprintf(lab_dirs[1].at, sizeof lab_dirs[1].at, "/var/tmp/vmcost-fill");
	struct preflight_verdict v;
	uint64_t size;
	preflight_check_tmpfs(&req, &g, &size, &v);
	CHECK_INT(v.status, PREFLIGHT_FAIL);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "not a tmpfs"));
	CHECK(contains(v.message, "--tmpfs DIR"));
	/* Missing altogether. */
	lab_dirs[1].exists = false;
	preflight_check_tmpfs(&req, &g, &size, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "does not exist in the guest"));
}

TEST(tmpfs_too_small_for_size)
{
	struct preflight_request req = fill_request();
	struct preflight_guest_facts g = lab_guest();
	lab_dirs[0].available = 512 * MIB;
	struct preflight_verdict v;
	uint64_t size;
	/* The default is lowered to what fits next to the seed... */
	preflight_check_tmpfs(&req, &g, &size, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK_U64(size, 448 * MIB);
	CHECK(contains(v.message, "SIZE lowered to 448 MiB"));
	/* ...but an asked-for SIZE is not changed behind the user's back. */
	req.size = GIB;
	preflight_check_tmpfs(&req, &g, &size, &v);
	CHECK_INT(v.status, PREFLIGHT_FAIL);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "use --size 448 MiB or less"));
	/* Nothing fits at all. */
	req.size = 0;
	lab_dirs[0].available = 100 * MIB;
	preflight_check_tmpfs(&req, &g, &size, &v);
	CHECK_INT(v.status, PREFLIGHT_FAIL);
}

TEST(tmpfs_size_beyond_three_quarters_of_the_vm)
{
	struct preflight_request req = fill_request();
	req.size = 1900 * MIB;
	struct preflight_guest_facts g = {.ok = false, .exit_code = 1, .error = "no guest"};
	struct preflight_verdict v;
	uint64_t size;
	/* Judged before the guest is needed: a usage error even when the guest did not answer. */
	preflight_check_tmpfs(&req, &g, &size, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "more than 3/4 of the VM's 2.00 GiB"));
}

TEST(tmpfs_not_writable_and_guest_silent)
{
	struct preflight_request req = fill_request();
	struct preflight_guest_facts g = lab_guest();
	lab_dirs[0].writable = false;
	struct preflight_verdict v;
	uint64_t size;
	preflight_check_tmpfs(&req, &g, &size, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_PERMISSION);
	struct preflight_guest_facts silent = {.exit_code = VMC_EXIT_FAILURE,
					       .error = "limactl shell dev failed (exit 255): ssh"};
	preflight_check_tmpfs(&req, &silent, &size, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_FAILURE);
	CHECK(contains(v.message, "limactl shell dev failed"));
	req.tmpfs_dir = "shm";
	preflight_check_tmpfs(&req, &g, &size, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "not an absolute path"));
}

/* ---- fill directory ------------------------------------------------------------------------- */

TEST(fill_dir_given_on_ram_is_refused_naming_it_and_the_option)
{
	struct preflight_request req = fill_request();
	req.fill_dir = "/var/tmp/vmcost-fill";
	struct preflight_guest_facts g = lab_guest();
	struct preflight_verdict v;
	char chosen[PATH_MAX];
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK_INT(v.status, PREFLIGHT_FAIL);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "--fill-dir /var/tmp/vmcost-fill"));
	CHECK(contains(v.message, "rootfs"));
	CHECK(contains(v.message, "in RAM"));
	CHECK(contains(v.message, "pass --fill-dir DIR"));
}

TEST(fill_dir_default_picks_a_disk)
{
	struct preflight_request req = fill_request();
	struct preflight_guest_facts g = lab_guest();
	struct preflight_verdict v;
	char chosen[PATH_MAX];
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK_TEXT(chosen, "/mnt/scratch/vmcost-fill");
	CHECK(contains(v.message, "ext4 on /dev/vda"));
	CHECK(contains(v.message, "the default /var/tmp/vmcost-fill cannot"));
	/* /tmp comes before a mounted disk when it is on one. */
	lab_dirs[2] = dir("/tmp/vmcost-fill", "/tmp", "/dev/vdb", "/tmp", "ext4", 2 * GIB);
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK_TEXT(chosen, "/tmp/vmcost-fill");
	/* The default itself, when it is on a disk, is kept. */
	lab_dirs[1] = dir("/var/tmp/vmcost-fill", "/var/tmp", "/dev/vda1", "/", "ext4", 8 * GIB);
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK_TEXT(chosen, "/var/tmp/vmcost-fill");
	CHECK(!contains(v.message, "picked"));
}

TEST(fill_dir_default_with_nothing_to_pick)
{
	struct preflight_request req = fill_request();
	struct preflight_guest_facts g = lab_guest();
	g.n = 3; /* no scratch disk */
	struct preflight_verdict v;
	char chosen[PATH_MAX];
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK_INT(v.status, PREFLIGHT_FAIL);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "/var/tmp/vmcost-fill"));
	CHECK(contains(v.message, "--fill-dir"));
	CHECK(contains(v.message, "tried /tmp/vmcost-fill"));
	/* A disk mounted outside /mnt and /media (/var/lib, /etc on the ISO) is never picked. */
	lab_dirs[2] =
	    dir("/var/lib/vmcost-fill", "/var/lib", "/dev/vdb", "/var/lib", "ext4", 8 * GIB);
	lab_dirs[2].from_mount = true;
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK_INT(v.status, PREFLIGHT_FAIL);
}

TEST(fill_dir_given_reasons)
{
	struct preflight_request req = fill_request();
	req.fill_dir = "/mnt/scratch";
	struct preflight_guest_facts g = lab_guest();
	lab_dirs[3] =
	    dir("/mnt/scratch", "/mnt/scratch", "/dev/vda", "/mnt/scratch", "ext4", 3 * GIB);
	struct preflight_verdict v;
	char chosen[PATH_MAX];
	/* The disk's own root holds lost+found: memtest would rm -rf it afterwards. */
	lab_dirs[3].others = 1;
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "holds 1 entry besides vmcost-fill.* files"));
	lab_dirs[3].others = 0;
	lab_dirs[3].writable = false;
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_PERMISSION);
	lab_dirs[3].writable = true;
	lab_dirs[3].available = GIB; /* no margin left */
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "1.00 GiB free, the fill writes 1.06 GiB"));
	lab_dirs[3].available = 3 * GIB;
	snprintf(lab_dirs[3].mount.fstype, sizeof lab_dirs[3].mount.fstype, "virtiofs");
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "shared with the host"));
	snprintf(lab_dirs[3].mount.fstype, sizeof lab_dirs[3].mount.fstype, "ext4");
	lab_dirs[3].is_dir = false;
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK(contains(v.message, "a file, not a directory"));
	lab_dirs[3].is_dir = true;
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK_TEXT(chosen, "/mnt/scratch");
	req.fill_dir = "scratch";
	preflight_check_fill_dir(&req, &g, GIB, chosen, sizeof chosen, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "not an absolute path"));
}

/* ---- pgbench -------------------------------------------------------------------------------- */

TEST(pgbench_docker_and_image)
{
	struct preflight_request req = pgbench_request();
	struct preflight_docker_facts d = {
	    .socket_exists = true, .version = "29.1.3", .present = true};
	struct preflight_verdict v;
	preflight_check_pgbench(&req, &d, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK(contains(v.message, "postgres:17-alpine is present"));
	d.socket_exists = false;
	preflight_check_pgbench(&req, &d, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_DOCKER);
	CHECK(contains(v.message, "--workload fill"));
	d.socket_exists = true;
	d.ping_rc = VMC_EXIT_DOCKER;
	snprintf(d.ping_error, sizeof d.ping_error, "dockerd is not answering on x");
	preflight_check_pgbench(&req, &d, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_DOCKER);
	CHECK_TEXT(v.message, "dockerd is not answering on x");
	d.ping_rc = VMC_EXIT_OK;
	d.present = false;
	req.no_pull = true;
	preflight_check_pgbench(&req, &d, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_DOCKER);
	CHECK(contains(v.message, "--no-pull was given"));
	req.no_pull = false;
	d.registry_checked = true;
	d.registry_rc = VMC_EXIT_DOCKER;
	snprintf(d.registry_error, sizeof d.registry_error,
		 "lookup registry-1.docker.io: no such "
		 "host");
	preflight_check_pgbench(&req, &d, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_DOCKER);
	CHECK(contains(v.message, "cannot be pulled: lookup registry-1.docker.io"));
	CHECK(contains(v.message, "docker load"));
	d.registry_rc = VMC_EXIT_OK;
	preflight_check_pgbench(&req, &d, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK(contains(v.message, "will be pulled"));
	req.fill = true;
	preflight_check_pgbench(&req, NULL, &v);
	CHECK_INT(v.status, PREFLIGHT_SKIP);
}

/* ---- host memory ---------------------------------------------------------------------------- */

static struct preflight_host_memory_facts linux_host(uint64_t available)
{
	return (struct preflight_host_memory_facts){
	    .has_memory = true,
	    .hm = {.total = 24 * GIB, .free = available, .available = available},
	    .page_size = 4096,
	    .canary_ok = true};
}

TEST(host_memory_default_and_asked_pressure)
{
	struct preflight_request req = fill_request();
	struct preflight_host_memory_facts h = linux_host(20 * GIB);
	struct preflight_verdict v;
	uint64_t p;
	preflight_check_host_memory(&req, &h, &p, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK_U64(p, 20 * GIB - GIB / 2); /* MemAvailable minus half the canary */
	req.pressure_set = true;
	req.pressure = 2 * GIB;
	preflight_check_host_memory(&req, &h, &p, &v);
	CHECK_U64(p, 2 * GIB);
	req.pressure = 20 * GIB; /* leaves less than the margin */
	preflight_check_host_memory(&req, &h, &p, &v);
	CHECK_INT(v.status, PREFLIGHT_FAIL);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "--pressure 20.0 GiB does not fit"));
	CHECK(contains(v.message, "at most 19.9 GiB"));
	req.pressure_none = true;
	preflight_check_host_memory(&req, &h, &p, &v);
	CHECK_INT(v.status, PREFLIGHT_SKIP);
	CHECK_U64(p, 0);
}

TEST(host_memory_under_a_cgroup_limit)
{
	struct preflight_request req = fill_request();
	struct preflight_host_memory_facts h = linux_host(20 * GIB);
	h.limit = (struct platform_memory_limit){
	    .limited = true, .limit = 2560 * MIB, .room = 2500 * MIB, .where = "/sys/fs/x"};
	struct preflight_verdict v;
	uint64_t p;
	preflight_check_host_memory(&req, &h, &p, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK_U64(p, 2500 * MIB - GIB / 2);
	CHECK(contains(v.message, "memory cgroup (/sys/fs/x) leaves 2.44 GiB"));
	/* tests/lab/memtest.sh holds 2 GiB in a 2.5 GiB cgroup: it fits. */
	req.pressure_set = true;
	req.pressure = 2 * GIB;
	preflight_check_host_memory(&req, &h, &p, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	req.pressure = 3 * GIB;
	preflight_check_host_memory(&req, &h, &p, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "memory cgroup"));
	/* No room at all for the default. */
	req.pressure_set = false;
	h.limit.room = 100 * MIB;
	preflight_check_host_memory(&req, &h, &p, &v);
	CHECK_INT(v.status, PREFLIGHT_FAIL);
}

TEST(host_memory_canary)
{
	struct preflight_request req = fill_request();
	struct preflight_host_memory_facts h = linux_host(20 * GIB);
	struct preflight_verdict v;
	uint64_t p;
	req.canary = 100;
	preflight_check_host_memory(&req, &h, &p, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "less than one page"));
	req.canary = GIB;
	h.canary_ok = false;
	snprintf(h.canary_error, sizeof h.canary_error, "madvise(MADV_FREE) failed: Invalid");
	preflight_check_host_memory(&req, &h, &p, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_UNSUPPORTED);
	CHECK(contains(v.message, "--pressure none"));
	h.canary_ok = true;
	req.canary = 30 * GIB;
	preflight_check_host_memory(&req, &h, &p, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "canary does not fit"));
}

TEST(host_memory_with_a_compressor)
{
	struct preflight_request req = fill_request();
	struct preflight_host_memory_facts h = {
	    .has_memory = true,
	    .hm = {.total = 16 * GIB, .available = 6 * GIB, .has_compressor = true},
	    .page_size = 16384,
	    .canary_ok = true};
	struct preflight_verdict v;
	uint64_t p;
	preflight_check_host_memory(&req, &h, &p, &v);
	CHECK_U64(p, 8 * GIB); /* available + RAM/8 */
	CHECK_U64(preflight_pressure_max(&h), 10 * GIB);
	req.pressure_set = true;
	req.pressure = 13 * GIB; /* beyond 3/4 of RAM */
	preflight_check_host_memory(&req, &h, &p, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
}

/* ---- stop permission ------------------------------------------------------------------------ */

TEST(stop_permission)
{
	struct preflight_request req = fill_request();
	struct preflight_stop_facts s = {.limactl_found = true,
					 .dir = "/home/u/.lima/dev",
					 .euid = 501,
					 .has_dir_owner = true,
					 .dir_owner = 501,
					 .dir_writable = true,
					 .ha_pid = 10,
					 .has_vm_owner = true,
					 .vm_owner = 501};
	struct preflight_verdict v;
	preflight_check_stop(&req, &s, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	s.limactl_found = false;
	preflight_check_stop(&req, &s, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_FAILURE);
	CHECK(contains(v.message, "limactl is not on PATH"));
	s.limactl_found = true;
	s.dir_owner = 502;
	preflight_check_stop(&req, &s, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_PERMISSION);
	CHECK(contains(v.message, "another user's"));
	CHECK(contains(v.message, "uid 502"));
	s.dir_owner = 501;
	s.ha_signal_errno = EPERM;
	preflight_check_stop(&req, &s, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_PERMISSION);
	CHECK(contains(v.message, "pid 10"));
	s.ha_signal_errno = 0;
	s.vm_owner = 0;
	preflight_check_stop(&req, &s, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_PERMISSION);
	s.vm_owner = 501;
	s.dir_writable = false;
	preflight_check_stop(&req, &s, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_PERMISSION);
	CHECK(contains(v.message, "/home/u/.lima/dev is not writable"));
}

/* ---- results -------------------------------------------------------------------------------- */

TEST(results_directory)
{
	struct preflight_request req = fill_request();
	req.results_dir = "/srv/results/new";
	struct preflight_results_facts r = {.is_dir = true, .at = "/srv/results"};
	struct preflight_verdict v;
	preflight_check_results(&req, &r, &v);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK(contains(v.message, "will be created"));
	r.access_errno = EACCES;
	preflight_check_results(&req, &r, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_PERMISSION);
	CHECK(contains(v.message, "--results /srv/results/new is not writable"));
	r.access_errno = 0;
	r.is_dir = false;
	preflight_check_results(&req, &r, &v);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	r.none = true;
	preflight_check_results(&req, &r, &v);
	CHECK_INT(v.status, PREFLIGHT_SKIP);
}

/* ---- the whole judgement -------------------------------------------------------------------- */

TEST(judge_exits_with_the_first_failure_and_lists_every_verdict)
{
	struct preflight_request req = fill_request();
	req.fill_dir = "/var/tmp/vmcost-fill";
	struct preflight_guest_facts g = lab_guest();
	struct preflight_host_memory_facts h = linux_host(20 * GIB);
	struct preflight_stop_facts s = {.limactl_found = false, .dir_writable = true};
	struct preflight_results_facts r = {.is_dir = true, .exists = true, .at = "."};
	struct preflight pf;
	preflight_judge(&req, &g, NULL, &h, &s, &r, &pf);
	/* fill-dir (usage) comes before stop (limactl missing). */
	CHECK_INT(pf.exit_code, VMC_EXIT_USAGE);
	CHECK_INT(pf.verdicts[PREFLIGHT_FILL_DIR].status, PREFLIGHT_FAIL);
	CHECK_INT(pf.verdicts[PREFLIGHT_STOP].status, PREFLIGHT_FAIL);
	CHECK_INT(pf.verdicts[PREFLIGHT_PGBENCH].status, PREFLIGHT_SKIP);
	json_t *j = preflight_json(&pf);
	CHECK_INT(json_array_size(j), PREFLIGHT_NCHECKS);
	json_t *first = json_array_get(j, 0);
	CHECK_STR(json_string_value(json_object_get(first, "check")), "tmpfs");
	CHECK_STR(json_string_value(json_object_get(first, "status")), "pass");
	CHECK(json_object_get(first, "exit_code") == NULL);
	json_t *fill = json_array_get(j, 1);
	CHECK_STR(json_string_value(json_object_get(fill, "status")), "fail");
	CHECK_INT(json_integer_value(json_object_get(fill, "exit_code")), VMC_EXIT_USAGE);
	CHECK_STR(json_string_value(json_object_get(json_array_get(j, 2), "status")), "skipped");
	json_decref(j);
	struct capture cap;
	preflight_print(capture_open(&cap), &pf, false);
	char *text = capture_close(&cap);
	CHECK_GOLDEN(text, "vmcost-memtest-preflight");
	CHECK(!contains(text, "\033["));
	free(text);
	/* Everything in order: exit 0, and the decisions for the run. */
	req.fill_dir = NULL;
	s.limactl_found = true;
	preflight_judge(&req, &g, NULL, &h, &s, &r, &pf);
	CHECK_INT(pf.exit_code, VMC_EXIT_OK);
	CHECK_TEXT(pf.fill_dir, "/mnt/scratch/vmcost-fill");
	CHECK_U64(pf.size, GIB);
	CHECK_U64(pf.pressure, 20 * GIB - GIB / 2);
}

/* ---- gathering, with a fake limactl -----------------------------------------------------------
 */

static char fake_bin[64] = "/tmp/vmcost-pfbin-XXXXXX";

static void fake_limactl(const char *body)
{
	char path[128], script[1024];
	snprintf(path, sizeof path, "%s/limactl", fake_bin);
	snprintf(script, sizeof script, "#!/bin/sh\n%s\n", body);
	FILE *f = fopen(path, "w");
	fputs(script, f);
	fclose(f);
	chmod(path, 0755);
}

/* The whole pre-flight of a fill run on an instance directory here, limactl faked. */
static int gather_and_judge(struct preflight *pf)
{
	struct lima_instance inst = {.name = "dev", .memory = 2 * GIB, .ha_pid = getpid()};
	snprintf(inst.dir, sizeof inst.dir, "%s", fake_bin);
	struct preflight_request req = fill_request();
	req.pressure_none = true;
	req.results_dir = "none";
	return preflight_run(&req, &inst, getpid(), pf);
}

TEST(gathering_through_limactl_shell)
{
	if (!mkdtemp(fake_bin))
		SKIP("no temp directory");
	char path[4096];
	snprintf(path, sizeof path, "%s:%s", fake_bin, getenv("PATH") ? getenv("PATH") : "/bin");
	setenv("PATH", path, 1);
	struct preflight pf;
	/* The guest as recorded in the lab: the scratch disk is picked, everything passes. */
	char cwd[2048], body[3000];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	snprintf(body, sizeof body, "[ \"$1 $2\" = \"shell dev\" ] || exit 9; cat %s/%s", cwd,
		 FIX "/preflight-probe-lab.out");
	fake_limactl(body);
	CHECK_INT(gather_and_judge(&pf), VMC_EXIT_OK);
	CHECK_TEXT(pf.fill_dir, "/mnt/scratch/vmcost-fill");
	CHECK_INT(pf.verdicts[PREFLIGHT_STOP].status, PREFLIGHT_PASS);
	CHECK_INT(pf.verdicts[PREFLIGHT_RESULTS].status, PREFLIGHT_SKIP);
	/* Something else answered: malformed, 8. */
	fake_limactl("echo 'Welcome to the guest'");
	CHECK_INT(gather_and_judge(&pf), VMC_EXIT_MALFORMED);
	CHECK(contains(pf.verdicts[PREFLIGHT_TMPFS].message, "not the probe's"));
	/* The shell failed: 1, with limactl's last line. */
	fake_limactl("echo 'level=fatal msg=\"instance is stopped\"' >&2; exit 1");
	CHECK_INT(gather_and_judge(&pf), VMC_EXIT_FAILURE);
	CHECK(contains(pf.verdicts[PREFLIGHT_TMPFS].message, "limactl shell dev failed (exit 1)"));
	CHECK(contains(pf.verdicts[PREFLIGHT_FILL_DIR].message, "instance is stopped"));
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", fake_bin);
	CHECK_INT(system(cmd), 0);
}

int main(void)
{
	vmc_log_init("host_memtest_preflight");
	RUN(filesystems_by_backing);
	RUN(fill_bytes_match_the_script);
	RUN(probe_output_from_the_lab_guest_parses);
	RUN(probe_output_from_the_docker_guest_keeps_the_default);
	RUN(probe_output_that_is_not_the_probe);
	RUN(probe_script_runs_here_and_creates_nothing);
	RUN(tmpfs_passes_and_default_size_is_half_the_vm);
	RUN(tmpfs_that_is_not_a_tmpfs);
	RUN(tmpfs_too_small_for_size);
	RUN(tmpfs_size_beyond_three_quarters_of_the_vm);
	RUN(tmpfs_not_writable_and_guest_silent);
	RUN(fill_dir_given_on_ram_is_refused_naming_it_and_the_option);
	RUN(fill_dir_default_picks_a_disk);
	RUN(fill_dir_default_with_nothing_to_pick);
	RUN(fill_dir_given_reasons);
	RUN(pgbench_docker_and_image);
	RUN(host_memory_default_and_asked_pressure);
	RUN(host_memory_under_a_cgroup_limit);
	RUN(host_memory_canary);
	RUN(host_memory_with_a_compressor);
	RUN(stop_permission);
	RUN(results_directory);
	RUN(judge_exits_with_the_first_failure_and_lists_every_verdict);
	RUN(gathering_through_limactl_shell);
	return check_done();
}
