/* SPDX-License-Identifier: Apache-2.0 */
/* lib/zoneinfo.c: the free pages on the per-CPU lists, which MemFree leaves out. */
#include "check.h"
#include "fakeroot.h"
#include "zoneinfo.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define FIXTURE "tests/unit/fixtures/proc/zoneinfo-6.18-2cpu"

static char *fixture(void)
{
	char *buf;
	if (vmc_fs_read(FIXTURE, &buf, NULL, 1 << 20) < 0) /* the real root: set no fake one yet */
		return NULL;
	return buf;
}

/* This build host's own /proc/zoneinfo (Linux 6.18, 2 CPUs, zones DMA, DMA32, Normal, Movable and
 * Device): its six pagesets hold 0, 0, 0, 0, 7331 and 40527 pages. */
TEST(the_pagesets_of_every_zone_and_cpu_are_summed)
{
	char *buf = fixture();
	CHECK(buf != NULL);
	uint64_t pages = 1;
	CHECK_INT(vmc_zoneinfo_percpu_pages_parse(buf ? buf : "", &pages), 0);
	CHECK_U64(pages, 7331 + 40527);
	free(buf);
}

/* Other lines with numbers ("high:", "batch:", "nr_free_pages") do not count; only a line that
 * begins with "count:" after its blanks does. */
static const char count_lines_only[] = "Node 0, zone   Normal\n"
				       "  pages free     5000\n"
				       "        nr_free_pages 5000\n"
				       "  pagesets\n"
				       "    cpu: 0\n"
				       "              count:    12\n"
				       "              high:     118784\n"
				       "              batch:    63\n"
				       "              discount: 99\n"
				       "    cpu: 1\n"
				       "\tcount: 30";

TEST(only_count_lines_count)
{
	uint64_t pages = 0;
	CHECK_INT(vmc_zoneinfo_percpu_pages_parse(count_lines_only, &pages), 0);
	CHECK_U64(pages, 42);
}

/* No pagesets (a kernel or a fake tree without them) is an error, not 0 pages: the caller then
 * says MemFree alone. A count that is no number is an error too. */
TEST(no_pagesets_or_a_broken_count_is_an_error)
{
	uint64_t pages = 7;
	CHECK_INT(vmc_zoneinfo_percpu_pages_parse("", &pages), -1);
	CHECK_INT(vmc_zoneinfo_percpu_pages_parse("Node 0, zone DMA\n  pages free 3\n", &pages),
		  -1);
	CHECK_INT(
	    vmc_zoneinfo_percpu_pages_parse("  pagesets\n    cpu: 0\n      count: x\n", &pages),
	    -1);
	CHECK_INT(vmc_zoneinfo_percpu_pages_parse("      count: 99999999999999999999999\n", &pages),
		  -1);
	CHECK_U64(pages, 7);
}

/* The reader takes the file from the fake root and gives bytes; a missing file is ENOENT. */
TEST(the_reader_gives_bytes_from_the_root)
{
	char *buf = fixture();
	CHECK(buf != NULL);
	fakeroot_init();
	uint64_t bytes = 0;
	errno = 0;
	CHECK_INT(vmc_zoneinfo_percpu_free_read(&bytes), -1);
	CHECK_INT(errno, ENOENT);
	fakeroot_write("/proc/zoneinfo", buf ? buf : "");
	CHECK_INT(vmc_zoneinfo_percpu_free_read(&bytes), 0);
	CHECK_U64(bytes, (uint64_t)(7331 + 40527) * (uint64_t)sysconf(_SC_PAGESIZE));
	fakeroot_write("/proc/zoneinfo", "Node 0, zone DMA\n");
	errno = 0;
	CHECK_INT(vmc_zoneinfo_percpu_free_read(&bytes), -1);
	CHECK_INT(errno, EINVAL);
	fakeroot_cleanup();
	free(buf);
}

int main(void)
{
	RUN(the_pagesets_of_every_zone_and_cpu_are_summed);
	RUN(only_count_lines_count);
	RUN(no_pagesets_or_a_broken_count_is_an_error);
	RUN(the_reader_gives_bytes_from_the_root);
	return check_done();
}
