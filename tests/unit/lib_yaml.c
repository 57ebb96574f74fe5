/* SPDX-License-Identifier: Apache-2.0 */
#include "check.h"
#include "yamlutil.h"

static const char doc[] = "# lima.yaml\n"
			  "vmType: qemu\n"
			  "memory: \"4GiB\"\n"
			  "cpus: 4\n"
			  "anchor: &a {x: 1}\n"
			  "alias: *a\n"
			  "empty:\n"
			  "flag: yes\n"
			  "portForwards:\n"
			  "- guestSocket: /run/vmcost-agent.sock\n"
			  "  hostSocket: \"{{.Dir}}/sock/vmcost-agent.sock\"\n";

TEST(map_lookup_with_lines)
{
	struct vmc_yaml y;
	char err[256];
	CHECK_INT(vmc_yaml_load(&y, doc, sizeof doc - 1, err, sizeof err), 0);
	yaml_node_t *root = vmc_yaml_root(&y);
	CHECK_STR(vmc_yaml_scalar(vmc_yaml_get(&y, root, "vmType")), "qemu");
	CHECK_STR(vmc_yaml_scalar(vmc_yaml_get(&y, root, "memory")), "4GiB");
	CHECK_INT(vmc_yaml_line(vmc_yaml_get(&y, root, "cpus")), 4);
	CHECK(vmc_yaml_is_null(vmc_yaml_get(&y, root, "empty")));
	bool flag = false;
	CHECK_INT(vmc_yaml_bool(vmc_yaml_get(&y, root, "flag"), &flag), 0);
	CHECK(flag);
	yaml_node_t *alias = vmc_yaml_get(&y, root, "alias");
	CHECK_STR(vmc_yaml_scalar(vmc_yaml_get(&y, alias, "x")), "1");
	yaml_node_t *pf = vmc_yaml_get(&y, root, "portForwards");
	CHECK_INT(vmc_yaml_seq_size(pf), 1);
	yaml_node_t *first = vmc_yaml_seq_item(&y, pf, 0);
	CHECK_STR(vmc_yaml_scalar(vmc_yaml_get(&y, first, "hostSocket")),
		  "{{.Dir}}/sock/vmcost-agent.sock");
	CHECK(vmc_yaml_get(&y, root, "absent") == NULL);
	CHECK(vmc_yaml_get(&y, pf, "x") == NULL);
	CHECK_INT(vmc_yaml_map_size(root), 8);
	vmc_yaml_free(&y);
}

TEST(syntax_error_names_the_line)
{
	struct vmc_yaml y;
	char err[256] = "";
	const char bad[] = "a: 1\nb: [1, 2\nc: 3\n";
	CHECK_INT(vmc_yaml_load(&y, bad, sizeof bad - 1, err, sizeof err), -1);
	CHECK_CONTAINS(err, "line ");
	vmc_yaml_free(&y);
}

TEST(empty_document_has_no_root)
{
	struct vmc_yaml y;
	char err[64];
	CHECK_INT(vmc_yaml_load(&y, "", 0, err, sizeof err), 0);
	CHECK(vmc_yaml_root(&y) == NULL);
	vmc_yaml_free(&y);
}

int main(void)
{
	RUN(map_lookup_with_lines);
	RUN(syntax_error_names_the_line);
	RUN(empty_document_has_no_root);
	return check_done();
}
