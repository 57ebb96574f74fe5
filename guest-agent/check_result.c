/* SPDX-License-Identifier: Apache-2.0 */
#include "check_result.h"

#include <stdarg.h>
#include <stdio.h>

const char *check_status_name(enum check_status s)
{
	static const char *const names[] = {"ok", "warn", "fail", "n/a"};
	_Static_assert(sizeof names / sizeof names[0] == CHECK_STATUS_COUNT,
		       "a name for every check status");
	return names[s];
}

#define DEFINE_SETTER(name, field)                                                                 \
	void name(struct check *c, const char *fmt, ...)                                           \
	{                                                                                          \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		vsnprintf(c->field, sizeof c->field, fmt, ap);                                     \
		va_end(ap);                                                                        \
	}
DEFINE_SETTER(check_observed, observed)
DEFINE_SETTER(check_why, why)
DEFINE_SETTER(check_fix, fix)
