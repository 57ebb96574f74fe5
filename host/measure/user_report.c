/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/user_report.h"

#include "clients/process.h"
#include "measure/results.h"

#include <ctype.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void user_report_private_read(struct user_report_private *p)
{
	memset(p, 0, sizeof *p);
	const char *home = getenv("HOME");
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : "";
	}
	snprintf(p->home, sizeof p->home, "%s", home);
	size_t len = strlen(p->home);
	while (len > 1 && p->home[len - 1] == '/')
		p->home[--len] = '\0';
	/* "/" as a home would turn every path into "~" paths: nothing private to hide there. */
	if (strcmp(p->home, "/") == 0)
		p->home[0] = '\0';
	if (gethostname(p->hosts[0], sizeof p->hosts[0] - 1) != 0)
		p->hosts[0][0] = '\0';
	snprintf(p->hosts[1], sizeof p->hosts[1], "%.*s", (int)strcspn(p->hosts[0], "."),
		 p->hosts[0]);
}

static bool host_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_';
}

/* Appends s[0..n) to the growing buffer. */
static void append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		*cap = (*len + n + 1) * 2;
		*buf = realloc(*buf, *cap);
		if (!*buf)
			abort();
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
}

/* At s: the length of a private word to replace there, and what replaces it. */
static size_t private_at(const char *start, const char *s, const struct user_report_private *p,
			 const char **with)
{
	size_t home = strlen(p->home);
	if (home && strncmp(s, p->home, home) == 0 && (s[home] == '/' || !host_char(s[home]))) {
		*with = "~";
		return home;
	}
	bool word_start = s == start || !host_char(s[-1]);
	for (int i = 0; i < 2 && word_start; i++) {
		size_t n = strlen(p->hosts[i]);
		if (n >= 3 && strncasecmp(s, p->hosts[i], n) == 0 && !host_char(s[n])) {
			*with = "<host>";
			return n;
		}
	}
	return 0;
}

char *user_report_redact_text(const char *text, const struct user_report_private *p)
{
	size_t len = 0, cap = strlen(text) + 1;
	char *out = malloc(cap);
	if (!out)
		abort();
	out[0] = '\0';
	for (const char *s = text; *s;) {
		const char *with;
		size_t n = private_at(text, s, p, &with);
		if (n) {
			append(&out, &len, &cap, with, strlen(with));
			s += n;
		} else {
			append(&out, &len, &cap, s, 1);
			s++;
		}
	}
	return out;
}

void user_report_redact(json_t *doc, const struct user_report_private *p)
{
	if (json_is_string(doc)) {
		char *clean = user_report_redact_text(json_string_value(doc), p);
		json_string_set(doc, clean);
		free(clean);
	} else if (json_is_array(doc)) {
		size_t i;
		json_t *v;
		json_array_foreach(doc, i, v) user_report_redact(v, p);
	} else if (json_is_object(doc)) {
		/* Keys are rewritten too (a path can be a key): rebuild the object. */
		json_t *copy = json_object();
		const char *key;
		json_t *v;
		json_object_foreach(doc, key, v)
		{
			user_report_redact(v, p);
			char *clean = user_report_redact_text(key, p);
			json_object_set(copy, clean, v);
			free(clean);
		}
		json_object_clear(doc);
		json_object_update(doc, copy);
		json_decref(copy);
	}
}

json_t *user_report_run(const char *command, int exit_code, const char *out, const char *err)
{
	json_t *run = json_object();
	json_object_set_new(run, "command", json_string(command));
	json_object_set_new(run, "exit", json_integer(exit_code));
	json_t *result = out && *out ? json_loads(out, 0, NULL) : NULL;
	json_object_set_new(run, "result", result ? result : json_null());
	char last[512] = "";
	if (err)
		process_last_line(err, last, sizeof last);
	json_object_set_new(run, "message", json_string(last));
	return run;
}

static const char *string_of(const json_t *doc, const char *key)
{
	const char *s = json_string_value(json_object_get(doc, key));
	return s ? s : "unknown";
}

/* One line per run: its command, exit status and last message. */
static int summary_table(FILE *f, const json_t *runs)
{
	const char *name;
	json_t *run;
	fprintf(f, "| run | command | exit | message |\n|---|---|---|---|\n");
	json_object_foreach((json_t *)runs, name, run)
	{
		json_t *exit = json_object_get(run, "exit");
		char code[32] = "not run";
		if (json_is_integer(exit))
			snprintf(code, sizeof code, "%lld", (long long)json_integer_value(exit));
		fprintf(f, "| %s | `%s` | %s | %s |\n", name, string_of(run, "command"), code,
			string_of(run, "message"));
	}
	return ferror(f) ? -1 : 0;
}

int user_report_markdown(FILE *f, const json_t *doc)
{
	char machine[512];
	results_machine_line(json_object_get(doc, "machine"), machine, sizeof machine);
	fprintf(f, "# vmcost report: %s (%s)\n\n", string_of(doc, "instance"),
		string_of(doc, "vm_type"));
	fprintf(f, "- **when**: %s\n- **machine**: %s\n- **vmcost**: %s\n- **Lima**: %s\n\n",
		string_of(doc, "time"), machine, string_of(doc, "vmcost_version"),
		string_of(doc, "lima_version"));
	fprintf(f,
		"Every figure below was measured by vmcost on this machine; the JSON file beside "
		"this one holds each run's whole output. Paths under the home directory are "
		"written from `~` and the host's name as `<host>`.\n\n");
	const json_t *runs = json_object_get(doc, "runs");
	if (summary_table(f, runs) < 0)
		return -1;
	const char *name;
	json_t *run;
	json_object_foreach((json_t *)runs, name, run)
	{
		fprintf(f, "\n## %s\n\n`%s`\n\n", name, string_of(run, "command"));
		json_t *result = json_object_get(run, "result");
		if (!result || json_is_null(result)) {
			fprintf(f, "%s\n", string_of(run, "message"));
			continue;
		}
		char *text = json_dumps(result, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fprintf(f, "```json\n%s\n```\n", text ? text : "null");
		free(text);
	}
	return ferror(f) ? -1 : 0;
}
