/* SPDX-License-Identifier: Apache-2.0 */
/* lib/readfile.c: the cap is exact, pseudo-files of size 0 read fully, and errno says why. */
#include "check.h"
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/vmc-lib-readfile-XXXXXX";
static char path[256];

static void write_bytes(size_t n)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	for (size_t i = 0; i < n; i++)
		fputc('a' + (int)(i % 26), f);
	fclose(f);
}

TEST(a_file_of_exactly_the_cap_is_read_one_more_byte_is_efbig)
{
	char *buf = NULL;
	size_t len = 0;
	for (size_t cap = 1; cap < 10000; cap = cap * 3 + 1) {
		write_bytes(cap);
		CHECK_INT(vmc_read_file(path, cap, &buf, &len), 0);
		CHECK_U64(len, cap);
		CHECK_INT(buf[len], '\0');
		CHECK_INT(buf[cap - 1], 'a' + (int)((cap - 1) % 26));
		free(buf);
		write_bytes(cap + 1);
		errno = 0;
		CHECK_INT(vmc_read_file(path, cap, &buf, &len), -1);
		CHECK_INT(errno, EFBIG);
	}
}

TEST(empty_file_and_no_length_wanted)
{
	char *buf = NULL;
	write_bytes(0);
	CHECK_INT(vmc_read_file(path, 0, &buf, NULL), 0);
	CHECK_STR(buf, "");
	free(buf);
}

TEST(errors_keep_errno)
{
	char *buf = NULL;
	errno = 0;
	CHECK_INT(vmc_read_file("/nonexistent-vmcost/x", 10, &buf, NULL), -1);
	CHECK_INT(errno, ENOENT);
	errno = 0;
	CHECK_INT(vmc_read_file(dir, 10, &buf, NULL), -1);
	CHECK_INT(errno, EISDIR);
}

/* /proc files report st_size 0: reading goes on to EOF, across buffer growth. */
TEST(proc_files_are_read_to_eof)
{
	char *buf = NULL;
	size_t len = 0;
	CHECK_INT(vmc_read_file("/proc/self/status", 1 << 20, &buf, &len), 0);
	CHECK(len > 100);
	CHECK_CONTAINS(buf, "\nPid:");
	free(buf);
}

TEST(a_pipe_larger_than_one_buffer)
{
	int fds[2];
	CHECK_INT(pipe(fds), 0);
	char chunk[1000];
	memset(chunk, 'x', sizeof chunk);
	for (int i = 0; i < 9; i++)
		CHECK_INT(write(fds[1], chunk, sizeof chunk), (long long)sizeof chunk);
	close(fds[1]);
	char *buf = NULL;
	size_t len = 0;
	CHECK_INT(vmc_read_fd(fds[0], 9000, &buf, &len), 0);
	CHECK_U64(len, 9000);
	CHECK_INT(buf[8999], 'x');
	free(buf);
	close(fds[0]);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 2;
	snprintf(path, sizeof path, "%s/file", dir);
	RUN(a_file_of_exactly_the_cap_is_read_one_more_byte_is_efbig);
	RUN(empty_file_and_no_length_wanted);
	RUN(errors_keep_errno);
	RUN(proc_files_are_read_to_eof);
	RUN(a_pipe_larger_than_one_buffer);
	unlink(path);
	rmdir(dir);
	return check_done();
}
