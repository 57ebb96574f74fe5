/* SPDX-License-Identifier: Apache-2.0 */
#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

int vmc_parse_decimal(const char **p, double *value)
{
	const char *s = *p;
	size_t len = strspn(s, "0123456789."), dots = 0;
	for (size_t i = 0; i < len; i++)
		dots += s[i] == '.';
	if (len == dots || dots > 1) /* no digit at all, or "1.2.3" */
		return -1;
	/* strtod on a bounded copy: the text after the number may be anything (units, "%"). */
	char tmp[64];
	if (len >= sizeof tmp)
		return -1;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	*value = strtod(tmp, NULL);
	*p = s + len;
	return 0;
}

static int size_unit_shift(const char *unit, unsigned *shift)
{
	static const char letters[] = "bkmgtp";
	if (*unit == '\0') {
		*shift = 0;
		return 0;
	}
	const char *hit = strchr(letters, tolower((unsigned char)*unit));
	if (!hit)
		return -1;
	*shift = (unsigned)(hit - letters) * 10;
	const char *rest = unit + 1;
	if (*shift == 0)
		return *rest == '\0' ? 0 : -1;
	if (tolower((unsigned char)*rest) == 'i')
		rest++;
	if (tolower((unsigned char)*rest) == 'b')
		rest++;
	return *rest == '\0' ? 0 : -1;
}

/* "1.5 GiB " -> 1.5 and "GiB": a decimal, then a short unit, blanks around both ignored. */
static int number_and_unit(const char *s, double *value, char unit[8])
{
	if (!s)
		return -1;
	const char *end = skip_space(s);
	if (vmc_parse_decimal(&end, value) < 0)
		return -1;
	end = skip_space(end);
	size_t ulen = strlen(end);
	while (ulen > 0 && isspace((unsigned char)end[ulen - 1]))
		ulen--;
	if (ulen >= 8)
		return -1;
	memcpy(unit, end, ulen);
	unit[ulen] = '\0';
	return 0;
}

int vmc_parse_size(const char *s, uint64_t *bytes)
{
	double value;
	char unit[8];
	if (number_and_unit(s, &value, unit) < 0)
		return -1;
	unsigned shift;
	if (size_unit_shift(unit, &shift) < 0)
		return -1;
	/* round() in double, then the conversion: llround() would go through a signed 64-bit value
	 * and overflow between 2^63 and 2^64. Below 2^64, doubles are 2048 apart at most, so the
	 * rounded value stays below 2^64 too. */
	double result = round(ldexp(value, (int)shift));
	if (!(result < 18446744073709551616.0))
		return -1;
	*bytes = (uint64_t)result;
	return 0;
}

int vmc_parse_duration(const char *s, double *seconds)
{
	double value;
	char end[8];
	if (number_and_unit(s, &value, end) < 0)
		return -1;
	double scale;
	if (*end == '\0' || strcasecmp(end, "s") == 0 || strcasecmp(end, "sec") == 0)
		scale = 1;
	else if (strcasecmp(end, "ms") == 0)
		scale = 0.001;
	else if (strcasecmp(end, "m") == 0 || strcasecmp(end, "min") == 0)
		scale = 60;
	else if (strcasecmp(end, "h") == 0)
		scale = 3600;
	else
		return -1;
	*seconds = value * scale;
	return 0;
}

char *vmc_format_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)bytes;
	unsigned i = 0;
	while (v >= 1024.0 && i < 5) {
		v /= 1024.0;
		i++;
	}
	if (i == 0)
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
	else if (v < 10.0)
		snprintf(buf, size, "%.2f %s", v, units[i]);
	else if (v < 100.0)
		snprintf(buf, size, "%.1f %s", v, units[i]);
	else
		snprintf(buf, size, "%.0f %s", v, units[i]);
	return buf;
}

char *vmc_format_bytes_delta(int64_t bytes, char *buf, size_t size)
{
	uint64_t magnitude = bytes < 0 ? (uint64_t)(-(bytes + 1)) + 1 : (uint64_t)bytes;
	char tmp[32];
	vmc_format_bytes(magnitude, tmp, sizeof tmp);
	snprintf(buf, size, "%s%s", bytes < 0 ? "-" : "+", tmp);
	return buf;
}

char *vmc_format_duration(double seconds, char *buf, size_t size)
{
	if (seconds < 1.0)
		snprintf(buf, size, "%.0f ms", seconds * 1000.0);
	else if (seconds < 60.0)
		snprintf(buf, size, "%.1f s", seconds);
	else if (seconds < 3600.0) {
		long total = lround(seconds);
		snprintf(buf, size, "%ld min %02ld s", total / 60, total % 60);
	} else {
		long total = lround(seconds / 60.0);
		snprintf(buf, size, "%ld h %02ld min", total / 60, total % 60);
	}
	return buf;
}
