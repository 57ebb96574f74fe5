/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Lima template linter's own tests (tests/tools/template_lint.c): a template without
 * problems passes, and every check fails on a template built to break it.
 */
#include "check.h"
#include "template_lint.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define FIXTURES "tests/unit/fixtures/templates"

/* ---- bad templates: every check can fail --------------------------------------------------- */

static bool rejects(const char *yaml, const char *needle)
{
	struct template_problems p;
	template_lint_text(yaml, FIXTURES, false, &p);
	bool found = template_problems_has(&p, needle);
	if (!found) {
		fprintf(stderr, "  expected a problem containing \"%s\"; got %d:\n", needle,
			p.count);
		template_problems_print("fixture", &p);
	}
	return found;
}

#define BASE "minimumLimaVersion: 2.2.0\nbase: [template:_images/alpine-3.23]\n"

TEST(fixture_without_problems_passes)
{
	struct template_problems p;
	template_lint_text(BASE
			   "provision:\n- mode: system\n  file: ok.sh\n"
			   "- mode: data\n  path: /etc/x\n  file: ok.sh\n  permissions: \"0644\"\n"
			   "param:\n  greeting: hi\n",
			   FIXTURES, false, &p);
	template_problems_print("fixture", &p);
	CHECK_INT(p.count, 0);
}

TEST(rejects_yaml_errors_and_unknown_or_deprecated_keys)
{
	CHECK(rejects("cpus: [4\n", "YAML: line"));
	CHECK(rejects(BASE "cpu: 4\n", "unknown key \"cpu\""));
	CHECK(rejects(BASE "rosetta:\n  enabled: true\n", "use vmOpts.vz.rosetta"));
	CHECK(rejects(BASE "vmOpts:\n  vz:\n    rosseta: {enabled: true}\n", "\"rosseta\""));
	CHECK(rejects(BASE "containerd: {system: false, usr: false}\n", "\"usr\""));
	CHECK(rejects(BASE "vmType: parallels\n", "not qemu, vz"));
	CHECK(rejects(BASE "mountType: nfs\n", "not reverse-sshfs"));
	CHECK(rejects("cpus: 4\n", "images: must be set"));
}

TEST(rejects_bad_versions_and_bases)
{
	CHECK(rejects("minimumLimaVersion: \"2.2\"\nbase: [template:_images/alpine-3.23]\n",
		      "must be a semver"));
	CHECK(rejects("minimumLimaVersion: 2.0.0\nbase: [template:_images/alpine-3.23]\n",
		      "needs Lima >= 2.1.2"));
	CHECK(rejects("base: [template:_images/alpine-3.23]\n", "needs Lima >= 2.1.2"));
	CHECK(rejects("minimumLimaVersion: 2.2.0\nbase: template:_images/alpine\n",
		      "no longer exists"));
	CHECK(rejects("minimumLimaVersion: 2.2.0\nbase: template://alpine\n", "Lima 1.x form"));
	CHECK(rejects("minimumLimaVersion: 2.2.0\nbase: ../other.yaml\n", "without \"../\""));
}

TEST(rejects_bad_provision_entries)
{
	CHECK(rejects(BASE "provision:\n- mode: sytem\n  script: \"#!/bin/sh\"\n",
		      "not a provision mode"));
	CHECK(rejects(BASE "provision:\n- mode: ansible\n  playbook: x.yml\n", "deprecated"));
	CHECK(rejects(BASE "provision:\n- mode: system\n", "must not be empty"));
	CHECK(rejects(BASE "provision:\n- mode: data\n  content: x\n", "path must not be empty"));
	CHECK(rejects(BASE "provision:\n- mode: data\n  path: etc/x\n  content: x\n",
		      "absolute path"));
	CHECK(rejects(BASE "provision:\n- mode: data\n  path: /etc/x\n  content: x\n"
			   "  permissions: \"0999\"\n",
		      "octal"));
	CHECK(rejects(BASE "provision:\n- mode: system\n  script: \"#!/bin/sh\"\n  path: /etc/x\n",
		      "path can only be set"));
	CHECK(rejects(BASE "provision:\n- mode: system\n  script: \"#!/bin/sh\"\n  scirpt: x\n",
		      "\"scirpt\""));
	CHECK(rejects(BASE "provision:\n- mode: system\n  script: \"#!/bin/sh\\necho\"\n"
			   "  file: ok.sh\n",
		      "ignores the file"));
	CHECK(rejects(BASE "provision:\n- mode: system\n  script: |\n    #!/bin/sh\n"
			   "    echo $LIMA_CIDATA_USER\n",
		      "LIMA_CIDATA"));
	CHECK(rejects(BASE "provision:\n- mode: yq\n  path: /etc/x.json\n", "expression"));
}

TEST(rejects_file_paths_lima_would_not_embed)
{
	CHECK(rejects(BASE "provision:\n- mode: system\n  file: ../provision/docker.sh\n",
		      "contains \"../\""));
	CHECK(rejects(BASE "provision:\n- mode: system\n  file: missing.sh\n", "does not exist"));
	CHECK(rejects(BASE "provision:\n- mode: system\n  file: /etc/profile\n",
		      "only on this machine"));
	CHECK(rejects(BASE
		      "provision:\n- mode: system\n  file: {url: ok.sh, digest: \"sha256:0\"}\n",
		      "digest"));
	/* Lima's identifiers.Validate on the base name: _x.c, a..b.sh, 77 characters. */
	CHECK(rejects(BASE "provision:\n- mode: data\n  path: /x\n  file: sub/_x.c\n",
		      "refuses the file name of \"sub/_x.c\""));
	CHECK(
	    rejects(BASE "provision:\n- mode: system\n  file: a..b.sh\n", "refuses the file name"));
	CHECK(rejects(BASE
		      "provision:\n- mode: system\n  file: "
		      "a234567890123456789012345678901234567890123456789012345678901234567890123"
		      "4567.sh\n",
		      "refuses the file name"));
	CHECK(
	    rejects("minimumLimaVersion: 2.2.0\nbase: [template:_images/alpine-3.23, -frag.yaml]\n",
		    "refuses the file name"));
}

TEST(rejects_text_lima_would_change_while_rendering)
{
	/* The fixture is C code with an initializer "{{0}}": Lima would turn it into "0". */
	CHECK(rejects(BASE "provision:\n- mode: data\n  path: /usr/local/src/x.c\n"
			   "  file: braces.c\n",
		      "{{0}} is not one of its fields"));
	CHECK(rejects(
	    BASE "provision:\n- mode: system\n  script: \"#!/bin/sh\\necho {{.Param.nope}}\"\n",
	    "names no key of `param`"));
	CHECK(rejects(BASE "provision:\n- mode: system\n  script: \"#!/bin/sh\\necho {{.User\"\n",
		      "without \"}}\""));
	CHECK(rejects(BASE
		      "portForwards:\n- guestSocket: /run/x.sock\n  hostSocket: \"{{.Dirr}}/x\"\n",
		      "{{.Dirr}}"));
}

TEST(rejects_bad_probes_forwards_and_params)
{
	CHECK(rejects(BASE "probes:\n- file: ok.sh\n", "inline `script`"));
	CHECK(rejects(BASE "probes:\n- script: \"echo ready\"\n", "'#!' line"));
	CHECK(rejects(BASE "probes:\n- mode: liveness\n  script: \"#!/bin/sh\"\n", "readiness"));
	CHECK(rejects(BASE "portForwards:\n- guestSocket: run/x.sock\n  hostSocket: x.sock\n",
		      "guestSocket must be an absolute path"));
	CHECK(rejects(BASE "portForwards:\n- guestSocket: /run/x.sock\n  guestPort: 80\n",
		      "guestPort must be 0"));
	CHECK(rejects(BASE "portForwards:\n- guestPort: 80\n  proto: sctp\n", "tcp, udp or any"));
	CHECK(rejects(BASE "portForwards:\n- guestPort: 80\n  hostSokcet: /x\n", "\"hostSokcet\""));
	CHECK(rejects(BASE "param:\n  unused: x\n", "param \"unused\" is not used"));
	CHECK(rejects(BASE "param:\n  9lives: x\n", "a name is a letter"));
	/* Used only in message: Lima does not count that. */
	CHECK(
	    rejects(BASE "param:\n  m: x\nmessage: \"{{.Param.m}}\"\n", "param \"m\" is not used"));
}

TEST(params_count_as_used_where_lima_looks)
{
	struct template_problems p;
	template_lint_text(BASE
			   "param:\n  a: x\n  b: y\n  c: z\n"
			   "provision:\n- mode: system\n  script: \"#!/bin/sh\\necho $PARAM_a\"\n"
			   "- mode: data\n  path: \"/etc/{{.Param.b}}\"\n  content: x\n"
			   "portForwards:\n- guestSocket: \"/run/{{ .Param.c }}.sock\"\n"
			   "  hostSocket: x.sock\n",
			   FIXTURES, false, &p);
	template_problems_print("fixture", &p);
	CHECK_INT(p.count, 0);
	/* PARAM_ab does not use a; the param file's own content counts (file embedded). */
	CHECK(rejects(BASE "param:\n  a: x\nprovision:\n- mode: system\n"
			   "  script: \"#!/bin/sh\\necho $PARAM_ab\"\n",
		      "param \"a\" is not used"));
	template_lint_text(BASE
			   "param:\n  greeting: x\nprovision:\n- mode: system\n  file: ok.sh\n",
			   FIXTURES, false, &p);
	CHECK_INT(p.count, 0);
}

int main(void)
{
	RUN(fixture_without_problems_passes);
	RUN(rejects_yaml_errors_and_unknown_or_deprecated_keys);
	RUN(rejects_bad_versions_and_bases);
	RUN(rejects_bad_provision_entries);
	RUN(rejects_file_paths_lima_would_not_embed);
	RUN(rejects_text_lima_would_change_while_rendering);
	RUN(rejects_bad_probes_forwards_and_params);
	RUN(params_count_as_used_where_lima_looks);
	return check_done();
}
