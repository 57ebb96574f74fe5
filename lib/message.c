/* SPDX-License-Identifier: Apache-2.0 */
#include "message.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

char *vmc_textf(char *buf, size_t size, const char *fmt, ...)
{
	if (size == 0)
		return buf;
	int saved_errno = errno;
	va_list ap;
	va_start(ap, fmt);
	if (vsnprintf(buf, size, fmt, ap) < 0)
		buf[0] = '\0';
	va_end(ap);
	errno = saved_errno;
	return buf;
}

char *vmc_verrorf(char *buf, size_t size, const char *fmt, va_list ap)
{
	if (size == 0)
		return buf;
	int saved_errno = errno;
	size_t fmt_len = strlen(fmt);
	bool wants_reason = fmt_len > 0 && fmt[fmt_len - 1] == ':';
	const char *reason = wants_reason && saved_errno != 0 ? strerror(saved_errno) : NULL;
	/* Keep room for " reason" so a long path cuts the message, not the reason. */
	size_t reason_room = reason ? strlen(reason) + 1 : 0;
	size_t msg_size = reason_room + 2 <= size ? size - reason_room : size;
	if (vsnprintf(buf, msg_size, fmt, ap) < 0)
		buf[0] = '\0';
	size_t len = strlen(buf);
	if (wants_reason && !reason) {
		if (len > 0 && buf[len - 1] == ':')
			buf[len - 1] = '\0';
	} else if (reason && msg_size < size) {
		if (len > 0)
			buf[len - 1] = ':'; /* a cut message still reads "…: reason" */
		snprintf(buf + len, size - len, " %s", reason);
	}
	errno = saved_errno;
	return buf;
}

char *vmc_errorf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmc_verrorf(buf, size, fmt, ap);
	va_end(ap);
	return buf;
}
