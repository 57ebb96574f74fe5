/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel release, command line parameters (last one wins, kstrtobool) and /dev/kmsg records. */
#include "check.h"
#include "fakeroot.h"
#include "kernel.h"
#include "kmsg.h"

TEST(release_versions)
{
	struct vmc_kernel_version v;
	CHECK_INT(vmc_kernel_version_parse("6.1.0-57-cloud-amd64\n", &v), 0);
	CHECK_INT(v.major, 6);
	CHECK_INT(v.minor, 1);
	CHECK_INT(v.patch, 0);
	CHECK_STR(v.release, "6.1.0-57-cloud-amd64");
	CHECK(!vmc_kernel_at_least(&v, 6, 2));
	CHECK(vmc_kernel_at_least(&v, 5, 19));
	CHECK_INT(vmc_kernel_version_parse("6.18.44-0-virt", &v), 0);
	CHECK_INT(v.minor, 18);
	CHECK_INT(v.patch, 44);
	CHECK(vmc_kernel_at_least(&v, 6, 18));
	CHECK_INT(vmc_kernel_version_parse("6.18", &v), 0);
	CHECK_INT(vmc_kernel_version_parse("linux", &v), -1);
	CHECK_INT(vmc_kernel_version_parse("6", &v), -1);
	fakeroot_write("/proc/sys/kernel/osrelease", "6.1.0-57-cloud-amd64\n");
	CHECK_INT(vmc_kernel_version_read(&v), 0);
	CHECK_INT(v.minor, 1);
}

TEST(cmdline_last_valid_wins)
{
	char v[64];
	const char *cl = "BOOT_IMAGE=/vmlinuz init_on_free=1 quiet init_on_free=0 psi=1\n";
	CHECK_INT(vmc_cmdline_param(cl, "init_on_free", v, sizeof v), 1);
	CHECK_STR(v, "0");
	CHECK_INT(vmc_cmdline_param(cl, "psi", v, sizeof v), 1);
	CHECK_STR(v, "1");
	CHECK_INT(vmc_cmdline_param(cl, "init_on_alloc", v, sizeof v), 0);
	/* "quiet" is a bare word; "qu" is not a parameter of it */
	CHECK_INT(vmc_cmdline_param(cl, "quiet", v, sizeof v), 2);
	CHECK_INT(vmc_cmdline_param(cl, "qu", v, sizeof v), 0);
	/* bare init_on_free (kstrtobool(NULL) fails in the kernel): reported as such */
	CHECK_INT(vmc_cmdline_param("init_on_free ro", "init_on_free", v, sizeof v), 2);
	CHECK_INT(vmc_cmdline_param("init_on_free=1 init_on_free", "init_on_free", v, sizeof v), 1);
	CHECK_STR(v, "1");
	/* quotes */
	CHECK_INT(vmc_cmdline_param("a=\"x y\" \"b=1 2\" c=3", "a", v, sizeof v), 1);
	CHECK_STR(v, "x y");
	CHECK_INT(vmc_cmdline_param("a=\"x y\" \"b=1 2\" c=3", "b", v, sizeof v), 1);
	CHECK_STR(v, "1 2");
	CHECK_INT(vmc_cmdline_param("a=\"x y\" \"b=1 2\" c=3", "c", v, sizeof v), 1);
	CHECK_STR(v, "3");
	/* module parameters keep their dots */
	CHECK_INT(
	    vmc_cmdline_param("kfence.sample_interval=0", "kfence.sample_interval", v, sizeof v),
	    1);
	CHECK_STR(v, "0");
	fakeroot_write("/proc/cmdline", "console=ttyS0 init_on_free=1\n");
	char buf[256];
	CHECK_INT(vmc_cmdline_read(buf, sizeof buf), 0);
	CHECK_STR(buf, "console=ttyS0 init_on_free=1");
}

TEST(kstrtobool_like_the_kernel)
{
	bool b = false;
	CHECK_INT(vmc_kstrtobool("1", false, &b), 0);
	CHECK(b);
	CHECK_INT(vmc_kstrtobool("Yes", false, &b), 0);
	CHECK(b);
	CHECK_INT(vmc_kstrtobool("off", false, &b), 0);
	CHECK(!b);
	CHECK_INT(vmc_kstrtobool("ON", false, &b), 0);
	CHECK(b);
	CHECK_INT(vmc_kstrtobool("false", false, &b), 0);
	CHECK(!b);
	CHECK_INT(vmc_kstrtobool("o", false, &b), -1);
	CHECK_INT(vmc_kstrtobool("", false, &b), -1);
	CHECK_INT(vmc_kstrtobool(NULL, false, &b), -1);
	CHECK_INT(vmc_kstrtobool("2", false, &b), -1);
	/* enable/disable: 6.18 yes, 6.1 no */
	CHECK_INT(vmc_kstrtobool("enable", false, &b), -1);
	CHECK_INT(vmc_kstrtobool("enable", true, &b), 0);
	CHECK(b);
	CHECK_INT(vmc_kstrtobool("Disabled", true, &b), 0);
	CHECK(!b);
}

TEST(kmsg_record_text)
{
	CHECK_STR(vmc_kmsg_text("6,339,5140900,-;mem auto-init: stack:off"),
		  "mem auto-init: stack:off");
	CHECK_STR(vmc_kmsg_text("6,1,2,-,caller=T1;hello"), "hello");
	CHECK(vmc_kmsg_text(" SUBSYSTEM=virtio") == NULL);
	CHECK(vmc_kmsg_text("no header here; really") == NULL);
	CHECK(vmc_kmsg_text("6,1,2,-") == NULL);
}

struct collect {
	int seen;
	char last[256];
	const char *stop_at;
};

static int collect_fn(const char *text, void *ctx)
{
	struct collect *c = ctx;
	c->seen++;
	snprintf(c->last, sizeof c->last, "%s", text);
	return c->stop_at && strstr(text, c->stop_at) != NULL;
}

TEST(kmsg_scan_plain_file)
{
	fakeroot_write("/dev/kmsg", "5,0,0,-;Linux version 6.1.0-57-cloud-amd64\n"
				    "6,1,10,-;mem auto-init: stack:all(zero), heap alloc:on, heap "
				    "free:on\n"
				    " SUBSYSTEM=none\n"
				    "6,2,11,-;mem auto-init: clearing system memory may take some "
				    "time...\n"
				    "6,3,12,-;Free page reporting enabled");
	struct collect c = {0};
	CHECK_INT(vmc_kmsg_scan(collect_fn, &c), 0);
	CHECK_INT(c.seen, 4);
	/* the last record has no trailing newline in the file and is still seen */
	CHECK_STR(c.last, "Free page reporting enabled");
	struct collect early = {.stop_at = "heap free"};
	CHECK_INT(vmc_kmsg_scan(collect_fn, &early), 0);
	CHECK_INT(early.seen, 2);
	fakeroot_remove("/dev/kmsg");
	CHECK_INT(vmc_kmsg_scan(collect_fn, &c), -1);
	CHECK_INT(errno, ENOENT);
}

int main(void)
{
	fakeroot_init();
	RUN(release_versions);
	RUN(cmdline_last_valid_wins);
	RUN(kstrtobool_like_the_kernel);
	RUN(kmsg_record_text);
	RUN(kmsg_scan_plain_file);
	fakeroot_cleanup();
	return check_done();
}
