/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading a whole file into memory, with a cap: the one way vmcost reads configs, instance
 * files and /proc. Reads until EOF (pseudo-files report size 0), so it never trusts st_size.
 * And its other half: writing a whole buffer.
 */
#ifndef VMC_READFILE_H
#define VMC_READFILE_H

#include <stddef.h>

/*
 * Reads fd to EOF into a malloc'd, NUL-terminated buffer (*len excludes the NUL; len may be
 * NULL). Returns 0, or -1 with errno kept from the failing call: EISDIR for a directory, EACCES,
 * EIO..., EFBIG when there is more than max_bytes, ENOMEM. Does not close fd.
 */
int vmc_read_fd(int fd, size_t max_bytes, char **out, size_t *len);
/* The same for a path (opened read-only, close-on-exec); ENOENT, EACCES... from open(). */
int vmc_read_file(const char *path, size_t max_bytes, char **out, size_t *len);

/* Writes all len bytes of buf to fd, again after a short write or EINTR: 0, or -1 with errno. */
int vmc_write_all(int fd, const void *buf, size_t len);

#endif
