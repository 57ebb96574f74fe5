/* SPDX-License-Identifier: Apache-2.0 */
#include "yamlutil.h"

#include "message.h"
#include "readfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int vmc_yaml_load(struct vmc_yaml *y, const char *buf, size_t len, char *err, size_t errsize)
{
	yaml_parser_t parser;
	memset(y, 0, sizeof *y);
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &y->doc)) {
		snprintf(err, errsize, "line %zu, column %zu: %s%s%s", parser.problem_mark.line + 1,
			 parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "invalid YAML",
			 parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return -1;
	}
	yaml_parser_delete(&parser);
	y->loaded = true;
	return 0;
}

void vmc_yaml_free(struct vmc_yaml *y)
{
	if (y->loaded)
		yaml_document_delete(&y->doc);
	y->loaded = false;
}

yaml_node_t *vmc_yaml_root(struct vmc_yaml *y)
{
	return y->loaded ? yaml_document_get_root_node(&y->doc) : NULL;
}

yaml_node_t *vmc_yaml_node(struct vmc_yaml *y, int index)
{
	return yaml_document_get_node(&y->doc, index);
}

const char *vmc_yaml_scalar(const yaml_node_t *node)
{
	if (!node || node->type != YAML_SCALAR_NODE)
		return NULL;
	return (const char *)node->data.scalar.value;
}

bool vmc_yaml_is_null(const yaml_node_t *node)
{
	if (!node || node->type != YAML_SCALAR_NODE ||
	    node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	const char *s = (const char *)node->data.scalar.value;
	return *s == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
	       strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

int vmc_yaml_line(const yaml_node_t *node)
{
	return node ? (int)node->start_mark.line + 1 : 0;
}

size_t vmc_yaml_map_size(const yaml_node_t *map)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return 0;
	return (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
}

size_t vmc_yaml_seq_size(const yaml_node_t *seq)
{
	if (!seq || seq->type != YAML_SEQUENCE_NODE)
		return 0;
	return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

const char *vmc_yaml_map_key(struct vmc_yaml *y, const yaml_node_t *map, size_t i,
			     yaml_node_t **value)
{
	if (i >= vmc_yaml_map_size(map))
		return NULL;
	yaml_node_pair_t *pair = map->data.mapping.pairs.start + i;
	if (value)
		*value = vmc_yaml_node(y, pair->value);
	return vmc_yaml_scalar(vmc_yaml_node(y, pair->key));
}

yaml_node_t *vmc_yaml_seq_item(struct vmc_yaml *y, const yaml_node_t *seq, size_t i)
{
	if (i >= vmc_yaml_seq_size(seq))
		return NULL;
	return vmc_yaml_node(y, seq->data.sequence.items.start[i]);
}

yaml_node_t *vmc_yaml_get(struct vmc_yaml *y, yaml_node_t *map, const char *key)
{
	size_t n = vmc_yaml_map_size(map);
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *value;
		const char *k = vmc_yaml_map_key(y, map, i, &value);
		if (k && strcmp(k, key) == 0)
			return value;
	}
	return NULL;
}

int vmc_yaml_bool(const yaml_node_t *node, bool *value)
{
	static const char *const yes[] = {"true", "yes", "on", "y"};
	static const char *const no[] = {"false", "no", "off", "n"};
	const char *s = vmc_yaml_scalar(node);
	if (!s)
		return -1;
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*value = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*value = false;
			return 0;
		}
	}
	return -1;
}
