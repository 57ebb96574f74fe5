/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TEST-ONLY stand-in for macOS's <sys/mman.h> (xnu bsd/sys/mman.h;
 * docs/macos.md#footprint-counts-compressed-memory): the madvise advice values macOS adds to
 * POSIX's.
 */
#ifndef VMC_TEST_DARWIN_SYS_MMAN_H
#define VMC_TEST_DARWIN_SYS_MMAN_H

#include <stddef.h>

#define MADV_FREE	   5
#define MADV_FREE_REUSABLE 7
#define MADV_FREE_REUSE	   8

int madvise(void *addr, size_t len, int advice);

#endif
