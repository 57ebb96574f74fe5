/* SPDX-License-Identifier: Apache-2.0 */
/* TEST-ONLY stand-in for macOS's <sys/sysctl.h>: the one call vmcost makes. */
#ifndef VMC_TEST_DARWIN_SYS_SYSCTL_H
#define VMC_TEST_DARWIN_SYS_SYSCTL_H

#include <stddef.h>

int sysctlbyname(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

#endif
