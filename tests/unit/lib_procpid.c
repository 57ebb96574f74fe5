/* SPDX-License-Identifier: Apache-2.0 */
/* lib/procpid: parsers on real-world buffers, readers on a fake /proc tree. */
#include "check.h"
#include "procfs.h"
#include "procpid.h"
#include "scratch.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/vmc-lib-procpid-XXXXXX";

static void write_file(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s%s", root, rel);
	char dir[512];
	snprintf(dir, sizeof dir, "%s", path);
	for (char *s = dir + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(dir, 0755);
		*s = '/';
	}
	scratch_write(path, text);
}

/* A QEMU process on a 6.18 host, trimmed to the lines around the ones we read. */
static const char status_qemu[] = "Name:\tqemu-system-x86\n"
				  "Umask:\t0022\n"
				  "State:\tS (sleeping)\n"
				  "Tgid:\t4242\n"
				  "PPid:\t4200\n"
				  "Uid:\t1000\t1001\t1000\t1000\n"
				  "VmPeak:\t 3542332 kB\n"
				  "VmHWM:\t 2219008 kB\n"
				  "VmRSS:\t  253952 kB\n"
				  "RssAnon:\t  229376 kB\n"
				  "RssFile:\t   24064 kB\n"
				  "RssShmem:\t     512 kB\n"
				  "VmSwap:\t    1024 kB\n"
				  "Threads:\t5\n"
				  "voluntary_ctxt_switches:\t12345\n"
				  "nonvoluntary_ctxt_switches:\t678\n";

TEST(status_of_a_user_process)
{
	struct vmc_proc_status st;
	CHECK_INT(vmc_proc_status_parse(status_qemu, &st), 0);
	CHECK_STR(st.name, "qemu-system-x86");
	CHECK_INT(st.state, 'S');
	CHECK_INT(st.ppid, 4200);
	CHECK_INT(st.uid_real, 1000);
	CHECK_INT(st.uid_effective, 1001);
	CHECK(st.has_mm);
	CHECK_U64(st.vm_rss, 253952ull * 1024);
	CHECK_U64(st.vm_hwm, 2219008ull * 1024);
	CHECK_U64(st.vm_swap, 1024ull * 1024);
	CHECK(st.has_rss_split);
	CHECK_U64(st.rss_anon, 229376ull * 1024);
	CHECK_U64(st.rss_file, 24064ull * 1024);
	CHECK_U64(st.rss_shmem, 512ull * 1024);
	CHECK(st.has_ctxt);
	CHECK_U64(st.voluntary_ctxt_switches, 12345);
	CHECK_U64(st.nonvoluntary_ctxt_switches, 678);
}

TEST(status_of_a_kernel_thread_has_no_mm)
{
	struct vmc_proc_status st;
	CHECK_INT(vmc_proc_status_parse("Name:\tkthreadd\nState:\tS (sleeping)\nPPid:\t0\n"
					"Uid:\t0\t0\t0\t0\nvoluntary_ctxt_switches:\t9\n",
					&st),
		  0);
	CHECK(!st.has_mm);
	CHECK(!st.has_rss_split);
	CHECK(!st.has_ctxt);
	CHECK_U64(st.vm_rss, 0);
	CHECK_STR(st.name, "kthreadd");
}

TEST(status_name_with_spaces_and_keys_anchored)
{
	struct vmc_proc_status st;
	/* "xVmRSS:" in the name line must not be read as VmRSS. */
	CHECK_INT(vmc_proc_status_parse("Name:\tmy VmRSS: 5 kB\nVmRSS:\t7 kB\n", &st), 0);
	CHECK_STR(st.name, "my VmRSS: 5 kB");
	CHECK_U64(st.vm_rss, 7 * 1024);
}

TEST(status_keys_in_any_order)
{
	/* The parser reads in the kernel's order for speed, but must not depend on it. */
	struct vmc_proc_status st;
	CHECK_INT(vmc_proc_status_parse("nonvoluntary_ctxt_switches:\t4\nVmSwap:\t3 kB\n"
					"voluntary_ctxt_switches:\t5\nVmRSS:\t2 kB\n"
					"Uid:\t7\t8\t7\t7\nName:\tq\nVmHWM:\t9 kB\n",
					&st),
		  0);
	CHECK_STR(st.name, "q");
	CHECK_U64(st.vm_rss, 2048);
	CHECK_U64(st.vm_swap, 3072);
	CHECK_U64(st.vm_hwm, 9216);
	CHECK_INT(st.uid_effective, 8);
	CHECK_U64(st.voluntary_ctxt_switches, 5);
	CHECK_U64(st.nonvoluntary_ctxt_switches, 4);
	struct vmc_proc_io io;
	CHECK_INT(vmc_proc_io_parse("write_bytes: 7\nrchar: 1\n", &io), 0);
	CHECK_U64(io.write_bytes, 7);
	CHECK_U64(io.rchar, 1);
}

TEST(status_malformed)
{
	struct vmc_proc_status st;
	CHECK_INT(vmc_proc_status_parse("", &st), -1);
	CHECK_INT(vmc_proc_status_parse("VmRSS:\t7 kB\n", &st), -1);
	CHECK_INT(vmc_proc_status_parse("Name:\tx\nVmRSS:\tlots kB\n", &st), -1);
	CHECK_INT(vmc_proc_status_parse("Name:\tx\nVmRSS:\t99999999999999999999 kB\n", &st), -1);
	CHECK_INT(vmc_proc_status_parse("Name:\tx\nUid:\t1000\n", &st), -1);
	CHECK_INT(vmc_proc_status_parse("Name:\tx\nPPid:\t-1\n", &st), -1);
	/* Truncated right after the key. */
	CHECK_INT(vmc_proc_status_parse("Name:\tx\nVmSwap:", &st), -1);
}

static const char stat_qemu[] =
    "4242 (qemu-system-x86) S 4200 4242 5890 0 -1 4194304 101 0 0 0 "
    "1234 567 0 0 20 0 5 0 88315 3133440 62000 18446744073709551615 94869619585024 0\n";

TEST(stat_fields)
{
	struct vmc_proc_stat st;
	CHECK_INT(vmc_proc_stat_parse(stat_qemu, &st), 0);
	CHECK_STR(st.comm, "qemu-system-x86");
	CHECK_INT(st.state, 'S');
	CHECK_INT(st.ppid, 4200);
	CHECK_U64(st.utime, 1234);
	CHECK_U64(st.stime, 567);
	CHECK_U64(st.starttime, 88315);
	CHECK_U64(st.rss_pages, 62000);
}

TEST(stat_comm_with_parens_and_spaces)
{
	struct vmc_proc_stat st;
	CHECK_INT(vmc_proc_stat_parse("7 (a) b) (c) R 1 7 7 0 -1 0 0 0 0 0 11 22 0 0 20 0 1 0 "
				      "33 0 44\n",
				      &st),
		  0);
	CHECK_STR(st.comm, "a) b) (c");
	CHECK_INT(st.state, 'R');
	CHECK_U64(st.utime, 11);
	CHECK_U64(st.stime, 22);
	CHECK_U64(st.rss_pages, 44);
}

TEST(stat_malformed)
{
	struct vmc_proc_stat st;
	CHECK_INT(vmc_proc_stat_parse("", &st), -1);
	CHECK_INT(vmc_proc_stat_parse("1 (x", &st), -1);
	CHECK_INT(vmc_proc_stat_parse("1 (x) S 1 2 3\n", &st), -1);
	CHECK_INT(
	    vmc_proc_stat_parse("1 (x) S 1 7 7 0 -1 0 0 0 0 0 1x 22 0 0 20 0 1 0 33 0 44\n", &st),
	    -1);
	CHECK_INT(
	    vmc_proc_stat_parse("1 x) S 1 7 7 0 -1 0 0 0 0 0 1 22 0 0 20 0 1 0 33 0 44\n", &st),
	    -1);
}

static const char io_qemu[] = "rchar: 6976\nwchar: 4096\nsyscr: 10\nsyscw: 1\n"
			      "read_bytes: 8192\nwrite_bytes: 1048576\n"
			      "cancelled_write_bytes: 4096\n";

TEST(io_fields)
{
	struct vmc_proc_io io;
	CHECK_INT(vmc_proc_io_parse(io_qemu, &io), 0);
	CHECK_U64(io.write_bytes, 1048576);
	CHECK_U64(io.read_bytes, 8192);
	CHECK_U64(io.wchar, 4096);
	CHECK_U64(io.cancelled_write_bytes, 4096);
	/* "cancelled_write_bytes:" must not satisfy "write_bytes:". */
	CHECK_INT(vmc_proc_io_parse("cancelled_write_bytes: 5\n", &io), -1);
	CHECK_INT(vmc_proc_io_parse("write_bytes: x\n", &io), -1);
}

static const char rollup_qemu[] =
    "55fe86252000-7fffeb894000 ---p 00000000 00:00 0                          [rollup]\n"
    "Rss:              253952 kB\nPss:              250000 kB\nPss_Dirty:        229000 kB\n"
    "Pss_Anon:         229376 kB\nPss_File:          20112 kB\nPss_Shmem:           512 kB\n"
    "Shared_Clean:       4000 kB\nShared_Dirty:          0 kB\nPrivate_Clean:     20000 kB\n"
    "Private_Dirty:    229952 kB\nReferenced:       253952 kB\nAnonymous:        229376 kB\n"
    "LazyFree:              0 kB\nAnonHugePages:    202752 kB\nSwap:               1024 kB\n"
    "SwapPss:            1024 kB\nLocked:                0 kB\n";

TEST(smaps_rollup_fields)
{
	struct vmc_smaps_rollup sr;
	CHECK_INT(vmc_smaps_rollup_parse(rollup_qemu, &sr), 0);
	CHECK_U64(sr.rss, 253952ull * 1024);
	CHECK_U64(sr.pss, 250000ull * 1024);
	CHECK(sr.has_pss_split);
	CHECK_U64(sr.pss_anon, 229376ull * 1024);
	CHECK_U64(sr.anon_huge_pages, 202752ull * 1024);
	CHECK_U64(sr.swap, 1024ull * 1024);
	CHECK_U64(sr.private_dirty, 229952ull * 1024);
	/* SwapPss must not be taken for Swap, nor Pss_Dirty for Pss. */
	CHECK_INT(vmc_smaps_rollup_parse("Rss: 1 kB\nSwapPss: 9 kB\nPss_Dirty: 8 kB\n", &sr), 0);
	CHECK_U64(sr.swap, 0);
	CHECK_U64(sr.pss, 0);
	CHECK(!sr.has_pss_split);
	CHECK_INT(vmc_smaps_rollup_parse("Pss: 1 kB\n", &sr), -1);
}

TEST(readers_use_the_fs_root)
{
	vmc_fs_set_root(root);
	write_file("/proc/4242/status", status_qemu);
	write_file("/proc/4242/stat", stat_qemu);
	write_file("/proc/4242/io", io_qemu);
	write_file("/proc/4242/smaps_rollup", rollup_qemu);
	struct vmc_proc_status st;
	struct vmc_proc_stat ps;
	struct vmc_proc_io io;
	struct vmc_smaps_rollup sr;
	CHECK_INT(vmc_proc_status_read(4242, &st), 0);
	CHECK_U64(st.vm_rss, 253952ull * 1024);
	CHECK_INT(vmc_proc_stat_read(4242, &ps), 0);
	CHECK_U64(ps.utime, 1234);
	CHECK_INT(vmc_proc_io_read(4242, &io), 0);
	CHECK_U64(io.write_bytes, 1048576);
	CHECK_INT(vmc_smaps_rollup_read(4242, &sr), 0);
	CHECK_U64(sr.anon_huge_pages, 202752ull * 1024);

	errno = 0;
	CHECK_INT(vmc_proc_status_read(999999, &st), -1);
	CHECK_INT(errno, ENOENT);
	write_file("/proc/77/status", "garbage\n");
	errno = 0;
	CHECK_INT(vmc_proc_status_read(77, &st), -1);
	CHECK_INT(errno, EINVAL);
	vmc_fs_set_root("");
}

TEST(ticks_to_ns)
{
	CHECK_U64(vmc_ticks_to_ns(1, 100), 10000000);
	CHECK_U64(vmc_ticks_to_ns(1801, 100), 18010000000ull);
	CHECK_U64(vmc_ticks_to_ns(3, 250), 12000000);
	/* Large counts do not overflow: 2^40 ticks at 100 Hz. */
	CHECK_U64(vmc_ticks_to_ns(1ull << 40, 100), (1ull << 40) * 10000000ull);
	CHECK_U64(vmc_ticks_to_ns(5, 0), 50000000);
}

TEST(reads_this_process_for_real)
{
	struct vmc_proc_status st;
	struct vmc_proc_stat ps;
	CHECK_INT(vmc_proc_status_read(getpid(), &st), 0);
	CHECK(st.has_mm);
	CHECK(st.vm_rss > 0);
	CHECK_INT(vmc_proc_stat_read(getpid(), &ps), 0);
	CHECK_INT(ps.ppid, getppid());
}

int main(void)
{
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 2;
	}
	RUN(status_of_a_user_process);
	RUN(status_of_a_kernel_thread_has_no_mm);
	RUN(status_name_with_spaces_and_keys_anchored);
	RUN(status_keys_in_any_order);
	RUN(status_malformed);
	RUN(stat_fields);
	RUN(stat_comm_with_parens_and_spaces);
	RUN(stat_malformed);
	RUN(io_fields);
	RUN(smaps_rollup_fields);
	RUN(readers_use_the_fs_root);
	RUN(ticks_to_ns);
	RUN(reads_this_process_for_real);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	if (system(cmd) != 0)
		perror("cleanup");
	return check_done();
}
