/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Messages for people, written into the caller's fixed-size buffer. Functions that can fail take
 * (char *err, size_t errsize), write one line there and return an exit code; the command prints
 * it (cli_fail, die). Truncating a long path in such a line is acceptable and wanted, so it is
 * done on purpose here instead of silencing -Wformat-truncation at every call.
 *
 * The error idiom, the same for vmc_errorf(), vmc_die(), vmc_warn() and cli_fail(): a format that
 *ends in
 * ':' gets " " and strerror(errno) appended, errno as it was when the call was made:
 *
 *	if (vmc_read_file(path, max, &buf, &len) < 0)
 *		return vmc_errorf(err, errsize, "cannot read %s:", path), VMC_EXIT_FAILURE;
 *	-> "cannot read /x/lima.yaml: Is a directory"
 *
 * errno is left as it was, so a caller can still choose an exit code from it afterwards.
 */
#ifndef VMC_MESSAGE_H
#define VMC_MESSAGE_H

#include <stdarg.h>
#include <stddef.h>

/* Formats into buf (always NUL-terminated when size > 0); returns buf. No ':' rule. */
__attribute__((format(printf, 3, 4))) char *vmc_textf(char *buf, size_t size, const char *fmt, ...);

/*
 * An error message: vmc_textf() plus the ':' rule. When the line is too long, the message is cut,
 * never the reason. errno 0 (nothing said why) drops the trailing ':' instead of appending
 * "Success". Returns buf; errno unchanged.
 */
__attribute__((format(printf, 3, 4))) char *vmc_errorf(char *buf, size_t size, const char *fmt,
						       ...);
__attribute__((format(printf, 3, 0))) char *vmc_verrorf(char *buf, size_t size, const char *fmt,
							va_list ap);

#endif
