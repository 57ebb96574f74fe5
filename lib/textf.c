/* SPDX-License-Identifier: Apache-2.0 */
#include "textf.h"

#include <stdarg.h>
#include <stdio.h>

char *textf(char *buf, size_t size, const char *fmt, ...)
{
	if (size == 0)
		return buf;
	va_list ap;
	va_start(ap, fmt);
	if (vsnprintf(buf, size, fmt, ap) < 0)
		buf[0] = '\0';
	va_end(ap);
	return buf;
}
