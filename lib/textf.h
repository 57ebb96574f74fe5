/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snprintf for messages: truncation of a long path in an error line is acceptable and wanted,
 * so it is done on purpose here instead of silencing -Wformat-truncation at every call.
 */
#ifndef VMC_TEXTF_H
#define VMC_TEXTF_H

#include <stddef.h>

/* Formats into buf (always NUL-terminated when size > 0); returns buf. */
__attribute__((format(printf, 3, 4))) char *textf(char *buf, size_t size, const char *fmt, ...);

#endif
