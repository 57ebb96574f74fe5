/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TEST-ONLY stand-in for macOS's <mach/mach.h>: the types, host_statistics64 and
 * vm_statistics64 as docs/macos.md#host-free-memory describes them (osfmk/mach/vm_statistics.h,
 * host_info.h, mach_host.defs), arm64 sizes.
 */
#ifndef VMC_TEST_DARWIN_MACH_MACH_H
#define VMC_TEST_DARWIN_MACH_MACH_H

#include <stdint.h>

typedef int kern_return_t;
typedef unsigned int natural_t;
typedef int integer_t;
typedef natural_t mach_port_t;
typedef mach_port_t host_t;
typedef integer_t host_flavor_t;
typedef integer_t *host_info64_t;
typedef natural_t mach_msg_type_number_t;
typedef uintptr_t vm_size_t;

#define KERN_SUCCESS   0
#define MACH_PORT_NULL ((mach_port_t)0)

struct vm_statistics64 {
	natural_t free_count; /* includes speculative pages */
	natural_t active_count;
	natural_t inactive_count;
	natural_t wire_count;
	uint64_t zero_fill_count;
	uint64_t reactivations;
	uint64_t pageins;
	uint64_t pageouts;
	uint64_t faults;
	uint64_t cow_faults;
	uint64_t lookups;
	uint64_t hits;
	uint64_t purges;
	natural_t purgeable_count;
	natural_t speculative_count;
	uint64_t decompressions;
	uint64_t compressions;
	uint64_t swapins;
	uint64_t swapouts;
	natural_t compressor_page_count;
	natural_t throttled_count;
	natural_t external_page_count;
	natural_t internal_page_count;
	uint64_t total_uncompressed_pages_in_compressor;
} __attribute__((aligned(8)));
typedef struct vm_statistics64 vm_statistics64_data_t;
typedef struct vm_statistics64 *vm_statistics64_t;

#define HOST_VM_INFO64 4
#define HOST_VM_INFO64_COUNT                                                                       \
	((mach_msg_type_number_t)(sizeof(vm_statistics64_data_t) / sizeof(integer_t)))

kern_return_t host_statistics64(host_t host_priv, host_flavor_t flavor,
				host_info64_t host_info64_out,
				mach_msg_type_number_t *host_info64_outCnt);
mach_port_t mach_host_self(void);

/* Kernel page size (16 KiB on Apple Silicon); scale vm_statistics64 counts by it. */
extern vm_size_t vm_kernel_page_size;
extern vm_size_t vm_page_size;

#endif
