/* SPDX-License-Identifier: Apache-2.0 */
#include "color.h"

#include <string.h>

const char *vmc_status_color(const char *status, bool color)
{
	if (!color)
		return "";
	if (!status)
		return "\033[2m";
	if (strcmp(status, "ok") == 0)
		return "\033[32m";
	if (strcmp(status, "warn") == 0)
		return "\033[33m";
	if (strcmp(status, "fail") == 0)
		return "\033[31m";
	return "\033[2m";
}

const char *vmc_color_reset(bool color)
{
	return color ? "\033[0m" : "";
}
