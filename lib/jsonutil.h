/* SPDX-License-Identifier: Apache-2.0 */
/* jansson helpers shared by vmcost and vmcost-agent. */
#ifndef VMC_JSONUTIL_H
#define VMC_JSONUTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Writes j (indented, keys in insertion order) and a newline. Returns 0 or -1. */
int vmc_json_write(FILE *f, const json_t *j);
/* Dumps j into a malloc'd compact string (caller frees); NULL on failure. */
char *vmc_json_compact(const json_t *j);

/* Byte counts stay exact up to 2^63; larger values (never seen) are clamped. */
json_t *vmc_json_u64(uint64_t v);
/* Reads an integer member >= 0; returns -1 if missing or of another type. */
int vmc_json_get_u64(const json_t *obj, const char *key, uint64_t *v);
/* String member or NULL. */
const char *vmc_json_get_str(const json_t *obj, const char *key);
/* String member, or fallback when it is missing or not a string: for printing with %s. */
const char *vmc_json_get_str_or(const json_t *obj, const char *key, const char *fallback);

#endif
