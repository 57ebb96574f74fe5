/* SPDX-License-Identifier: Apache-2.0 */
#include "check.h"
#include "diskstats.h"
#include "procfs.h"

#include <stdlib.h>
#include <sys/stat.h>

/* A guest with a virtio disk, its partitions, a loop device and a device-mapper volume. */
static const char guest[] =
    " 253       0 vda 5000 100 400000 2000 800 90 16384 900 0 1500 2900 0 0 0 0 20 30\n"
    " 253       1 vda1 4000 100 300000 1500 700 90 16000 800 0 1300 2300 0 0 0 0 0 0\n"
    " 253      16 vdb 10 0 80 1 2 0 8 1 0 2 2\n"
    "   7       0 loop0 9 0 72 0 0 0 0 0 0 4 0 0 0 0 0\n"
    " 254       0 dm-0 100 0 800 10 50 0 400 5 0 10 15 0 0 0 0\n"
    " 259       0 nvme0n1 1 0 8 0 3 0 24 0 0 0 0\n"
    " 259       1 nvme0n1p1 1 0 8 0 3 0 24 0 0 0 0\n";

TEST(whole_disks_only)
{
	struct vmc_diskstats ds;
	CHECK_INT(vmc_diskstats_parse(guest, &ds), 0);
	CHECK_INT(ds.n, 3);
	const struct vmc_disk_io *vda = vmc_diskstats_find(&ds, "vda");
	CHECK(vda != NULL);
	if (vda) {
		CHECK_U64(vda->written_bytes, 16384ull * 512);
		CHECK_U64(vda->read_bytes, 400000ull * 512);
		CHECK_U64(vda->writes, 800);
	}
	CHECK(vmc_diskstats_find(&ds, "vda1") == NULL);
	CHECK(vmc_diskstats_find(&ds, "dm-0") == NULL);
	CHECK(vmc_diskstats_find(&ds, "nvme0n1") != NULL);
}

TEST(names)
{
	CHECK(vmc_disk_is_whole("vda"));
	CHECK(vmc_disk_is_whole("sdab"));
	CHECK(vmc_disk_is_whole("xvda"));
	CHECK(vmc_disk_is_whole("mmcblk0"));
	CHECK(!vmc_disk_is_whole("mmcblk0p1"));
	CHECK(!vmc_disk_is_whole("vd"));
	CHECK(!vmc_disk_is_whole("vda1"));
	CHECK(!vmc_disk_is_whole("nvme0"));
	CHECK(!vmc_disk_is_whole("zram0"));
	CHECK(!vmc_disk_is_whole("sr0"));
}

TEST(malformed)
{
	struct vmc_diskstats ds;
	CHECK_INT(vmc_diskstats_parse("", &ds), 0);
	CHECK_INT(ds.n, 0);
	CHECK_INT(vmc_diskstats_parse("\n\n", &ds), 0);
	CHECK_INT(vmc_diskstats_parse(" 253 0 vda 1 2 3\n", &ds), -1);
	CHECK_INT(vmc_diskstats_parse("x 0 vda 1 2 3 4 5 6 7\n", &ds), -1);
	CHECK_INT(vmc_diskstats_parse(" 253 0 vda 1 2 3 4 5 6 99999999999999999999 8\n", &ds), -1);
	/* Lines for devices we skip may be short: never read them. */
	CHECK_INT(vmc_diskstats_parse(" 7 0 loop0\n", &ds), 0);
}

TEST(reader_uses_root)
{
	char root[] = "/tmp/vmc-diskstats-XXXXXX";
	CHECK(mkdtemp(root) != NULL);
	char path[256];
	snprintf(path, sizeof path, "%s/proc", root);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/proc/diskstats", root);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(guest, f);
	fclose(f);
	vmc_fs_set_root(root);
	struct vmc_diskstats ds;
	CHECK_INT(vmc_diskstats_read(&ds), 0);
	CHECK_INT(ds.n, 3);
	vmc_fs_set_root("");
	remove(path);
	snprintf(path, sizeof path, "%s/proc", root);
	remove(path);
	remove(root);
}

int main(void)
{
	RUN(whole_disks_only);
	RUN(names);
	RUN(malformed);
	RUN(reader_uses_root);
	return check_done();
}
