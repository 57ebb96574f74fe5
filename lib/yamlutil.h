/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A YAML document loaded with libyaml's document API (aliases resolved by libyaml), plus the few
 * accessors every reader needs: map lookup, scalar text and the line a node starts on, so config
 * errors can name file, line and key.
 */
#ifndef VMC_YAMLUTIL_H
#define VMC_YAMLUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

struct vmc_yaml {
	yaml_document_t doc;
	bool loaded;
};

/* Loads the first document. On failure returns -1 and writes "line L, column C: problem". */
int vmc_yaml_load(struct vmc_yaml *y, const char *buf, size_t len, char *err, size_t errsize);
void vmc_yaml_free(struct vmc_yaml *y);

/* NULL for an empty document. */
yaml_node_t *vmc_yaml_root(struct vmc_yaml *y);
/* Value node for key in a mapping node; NULL if absent or if map is not a mapping. */
yaml_node_t *vmc_yaml_get(struct vmc_yaml *y, yaml_node_t *map, const char *key);
/* Scalar text, or NULL if the node is not a scalar. */
const char *vmc_yaml_scalar(const yaml_node_t *node);
/* True for a plain (unquoted) scalar equal to null, ~ or empty. */
bool vmc_yaml_is_null(const yaml_node_t *node);
/* 1-based line where the node starts. */
int vmc_yaml_line(const yaml_node_t *node);
/* Node by libyaml index (pairs and sequence items store indexes). */
yaml_node_t *vmc_yaml_node(struct vmc_yaml *y, int index);

/* Number of pairs / items; 0 if the node has another type. */
size_t vmc_yaml_map_size(const yaml_node_t *map);
size_t vmc_yaml_seq_size(const yaml_node_t *seq);
/* i-th pair of a mapping: key scalar text (NULL if not a scalar) and value node. */
const char *vmc_yaml_map_key(struct vmc_yaml *y, const yaml_node_t *map, size_t i,
			     yaml_node_t **value);
yaml_node_t *vmc_yaml_seq_item(struct vmc_yaml *y, const yaml_node_t *seq, size_t i);

/* YAML 1.1/1.2 booleans as Lima (go-yaml) reads them: true/false/yes/no/on/off. */
int vmc_yaml_bool(const yaml_node_t *node, bool *value);

#endif
