/* SPDX-License-Identifier: Apache-2.0 */
#include "jsonutil.h"

#include <stdlib.h>

int vmc_json_write(FILE *f, const json_t *j)
{
	if (json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
		return -1;
	return fputc('\n', f) == EOF ? -1 : 0;
}

char *vmc_json_compact(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
}

json_t *vmc_json_u64(uint64_t v)
{
	if (v > (uint64_t)INT64_MAX)
		v = (uint64_t)INT64_MAX;
	return json_integer((json_int_t)v);
}

int vmc_json_get_u64(const json_t *obj, const char *key, uint64_t *v)
{
	json_t *m = json_object_get(obj, key);
	if (!json_is_integer(m) || json_integer_value(m) < 0)
		return -1;
	*v = (uint64_t)json_integer_value(m);
	return 0;
}

const char *vmc_json_get_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

const char *vmc_json_get_str_or(const json_t *obj, const char *key, const char *fallback)
{
	const char *s = vmc_json_get_str(obj, key);
	return s ? s : fallback;
}
