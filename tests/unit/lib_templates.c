/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Lima templates in templates/ checked against what Lima 2.2 accepts and does
 * (docs/lima.md#limayaml, docs/lima.md#templates, docs/lima.md#lima-guestagent:
 * pkg/limayaml/validate.go, pkg/limatmpl/embed.go, pkg/limayaml/defaults.go), since
 * Lima cannot run here; bad templates prove each check can fail. Then vmcost-agent is built on
 * this machine from exactly the files a template embeds, by running the template's own provision
 * script with apk and OpenRC stubbed (tests/sh/provision-stubs).
 */
#include "check.h"
#include "yamlutil.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FIXTURES "tests/unit/fixtures/templates"

__attribute__((format(printf, 1, 2))) static int shell(const char *fmt, ...);

/* A shell command's status, checked without quoting the command (too long for a message). */
#define CHECK_OK(status)                                                                           \
	do {                                                                                       \
		int status_ = (status);                                                            \
		CHECK_INT(status_, 0);                                                             \
	} while (0)

/* ---- a small validator -------------------------------------------------------------------- */

struct problems {
	int count;
	char text[48][400];
	/* Names the base template being checked, "" for the template itself. */
	char prefix[80];
};

__attribute__((format(printf, 2, 3))) static void problem(struct problems *p, const char *fmt, ...)
{
	if (p->count >= (int)(sizeof p->text / sizeof p->text[0]))
		return;
	char *out = p->text[p->count++];
	int n = snprintf(out, sizeof p->text[0], "%s", p->prefix);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out + n, sizeof p->text[0] - (size_t)n, fmt, ap);
	va_end(ap);
}

static bool has_problem(const struct problems *p, const char *needle)
{
	for (int i = 0; i < p->count; i++)
		if (strstr(p->text[i], needle))
			return true;
	return false;
}

static void print_problems(const char *name, const struct problems *p)
{
	for (int i = 0; i < p->count; i++)
		fprintf(stderr, "  %s: %s\n", name, p->text[i]);
}

struct tmpl {
	struct vmc_yaml y;
	yaml_node_t *root;
	yaml_node_t *param;
	char dir[PATH_MAX];
	struct problems *p;
	/* A fragment is only ever taken with `base:`: it needs no images of its own. */
	bool fragment;
	/* Local `base:` files, validated as fragments after the template. */
	char bases[4][PATH_MAX * 2];
	int nbases;
	/* Guest-side texts after embedding, where Lima looks for param uses. */
	char *texts[256];
	int ntexts;
};

static char *read_whole(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 2) {
			char *bigger = realloc(buf, cap * 2);
			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static void keep_text(struct tmpl *t, const char *text)
{
	if (text && t->ntexts < (int)(sizeof t->texts / sizeof t->texts[0]))
		t->texts[t->ntexts++] = strdup(text);
}

static const char *scalar(struct tmpl *t, yaml_node_t *map, const char *key)
{
	return vmc_yaml_scalar(vmc_yaml_get(&t->y, map, key));
}

/* Keys of a mapping that Lima does not know (it only warns: typos silently do nothing). */
static void check_keys(struct tmpl *t, yaml_node_t *map, const char *where,
		       const char *const *known)
{
	if (!map || map->type != YAML_MAPPING_NODE) {
		problem(t->p, "%s must be a mapping", where);
		return;
	}
	for (size_t i = 0; i < vmc_yaml_map_size(map); i++) {
		yaml_node_t *value;
		const char *key = vmc_yaml_map_key(&t->y, map, i, &value);
		if (!key || !in_list(key, known))
			problem(t->p, "%s: unknown key \"%s\" (line %d): Lima ignores it", where,
				key ? key : "?", vmc_yaml_line(value));
	}
}

/* MAJOR.MINOR.PATCH[-pre][+build]: 0 and the three numbers, or -1. */
static int semver(const char *s, long v[3])
{
	for (int i = 0; i < 3; i++) {
		char *end;
		if (!s || *s < '0' || *s > '9')
			return -1;
		v[i] = strtol(s, &end, 10);
		if (i < 2 && *end != '.')
			return -1;
		s = end + (i < 2);
		if (i == 2 && *end != '\0' && *end != '-' && *end != '+')
			return -1;
	}
	return 0;
}

static int semver_cmp(const long a[3], const long b[3])
{
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/*
 * Lima renders provision scripts, data content, yq expressions, owner, path and probe scripts
 * as Go templates (defaults.go executeGuestTemplate). Any "{{" that is not one of its fields
 * changes the text: C's "= {{0}}" would become "= 0".
 */
static void check_actions(struct tmpl *t, const char *where, const char *text,
			  const char *const *fields)
{
	for (const char *s = strstr(text, "{{"); s; s = strstr(s + 2, "{{")) {
		const char *e = strstr(s + 2, "}}");
		if (!e) {
			problem(t->p,
				"%s: \"{{\" without \"}}\": Lima's Go template rendering fails",
				where);
			return;
		}
		char inner[128];
		const char *a = s + 2, *b = e;
		if (*a == '-')
			a++;
		if (b > a && b[-1] == '-')
			b--;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		snprintf(inner, sizeof inner, "%.*s", (int)(b - a), a);
		if (strncmp(inner, ".Param.", 7) == 0) {
			if (!vmc_yaml_get(&t->y, t->param, inner + 7))
				problem(t->p, "%s: {{%s}} names no key of `param`", where, inner);
		} else if (!in_list(inner, fields)) {
			problem(
			    t->p,
			    "%s: Lima renders this text as a Go template and {{%s}} is not one of "
			    "its fields: the text would change",
			    where, inner);
		}
	}
}

static const char *const guest_fields[] = {".Name", ".Hostname", ".UID", ".User", ".Home", NULL};
static const char *const host_fields[] = {".Dir", ".Name", ".UID", ".User", ".Home", NULL};

/*
 * Lima reads every `file:` and local `base:` through limatmpl.Read, which derives an instance
 * name from the base name (lower-cased, without .yml/.yaml) and refuses it unless it is an
 * identifier: ^[A-Za-z0-9]+([._-][A-Za-z0-9]+)*$, at most 76 characters (identifiers.Validate).
 */
static bool lima_identifier_ok(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char name[PATH_MAX];
	snprintf(name, sizeof name, "%s", base);
	size_t n = strlen(name);
	for (size_t i = 0; i < n; i++)
		if (name[i] >= 'A' && name[i] <= 'Z')
			name[i] = (char)(name[i] - 'A' + 'a');
	if (n > 4 && strcmp(name + n - 4, ".yml") == 0)
		name[n -= 4] = '\0';
	if (n > 5 && strcmp(name + n - 5, ".yaml") == 0)
		name[n -= 5] = '\0';
	if (n == 0 || n > 76)
		return false;
	bool after_separator = true; /* no separator first, none twice, none last */
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (alnum)
			after_separator = false;
		else if ((c == '.' || c == '_' || c == '-') && !after_separator)
			after_separator = true;
		else
			return false;
	}
	return !after_separator;
}

/*
 * `file:` as Lima embeds it (embed.go): a string or {url, digest}; relative paths resolve
 * against the template's directory and must not contain "../" (abs.go). Returns the file's
 * content (malloc'd) for local files, NULL otherwise.
 */
static char *embed_file(struct tmpl *t, yaml_node_t *file, const char *where)
{
	const char *url = vmc_yaml_scalar(file);
	if (!url && file && file->type == YAML_MAPPING_NODE) {
		static const char *const keys[] = {"url", "digest", NULL};
		check_keys(t, file, where, keys);
		url = scalar(t, file, "url");
		if (vmc_yaml_get(&t->y, file, "digest"))
			problem(t->p, "%s.digest: not implemented by Lima (validation fails)",
				where);
	}
	if (!url || !*url) {
		problem(t->p, "%s: needs a path or URL", where);
		return NULL;
	}
	if (strncmp(url, "https://", 8) == 0 || strncmp(url, "http://", 7) == 0 ||
	    strncmp(url, "template:", 9) == 0)
		return NULL;
	if (strncmp(url, "file://", 7) == 0)
		url += 7;
	if (url[0] == '/') {
		problem(t->p, "%s: absolute path %s works only on this machine", where, url);
		return NULL;
	}
	if (strstr(url, "../") || strstr(url, "..\\") || strcmp(url, "..") == 0) {
		problem(t->p,
			"%s: \"%s\" contains \"../\", which Lima rejects: use a symlink in the "
			"template's directory",
			where, url);
		return NULL;
	}
	if (!lima_identifier_ok(url))
		problem(
		    t->p,
		    "%s: Lima refuses the file name of \"%s\" (an identifier: letters and digits, "
		    "single . _ - between them, at most 76 characters): rename the file",
		    where, url);
	char path[PATH_MAX * 2];
	snprintf(path, sizeof path, "%s/%s", t->dir, url);
	char *text = read_whole(path);
	if (!text)
		problem(t->p, "%s: %s does not exist next to the template (%s)", where, url,
			strerror(errno));
	return text;
}

static void check_provision(struct tmpl *t, yaml_node_t *item, int i)
{
	static const char *const keys[] = {
	    "mode",	"script",      "file",	     "skipDefaultDependencyResolution",
	    "playbook", "content",     "overwrite",  "owner",
	    "path",	"permissions", "expression", "format",
	    NULL};
	static const char *const modes[] = {"system", "user", "boot", "dependency",
					    "data",   "yq",   NULL};
	char where[64];
	snprintf(where, sizeof where, "provision[%d]", i);
	check_keys(t, item, where, keys);
	if (!item || item->type != YAML_MAPPING_NODE)
		return;
	const char *mode = scalar(t, item, "mode");
	if (!mode)
		mode = "system";
	if (strcmp(mode, "ansible") == 0)
		problem(t->p, "%s.mode: ansible is deprecated since Lima 1.1", where);
	else if (!in_list(mode, modes))
		problem(t->p, "%s.mode: \"%s\" is not a provision mode Lima knows", where, mode);
	bool data = strcmp(mode, "data") == 0, yq = strcmp(mode, "yq") == 0;
	const char *inline_key = data ? "content" : yq ? "expression" : "script";
	yaml_node_t *file = vmc_yaml_get(&t->y, item, "file");
	const char *inline_text = scalar(t, item, inline_key);
	char *text = NULL;
	if (file) {
		char fwhere[96];
		snprintf(fwhere, sizeof fwhere, "%s.file", where);
		text = embed_file(t, file, fwhere);
		if (inline_text && *inline_text)
			problem(t->p,
				"%s: both `file` and `%s`: Lima keeps %s and ignores the file",
				where, inline_key, inline_key);
	} else if (!inline_text || (!data && !*inline_text)) {
		problem(t->p, "%s: `%s` (or `file`) must not be empty when mode is %s", where,
			inline_key, mode);
	} else {
		text = strdup(inline_text);
	}
	if (text) {
		char twhere[96];
		snprintf(twhere, sizeof twhere, "%s.%s", where, inline_key);
		check_actions(t, twhere, text, guest_fields);
		if (!data && !yq && strstr(text, "LIMA_CIDATA"))
			problem(t->p,
				"%s: refers to LIMA_CIDATA variables, which Lima warns about "
				"(use {{.User}} and friends)",
				where);
		keep_text(t, text);
		free(text);
	}
	if (data || yq) {
		const char *path = scalar(t, item, "path");
		if (!path)
			problem(t->p, "%s.path must not be empty when mode is %s", where, mode);
		else if (path[0] != '/' && strncmp(path, "{{", 2) != 0)
			problem(t->p, "%s.path must be an absolute path", where);
		const char *perm = scalar(t, item, "permissions");
		if (perm) {
			char *end;
			errno = 0;
			strtol(perm, &end, 8);
			if (!*perm || *end || errno)
				problem(t->p, "%s.permissions must be an octal number, not \"%s\"",
					where, perm);
		}
		const char *const fields[] = {"path", "owner"};
		for (size_t k = 0; k < 2; k++) {
			const char *v = scalar(t, item, fields[k]);
			if (v) {
				char kwhere[96];
				snprintf(kwhere, sizeof kwhere, "%s.%s", where, fields[k]);
				check_actions(t, kwhere, v, guest_fields);
				keep_text(t, v);
			}
		}
	} else {
		static const char *const data_only[] = {"content",     "overwrite", "owner", "path",
							"permissions", "format",    NULL};
		for (const char *const *k = data_only; *k; k++)
			if (vmc_yaml_get(&t->y, item, *k))
				problem(t->p, "%s.%s can only be set when mode is data or yq",
					where, *k);
	}
	if (vmc_yaml_get(&t->y, item, "skipDefaultDependencyResolution") &&
	    strcmp(mode, "dependency") != 0)
		problem(t->p,
			"%s: skipDefaultDependencyResolution is only valid in dependency mode",
			where);
}

static void check_probe(struct tmpl *t, yaml_node_t *item, int i)
{
	static const char *const keys[] = {"mode", "description", "script", "file", "hint", NULL};
	char where[64];
	snprintf(where, sizeof where, "probes[%d]", i);
	check_keys(t, item, where, keys);
	const char *mode = scalar(t, item, "mode");
	if (mode && strcmp(mode, "readiness") != 0)
		problem(t->p, "%s.mode can only be readiness", where);
	const char *script = scalar(t, item, "script");
	if (!script || !*script) {
		problem(t->p,
			"%s: needs an inline `script` (Lima 2.x never embeds a probe given only "
			"as `file`)",
			where);
		return;
	}
	if (strncmp(script, "#!", 2) != 0)
		problem(t->p, "%s.script must start with a '#!' line", where);
	check_actions(t, where, script, guest_fields);
	keep_text(t, script);
}

static void check_port_forward(struct tmpl *t, yaml_node_t *item, int i)
{
	static const char *const keys[] = {"guestIP",	  "guestIPMustBeZero",
					   "guestPort",	  "guestPortRange",
					   "guestSocket", "hostIP",
					   "hostPort",	  "hostPortRange",
					   "hostSocket",  "proto",
					   "reverse",	  "ignore",
					   "static",	  NULL};
	char where[64];
	snprintf(where, sizeof where, "portForwards[%d]", i);
	check_keys(t, item, where, keys);
	const char *guest = scalar(t, item, "guestSocket"), *host = scalar(t, item, "hostSocket");
	if (guest) {
		if (guest[0] != '/')
			problem(t->p, "%s.guestSocket must be an absolute path", where);
		if (vmc_yaml_get(&t->y, item, "guestPort"))
			problem(t->p, "%s.guestPort must be 0 when guestSocket is set", where);
		check_actions(t, where, guest, guest_fields);
		keep_text(t, guest);
	}
	if (host) {
		if (vmc_yaml_get(&t->y, item, "hostPort"))
			problem(t->p, "%s.hostPort must be 0 when hostSocket is set", where);
		check_actions(t, where, host, host_fields);
		keep_text(t, host);
	}
	const char *proto = scalar(t, item, "proto");
	if (proto && strcmp(proto, "tcp") && strcmp(proto, "udp") && strcmp(proto, "any"))
		problem(t->p, "%s.proto must be tcp, udp or any", where);
	bool reverse = false;
	if (vmc_yaml_get(&t->y, item, "reverse") &&
	    vmc_yaml_bool(vmc_yaml_get(&t->y, item, "reverse"), &reverse) == 0 && reverse &&
	    (!guest || !host))
		problem(t->p, "%s.reverse needs both guestSocket and hostSocket", where);
}

/* Lima's regexp: {{[^}]*\.Param\.KEY[^}]*}} or \bPARAM_KEY\b in a guest-side text. */
static bool param_used(const char *text, const char *key)
{
	char needle[160];
	snprintf(needle, sizeof needle, ".Param.%s", key);
	for (const char *s = strstr(text, "{{"); s; s = strstr(s + 2, "{{")) {
		const char *e = strstr(s, "}}"), *hit = strstr(s, needle);
		if (e && hit && hit < e)
			return true;
	}
	snprintf(needle, sizeof needle, "PARAM_%s", key);
	size_t n = strlen(needle);
	for (const char *s = strstr(text, needle); s; s = strstr(s + 1, needle)) {
		char before = s == text ? ' ' : s[-1], after = s[n];
		bool word_before = before == '_' || (before >= '0' && before <= '9') ||
				   ((before | 32) >= 'a' && (before | 32) <= 'z');
		bool word_after = after == '_' || (after >= '0' && after <= '9') ||
				  ((after | 32) >= 'a' && (after | 32) <= 'z');
		if (!word_before && !word_after)
			return true;
	}
	return false;
}

static void check_params(struct tmpl *t)
{
	if (!t->param)
		return;
	for (size_t i = 0; i < vmc_yaml_map_size(t->param); i++) {
		yaml_node_t *value;
		const char *key = vmc_yaml_map_key(&t->y, t->param, i, &value);
		bool name_ok = key && ((*key | 32) >= 'a' && (*key | 32) <= 'z');
		for (const char *c = key; name_ok && *c; c++)
			name_ok = *c == '_' || (*c >= '0' && *c <= '9') ||
				  ((*c | 32) >= 'a' && (*c | 32) <= 'z');
		if (!name_ok) {
			problem(t->p, "param \"%s\": a name is a letter, then letters, digits or _",
				key ? key : "?");
			continue;
		}
		if (!vmc_yaml_scalar(value))
			problem(t->p, "param \"%s\": the value must be a string", key);
		bool used = false;
		for (int j = 0; j < t->ntexts && !used; j++)
			used = param_used(t->texts[j], key);
		if (!used)
			problem(t->p,
				"param \"%s\" is not used in any provision, probe, copyToHost, or "
				"portForward: Lima refuses to load the template",
				key);
	}
}

static void check_base(struct tmpl *t, yaml_node_t *base, bool *alpine_versioned)
{
	size_t n = base->type == YAML_SEQUENCE_NODE ? vmc_yaml_seq_size(base) : 1;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item =
		    base->type == YAML_SEQUENCE_NODE ? vmc_yaml_seq_item(&t->y, base, i) : base;
		const char *url = vmc_yaml_scalar(item);
		if (!url && item && item->type == YAML_MAPPING_NODE) {
			url = scalar(t, item, "url");
			if (vmc_yaml_get(&t->y, item, "digest"))
				problem(t->p, "base[%zu].digest: Lima does not implement it", i);
		}
		if (!url) {
			problem(t->p, "base[%zu] must be a string or {url}", i);
			continue;
		}
		if (strncmp(url, "template://", 11) == 0)
			problem(t->p, "base: %s is the Lima 1.x form; write template:NAME", url);
		else if (strcmp(url, "template:_images/alpine") == 0)
			problem(
			    t->p,
			    "base: template:_images/alpine no longer exists from Lima 2.1.2 on: "
			    "name the version (_images/alpine-3.23)");
		else if (strncmp(url, "template:_images/alpine-3.2", 27) == 0)
			*alpine_versioned = true;
		else if (strncmp(url, "template:", 9) != 0 && strncmp(url, "https://", 8) != 0 &&
			 (strstr(url, "../") || url[0] == '/'))
			problem(t->p, "base: %s must be relative without \"../\"", url);
		else if (strncmp(url, "template:", 9) != 0 && strncmp(url, "https://", 8) != 0) {
			if (!lima_identifier_ok(url))
				problem(t->p, "base: Lima refuses the file name of \"%s\"", url);
			if (t->nbases < (int)(sizeof t->bases / sizeof t->bases[0]))
				snprintf(t->bases[t->nbases++], sizeof t->bases[0], "%s/%s", t->dir,
					 url);
		}
	}
}

static const char *const top_level_keys[] = {"base",
					     "minimumLimaVersion",
					     "vmType",
					     "vmOpts",
					     "os",
					     "arch",
					     "images",
					     "cpus",
					     "memory",
					     "disk",
					     "additionalDisks",
					     "mounts",
					     "mountTypesUnsupported",
					     "mountType",
					     "mountInotify",
					     "ssh",
					     "firmware",
					     "audio",
					     "video",
					     "provision",
					     "upgradePackages",
					     "containerd",
					     "guestInstallPrefix",
					     "probes",
					     "portForwards",
					     "copyToHost",
					     "message",
					     "networks",
					     "env",
					     "param",
					     "dns",
					     "hostResolver",
					     "propagateProxyEnv",
					     "caCerts",
					     "plain",
					     "timezone",
					     "nestedVirtualization",
					     "user",
					     "tpm",
					     "osOpts",
					     "cpuType",
					     "rosetta",
					     NULL};

static void check_root(struct tmpl *t)
{
	check_keys(t, t->root, "top level", top_level_keys);
	if (vmc_yaml_get(&t->y, t->root, "rosetta"))
		problem(t->p, "rosetta: deprecated since Lima 2.0: use vmOpts.vz.rosetta");
	if (vmc_yaml_get(&t->y, t->root, "cpuType"))
		problem(t->p, "cpuType: deprecated since Lima 2.0: use vmOpts.qemu.cpuType");

	bool alpine = false;
	yaml_node_t *base = vmc_yaml_get(&t->y, t->root, "base");
	if (base)
		check_base(t, base, &alpine);
	else if (!vmc_yaml_get(&t->y, t->root, "images") && !t->fragment)
		problem(t->p, "images: must be set (or come from a base template)");

	const char *min = scalar(t, t->root, "minimumLimaVersion");
	long v[3];
	if (min && semver(min, v) != 0)
		problem(t->p, "minimumLimaVersion must be a semver value, not \"%s\"", min);
	else if (alpine && (!min || semver_cmp(v, (long[3]){2, 1, 2}) < 0))
		problem(t->p, "minimumLimaVersion: _images/alpine-3.2x needs Lima >= 2.1.2");

	const char *vm = scalar(t, t->root, "vmType");
	static const char *const vm_types[] = {"qemu", "vz", "wsl2", "krunkit", NULL};
	if (vm && !in_list(vm, vm_types))
		problem(t->p, "vmType: \"%s\" is not qemu, vz, wsl2 or krunkit", vm);
	const char *mount_type = scalar(t, t->root, "mountType");
	static const char *const mount_types[] = {"reverse-sshfs", "9p", "virtiofs", "wsl2", NULL};
	if (mount_type && !in_list(mount_type, mount_types))
		problem(t->p, "mountType: \"%s\" is not reverse-sshfs, 9p, virtiofs or wsl2",
			mount_type);

	yaml_node_t *opts = vmc_yaml_get(&t->y, t->root, "vmOpts");
	if (opts) {
		static const char *const drivers[] = {"qemu", "vz", "krunkit", NULL};
		static const char *const vz_keys[] = {"rosetta", "diskImageFormat", NULL};
		static const char *const qemu_keys[] = {"minimumVersion", "cpuType", NULL};
		static const char *const rosetta_keys[] = {"enabled", "binfmt", NULL};
		check_keys(t, opts, "vmOpts", drivers);
		yaml_node_t *vz = vmc_yaml_get(&t->y, opts, "vz");
		if (vz) {
			check_keys(t, vz, "vmOpts.vz", vz_keys);
			yaml_node_t *rosetta = vmc_yaml_get(&t->y, vz, "rosetta");
			if (rosetta)
				check_keys(t, rosetta, "vmOpts.vz.rosetta", rosetta_keys);
		}
		if (vmc_yaml_get(&t->y, opts, "qemu"))
			check_keys(t, vmc_yaml_get(&t->y, opts, "qemu"), "vmOpts.qemu", qemu_keys);
	}
	yaml_node_t *containerd = vmc_yaml_get(&t->y, t->root, "containerd");
	if (containerd) {
		static const char *const keys[] = {"system", "user", "archives", NULL};
		check_keys(t, containerd, "containerd", keys);
	}
	yaml_node_t *resolver = vmc_yaml_get(&t->y, t->root, "hostResolver");
	if (resolver) {
		static const char *const keys[] = {"enabled", "ipv6", "hosts", NULL};
		check_keys(t, resolver, "hostResolver", keys);
	}

	struct {
		const char *key;
		void (*check)(struct tmpl *, yaml_node_t *, int);
	} lists[] = {{"provision", check_provision},
		     {"probes", check_probe},
		     {"portForwards", check_port_forward}};
	for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
		yaml_node_t *seq = vmc_yaml_get(&t->y, t->root, lists[l].key);
		if (!seq)
			continue;
		if (seq->type != YAML_SEQUENCE_NODE) {
			problem(t->p, "%s must be a list", lists[l].key);
			continue;
		}
		for (size_t i = 0; i < vmc_yaml_seq_size(seq); i++)
			lists[l].check(t, vmc_yaml_seq_item(&t->y, seq, i), (int)i);
	}
	yaml_node_t *mounts = vmc_yaml_get(&t->y, t->root, "mounts");
	for (size_t i = 0; i < vmc_yaml_seq_size(mounts); i++) {
		yaml_node_t *m = vmc_yaml_seq_item(&t->y, mounts, i);
		keep_text(t, scalar(t, m, "location"));
		keep_text(t, scalar(t, m, "mountPoint"));
	}
	yaml_node_t *copies = vmc_yaml_get(&t->y, t->root, "copyToHost");
	for (size_t i = 0; i < vmc_yaml_seq_size(copies); i++) {
		yaml_node_t *c = vmc_yaml_seq_item(&t->y, copies, i);
		keep_text(t, scalar(t, c, "guest"));
		keep_text(t, scalar(t, c, "host"));
	}
	check_params(t);
}

static void tmpl_free(struct tmpl *t)
{
	for (int i = 0; i < t->ntexts; i++)
		free(t->texts[i]);
	vmc_yaml_free(&t->y);
}

static void validate_into(const char *yaml, const char *dir, struct problems *p, bool fragment,
			  int depth);

static void dir_of(const char *path, char *dir, size_t size)
{
	snprintf(dir, size, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, size, ".");
}

/* A local base is checked as a fragment: what it may lack, the template gives it. */
static void validate_base(const char *path, struct problems *p, int depth)
{
	char saved[sizeof p->prefix];
	snprintf(saved, sizeof saved, "%s", p->prefix);
	const char *name = strrchr(path, '/');
	snprintf(p->prefix, sizeof p->prefix, "base %s: ", name ? name + 1 : path);
	char *text = read_whole(path);
	if (!text) {
		problem(p, "cannot read %s: %s", path, strerror(errno));
	} else if (depth > 3) {
		problem(p, "bases nested too deep");
	} else {
		char dir[PATH_MAX];
		dir_of(path, dir, sizeof dir);
		validate_into(text, dir, p, true, depth + 1);
	}
	free(text);
	snprintf(p->prefix, sizeof p->prefix, "%s", saved);
}

static void validate_into(const char *yaml, const char *dir, struct problems *p, bool fragment,
			  int depth)
{
	struct tmpl t;
	memset(&t, 0, sizeof t);
	t.p = p;
	t.fragment = fragment;
	snprintf(t.dir, sizeof t.dir, "%s", dir);
	char err[256];
	if (vmc_yaml_load(&t.y, yaml, strlen(yaml), err, sizeof err) != 0) {
		problem(p, "YAML: %s", err);
		vmc_yaml_free(&t.y);
		return;
	}
	t.root = vmc_yaml_root(&t.y);
	if (!t.root || t.root->type != YAML_MAPPING_NODE) {
		problem(p, "a template is a YAML mapping");
		tmpl_free(&t);
		return;
	}
	t.param = vmc_yaml_get(&t.y, t.root, "param");
	check_root(&t);
	for (int i = 0; i < t.nbases; i++)
		validate_base(t.bases[i], p, depth);
	tmpl_free(&t);
}

/* Validates YAML text as if it were a template file in dir; problems go to p. */
static void validate_text(const char *yaml, const char *dir, struct problems *p)
{
	memset(p, 0, sizeof *p);
	validate_into(yaml, dir, p, false, 0);
}

static void validate_file(const char *path, struct problems *p)
{
	char *text = read_whole(path);
	if (!text) {
		memset(p, 0, sizeof *p);
		problem(p, "cannot read %s", path);
		return;
	}
	char dir[PATH_MAX];
	dir_of(path, dir, sizeof dir);
	validate_text(text, dir, p);
	free(text);
}

/* ---- the repository's templates ----------------------------------------------------------- */

static const char *const templates[] = {"templates/minimal-docker.yaml",
					"templates/minimal-docker-iso.yaml", NULL};
#define FRAGMENT "templates/vmcost-agent.yaml"

TEST(repository_templates_pass_every_check)
{
	for (const char *const *path = templates; *path; path++) {
		struct problems p;
		validate_file(*path, &p);
		if (p.count)
			print_problems(*path, &p);
		CHECK_INT(p.count, 0);
	}
}

/* Loads a template for the fact checks below. */
static yaml_node_t *load(struct vmc_yaml *y, const char *path)
{
	char err[256];
	if (vmc_yaml_load_file(y, path, err, sizeof err) != 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		return NULL;
	}
	return vmc_yaml_root(y);
}

static const char *at(struct vmc_yaml *y, yaml_node_t *node, const char *dotted)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", dotted);
	for (char *key = strtok(buf, "."); key && node; key = strtok(NULL, "."))
		node = vmc_yaml_get(y, node, key);
	return vmc_yaml_scalar(node);
}

/* Number of provision entries of a mode whose `file` is the given path. */
static int provision_count(struct vmc_yaml *y, yaml_node_t *root, const char *mode,
			   const char *file)
{
	yaml_node_t *seq = vmc_yaml_get(y, root, "provision");
	int n = 0;
	for (size_t i = 0; i < vmc_yaml_seq_size(seq); i++) {
		yaml_node_t *item = vmc_yaml_seq_item(y, seq, i);
		const char *m = vmc_yaml_scalar(vmc_yaml_get(y, item, "mode"));
		const char *f = vmc_yaml_scalar(vmc_yaml_get(y, item, "file"));
		if (strcmp(m ? m : "system", mode) == 0 && f && strcmp(f, file) == 0)
			n++;
	}
	return n;
}

/* Index of a provision entry among those of its mode (-1 if absent); *count gets how many. */
static int provision_index(struct vmc_yaml *y, yaml_node_t *root, const char *mode,
			   const char *file, int *count)
{
	yaml_node_t *seq = vmc_yaml_get(y, root, "provision");
	int n = 0, found = -1;
	for (size_t i = 0; i < vmc_yaml_seq_size(seq); i++) {
		yaml_node_t *item = vmc_yaml_seq_item(y, seq, i);
		const char *m = vmc_yaml_scalar(vmc_yaml_get(y, item, "mode"));
		const char *f = vmc_yaml_scalar(vmc_yaml_get(y, item, "file"));
		if (strcmp(m ? m : "system", mode) != 0)
			continue;
		if (f && strcmp(f, file) == 0)
			found = n;
		n++;
	}
	*count = n;
	return found;
}

static bool forwards(struct vmc_yaml *y, yaml_node_t *root, const char *guest, const char *host)
{
	yaml_node_t *seq = vmc_yaml_get(y, root, "portForwards");
	for (size_t i = 0; i < vmc_yaml_seq_size(seq); i++) {
		yaml_node_t *item = vmc_yaml_seq_item(y, seq, i);
		const char *g = vmc_yaml_scalar(vmc_yaml_get(y, item, "guestSocket"));
		const char *h = vmc_yaml_scalar(vmc_yaml_get(y, item, "hostSocket"));
		if (g && h && strcmp(g, guest) == 0 && strcmp(h, host) == 0)
			return true;
	}
	return false;
}

static bool takes_base(struct vmc_yaml *y, yaml_node_t *root, const char *url)
{
	yaml_node_t *base = vmc_yaml_get(y, root, "base");
	for (size_t i = 0; i < vmc_yaml_seq_size(base); i++) {
		const char *b = vmc_yaml_scalar(vmc_yaml_seq_item(y, base, i));
		if (b && strcmp(b, url) == 0)
			return true;
	}
	return false;
}

TEST(the_fragment_delivers_the_agent)
{
	struct vmc_yaml y;
	yaml_node_t *root = load(&y, FRAGMENT);
	CHECK(root != NULL);
	if (!root)
		return;
	CHECK(vmc_yaml_get(&y, root, "images") == NULL); /* the template brings the image */
	CHECK(vmc_yaml_get(&y, root, "base") == NULL);
	CHECK(forwards(&y, root, "/run/vmcost-agent.sock", "{{.Dir}}/sock/vmcost-agent.sock"));
	CHECK_INT(provision_count(&y, root, "system", "provision/vmcost-agent.sh"), 1);
	/* The configuration: written once, the API socket the Lima user's (Lima renders it). */
	yaml_node_t *seq = vmc_yaml_get(&y, root, "provision");
	int configs = 0;
	for (size_t i = 0; i < vmc_yaml_seq_size(seq); i++) {
		yaml_node_t *item = vmc_yaml_seq_item(&y, seq, i);
		const char *path = at(&y, item, "path");
		if (!path || strcmp(path, "/etc/vmcost/agent.yaml") != 0)
			continue;
		configs++;
		CHECK_STR(at(&y, item, "mode"), "data");
		CHECK_STR(at(&y, item, "overwrite"), "false");
		CHECK_CONTAINS(at(&y, item, "content"), "\nsocket-owner: \"{{.User}}\"\n");
	}
	CHECK_INT(configs, 1);
	/*
	 * The sources are a download (or a checkout): its URL names the tarball by the sha256
	 * pinned beside it, and nothing sets the checkout by default.
	 */
	const char *sha = at(&y, root, "param.vmcostAgentSha256");
	const char *url = at(&y, root, "param.vmcostAgentURL");
	CHECK(sha && strlen(sha) == 64 && strspn(sha, "0123456789abcdef") == 64);
	CHECK(url && strncmp(url, "https://", 8) == 0);
	if (sha && url) {
		char name[128];
		snprintf(name, sizeof name, "/vmcost-agent-src-%s.tar.gz", sha);
		CHECK(strlen(url) > strlen(name) &&
		      strcmp(url + strlen(url) - strlen(name), name) == 0);
	}
	CHECK_STR(at(&y, root, "param.vmcostAgentSrc"), "");
	yaml_node_t *probes = vmc_yaml_get(&y, root, "probes");
	CHECK_INT((int)vmc_yaml_seq_size(probes), 1);
	CHECK_CONTAINS(at(&y, vmc_yaml_seq_item(&y, probes, 0), "script"),
		       "/run/vmcost-agent.sock");
	vmc_yaml_free(&y);
	struct problems p;
	memset(&p, 0, sizeof p);
	char *text = read_whole(FRAGMENT);
	CHECK(text != NULL);
	if (text)
		validate_into(text, "templates", &p, true, 0);
	free(text);
	print_problems(FRAGMENT, &p);
	CHECK_INT(p.count, 0);
}

TEST(both_templates_have_the_measured_host_setup)
{
	for (const char *const *path = templates; *path; path++) {
		struct vmc_yaml y;
		yaml_node_t *root = load(&y, *path);
		CHECK(root != NULL);
		if (!root)
			continue;
		long v[3];
		const char *min = at(&y, root, "minimumLimaVersion");
		CHECK(min && semver(min, v) == 0 && semver_cmp(v, (long[3]){2, 2, 0}) >= 0);
		CHECK(at(&y, root, "vmType") ==
		      NULL); /* Lima's default: vz on macOS, qemu on Linux */
		CHECK_STR(at(&y, root, "cpus"), "4");
		CHECK_STR(at(&y, root, "memory"), "6GiB");
		CHECK_STR(at(&y, root, "mountType"), "virtiofs");
		CHECK_STR(at(&y, root, "vmOpts.vz.rosetta.enabled"), "true");
		CHECK_STR(at(&y, root, "containerd.system"), "false");
		CHECK_STR(at(&y, root, "containerd.user"), "false");
		yaml_node_t *hosts =
		    vmc_yaml_get(&y, vmc_yaml_get(&y, root, "hostResolver"), "hosts");
		CHECK_STR(vmc_yaml_scalar(vmc_yaml_get(&y, hosts, "host.docker.internal")),
			  "host.lima.internal");
		CHECK(forwards(&y, root, "/var/run/docker.sock", "{{.Dir}}/sock/docker.sock"));
		CHECK_INT(provision_count(&y, root, "system", "provision/idle-tunings.sh"), 1);
		CHECK_INT(provision_count(&y, root, "system", "provision/docker.sh"), 1);
		/* The agent comes only from the fragment: one copy. */
		CHECK(takes_base(&y, root, "vmcost-agent.yaml"));
		CHECK(!forwards(&y, root, "/run/vmcost-agent.sock",
				"{{.Dir}}/sock/vmcost-agent.sock"));
		CHECK_INT(provision_count(&y, root, "system", "provision/vmcost-agent.sh"), 0);
		CHECK_INT(provision_count(&y, root, "data", "provision/vmcost-agent.yaml"), 0);
		const char *message = at(&y, root, "message");
		CHECK_CONTAINS(message, "docker context create lima-{{.Name}} --docker "
					"\"host=unix://{{.Dir}}/sock/docker.sock\"");
		CHECK_CONTAINS(message, "export DOCKER_HOST=unix://{{.Dir}}/sock/docker.sock");
		CHECK_CONTAINS(message,
			       "TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE=/var/run/docker.sock");
		CHECK_CONTAINS(message, "TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1");
		/* The first start can outlast Lima's 10-minute default
		 * (results/provision-delivery-*). */
		CHECK_CONTAINS(message, "limactl start --timeout 30m");
		yaml_node_t *probes = vmc_yaml_get(&y, root, "probes");
		CHECK(vmc_yaml_seq_size(probes) >= 1);
		CHECK_CONTAINS(at(&y, vmc_yaml_seq_item(&y, probes, 0), "script"),
			       "/var/run/docker.sock");
		vmc_yaml_free(&y);
	}
}

/*
 * The kernel command line and the docker group come from boot scripts, which run before the first
 * boot's reboot and before the Lima user's first login: no restart asked. The reboot is the last
 * boot script's (boot-first-reboot.sh), before the Lima user exists, so that Lima's own reboot,
 * late in a boot its SSH master may already have logged in to, never runs.
 * (tests/sh/templates_provision.sh runs that first boot on a fake root.)
 */
TEST(cloud_template_needs_no_restart)
{
	struct vmc_yaml y;
	yaml_node_t *root = load(&y, "templates/minimal-docker.yaml");
	CHECK(root != NULL);
	if (!root)
		return;
	yaml_node_t *base = vmc_yaml_get(&y, root, "base");
	CHECK_STR(vmc_yaml_scalar(vmc_yaml_seq_item(&y, base, 0)), "template:_images/alpine-3.23");
	CHECK_STR(vmc_yaml_scalar(vmc_yaml_seq_item(&y, base, 1)), "template:_default/mounts");
	CHECK_INT(provision_count(&y, root, "boot", "provision/boot-quiet-disk.sh"), 1);
	CHECK_INT(provision_count(&y, root, "boot", "provision/boot-kernel-args.sh"), 1);
	CHECK_INT(provision_count(&y, root, "boot", "provision/boot-docker-group.sh"), 1);
	int boot_scripts = 0;
	int reboot =
	    provision_index(&y, root, "boot", "provision/boot-first-reboot.sh", &boot_scripts);
	CHECK_INT(reboot, boot_scripts - 1);
	CHECK(provision_index(&y, root, "boot", "provision/boot-kernel-args.sh", &boot_scripts) <
	      reboot);
	CHECK(strstr(at(&y, root, "message"), "limactl restart") == NULL);
	CHECK_CONTAINS(at(&y, root, "message"), "vmcost doctor {{.Name}}");
	vmc_yaml_free(&y);
}

TEST(iso_template_says_its_command_line_cannot_change)
{
	struct vmc_yaml y;
	yaml_node_t *root = load(&y, "templates/minimal-docker-iso.yaml");
	CHECK(root != NULL);
	if (!root)
		return;
	yaml_node_t *base = vmc_yaml_get(&y, root, "base");
	CHECK_STR(vmc_yaml_scalar(vmc_yaml_seq_item(&y, base, 0)), "template:_images/alpine-iso");
	/* lima-init on the ISO runs no cloud-init bootcmd; /var/log is on the tmpfs root anyway. */
	CHECK_INT(provision_count(&y, root, "boot", "provision/boot-quiet-disk.sh"), 0);
	CHECK(at(&y, root, "param.dockerVersion") != NULL);
	CHECK_CONTAINS(at(&y, root, "message"), "cannot change");
	/* No boot scripts on the ISO: the docker group reaches Lima's login only after a restart.
	 */
	CHECK_INT(provision_count(&y, root, "boot", "provision/boot-docker-group.sh"), 0);
	CHECK_CONTAINS(at(&y, root, "message"), "limactl restart {{.Name}}");
	vmc_yaml_free(&y);
}

/*
 * Facts the template comments state (issue 11 item 7): which ISO the ISO template boots, that the
 * templates work only from a local checkout, and when boot-quiet-disk.sh runs before the guest
 * agent (the first boot only; the fstab line covers the others).
 */
TEST(template_comments_state_the_facts)
{
	char *iso = read_whole("templates/minimal-docker-iso.yaml");
	CHECK_CONTAINS(iso, "alpine-lima v0.2.49 (Alpine 3.23.0)");
	CHECK_CONTAINS(iso, "v0.2.50 (Alpine 3.24.1");
	free(iso);
	static const char *const files[] = {"templates/minimal-docker.yaml",
					    "templates/minimal-docker-iso.yaml", FRAGMENT, NULL};
	for (const char *const *f = files; *f; f++) {
		char *text = read_whole(*f);
		CHECK_CONTAINS(text, "only from a local checkout");
		free(text);
	}
	char *boot = read_whole("provision/boot-quiet-disk.sh");
	CHECK(boot &&
	      strstr(boot, "on every\n# boot before Lima's boot scripts start lima-guestagent") ==
		  NULL);
	CHECK_CONTAINS(boot, "what protects\n# those boots is the fstab line");
	free(boot);
	/* GRUB_TIMEOUT=10: what the Lima write-up found on the 3.23.4 image; image builds vary. */
	char *kargs = read_whole("provision/boot-kernel-args.sh");
	CHECK(kargs && strstr(kargs, "the cloud image waits 10 s") == NULL);
	CHECK_CONTAINS(kargs, "found GRUB_TIMEOUT=10 on Alpine's 3.23.4 cloud image");
	CHECK_CONTAINS(kargs, "(docs/published-measurements.md#the-lima-write-up)");
	free(kargs);
	char *cloud = read_whole("templates/minimal-docker.yaml");
	CHECK(cloud && strstr(cloud, "GRUB_TIMEOUT=0 (10 s per boot)") == NULL);
	CHECK_CONTAINS(cloud, "(A saw GRUB_TIMEOUT=10 on the 3.23.4 image: 10 s per boot)");
	free(cloud);
}

/* ---- the embedded agent sources ------------------------------------------------------------ */

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every .c and .h of guest-agent/ and lib/: what the Makefile compiles into vmcost-agent. */
static int agent_sources(char **out, int max)
{
	static const char *const dirs[] = {"guest-agent", "lib", NULL};
	int n = 0;
	for (const char *const *d = dirs; *d; d++) {
		DIR *dir = opendir(*d);
		if (!dir)
			continue;
		struct dirent *e;
		while ((e = readdir(dir)) && n < max) {
			size_t len = strlen(e->d_name);
			if (len > 2 && e->d_name[len - 2] == '.' &&
			    (e->d_name[len - 1] == 'c' || e->d_name[len - 1] == 'h')) {
				char path[PATH_MAX];
				snprintf(path, sizeof path, "%s/%s", *d, e->d_name);
				out[n++] = strdup(path);
			}
		}
		closedir(dir);
	}
	qsort(out, (size_t)n, sizeof *out, compare_strings);
	return n;
}

/* Repository file of a tarball path: the agent's sources as they are, the rest from provision/. */
static const char *tarball_source(const char *name)
{
	static const char *const extras[][2] = {
	    {"build.sh", "provision/build-vmcost-agent.sh"},
	    {"install.sh", "provision/install-vmcost-agent.sh"},
	    {"init.d/cache-trim", "provision/init.d/cache-trim"},
	    {"systemd/cache-trim.service", "provision/systemd/cache-trim.service"},
	    {"agent.yaml", "provision/vmcost-agent.yaml"}};
	for (size_t i = 0; i < sizeof extras / sizeof extras[0]; i++)
		if (strcmp(name, extras[i][0]) == 0)
			return extras[i][1];
	return name;
}

/* The fragment's param, as Lima passes it to the provision script (PARAM_NAME). */
static char *fragment_param(const char *name)
{
	struct vmc_yaml y;
	yaml_node_t *root = load(&y, FRAGMENT);
	if (!root)
		return NULL;
	char key[64];
	snprintf(key, sizeof key, "param.%s", name);
	const char *v = at(&y, root, key);
	char *out = v ? strdup(v) : NULL;
	vmc_yaml_free(&y);
	return out;
}

/*
 * templates/update-embedded --out writes the tarball the fragment pins; unpacked as the guest
 * unpacks it, it holds every agent source and the provision files, byte for byte the
 * repository's, and nothing else; its sha256 is the pinned one.
 */
TEST(the_fragment_pins_the_tarball_of_exactly_the_agent_sources)
{
	/* One data entry (the configuration), written inline: no sources inlined by Lima. */
	struct vmc_yaml y;
	yaml_node_t *root = load(&y, FRAGMENT);
	CHECK(root != NULL);
	if (!root)
		return;
	int data = 0, files = 0;
	yaml_node_t *seq = vmc_yaml_get(&y, root, "provision");
	for (size_t i = 0; i < vmc_yaml_seq_size(seq); i++) {
		yaml_node_t *item = vmc_yaml_seq_item(&y, seq, i);
		const char *mode = at(&y, item, "mode");
		if (mode && strcmp(mode, "data") == 0) {
			data++;
			files += at(&y, item, "file") != NULL;
		}
	}
	vmc_yaml_free(&y);
	CHECK_INT(data, 1);
	CHECK_INT(files, 0);

	char tmp[] = "/tmp/vmcost-agent-src.XXXXXX";
	CHECK(mkdtemp(tmp) != NULL);
	char *sha = fragment_param("vmcostAgentSha256");
	CHECK(sha != NULL);
	CHECK_OK(shell("templates/update-embedded --check --out %s/dist >%s/out 2>&1 || "
		       "sed 's/^/    /' %s/out >&2",
		       tmp, tmp, tmp));
	CHECK_OK(shell("mkdir %s/x && tar -xzf %s/dist/vmcost-agent-src-%s.tar.gz -C %s/x", tmp,
		       tmp, sha ? sha : "none", tmp));
	CHECK_OK(
	    shell("test \"$(sha256sum <%s/dist/vmcost-agent-src-%s.tar.gz | cut -d' ' -f1)\" = %s",
		  tmp, sha ? sha : "none", sha ? sha : "none"));

	char *want[256];
	int nwant = agent_sources(want, 256);
	CHECK(nwant > 10);
	/* Every agent source is in it, byte for byte. */
	for (int i = 0; i < nwant; i++) {
		int same = shell("cmp -s %s %s/x/%s", want[i], tmp, want[i]);
		if (same != 0)
			fprintf(stderr, "  the tarball's %s differs from the repository's\n",
				want[i]);
		CHECK_INT(same, 0);
		free(want[i]);
	}
	static const char *const extras[] = {"build.sh",	  "install.sh",
					     "init.d/cache-trim", "systemd/cache-trim.service",
					     "agent.yaml",	  NULL};
	for (const char *const *e = extras; *e; e++)
		CHECK_OK(shell("cmp -s %s %s/x/%s", tarball_source(*e), tmp, *e));
	/* And nothing else. */
	CHECK_OK(shell("test \"$(find %s/x -type f | wc -l)\" -eq %d", tmp, nwant + 5));
	free(sha);
	shell("rm -rf %s", tmp);
}

TEST(update_embedded_finds_nothing_stale)
{
	CHECK_INT(shell("templates/update-embedded --check"), 0);
}

/* In a copy of the tree: a source or a `file:` whose name Lima refuses fails --check. */
TEST(update_embedded_refuses_names_lima_rejects)
{
	char tmp[] = "/tmp/vmcost-update-embedded.XXXXXX";
	CHECK(mkdtemp(tmp) != NULL);
	/*
	 * A copy with other times and modes: the tarball is the same bytes (the pin names the
	 * sources, not the checkout).
	 */
	CHECK_OK(shell("cp -R templates provision guest-agent lib %s/ && "
		       "find %s -type f -name '*.[ch]' -exec chmod 0600 {} + && "
		       "find %s -exec touch -d '2031-05-06 07:08' {} +",
		       tmp, tmp, tmp));
	CHECK_OK(shell("%s/templates/update-embedded --check", tmp));
	/* A new source makes the pin stale (its name is no `file:`: Lima never sees it). */
	CHECK_OK(shell("touch %s/guest-agent/_x.c", tmp));
	CHECK_OK(shell("%s/templates/update-embedded --check 2>%s/out; test $? = 1 && "
		       "grep -q 'is stale' %s/out && grep -q 'make agent-src' %s/out",
		       tmp, tmp, tmp, tmp));
	/* Pinning it again (what make agent-src does) makes --check pass, with the new sha256. */
	CHECK_OK(shell(
	    "%s/templates/update-embedded --out %s/dist >/dev/null && "
	    "%s/templates/update-embedded --check && "
	    "! cmp -s templates/vmcost-agent.yaml %s/templates/vmcost-agent.yaml && "
	    "grep -q \"vmcostAgentSha256: \\\"$(sha256sum %s/dist/*.tar.gz | cut -d' ' -f1)\\\"\" "
	    "%s/templates/vmcost-agent.yaml",
	    tmp, tmp, tmp, tmp, tmp, tmp));
	CHECK_OK(shell("rm %s/guest-agent/_x.c && %s/templates/update-embedded >/dev/null && "
		       "%s/templates/update-embedded --check",
		       tmp, tmp, tmp));
	/* A changed provision file in the tarball makes it stale too. */
	CHECK_OK(shell("echo '# changed' >>%s/provision/install-vmcost-agent.sh && "
		       "%s/templates/update-embedded --check 2>/dev/null; test $? = 1",
		       tmp, tmp));
	CHECK_OK(shell("%s/templates/update-embedded >/dev/null", tmp));
	/* Any template's own `file:`: a..b.sh (two separators in a row), 77 characters, then 76. */
	CHECK_OK(shell("printf -- '- mode: system\\n  file: provision/a..b.sh\\n' >>"
		       "%s/templates/minimal-docker.yaml",
		       tmp));
	CHECK_OK(shell("%s/templates/update-embedded --check 2>%s/out; test $? = 1 && "
		       "grep -q 'minimal-docker.yaml: file: provision/a..b.sh' %s/out",
		       tmp, tmp, tmp));
	CHECK_OK(shell("sed -i 's/a\\.\\.b/%074d/' %s/templates/minimal-docker.yaml", 0, tmp));
	CHECK_OK(shell("%s/templates/update-embedded --check 2>%s/out; test $? = 1 && "
		       "grep -q 'file: provision/0000' %s/out",
		       tmp, tmp, tmp));
	CHECK_OK(shell("sed -i 's/provision\\/0\\(0*\\)\\.sh/provision\\/\\1.sh/' "
		       "%s/templates/minimal-docker.yaml && %s/templates/update-embedded --check",
		       tmp, tmp));
	shell("rm -rf %s", tmp);
}

/* ---- bad templates: every check can fail --------------------------------------------------- */

static bool rejects(const char *yaml, const char *needle)
{
	struct problems p;
	validate_text(yaml, FIXTURES, &p);
	bool found = has_problem(&p, needle);
	if (!found) {
		fprintf(stderr, "  expected a problem containing \"%s\"; got %d:\n", needle,
			p.count);
		print_problems("fixture", &p);
	}
	return found;
}

#define BASE "minimumLimaVersion: 2.2.0\nbase: [template:_images/alpine-3.23]\n"

TEST(fixture_without_problems_passes)
{
	struct problems p;
	validate_text(BASE "provision:\n- mode: system\n  file: ok.sh\n"
			   "- mode: data\n  path: /etc/x\n  file: ok.sh\n  permissions: \"0644\"\n"
			   "param:\n  greeting: hi\n",
		      FIXTURES, &p);
	print_problems("fixture", &p);
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
	struct problems p;
	validate_text(BASE "param:\n  a: x\n  b: y\n  c: z\n"
			   "provision:\n- mode: system\n  script: \"#!/bin/sh\\necho $PARAM_a\"\n"
			   "- mode: data\n  path: \"/etc/{{.Param.b}}\"\n  content: x\n"
			   "portForwards:\n- guestSocket: \"/run/{{ .Param.c }}.sock\"\n"
			   "  hostSocket: x.sock\n",
		      FIXTURES, &p);
	print_problems("fixture", &p);
	CHECK_INT(p.count, 0);
	/* PARAM_ab does not use a; the param file's own content counts (file embedded). */
	CHECK(rejects(BASE "param:\n  a: x\nprovision:\n- mode: system\n"
			   "  script: \"#!/bin/sh\\necho $PARAM_ab\"\n",
		      "param \"a\" is not used"));
	validate_text(BASE "param:\n  greeting: x\nprovision:\n- mode: system\n  file: ok.sh\n",
		      FIXTURES, &p);
	CHECK_INT(p.count, 0);
}

/* ---- vmcost-agent built from exactly what the template embeds ------------------------------ */

static int mkdirs(const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int write_file(const char *path, const char *text, unsigned mode)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';
	if (mkdirs(dir) != 0)
		return -1;
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	if (fclose(f) != 0)
		return -1;
	return chmod(path, mode);
}

/* Lima's guest-template fields, as they would be rendered for user "tester". */
static char *render(const char *text)
{
	static const char *const from[] = {"{{.User}}", "{{.UID}}", "{{.Home}}", NULL};
	static const char *const to[] = {"tester", "1000", "/home/tester.linux", NULL};
	size_t cap = strlen(text) * 2 + 64;
	char *out = malloc(cap), *o = out;
	while (*text) {
		int k;
		for (k = 0; from[k]; k++)
			if (strncmp(text, from[k], strlen(from[k])) == 0)
				break;
		if (from[k]) {
			o += sprintf(o, "%s", to[k]);
			text += strlen(from[k]);
		} else {
			*o++ = *text++;
		}
	}
	*o = '\0';
	return out;
}

/*
 * Writes the template's data entries into root (as Lima's boot.sh does before the system
 * scripts), and the system script that comes from file_wanted into script_out (rendered).
 */
static int extract(const char *template_path, const char *root, const char *file_wanted,
		   const char *script_out)
{
	struct vmc_yaml y;
	yaml_node_t *top = load(&y, template_path);
	if (!top)
		return -1;
	int written = 0, rc = 0;
	yaml_node_t *seq = vmc_yaml_get(&y, top, "provision");
	for (size_t i = 0; i < vmc_yaml_seq_size(seq) && rc == 0; i++) {
		yaml_node_t *item = vmc_yaml_seq_item(&y, seq, i);
		const char *mode = vmc_yaml_scalar(vmc_yaml_get(&y, item, "mode"));
		const char *file = vmc_yaml_scalar(vmc_yaml_get(&y, item, "file"));
		const char *path = vmc_yaml_scalar(vmc_yaml_get(&y, item, "path"));
		const char *perm = vmc_yaml_scalar(vmc_yaml_get(&y, item, "permissions"));
		if (!file)
			continue;
		char src[PATH_MAX];
		snprintf(src, sizeof src, "templates/%s", file); /* through templates/'s symlinks */
		char *text = read_whole(src);
		if (!text) {
			fprintf(stderr, "  cannot read %s\n", src);
			rc = -1;
			break;
		}
		char dest[PATH_MAX * 2];
		if (mode && strcmp(mode, "data") == 0 && path) {
			snprintf(dest, sizeof dest, "%s%s", root, path);
			rc = write_file(dest, text, perm ? (unsigned)strtoul(perm, NULL, 8) : 0644);
			written++;
		} else if (strcmp(file, file_wanted) == 0) {
			char *rendered = render(text);
			rc = write_file(script_out, rendered, 0755);
			free(rendered);
		}
		free(text);
	}
	vmc_yaml_free(&y);
	return rc == 0 ? written : -1;
}

/* Runs a formatted shell command; its exit status, or -1. */
__attribute__((format(printf, 1, 2))) static int shell(const char *fmt, ...)
{
	char cmd[PATH_MAX * 4];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof cmd)
		return -1;
	int status = system(cmd);
	return status == -1 || !WIFEXITED(status) ? -1 : WEXITSTATUS(status);
}

/*
 * Runs the fragment's provision script on a fake root shaped like an Alpine (apk, OpenRC) or a
 * Debian (apt, systemd) guest, with the package manager and the init system stubbed and the real
 * compiler, and checks the agent it builds and the service it sets up.
 */
static void build_from(const char *template_path, bool debian)
{
	char tmp[] = "/tmp/vmcost-template-build.XXXXXX";
	char root[64], script[96], cwd[PATH_MAX];
	CHECK(mkdtemp(tmp) != NULL);
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	snprintf(root, sizeof root, "%s/root", tmp);
	snprintf(script, sizeof script, "%s/provision.system/vmcost-agent.sh", tmp);
	/* No data `file:` (Lima would inline it): the sources come through the script's params. */
	int written = extract(template_path, root, "provision/vmcost-agent.sh", script);
	CHECK_INT(written, 0);
	CHECK(access(script, X_OK) == 0);
	/*
	 * Alpine: the pinned tarball from a URL (what `make agent-src` writes; curl reads file://).
	 * Debian: this checkout, as param vmcostAgentSrc names it.
	 */
	char params[PATH_MAX * 2];
	char *sha = fragment_param("vmcostAgentSha256");
	CHECK(sha != NULL);
	if (debian) {
		snprintf(params, sizeof params, "PARAM_vmcostAgentSrc=%s", cwd);
	} else {
		CHECK_OK(shell("templates/update-embedded --check --out %s/dist >/dev/null", tmp));
		snprintf(params, sizeof params,
			 "PARAM_vmcostAgentURL=file://%s/dist/vmcost-agent-src-%s.tar.gz "
			 "PARAM_vmcostAgentSha256=%s",
			 tmp, sha ? sha : "", sha ? sha : "");
	}
	free(sha);
	CHECK_OK(
	    shell("mkdir -p %s/usr/bin %s/usr/local/bin %s/sbin %s/etc", root, root, root, root));
	if (debian) /* every build dependency installed, as in an image that has them */
		CHECK_OK(shell("mkdir -p %s/run/systemd/system %s/var/lib/dpkg && echo 12.8 "
			       ">%s/etc/debian_version && printf '%%s\\n' gcc libc6-dev "
			       "pkg-config libyaml-dev libjansson-dev libmicrohttpd-dev "
			       ">%s/var/lib/dpkg/installed",
			       root, root, root, root));
	else
		CHECK_OK(shell("mkdir -p %s/etc/runlevels/default %s/etc/apk "
			       "%s/run/openrc/started && echo 3.23.4 >%s/etc/alpine-release && "
			       "printf '#!/bin/sh\\n' >%s/sbin/openrc-run",
			       root, root, root, root, root));
	/* The provision script as Lima runs it, packages and services stubbed, the real compiler.
	 */
	int rc = shell("env PATH=%s/tests/sh/provision-stubs:\"$PATH\" VMCOST_ROOT=%s "
		       "STUB_LOG=%s/stub.log %s sh %s >%s/provision.out 2>&1",
		       cwd, root, tmp, params, script, tmp);
	CHECK_INT(rc, 0);
	if (rc != 0)
		shell("sed 's/^/    /' %s/provision.out >&2", tmp);
	CHECK_OK(shell("%s/usr/local/bin/vmcost-agent --version | "
		       "grep -qx 'vmcost-agent src-[0-9a-f]*'",
		       root));
	if (debian) {
		CHECK_OK(shell("! grep -q '^apt-get' %s/stub.log", tmp));
		CHECK_OK(shell("cmp -s provision/systemd/cache-trim.service "
			       "%s/etc/systemd/system/cache-trim.service",
			       root));
		CHECK_OK(shell("test -L %s/etc/systemd/system/multi-user.target.wants/"
			       "cache-trim.service",
			       root));
		CHECK_OK(shell("grep -qx 'systemctl start cache-trim.service' %s/stub.log", tmp));
	} else {
		CHECK_OK(shell("grep -qx 'apk del .vmcost-agent-build' %s/stub.log", tmp));
		CHECK_OK(
		    shell("cmp -s provision/init.d/cache-trim %s/etc/init.d/cache-trim", root));
		CHECK_OK(shell("test -L %s/etc/runlevels/default/cache-trim", root));
	}
	shell("rm -rf %s", tmp);
}

/* ---- probes as Lima runs them --------------------------------------------------------------- */

/*
 * Lima runs a probe over SSH in a non-login shell (pkg/hostagent/requirements.go), so its PATH is
 * sshd's compiled-in default, which on Alpine lacks /usr/local/bin, where the ISO's static Docker
 * lives. Each probe runs here in a private mount namespace shaped like that guest: docker only in
 * /usr/local/bin (a /usr/bin/docker, if the test machine has one, answers "no"), the sockets the
 * probes wait for present in /run, and PATH=/usr/bin:/bin:/usr/sbin:/sbin. A probe that finds its
 * commands only through a login PATH loops until the time limit and fails.
 */
static const char probe_guest[] =
    "set -e\n"
    "mount -t tmpfs tmpfs /usr/local/bin\n"
    "printf '#!/bin/sh\\nexit 0\\n' >/usr/local/bin/docker\n"
    "chmod 755 /usr/local/bin/docker\n"
    "if [ -e /usr/bin/docker ]; then mount --bind /bin/false /usr/bin/docker; fi\n"
    "mount -t tmpfs tmpfs /run\n"
    "for s in /run/docker.sock /run/vmcost-agent.sock; do\n"
    "  socat -u UNIX-LISTEN:$s,unlink-close=0 /dev/null & pid=$!\n"
    "  i=0; until [ -S $s ] || [ $i -gt 50 ]; do sleep 0.1; i=$((i + 1)); done\n"
    "  kill $pid; wait $pid || true\n"
    "done\n"
    "exec env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin /usr/bin/timeout 15 /bin/sh \"$1\"\n";

static int run_probe(const char *dir, const char *script)
{
	char probe[PATH_MAX], guest[PATH_MAX];
	snprintf(probe, sizeof probe, "%s/probe.sh", dir);
	snprintf(guest, sizeof guest, "%s/guest.sh", dir);
	char *rendered = render(script);
	int rc = write_file(probe, rendered, 0755) == 0 && write_file(guest, probe_guest, 0755) == 0
		     ? shell("unshare %s sh %s %s >%s/probe.out 2>&1", getuid() == 0 ? "-m" : "-rm",
			     guest, probe, dir)
		     : -1;
	free(rendered);
	if (rc != 0)
		shell("sed 's/^/    /' %s/probe.out >&2", dir);
	return rc;
}

static void check_probes_of(const char *path, const char *dir)
{
	struct vmc_yaml y;
	yaml_node_t *root = load(&y, path);
	CHECK(root != NULL);
	if (!root)
		return;
	yaml_node_t *probes = vmc_yaml_get(&y, root, "probes");
	CHECK(vmc_yaml_seq_size(probes) > 0);
	for (size_t i = 0; i < vmc_yaml_seq_size(probes); i++) {
		yaml_node_t *probe = vmc_yaml_seq_item(&y, probes, i);
		const char *script = at(&y, probe, "script");
		CHECK(script != NULL);
		if (!script)
			continue;
		int rc = run_probe(dir, script);
		if (rc != 0)
			fprintf(stderr, "  %s: probe \"%s\" failed with sshd's default PATH\n",
				path, at(&y, probe, "description"));
		CHECK_INT(rc, 0);
	}
	vmc_yaml_free(&y);
}

TEST(probes_find_their_commands_with_sshds_default_path)
{
	if (shell("unshare %s true 2>/dev/null", getuid() == 0 ? "-m" : "-rm") != 0 ||
	    shell("command -v socat >/dev/null") != 0)
		SKIP("needs unshare (a mount namespace) and socat");
	char dir[] = "/tmp/vmcost-probe.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	for (const char *const *path = templates; *path; path++)
		check_probes_of(*path, dir);
	check_probes_of(FRAGMENT, dir);
	shell("rm -rf %s", dir);
}

TEST(agent_builds_from_the_fragments_embedded_sources_on_alpine)
{
	build_from(FRAGMENT, false);
}

TEST(agent_builds_from_the_fragments_embedded_sources_on_debian)
{
	build_from(FRAGMENT, true);
}

int main(void)
{
	RUN(repository_templates_pass_every_check);
	RUN(the_fragment_delivers_the_agent);
	RUN(both_templates_have_the_measured_host_setup);
	RUN(cloud_template_needs_no_restart);
	RUN(iso_template_says_its_command_line_cannot_change);
	RUN(template_comments_state_the_facts);
	RUN(the_fragment_pins_the_tarball_of_exactly_the_agent_sources);
	RUN(update_embedded_finds_nothing_stale);
	RUN(update_embedded_refuses_names_lima_rejects);
	RUN(fixture_without_problems_passes);
	RUN(rejects_yaml_errors_and_unknown_or_deprecated_keys);
	RUN(rejects_bad_versions_and_bases);
	RUN(rejects_bad_provision_entries);
	RUN(rejects_file_paths_lima_would_not_embed);
	RUN(rejects_text_lima_would_change_while_rendering);
	RUN(rejects_bad_probes_forwards_and_params);
	RUN(params_count_as_used_where_lima_looks);
	RUN(probes_find_their_commands_with_sshds_default_path);
	RUN(agent_builds_from_the_fragments_embedded_sources_on_alpine);
	RUN(agent_builds_from_the_fragments_embedded_sources_on_debian);
	return check_done();
}
