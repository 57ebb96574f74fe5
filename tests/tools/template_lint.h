/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Lima template linter: what Lima 2.2 accepts in a template and does with it
 * (docs/lima.md#limayaml, docs/lima.md#templates, docs/lima.md#lima-guestagent:
 * pkg/limayaml/validate.go, pkg/limatmpl/embed.go, pkg/limayaml/defaults.go), written down
 * because Lima cannot run where vmcost's unit suites do. tests/tools/lima-template-lint runs it on
 * files; tests/unit/lib_template_lint.c proves each check can fail; lib_templates.c runs it on
 * templates/.
 */
#ifndef VMC_TEMPLATE_LINT_H
#define VMC_TEMPLATE_LINT_H

#include <stdbool.h>

struct template_problems {
	int count;
	char text[48][400];
	/* Names the base template being checked, "" for the template itself. */
	char prefix[80];
};

/*
 * Checks YAML text as if it were a template file in dir (where its `file:` and `base:` paths are
 * resolved); a fragment may lack what a template taken with `base:` gives it (images, the
 * minimum version). Problems go to p, which is reset first.
 */
void template_lint_text(const char *yaml, const char *dir, bool fragment,
			struct template_problems *p);
/* The same for a file, resolved from its own directory. */
void template_lint_file(const char *path, bool fragment, struct template_problems *p);

/* True when one of the problems contains needle. */
bool template_problems_has(const struct template_problems *p, const char *needle);
/* Each problem on stderr, under name. */
void template_problems_print(const char *name, const struct template_problems *p);
/* "2.2.0" into {2, 2, 0}: 0, or -1 when it is not MAJOR.MINOR.PATCH. */
int template_lint_semver(const char *s, long v[3]);
/* <0, 0, >0 as a is older than, the same as or newer than b. */
int template_lint_semver_cmp(const long a[3], const long b[3]);
/* A whole file, NUL-terminated and malloc'd; NULL with errno. */
char *template_lint_read(const char *path);

#endif
