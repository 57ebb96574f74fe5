/* SPDX-License-Identifier: Apache-2.0 */
/* The Lima template linter (template_lint.h says what it checks and where the rules come from). */
#include "template_lint.h"

#include "yamlutil.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((format(printf, 2, 3))) static void problem(struct template_problems *p,
							  const char *fmt, ...)
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

bool template_problems_has(const struct template_problems *p, const char *needle)
{
	for (int i = 0; i < p->count; i++)
		if (strstr(p->text[i], needle))
			return true;
	return false;
}

void template_problems_print(const char *name, const struct template_problems *p)
{
	for (int i = 0; i < p->count; i++)
		fprintf(stderr, "  %s: %s\n", name, p->text[i]);
}

struct tmpl {
	struct vmc_yaml y;
	yaml_node_t *root;
	yaml_node_t *param;
	char dir[PATH_MAX];
	struct template_problems *p;
	/* A fragment is only ever taken with `base:`: it needs no images of its own. */
	bool fragment;
	/* Local `base:` files, validated as fragments after the template. */
	char bases[4][PATH_MAX * 2];
	int nbases;
	/* Guest-side texts after embedding, where Lima looks for param uses. */
	char *texts[256];
	int ntexts;
};

char *template_lint_read(const char *path)
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
int template_lint_semver(const char *s, long v[3])
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

int template_lint_semver_cmp(const long a[3], const long b[3])
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
	char *text = template_lint_read(path);
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
	if (min && template_lint_semver(min, v) != 0)
		problem(t->p, "minimumLimaVersion must be a semver value, not \"%s\"", min);
	else if (alpine && (!min || template_lint_semver_cmp(v, (long[3]){2, 1, 2}) < 0))
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

static void validate_into(const char *yaml, const char *dir, struct template_problems *p,
			  bool fragment, int depth);

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
static void validate_base(const char *path, struct template_problems *p, int depth)
{
	char saved[sizeof p->prefix];
	snprintf(saved, sizeof saved, "%s", p->prefix);
	const char *name = strrchr(path, '/');
	snprintf(p->prefix, sizeof p->prefix, "base %s: ", name ? name + 1 : path);
	char *text = template_lint_read(path);
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

static void validate_into(const char *yaml, const char *dir, struct template_problems *p,
			  bool fragment, int depth)
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

void template_lint_text(const char *yaml, const char *dir, bool fragment,
			struct template_problems *p)
{
	memset(p, 0, sizeof *p);
	validate_into(yaml, dir, p, fragment, 0);
}

void template_lint_file(const char *path, bool fragment, struct template_problems *p)
{
	char *text = template_lint_read(path);
	if (!text) {
		memset(p, 0, sizeof *p);
		problem(p, "cannot read %s", path);
		return;
	}
	char dir[PATH_MAX];
	dir_of(path, dir, sizeof dir);
	template_lint_text(text, dir, fragment, p);
	free(text);
}
