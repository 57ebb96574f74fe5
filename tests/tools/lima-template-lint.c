/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lima-template-lint [--fragment] FILE...: checks Lima templates as Lima 2.2 would take them
 * (template_lint.h), since no Lima runs where vmcost's unit suites do. Prints each problem as
 * "FILE: problem"; exit 0 when every file is clean, 1 when one is not, 2 for a bad command line.
 */
#include "template_lint.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	bool fragment = false;
	int first = 1;
	if (first < argc && strcmp(argv[first], "--fragment") == 0) {
		fragment = true;
		first++;
	}
	if (first >= argc || argv[first][0] == '-') {
		fprintf(stderr, "usage: lima-template-lint [--fragment] FILE...\n");
		return 2;
	}
	int dirty = 0;
	for (int i = first; i < argc; i++) {
		struct template_problems p;
		template_lint_file(argv[i], fragment, &p);
		for (int k = 0; k < p.count; k++)
			printf("%s: %s\n", argv[i], p.text[k]);
		dirty |= p.count > 0;
	}
	return dirty ? 1 : 0;
}
