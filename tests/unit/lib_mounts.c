/* SPDX-License-Identifier: Apache-2.0 */
/* /proc/mounts lookups, process/thread lists and cmdline, /proc/vmstat balloon counters. */
#include "check.h"
#include "fakeroot.h"
#include "mounts.h"
#include "proclist.h"
#include "vmstat.h"

static const char mounts_cloud[] = "rootfs / rootfs rw 0 0\n"
				   "/dev/vda1 / ext4 rw,relatime,commit=60 0 0\n"
				   "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
				   "tmpfs /var/log tmpfs rw,nosuid,nodev,size=65536k,mode=755 0 0\n"
				   "/dev/vdb1 /mnt/with\\040blank ext4 rw,discard 0 0\n"
				   "tmpfs /var/logs tmpfs rw 0 0\n";

TEST(mount_for_paths)
{
	struct vmc_mount m;
	CHECK_INT(vmc_mount_for(mounts_cloud, "/", &m), 0);
	CHECK_STR(m.fstype, "ext4"); /* the later "/" line is mounted over rootfs */
	CHECK_STR(m.source, "/dev/vda1");
	CHECK_INT(vmc_mount_for(mounts_cloud, "/var/log", &m), 0);
	CHECK_STR(m.fstype, "tmpfs");
	CHECK_INT(vmc_mount_for(mounts_cloud, "/var/log/messages", &m), 0);
	CHECK_STR(m.target, "/var/log");
	/* /var/lo is not below /var/log, /var/logs is not /var/log */
	CHECK_INT(vmc_mount_for(mounts_cloud, "/var/lo", &m), 0);
	CHECK_STR(m.target, "/");
	CHECK_INT(vmc_mount_for(mounts_cloud, "/var/logs/x", &m), 0);
	CHECK_STR(m.target, "/var/logs");
	CHECK_INT(vmc_mount_for(mounts_cloud, "/mnt/with blank/f", &m), 0);
	CHECK_STR(m.target, "/mnt/with blank");
	CHECK_INT(vmc_mount_for("", "/", &m), -1);
}

TEST(mount_options)
{
	char v[32];
	CHECK_INT(vmc_mount_option("rw,relatime,commit=60", "commit", v, sizeof v), 1);
	CHECK_STR(v, "60");
	CHECK_INT(vmc_mount_option("rw,discard", "discard", v, sizeof v), 2);
	CHECK_INT(vmc_mount_option("rw,nodiscard", "discard", v, sizeof v), 0);
	CHECK_INT(vmc_mount_option("rw,relatime", "commit", v, sizeof v), 0);
	CHECK_INT(vmc_mount_option("", "commit", v, sizeof v), 0);
}

TEST(process_and_thread_lists)
{
	fakeroot_remove("/proc");
	fakeroot_write("/proc/12/status", "Name:\tsyslogd\n");
	fakeroot_write("/proc/3/status", "Name:\tinit\n");
	fakeroot_write("/proc/100/task/100/status", "Name:\tdockerd\n");
	fakeroot_write("/proc/100/task/105/status", "Name:\tdockerd\n");
	fakeroot_mkdir("/proc/self");
	fakeroot_mkdir("/proc/sys");
	pid_t *ids;
	size_t n;
	CHECK_INT(vmc_proc_list(&ids, &n), 0);
	CHECK_U64(n, 3);
	if (n == 3) {
		CHECK_INT(ids[0], 3);
		CHECK_INT(ids[1], 12);
		CHECK_INT(ids[2], 100);
	}
	free(ids);
	CHECK_INT(vmc_proc_tasks(100, &ids, &n), 0);
	CHECK_U64(n, 2);
	free(ids);
	CHECK_INT(vmc_proc_tasks(7, &ids, &n), -1);
	CHECK_INT(errno, ENOENT);
}

TEST(cmdline_nuls_become_blanks)
{
	char raw[] = "/sbin/syslogd\0-t\0-C64\0";
	vmc_proc_cmdline_join(raw, sizeof raw - 1);
	CHECK_STR(raw, "/sbin/syslogd -t -C64");
	char path[] = "/proc/12/cmdline";
	char path_full[4096];
	snprintf(path_full, sizeof path_full, "%s%s", fakeroot_dir, path);
	FILE *f = fopen(path_full, "w");
	fwrite("syslogd\0-C64\0", 1, 13, f);
	fclose(f);
	char buf[64];
	CHECK_INT(vmc_proc_cmdline_read(12, buf, sizeof buf), 0);
	CHECK_STR(buf, "syslogd -C64");
	fakeroot_write("/proc/13/cmdline", "");
	CHECK_INT(vmc_proc_cmdline_read(13, buf, sizeof buf), 0);
	CHECK_STR(buf, "");
}

TEST(vmstat_balloon_counters)
{
	struct vmc_vmstat vs;
	/* 6.1: no nr_balloon_pages; size = inflate - deflate */
	CHECK_INT(vmc_vmstat_parse("nr_free_pages 1000\nballoon_inflate 262144\n"
				   "balloon_deflate 62144\nballoon_migrate 3\n",
				   &vs),
		  0);
	CHECK(vs.has_balloon);
	CHECK(!vs.has_nr_balloon_pages);
	CHECK_U64(vmc_vmstat_balloon_pages(&vs), 200000);
	CHECK_U64(vs.balloon_migrate, 3);
	/* 6.18 */
	CHECK_INT(vmc_vmstat_parse("nr_free_pages 1\nnr_balloon_pages 512\nballoon_inflate 9\n"
				   "pgsteal_proactive 77\n",
				   &vs),
		  0);
	CHECK_U64(vmc_vmstat_balloon_pages(&vs), 512);
	CHECK_U64(vs.pgsteal_proactive, 77);
	/* no CONFIG_MEMORY_BALLOON */
	CHECK_INT(vmc_vmstat_parse("nr_free_pages 1\n", &vs), 0);
	CHECK(!vs.has_balloon);
	CHECK_U64(vmc_vmstat_balloon_pages(&vs), 0);
	CHECK_INT(vmc_vmstat_parse("garbage\n", &vs), -1);
	fakeroot_write("/proc/vmstat", "nr_free_pages 5\nballoon_inflate 4\nballoon_deflate 1\n");
	CHECK_INT(vmc_vmstat_read(&vs), 0);
	CHECK_U64(vmc_vmstat_balloon_pages(&vs), 3);
}

int main(void)
{
	fakeroot_init();
	RUN(mount_for_paths);
	RUN(mount_options);
	RUN(process_and_thread_lists);
	RUN(cmdline_nuls_become_blanks);
	RUN(vmstat_balloon_counters);
	fakeroot_cleanup();
	return check_done();
}
