/* SPDX-License-Identifier: Apache-2.0 */
/* The memory a process may still use under its cgroups, on fake v1, v2 and hybrid trees. */
#include "check.h"
#include "fakeroot.h"
#include "platform/cgroup.h"

#define GIB (1024ull * 1024 * 1024)
#define MIB (1024ull * 1024)

TEST(parse_v1_v2_and_hybrid)
{
	char v1[128], v2[128];
	CHECK_INT(vmc_cgroup_parse("12:pids:/x\n4:cpu,memory:/process_api/abc\n0::/\n", v1,
				   sizeof v1, v2, sizeof v2),
		  0);
	CHECK_STR(v1, "/process_api/abc");
	CHECK_STR(v2, "/");
	CHECK_INT(vmc_cgroup_parse("0::/user.slice/user-0.slice/session-1.scope\n", v1, sizeof v1,
				   v2, sizeof v2),
		  0);
	CHECK_STR(v1, "");
	CHECK_STR(v2, "/user.slice/user-0.slice/session-1.scope");
	/* "memoryx" is not "memory"; a v1 line without memory is no answer. */
	CHECK_INT(vmc_cgroup_parse("3:memoryx:/a\n2:cpu:/b\n", v1, sizeof v1, v2, sizeof v2), -1);
	CHECK_INT(vmc_cgroup_parse("", v1, sizeof v1, v2, sizeof v2), -1);
	CHECK_INT(vmc_cgroup_parse("garbage without colons", v1, sizeof v1, v2, sizeof v2), -1);
}

static void write_u64(const char *path, uint64_t v)
{
	char text[32];
	snprintf(text, sizeof text, "%llu\n", (unsigned long long)v);
	fakeroot_write(path, text);
}

TEST(v1_nested_limits_take_the_tightest_room)
{
	fakeroot_remove("/proc");
	fakeroot_remove("/sys");
	fakeroot_write("/proc/self/cgroup", "4:memory:/a/b\n0::/\n");
	write_u64("/sys/fs/cgroup/memory/memory.limit_in_bytes", 9223372036854771712ull);
	write_u64("/sys/fs/cgroup/memory/memory.usage_in_bytes", 20 * GIB);
	write_u64("/sys/fs/cgroup/memory/a/memory.limit_in_bytes", 4 * GIB);
	write_u64("/sys/fs/cgroup/memory/a/memory.usage_in_bytes", 1 * GIB);
	write_u64("/sys/fs/cgroup/memory/a/b/memory.limit_in_bytes", 3 * GIB);
	write_u64("/sys/fs/cgroup/memory/a/b/memory.usage_in_bytes", 2 * GIB + 512 * MIB);
	struct vmc_memory_limit l;
	CHECK_INT(vmc_cgroup_memory_limit(&l), 0);
	CHECK(l.limited);
	CHECK_U64(l.limit, 3 * GIB);
	CHECK_U64(l.room, 512 * MIB);
	CHECK_STR(l.where, "/sys/fs/cgroup/memory/a/b");
	/* The parent is the tighter one now. */
	write_u64("/sys/fs/cgroup/memory/a/memory.usage_in_bytes", 3 * GIB + 768 * MIB);
	CHECK_INT(vmc_cgroup_memory_limit(&l), 0);
	CHECK_U64(l.room, 256 * MIB);
	CHECK_STR(l.where, "/sys/fs/cgroup/memory/a");
	/* Usage over the limit leaves no room, never a wrapped-around one. */
	write_u64("/sys/fs/cgroup/memory/a/b/memory.usage_in_bytes", 5 * GIB);
	CHECK_INT(vmc_cgroup_memory_limit(&l), 0);
	CHECK_U64(l.room, 0);
}

TEST(v2_max_means_no_limit_and_the_parent_limits)
{
	fakeroot_remove("/proc");
	fakeroot_remove("/sys");
	fakeroot_write("/proc/self/cgroup", "0::/user.slice/x.scope\n");
	fakeroot_write("/sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
	fakeroot_write("/sys/fs/cgroup/user.slice/memory.max", "2147483648\n");
	write_u64("/sys/fs/cgroup/user.slice/memory.current", 1536 * MIB);
	fakeroot_write("/sys/fs/cgroup/user.slice/x.scope/memory.max", "max\n");
	write_u64("/sys/fs/cgroup/user.slice/x.scope/memory.current", 10 * MIB);
	struct vmc_memory_limit l;
	CHECK_INT(vmc_cgroup_memory_limit(&l), 0);
	CHECK(l.limited);
	CHECK_U64(l.limit, 2 * GIB);
	CHECK_U64(l.room, 512 * MIB);
	CHECK_STR(l.where, "/sys/fs/cgroup/user.slice");
}

TEST(v2_namespace_root_limit)
{
	/* In a container the cgroup namespace root is "/" and carries the container's limit. */
	fakeroot_remove("/proc");
	fakeroot_remove("/sys");
	fakeroot_write("/proc/self/cgroup", "0::/\n");
	fakeroot_write("/sys/fs/cgroup/memory.max", "1073741824\n");
	write_u64("/sys/fs/cgroup/memory.current", 100 * MIB);
	struct vmc_memory_limit l;
	CHECK_INT(vmc_cgroup_memory_limit(&l), 0);
	CHECK(l.limited);
	CHECK_U64(l.room, 924 * MIB);
	CHECK_STR(l.where, "/sys/fs/cgroup");
}

TEST(no_limit_anywhere)
{
	fakeroot_remove("/proc");
	fakeroot_remove("/sys");
	fakeroot_write("/proc/self/cgroup", "0::/\n");
	struct vmc_memory_limit l;
	CHECK_INT(vmc_cgroup_memory_limit(&l), 0);
	CHECK(!l.limited);
	/* A hybrid host whose v1 memory hierarchy is unlimited all the way up. */
	fakeroot_write("/proc/self/cgroup", "4:memory:/a\n0::/\n");
	write_u64("/sys/fs/cgroup/memory/memory.limit_in_bytes", 9223372036854771712ull);
	write_u64("/sys/fs/cgroup/memory/a/memory.limit_in_bytes", 9223372036854771712ull);
	write_u64("/sys/fs/cgroup/memory/a/memory.usage_in_bytes", GIB);
	CHECK_INT(vmc_cgroup_memory_limit(&l), 0);
	CHECK(!l.limited);
	/* No /proc/self/cgroup: an error, with errno. */
	fakeroot_remove("/proc");
	CHECK_INT(vmc_cgroup_memory_limit(&l), -1);
	CHECK_INT(errno, ENOENT);
}

int main(void)
{
	fakeroot_init();
	RUN(parse_v1_v2_and_hybrid);
	RUN(v1_nested_limits_take_the_tightest_room);
	RUN(v2_max_means_no_limit_and_the_parent_limits);
	RUN(v2_namespace_root_limit);
	RUN(no_limit_anywhere);
	fakeroot_cleanup();
	return check_done();
}
