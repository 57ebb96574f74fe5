/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/message.c and lib/log.c: the one error idiom. A format ending in ':' appends the reason
 * (strerror(errno)) in vmc_errorf(), vmc_die()/vmc_warn() and everything built on them; errno
 * survives.
 */
#include "check.h"
#include "log.h"
#include "message.h"

#include <errno.h>
#include <unistd.h>

static char buf[256];

TEST(trailing_colon_appends_the_reason)
{
	errno = EISDIR;
	vmc_errorf(buf, sizeof buf, "cannot read %s:", "/x/lima.yaml");
	CHECK_STR(buf, "cannot read /x/lima.yaml: Is a directory");
	CHECK_INT(errno, EISDIR);

	errno = ENOENT;
	vmc_errorf(buf, sizeof buf, "socket:");
	CHECK_STR(buf, "socket: No such file or directory");
}

TEST(no_colon_no_reason)
{
	errno = EACCES;
	vmc_errorf(buf, sizeof buf, "instance %s is stopped", "dev");
	CHECK_STR(buf, "instance dev is stopped");
	/* Only the format's own ':' asks for the reason, not one that an argument ends with. */
	vmc_errorf(buf, sizeof buf, "%s", "key:");
	CHECK_STR(buf, "key:");
	/* textf is plain formatting. */
	vmc_textf(buf, sizeof buf, "cannot read %s:", "f");
	CHECK_STR(buf, "cannot read f:");
	CHECK_INT(errno, EACCES);
}

TEST(errno_zero_drops_the_colon)
{
	errno = 0;
	vmc_errorf(buf, sizeof buf, "cannot read %s:", "f");
	CHECK_STR(buf, "cannot read f");
}

TEST(a_long_message_is_cut_never_the_reason)
{
	char small[40];
	errno = EISDIR;
	vmc_errorf(small, sizeof small, "cannot read %s:", "/a/very/long/path/to/some/lima.yaml");
	CHECK_STR(small, "cannot read /a/very/lon: Is a directory");
	CHECK_INT(strlen(small), sizeof small - 1);
	/* Too small for the reason: the message alone, cut, NUL-terminated. */
	char tiny[8];
	vmc_errorf(tiny, sizeof tiny, "cannot read %s:", "f");
	CHECK_STR(tiny, "cannot ");
	vmc_errorf(tiny, 0, "x:");
	CHECK_STR(tiny, "cannot ");
}

/* vmc_warn() and vmc_die() use the same rule (and warn leaves errno alone). */
TEST(warn_follows_the_same_rule)
{
	fflush(stderr);
	int saved = dup(2);
	char path[] = "/tmp/vmc-message-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	dup2(fd, 2);
	errno = ENOTDIR;
	vmc_warn("cannot open %s:", "home");
	int after = errno;
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char text[512] = "";
	ssize_t n = pread(fd, text, sizeof text - 1, 0);
	text[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	CHECK_CONTAINS(text, "warning: cannot open home: Not a directory\n");
	CHECK_INT(after, ENOTDIR);
}

int main(void)
{
	vmc_log_init("vmcost");
	RUN(trailing_colon_appends_the_reason);
	RUN(no_colon_no_reason);
	RUN(errno_zero_drops_the_colon);
	RUN(a_long_message_is_cut_never_the_reason);
	RUN(warn_follows_the_same_rule);
	return check_done();
}
