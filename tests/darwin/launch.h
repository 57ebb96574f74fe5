/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TEST-ONLY stand-in for macOS's <launch.h>: the one function
 * docs/macos.md#launchd-socket-activation describes, so host/platform/platform_darwin.c can be
 * compile-checked on Linux. Never used to build a real binary.
 */
#ifndef VMC_TEST_DARWIN_LAUNCH_H
#define VMC_TEST_DARWIN_LAUNCH_H

#include <stddef.h>

int launch_activate_socket(const char *name, int **fds, size_t *cnt);

#endif
