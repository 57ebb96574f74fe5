/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TEST-ONLY stand-in for macOS's <sys/mman.h> (xnu bsd/sys/mman.h;
 * docs/macos.md#footprint-counts-compressed-memory): the madvise advice values macOS adds to
 * POSIX's, and the mmap flags vmcost selftest maps its workload with. The values are macOS's,
 * not Linux's (MAP_ANON is 0x1000 there, 0x20 here; Linux's MADV_FREE is 8), so an object
 * compiled against this header is compile-checked only: never map memory with it on Linux.
 */
#ifndef VMC_TEST_DARWIN_SYS_MMAN_H
#define VMC_TEST_DARWIN_SYS_MMAN_H

#include <stddef.h>
#include <sys/types.h>

#define PROT_NONE  0x00
#define PROT_READ  0x01
#define PROT_WRITE 0x02

#define MAP_SHARED    0x0001
#define MAP_PRIVATE   0x0002
#define MAP_ANON      0x1000
#define MAP_ANONYMOUS MAP_ANON
#define MAP_FAILED    ((void *)-1)

#define MADV_FREE	   5
#define MADV_FREE_REUSABLE 7
#define MADV_FREE_REUSE	   8

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset);
int munmap(void *addr, size_t len);
int madvise(void *addr, size_t len, int advice);

#endif
