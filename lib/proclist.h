/* SPDX-License-Identifier: Apache-2.0 */
/* Which processes and threads exist (numeric entries of /proc and /proc/PID/task), and argv. */
#ifndef VMC_PROCLIST_H
#define VMC_PROCLIST_H

#include <stddef.h>
#include <sys/types.h>

/* Ascending ids into a malloc'd array (caller frees). -1 with errno. */
int vmc_proc_list(pid_t **ids, size_t *n);
/* Threads of pid (ENOENT if it exited). */
int vmc_proc_tasks(pid_t pid, pid_t **ids, size_t *n);
/*
 * /proc/PID/cmdline with the NUL separators turned into blanks (kernel threads: ""). Returns 0
 * or -1 with errno.
 */
int vmc_proc_cmdline_read(pid_t pid, char *buf, size_t size);
/* The same conversion on a raw buffer of len bytes (in place, NUL-terminated at len). */
void vmc_proc_cmdline_join(char *buf, size_t len);

#endif
