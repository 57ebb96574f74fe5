/* SPDX-License-Identifier: Apache-2.0 */
/* Sizes and durations as people type them ("6GiB", "512M", "2m", "500ms") and as we print them. */
#ifndef VMC_UNITS_H
#define VMC_UNITS_H

#include <stddef.h>
#include <stdint.h>

/*
 * A plain decimal number at *p: digits with at most one '.' and at least one digit ("0.5", "12",
 * ".5", "5."); no sign, exponent, hex, inf or nan, and no locale. Advances *p past it. Returns 0,
 * or -1 (*p unchanged) when *p does not start with such a number.
 */
int vmc_parse_decimal(const char **p, double *value);

/*
 * Parse a size the way Lima does (go-units RAMInBytes): a decimal number, optional space, then
 * an optional unit b, k, m, g, t, p with optional "i" and "b" (case-insensitive). Every unit is
 * binary: "4G" == "4GiB" == 4 * 2^30. Returns 0, or -1 for empty, negative, junk or overflow.
 */
int vmc_parse_size(const char *s, uint64_t *bytes);

/*
 * Parse a duration: a plain number is seconds; suffixes ms, s, m/min, h. Returns 0 or -1.
 */
int vmc_parse_duration(const char *s, double *seconds);

/* "1.5 GiB", "812 MiB", "4.0 KiB", "17 B" into buf; returns buf. */
char *vmc_format_bytes(uint64_t bytes, char *buf, size_t size);
/* Same for a signed difference: "+1.2 GiB", "-800 MiB". */
char *vmc_format_bytes_delta(int64_t bytes, char *buf, size_t size);
/* "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min". */
char *vmc_format_duration(double seconds, char *buf, size_t size);

#define VMC_KIB ((uint64_t)1024)
#define VMC_MIB (VMC_KIB * 1024)
#define VMC_GIB (VMC_MIB * 1024)

#endif
