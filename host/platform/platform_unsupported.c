/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Any other OS: the core builds and every command says plainly that it cannot measure here
 * (ENOTSUP -> exit code 9) instead of printing zeros.
 */
#include "platform/platform.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

const char *platform_os_name(void)
{
	return "unsupported";
}

int platform_proc_sample(pid_t pid, struct platform_proc_sample *out)
{
	(void)pid;
	memset(out, 0, sizeof *out);
	errno = ENOTSUP;
	return -1;
}

int platform_proc_detail(pid_t pid, struct platform_proc_detail *out)
{
	(void)pid;
	memset(out, 0, sizeof *out);
	errno = ENOTSUP;
	return -1;
}

int platform_host_memory(struct platform_host_memory *out)
{
	memset(out, 0, sizeof *out);
	errno = ENOTSUP;
	return -1;
}

bool platform_pid_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

int platform_proc_path(pid_t pid, char *buf, size_t size)
{
	(void)pid;
	if (size)
		buf[0] = '\0';
	errno = ENOTSUP;
	return -1;
}

int platform_proc_uid(pid_t pid, uid_t *uid)
{
	(void)pid;
	(void)uid;
	errno = ENOTSUP;
	return -1;
}

int platform_vz_helpers(pid_t *pids, size_t max, size_t *n)
{
	(void)pids;
	(void)max;
	*n = 0;
	errno = ENOTSUP;
	return -1;
}

pid_t platform_responsible_pid(pid_t pid)
{
	(void)pid;
	return -1;
}

bool platform_has_responsibility(void)
{
	return false;
}

int platform_proc_switches(pid_t pid, uint64_t *voluntary, uint64_t *involuntary)
{
	(void)pid;
	*voluntary = *involuntary = 0;
	errno = ENOTSUP;
	return -1;
}

int platform_activated_socket(const char *name)
{
	(void)name;
	errno = ENOTSUP;
	return -1;
}

int platform_memory_limit(struct platform_memory_limit *out)
{
	memset(out, 0, sizeof *out);
	return 0;
}

int platform_release_pages(void *addr, size_t len)
{
	(void)addr;
	(void)len;
	errno = ENOTSUP;
	return -1;
}

const char *platform_release_method(void)
{
	return "none";
}

int platform_tick_clock_check(double seconds, struct platform_clock_check *out)
{
	(void)seconds;
	memset(out, 0, sizeof *out);
	errno = ENOTSUP;
	return -1;
}
