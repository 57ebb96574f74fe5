/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel log through /dev/kmsg (no klogctl, so tests can put a plain file at
 * <root>/dev/kmsg). Records look like "6,339,5140900,-;mem auto-init: ...\n" followed by
 * optional continuation lines " SUBSYSTEM=...". The device returns one record per read; a plain
 * file returns arbitrary chunks: both are handled as a stream of lines.
 */
#ifndef VMC_KMSG_H
#define VMC_KMSG_H

#include <stddef.h>

/* Message text of one record line (after the first ';'), NULL for continuation/garbage lines. */
const char *vmc_kmsg_text(const char *line);

/*
 * Calls fn with each message text (NUL-terminated, no newline) from the oldest record kept in
 * the ring buffer; stops early when fn returns non-zero. Returns 0, or -1 with errno (EACCES
 * without CAP_SYSLOG under dmesg_restrict, ENOENT).
 */
int vmc_kmsg_scan(int (*fn)(const char *text, void *ctx), void *ctx);

#endif
