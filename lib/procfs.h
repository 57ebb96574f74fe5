/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one place every /proc and /sys reader takes its root from, so tests run on fake trees
 * (earlyoom's procdir_path idea). Parsing always works on a buffer, separate from file I/O.
 */
#ifndef VMC_PROCFS_H
#define VMC_PROCFS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Prefix for absolute paths under /proc, /sys, /etc, /var ... ("" = the real root). */
void vmc_fs_set_root(const char *root);
const char *vmc_fs_root(void);

/* Builds root + formatted absolute path into buf. Returns buf, or NULL if it did not fit. */
__attribute__((format(printf, 3, 4))) char *vmc_fs_path(char *buf, size_t size, const char *fmt,
							...);

/*
 * Reads a whole (pseudo-)file below the root into a malloc'd NUL-terminated buffer. /proc files
 * report size 0, so this reads until EOF. Returns 0, or -1 with errno set (ENOENT, EACCES,
 * EFBIG beyond max_bytes).
 */
int vmc_fs_read(const char *abs_path, char **out, size_t *len, size_t max_bytes);
/* Same into a caller's buffer (no allocation: for hot paths such as one sample). Truncates. */
int vmc_fs_read_buf(const char *abs_path, char *buf, size_t size, size_t *len);
/* First line of a small file, trailing newline removed ("0x0005", "[always] madvise never"). */
int vmc_fs_read_line(const char *abs_path, char *buf, size_t size);
/* Writes a string to a (pseudo-)file below the root; returns 0 or -1 with errno (EAGAIN...). */
int vmc_fs_write(const char *abs_path, const char *data);
bool vmc_fs_exists(const char *abs_path);

/*
 * Line-anchored key lookup: the value after "key" at the start of a line (the key includes its
 * separator, e.g. "MemTotal:" or "voluntary_ctxt_switches:"), leading blanks skipped.
 * Never matches "SwapCached:" for "Cached:". Returns a pointer into buf or NULL.
 */
const char *vmc_find_key(const char *buf, const char *key);
/* vmc_find_key + an unsigned decimal; "kB" suffixed values are multiplied by 1024 if kb. */
int vmc_key_u64(const char *buf, const char *key, uint64_t *value);
int vmc_key_kb(const char *buf, const char *key, uint64_t *bytes);

/* Parses an unsigned decimal at *p, advancing *p; -1 if none. */
int vmc_parse_u64(const char **p, uint64_t *value);

#endif
