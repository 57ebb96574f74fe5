/* SPDX-License-Identifier: Apache-2.0 */
#include "check.h"
#include "meminfo.h"
#include "procfs.h"
#include "scratch.h"
#include "stats.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fake root with /proc/meminfo as a 6.18 guest prints it (Balloon: line present). */
static char root[] = "/tmp/vmc-lib-procfs-XXXXXX";

static void write_file(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s%s", root, rel);
	scratch_write(path, text);
}

static const char meminfo_618[] = "MemTotal:        6085560 kB\n"
				  "MemFree:         5201004 kB\n"
				  "MemAvailable:    5650220 kB\n"
				  "Buffers:           12840 kB\n"
				  "Cached:           492128 kB\n"
				  "SwapCached:            0 kB\n"
				  "Active:           200000 kB\n"
				  "Active(file):     150000 kB\n"
				  "Inactive(file):   300000 kB\n"
				  "AnonPages:        101000 kB\n"
				  "Shmem:             40000 kB\n"
				  "SReclaimable:      22000 kB\n"
				  "SwapTotal:             0 kB\n"
				  "SwapFree:              0 kB\n"
				  "Balloon:           1024 kB\n";

TEST(key_lookup_is_line_anchored)
{
	uint64_t v = 0;
	CHECK_INT(vmc_key_kb(meminfo_618, "Cached:", &v), 0);
	CHECK_U64(v, 492128ull * 1024);
	CHECK_INT(vmc_key_kb("SwapCached: 5 kB\n", "Cached:", &v), -1);
	CHECK_INT(vmc_key_u64("a 1\nab 2\n", "ab", &v), 0);
	CHECK_U64(v, 2);
	CHECK_INT(vmc_key_u64("x: notanumber\n", "x:", &v), -1);
	CHECK_INT(vmc_key_u64("x: 99999999999999999999999\n", "x:", &v), -1);
}

TEST(meminfo_from_fake_root)
{
	struct vmc_meminfo mi;
	vmc_fs_set_root(root);
	write_file("/proc/meminfo", meminfo_618);
	CHECK_INT(vmc_meminfo_read(&mi), 0);
	CHECK_U64(mi.total, 6085560ull * 1024);
	CHECK_U64(mi.available, 5650220ull * 1024);
	CHECK_U64(vmc_meminfo_file_cache(&mi), 450000ull * 1024);
	CHECK(mi.has_balloon);
	CHECK_U64(mi.balloon, 1024ull * 1024);
}

TEST(meminfo_61_has_no_balloon_line)
{
	struct vmc_meminfo mi;
	CHECK_INT(vmc_meminfo_parse("MemTotal: 2 kB\nMemFree: 1 kB\nMemAvailable: 1 kB\n", &mi), 0);
	CHECK(!mi.has_balloon);
	CHECK_INT(vmc_meminfo_parse("MemTotal: 2 kB\nMemFree: 1 kB\n", &mi), -1);
}

TEST(missing_file_sets_errno)
{
	struct vmc_meminfo mi;
	vmc_fs_set_root("/nonexistent-vmcost-root");
	errno = 0;
	CHECK_INT(vmc_meminfo_read(&mi), -1);
	CHECK_INT(errno, ENOENT);
	vmc_fs_set_root(root);
}

TEST(read_whole_and_line)
{
	char *buf = NULL;
	size_t len = 0;
	write_file("/proc/short", "0x0005\nsecond\n");
	CHECK_INT(vmc_fs_read("/proc/short", &buf, &len, 1 << 20), 0);
	CHECK_INT(len, 14);
	free(buf);
	char line[16];
	CHECK_INT(vmc_fs_read_line("/proc/short", line, sizeof line), 0);
	CHECK_STR(line, "0x0005");
	CHECK(vmc_fs_exists("/proc/short"));
	CHECK(!vmc_fs_exists("/proc/absent"));
	CHECK_INT(vmc_fs_read("/proc/meminfo", &buf, &len, 64), -1);
	CHECK_INT(errno, EFBIG);
}

TEST(write_reaches_the_fake_root)
{
	char line[16];
	write_file("/proc/knob", "0\n");
	CHECK_INT(vmc_fs_write("/proc/knob", "1"), 0);
	CHECK_INT(vmc_fs_read_line("/proc/knob", line, sizeof line), 0);
	CHECK_STR(line, "1");
	CHECK_INT(vmc_fs_write("/proc/absent/knob", "1"), -1);
}

TEST(summary_median)
{
	double odd[] = {5, 1, 3};
	struct vmc_summary s = vmc_summarize(odd, 3);
	CHECK_DBL(s.median, 3, 0);
	CHECK_DBL(s.min, 1, 0);
	CHECK_DBL(s.max, 5, 0);
	double even[] = {4, 1, 3, 2};
	s = vmc_summarize(even, 4);
	CHECK_DBL(s.median, 2.5, 0);
	CHECK_DBL(s.mean, 2.5, 0);
	s = vmc_summarize(even, 0);
	CHECK_INT(s.n, 0);
}

int main(void)
{
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 2;
	}
	char proc[600];
	snprintf(proc, sizeof proc, "%s/proc", root);
	mkdir(proc, 0755);
	vmc_fs_set_root(root);
	RUN(key_lookup_is_line_anchored);
	RUN(meminfo_from_fake_root);
	RUN(meminfo_61_has_no_balloon_line);
	RUN(missing_file_sets_errno);
	RUN(read_whole_and_line);
	RUN(write_reaches_the_fake_root);
	RUN(summary_median);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return check_done();
}
