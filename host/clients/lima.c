/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Instance discovery (docs/lima.md#instance-directory, docs/lima.md#limactl-list-json,
 * docs/lima.md#limayaml). limactl is the authority when it is on PATH: it knows defaults,
 * drivers and statuses we can only imitate. Without it the instance directory is read the way
 * Lima reads it: lima.yaml merged with _config/default.yaml and override.yaml, pid files that
 * count only while their process lives.
 */
#include "clients/lima.h"

#include "jsonutil.h"
#include "log.h"
#include "platform/platform.h"
#include "clients/process.h"
#include "message.h"
#include "readfile.h"
#include "units.h"
#include "yamlutil.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* limactl list is a Go program reading every instance; on a busy Mac it can take seconds. */
#define LIMACTL_TIMEOUT_MS 30000
#define LIMA_YAML_MAX	   (4u << 20)

const char *lima_status_name(enum lima_status status)
{
	switch (status) {
	case LIMA_STATUS_RUNNING:
		return "Running";
	case LIMA_STATUS_STOPPED:
		return "Stopped";
	case LIMA_STATUS_BROKEN:
		return "Broken";
	case LIMA_STATUS_INSTALLING:
		return "Installing";
	case LIMA_STATUS_UNINITIALIZED:
		return "Uninitialized";
	case LIMA_STATUS_UNKNOWN:
		break;
	}
	return "Unknown";
}

static enum lima_status status_from_name(const char *s)
{
	static const struct {
		const char *name;
		enum lima_status status;
	} table[] = {
	    {"Running", LIMA_STATUS_RUNNING},
	    {"Stopped", LIMA_STATUS_STOPPED},
	    {"Broken", LIMA_STATUS_BROKEN},
	    {"Installing", LIMA_STATUS_INSTALLING},
	    {"Uninitialized", LIMA_STATUS_UNINITIALIZED},
	};
	for (size_t i = 0; s && i < sizeof table / sizeof table[0]; i++)
		if (strcmp(s, table[i].name) == 0)
			return table[i].status;
	return LIMA_STATUS_UNKNOWN;
}

int lima_home(char *buf, size_t size)
{
	const char *env = getenv("LIMA_HOME");
	int n;
	if (env && *env) {
		n = snprintf(buf, size, "%s", env);
	} else {
		const char *home = getenv("HOME");
		if (!home || !*home)
			return -1;
		n = snprintf(buf, size, "%s/.lima", home);
	}
	if (n < 0 || (size_t)n >= size)
		return -1;
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	return 0;
}

bool lima_name_valid(const char *name)
{
	/* pkg/identifiers: ^[A-Za-z0-9]+(?:[._-](?:[A-Za-z0-9]+))*$ */
	if (!name || !isalnum((unsigned char)*name) ||
	    strlen(name) >= sizeof(((struct lima_instance *)0)->name))
		return false;
	bool after_sep = false;
	for (const char *p = name; *p; p++) {
		if (isalnum((unsigned char)*p)) {
			after_sep = false;
		} else if (*p == '.' || *p == '_' || *p == '-') {
			if (after_sep)
				return false;
			after_sep = true;
		} else {
			return false;
		}
	}
	return !after_sep;
}

void lima_host(char *os, size_t os_size, char *arch, size_t arch_size)
{
	struct utsname u;
	if (uname(&u) < 0) {
		snprintf(os, os_size, "unknown");
		snprintf(arch, arch_size, "unknown");
		return;
	}
	if (strcmp(u.sysname, "Darwin") == 0)
		snprintf(os, os_size, "darwin");
	else if (strcmp(u.sysname, "Linux") == 0)
		snprintf(os, os_size, "linux");
	else
		snprintf(os, os_size, "%s", u.sysname);
	/* Lima says aarch64 where macOS says arm64. */
	if (strcmp(u.machine, "arm64") == 0)
		snprintf(arch, arch_size, "aarch64");
	else if (strcmp(u.machine, "amd64") == 0)
		snprintf(arch, arch_size, "x86_64");
	else
		snprintf(arch, arch_size, "%s", u.machine);
}

const char *lima_default_vm_type(const char *host_os, const char *host_arch, const char *arch)
{
	if (host_os && strcmp(host_os, "darwin") == 0) {
		/* Since v2.1 a non-native arch defaults to qemu: vz cannot emulate. */
		if (arch && *arch && host_arch && strcmp(arch, host_arch) != 0)
			return "qemu";
		return "vz";
	}
	return "qemu";
}

int lima_instance_path(const struct lima_instance *inst, const char *rel, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%s", inst->dir, rel);
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* ---- limactl list --json ---------------------------------------------------------------- */

static size_t line_of(const char *buf, size_t offset)
{
	size_t line = 1;
	for (size_t i = 0; i < offset; i++)
		if (buf[i] == '\n')
			line++;
	return line;
}

/* Reads an optional integer member in [0, max]; -1 on a wrong type or range. */
static int json_opt_int(const json_t *obj, const char *key, long long max, long long *v)
{
	json_t *m = json_object_get(obj, key);
	if (!m || json_is_null(m))
		return 0;
	if (!json_is_integer(m) || json_integer_value(m) < 0 || json_integer_value(m) > max)
		return -1;
	*v = json_integer_value(m);
	return 0;
}

static int json_opt_str(const json_t *obj, const char *key, char *dst, size_t size)
{
	json_t *m = json_object_get(obj, key);
	if (!m || json_is_null(m))
		return 0;
	if (!json_is_string(m) || json_string_length(m) >= size)
		return -1;
	snprintf(dst, size, "%s", json_string_value(m));
	return 0;
}

static int instance_from_json(const json_t *obj, struct lima_instance *inst, const char **bad_key)
{
	memset(inst, 0, sizeof *inst);
	inst->source = "limactl";
	long long cpus = 0, memory = 0, disk = 0, ha = 0, drv = 0;
	char status[32] = "";
	const json_t *config = json_object_get(obj, "config");
#define BAD(key)                                                                                   \
	do {                                                                                       \
		*bad_key = key;                                                                    \
		return -1;                                                                         \
	} while (0)
	if (!json_is_string(json_object_get(obj, "name")) ||
	    json_opt_str(obj, "name", inst->name, sizeof inst->name) < 0 || !inst->name[0])
		BAD("name");
	if (json_opt_str(obj, "status", status, sizeof status) < 0)
		BAD("status");
	if (json_opt_str(obj, "dir", inst->dir, sizeof inst->dir) < 0)
		BAD("dir");
	if (json_opt_str(obj, "vmType", inst->vm_type, sizeof inst->vm_type) < 0)
		BAD("vmType");
	if (json_opt_str(obj, "arch", inst->arch, sizeof inst->arch) < 0)
		BAD("arch");
	if (json_opt_int(obj, "cpus", 1 << 16, &cpus) < 0)
		BAD("cpus");
	if (json_opt_int(obj, "memory", INT64_MAX, &memory) < 0)
		BAD("memory");
	if (json_opt_int(obj, "disk", INT64_MAX, &disk) < 0)
		BAD("disk");
	/* Note the capital A: hostAgentPID (Go field HostAgentPID). */
	if (json_opt_int(obj, "hostAgentPID", INT32_MAX, &ha) < 0)
		BAD("hostAgentPID");
	if (json_opt_int(obj, "driverPID", INT32_MAX, &drv) < 0)
		BAD("driverPID");
	if (json_opt_str(obj, "limaVersion", inst->lima_version, sizeof inst->lima_version) < 0)
		BAD("limaVersion");
	/* Deprecated PascalCase host fields (removed in Lima 3.0): only a hint, never required. */
	if (json_opt_str(obj, "HostOS", inst->host_os, sizeof inst->host_os) < 0)
		BAD("HostOS");
	if (config && !json_is_object(config) && !json_is_null(config))
		BAD("config");
	if (!inst->vm_type[0] && json_is_object(config) &&
	    json_opt_str(config, "vmType", inst->vm_type, sizeof inst->vm_type) < 0)
		BAD("config.vmType");
#undef BAD
	inst->status = status_from_name(status);
	inst->cpus = (int)cpus;
	inst->memory = (uint64_t)memory;
	inst->disk = (uint64_t)disk;
	inst->ha_pid = (pid_t)ha;
	inst->driver_pid = (pid_t)drv;
	if (!inst->vm_type[0]) {
		char os[16], arch[16];
		lima_host(os, sizeof os, arch, sizeof arch);
		snprintf(
		    inst->vm_type, sizeof inst->vm_type, "%s",
		    lima_default_vm_type(inst->host_os[0] ? inst->host_os : os, arch, inst->arch));
		inst->vm_type_defaulted = true;
	}
	if (!inst->host_os[0]) {
		char arch[16];
		lima_host(inst->host_os, sizeof inst->host_os, arch, sizeof arch);
	}
	if (!inst->dir[0]) {
		char home[PATH_MAX - 300];
		if (lima_home(home, sizeof home) == 0)
			snprintf(inst->dir, sizeof inst->dir, "%s/%s", home, inst->name);
	}
	/* Lima 2.2 lists an instance whose lima.yaml it cannot parse with "status": "" (and no
	 * vmType, cpus or memory, measured with the real limactl); the reason is only in its
	 * stderr warning. */
	if (json_is_string(json_object_get(obj, "status")) && !status[0]) {
		inst->unreadable = true;
		inst->status = LIMA_STATUS_BROKEN;
		snprintf(inst->vm_type, sizeof inst->vm_type, "?");
		inst->vm_type_defaulted = false;
		textf(inst->problem, sizeof inst->problem, "Lima cannot load %s/lima.yaml",
		      inst->dir);
	}
	return 0;
}

static bool only_space(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)p[i]))
			return false;
	return true;
}

int lima_parse_list_json(const char *buf, size_t len, const char *name, struct lima_instance **out,
			 size_t *n, char *err, size_t errsize)
{
	*out = NULL;
	*n = 0;
	size_t cap = 0, off = 0;
	while (off < len && !only_space(buf + off, len - off)) {
		while (isspace((unsigned char)buf[off]))
			off++;
		json_error_t jerr;
		/* One value at a time: JSON Lines, or limactl's indented TTY form, alike. */
		json_t *obj = json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK, &jerr);
		if (!obj || !json_is_object(obj)) {
			textf(err, errsize, "limactl list --json: line %zu: %s",
			      line_of(buf, off) +
				  (obj ? 0 : (size_t)(jerr.line > 0 ? jerr.line - 1 : 0)),
			      obj ? "not a JSON object" : jerr.text);
			json_decref(obj);
			goto malformed;
		}
		size_t used = jerr.position;
		struct lima_instance inst;
		const char *bad_key = "";
		if (instance_from_json(obj, &inst, &bad_key) < 0) {
			textf(err, errsize,
			      "limactl list --json: line %zu: key \"%s\" is missing or has the "
			      "wrong type",
			      line_of(buf, off), bad_key);
			json_decref(obj);
			goto malformed;
		}
		json_decref(obj);
		if (used == 0)
			used = len - off;
		off += used;
		if (name && strcmp(inst.name, name) != 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 4;
			struct lima_instance *grown = realloc(*out, cap * sizeof **out);
			if (!grown) {
				textf(err, errsize, "out of memory");
				free(*out);
				*out = NULL;
				*n = 0;
				return VMC_EXIT_FAILURE;
			}
			*out = grown;
		}
		(*out)[(*n)++] = inst;
	}
	return VMC_EXIT_OK;
malformed:
	free(*out);
	*out = NULL;
	*n = 0;
	return VMC_EXIT_MALFORMED;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(((const struct lima_instance *)a)->name,
		      ((const struct lima_instance *)b)->name);
}

/*
 * limactl's warning for an instance it cannot load: level=warning msg="instance `NAME` has
 * errors" errors="[REASON\n   1 | ...]". Copies the first line of REASON, or nothing.
 */
static void limactl_instance_error(const char *stderr_text, const char *name, char *dst,
				   size_t size)
{
	char marker[300];
	snprintf(marker, sizeof marker, "instance `%s` has errors", name);
	const char *p = strstr(stderr_text, marker);
	if (!p || !(p = strstr(p, "errors=\"[")))
		return;
	p += strlen("errors=\"[");
	size_t len = strcspn(p, "\n\"");
	const char *escaped_newline = strstr(p, "\\n");
	if (escaped_newline && (size_t)(escaped_newline - p) < len)
		len = (size_t)(escaped_newline - p);
	if (len >= size)
		len = size - 1;
	memcpy(dst, p, len);
	dst[len] = '\0';
}

static int limactl_list(const char *name, struct lima_instance **out, size_t *n, char *err,
			size_t errsize)
{
	/*
	 * --format '{{json .}}' is what --json means to limactl, minus the yq pass that --json
	 * adds: Lima 2.2.0 feeds each instance's line to a bufio.Scanner whose 64 KiB limit an
	 * instance with embedded provision files exceeds (our templates' lima.yaml is ~400 KB), and
	 * then fails with "bufio.Scanner: token too long" for every instance (measured with the
	 * real limactl).
	 */
	const char *argv[] = {"limactl", "list", "--format", "{{json .}}", name, NULL};
	/* Told its stdout is a terminal, limactl would open editors and colour its output. */
	static const char *const unset[] = {"_LIMA_OUTPUT_IS_TTY", NULL};
	struct process_result res;
	if (process_run(argv, &(struct process_options){.timeout_ms = LIMACTL_TIMEOUT_MS, .unset_env = unset},
			&res) < 0) {
		errorf(err, errsize, "cannot run limactl:");
		return VMC_EXIT_FAILURE;
	}
	int rc;
	if (res.truncated) {
		textf(err, errsize, "limactl list --json printed more than %zu MiB: not Lima's output",
		      PROCESS_MAX_OUTPUT >> 20);
		rc = VMC_EXIT_MALFORMED;
	} else if (res.timed_out) {
		textf(err, errsize,
		      "limactl list --json did not answer in %d s: check Lima with limactl list",
		      LIMACTL_TIMEOUT_MS / 1000);
		rc = VMC_EXIT_FAILURE;
	} else if (res.exit_code != 0) {
		char line[200];
		process_last_line(res.err, line, sizeof line);
		if (name && (strstr(res.err, "unmatched") || strstr(res.err, "No instance")))
			textf(err, errsize,
			      "unknown instance \"%s\": limactl list shows the instances", name);
		else
			textf(err, errsize, "limactl list --json failed (exit %d): %s",
			      res.exit_code, line[0] ? line : "no message");
		rc = name && (strstr(res.err, "unmatched") || strstr(res.err, "No instance"))
			 ? VMC_EXIT_NO_INSTANCE
			 : VMC_EXIT_FAILURE;
	} else {
		rc = lima_parse_list_json(res.out, res.out_len, name, out, n, err, errsize);
		for (size_t i = 0; rc == VMC_EXIT_OK && i < *n; i++) {
			struct lima_instance *inst = &(*out)[i];
			char why[200] = "";
			if (inst->unreadable && res.err)
				limactl_instance_error(res.err, inst->name, why, sizeof why);
			if (why[0])
				textf(inst->problem, sizeof inst->problem,
				      "Lima cannot load %s/lima.yaml: %s", inst->dir, why);
		}
	}
	process_result_free(&res);
	return rc;
}

/* ---- the instance directory ------------------------------------------------------------- */

static bool known_vm_type(const char *s)
{
	return strcmp(s, "qemu") == 0 || strcmp(s, "vz") == 0 || strcmp(s, "krunkit") == 0 ||
	       strcmp(s, "wsl2") == 0;
}

static int yaml_fail(char *err, size_t errsize, const char *file, const yaml_node_t *node,
		     const char *key, const char *problem)
{
	textf(err, errsize, "%s: line %d: %s: %s", file, vmc_yaml_line(node), key, problem);
	return VMC_EXIT_MALFORMED;
}

/* A scalar that is not null, or NULL (absent / null); *bad when it is not a scalar at all. */
static const char *yaml_scalar_field(struct vmc_yaml *y, yaml_node_t *root, const char *key,
				     yaml_node_t **node, bool *bad)
{
	*bad = false;
	*node = vmc_yaml_get(y, root, key);
	if (!*node || vmc_yaml_is_null(*node))
		return NULL;
	const char *s = vmc_yaml_scalar(*node);
	if (!s)
		*bad = true;
	return s;
}

int lima_parse_yaml(const char *buf, size_t len, const char *file, struct lima_yaml_config *cfg,
		    char *err, size_t errsize)
{
	memset(cfg, 0, sizeof *cfg);
	struct vmc_yaml y;
	char yerr[200];
	if (vmc_yaml_load(&y, buf, len, yerr, sizeof yerr) < 0) {
		textf(err, errsize, "%s: %s", file, yerr);
		return VMC_EXIT_MALFORMED;
	}
	int rc = VMC_EXIT_OK;
	yaml_node_t *root = vmc_yaml_root(&y);
	if (!root || vmc_yaml_is_null(root))
		goto done;
	if (root->type != YAML_MAPPING_NODE) {
		textf(err, errsize, "%s: line %d: the document is not a mapping of keys", file,
		      vmc_yaml_line(root));
		rc = VMC_EXIT_MALFORMED;
		goto done;
	}
	yaml_node_t *node;
	bool bad;
	const char *s = yaml_scalar_field(&y, root, "vmType", &node, &bad);
	if (bad || (s && (!known_vm_type(s) || strlen(s) >= sizeof cfg->vm_type))) {
		rc = yaml_fail(err, errsize, file, node, "vmType",
			       "expected qemu, vz, krunkit or wsl2");
		goto done;
	}
	if (s) {
		snprintf(cfg->vm_type, sizeof cfg->vm_type, "%s", s);
		cfg->has_vm_type = true;
	}
	s = yaml_scalar_field(&y, root, "arch", &node, &bad);
	if (bad || (s && (strlen(s) >= sizeof cfg->arch || strchr(s, ' ')))) {
		rc = yaml_fail(err, errsize, file, node, "arch", "expected x86_64, aarch64, ...");
		goto done;
	}
	if (s && strcmp(s, "default") != 0 && *s) {
		snprintf(cfg->arch, sizeof cfg->arch, "%s", s);
		cfg->has_arch = true;
	}
	s = yaml_scalar_field(&y, root, "cpus", &node, &bad);
	if (s || bad) {
		char *end = NULL;
		long v = bad ? 0 : strtol(s, &end, 10);
		if (bad || end == s || *end || v <= 0 || v > 65536) {
			rc = yaml_fail(err, errsize, file, node, "cpus",
				       "expected a whole number > 0");
			goto done;
		}
		cfg->cpus = (int)v;
		cfg->has_cpus = true;
	}
	static const char *const size_keys[] = {"memory", "disk"};
	for (int i = 0; i < 2; i++) {
		s = yaml_scalar_field(&y, root, size_keys[i], &node, &bad);
		if (!s && !bad)
			continue;
		uint64_t bytes;
		if (bad || vmc_parse_size(s, &bytes) < 0 || bytes == 0) {
			rc = yaml_fail(err, errsize, file, node, size_keys[i],
				       "expected a size such as \"4GiB\"");
			goto done;
		}
		if (i == 0) {
			cfg->memory = bytes;
			cfg->has_memory = true;
		} else {
			cfg->disk = bytes;
			cfg->has_disk = true;
		}
	}
done:
	vmc_yaml_free(&y);
	return rc;
}

/* Reads one YAML file into cfg; a missing optional file is an empty config. */
static int load_yaml_file(const char *path, bool required, struct lima_yaml_config *cfg, char *err,
			  size_t errsize)
{
	memset(cfg, 0, sizeof *cfg);
	char *buf;
	size_t len;
	if (vmc_read_file(path, LIMA_YAML_MAX, &buf, &len) < 0) {
		if (errno == ENOENT && !required)
			return VMC_EXIT_OK;
		if (errno == EACCES) {
			textf(err, errsize,
			      "cannot read %s: permission denied (another user's instance? run "
			      "as that user or root)",
			      path);
			return VMC_EXIT_PERMISSION;
		}
		if (errno == EFBIG) {
			textf(err, errsize, "%s is larger than 4 MiB: not a Lima config", path);
			return VMC_EXIT_MALFORMED;
		}
		errorf(err, errsize, "cannot read %s:", path);
		return VMC_EXIT_FAILURE;
	}
	int rc = lima_parse_yaml(buf, len, path, cfg, err, errsize);
	free(buf);
	return rc;
}

/* Lima's FillDefault order for scalars: override.yaml, then lima.yaml, then default.yaml. */
static void merge_config(struct lima_yaml_config *dst, const struct lima_yaml_config *layers[3])
{
	memset(dst, 0, sizeof *dst);
	for (int i = 2; i >= 0; i--) {
		const struct lima_yaml_config *c = layers[i];
		if (c->has_vm_type) {
			memcpy(dst->vm_type, c->vm_type, sizeof dst->vm_type);
			dst->has_vm_type = true;
		}
		if (c->has_arch) {
			memcpy(dst->arch, c->arch, sizeof dst->arch);
			dst->has_arch = true;
		}
		if (c->has_cpus) {
			dst->cpus = c->cpus;
			dst->has_cpus = true;
		}
		if (c->has_memory) {
			dst->memory = c->memory;
			dst->has_memory = true;
		}
		if (c->has_disk) {
			dst->disk = c->disk;
			dst->has_disk = true;
		}
	}
}

static void apply_builtin_defaults(struct lima_instance *inst, const struct lima_yaml_config *c)
{
	char host_arch[16];
	lima_host(inst->host_os, sizeof inst->host_os, host_arch, sizeof host_arch);
	snprintf(inst->arch, sizeof inst->arch, "%s", c->has_arch ? c->arch : host_arch);
	if (c->has_vm_type) {
		snprintf(inst->vm_type, sizeof inst->vm_type, "%s", c->vm_type);
	} else {
		snprintf(inst->vm_type, sizeof inst->vm_type, "%s",
			 lima_default_vm_type(inst->host_os, host_arch, inst->arch));
		inst->vm_type_defaulted = true;
	}
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	inst->cpus = c->has_cpus ? c->cpus : (int)(cores > 0 && cores < 4 ? cores : 4);
	if (c->has_memory) {
		inst->memory = c->memory;
	} else {
		/* min("4GiB", half of host RAM) */
		struct platform_host_memory hm;
		inst->memory = 4 * VMC_GIB;
		if (platform_host_memory(&hm) == 0 && hm.total / 2 < inst->memory)
			inst->memory = hm.total / 2;
	}
	inst->disk = c->has_disk ? c->disk : 100 * VMC_GIB;
}

/* "PID\n" as Lima writes it; 0 when absent, dead, or not a pid (noted in problem). */
static pid_t read_pid_file(const char *dir, const char *leaf, char *problem, size_t psize)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/%s", dir, leaf);
	char *buf;
	size_t len;
	if (vmc_read_file(path, 64, &buf, &len) < 0)
		return 0;
	char *end;
	errno = 0;
	long pid = strtol(buf, &end, 10);
	bool valid = end != buf && errno == 0 && pid > 0 && pid <= INT32_MAX;
	while (valid && isspace((unsigned char)*end))
		end++;
	valid = valid && *end == '\0';
	free(buf);
	if (!valid) {
		if (!problem[0])
			textf(problem, psize, "%s does not hold a pid", leaf);
		return 0;
	}
	if (!platform_pid_alive((pid_t)pid)) {
		if (!problem[0])
			textf(problem, psize, "%s names pid %ld, which is not running (stale)",
			      leaf, pid);
		return 0;
	}
	return (pid_t)pid;
}

static void status_from_pid_files(struct lima_instance *inst)
{
	char leaf[32];
	snprintf(leaf, sizeof leaf, "%s.pid", inst->vm_type);
	char ha_problem[128] = "", drv_problem[128] = "";
	inst->ha_pid = read_pid_file(inst->dir, "ha.pid", ha_problem, sizeof ha_problem);
	inst->driver_pid = read_pid_file(inst->dir, leaf, drv_problem, sizeof drv_problem);
	if (inst->ha_pid > 0 && inst->driver_pid > 0) {
		inst->status = LIMA_STATUS_RUNNING;
	} else if (inst->ha_pid == 0 && inst->driver_pid == 0) {
		inst->status = LIMA_STATUS_STOPPED;
	} else {
		inst->status = LIMA_STATUS_BROKEN;
		if (inst->ha_pid == 0)
			textf(inst->problem, sizeof inst->problem,
			      "%s is running (pid %ld) but the hostagent is not (%s)", leaf,
			      (long)inst->driver_pid, ha_problem[0] ? ha_problem : "no ha.pid");
		else
			textf(inst->problem, sizeof inst->problem,
			      "the hostagent is running (pid %ld) but %s", (long)inst->ha_pid,
			      drv_problem[0] ? drv_problem
					     : "there is no "
					       "driver pid file");
	}
}

static void read_lima_version(struct lima_instance *inst)
{
	char path[PATH_MAX + 32], *buf;
	size_t len;
	snprintf(path, sizeof path, "%s/lima-version", inst->dir);
	if (vmc_read_file(path, 256, &buf, &len) < 0)
		return;
	buf[strcspn(buf, "\r\n")] = '\0';
	snprintf(inst->lima_version, sizeof inst->lima_version, "%s", buf);
	free(buf);
}

static int load_from_dir(const char *home, const char *name, struct lima_instance *inst, char *err,
			 size_t errsize)
{
	memset(inst, 0, sizeof *inst);
	inst->source = "directory";
	snprintf(inst->name, sizeof inst->name, "%s", name);
	int n = snprintf(inst->dir, sizeof inst->dir, "%s/%s", home, name);
	if (n < 0 || (size_t)n >= sizeof inst->dir) {
		textf(err, errsize, "instance path %s/%s is too long", home, name);
		return VMC_EXIT_FAILURE;
	}
	struct stat st;
	if (stat(inst->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		if (errno == EACCES) {
			textf(err, errsize,
			      "cannot open %s: permission denied (another user's instance? run "
			      "as that user or root)",
			      inst->dir);
			return VMC_EXIT_PERMISSION;
		}
		textf(err, errsize,
		      "unknown instance \"%s\" (no %s): limactl list shows the instances", name,
		      inst->dir);
		return VMC_EXIT_NO_INSTANCE;
	}
	char path[PATH_MAX + 64];
	struct lima_yaml_config layers[3], merged;
	snprintf(path, sizeof path, "%s/lima.yaml", inst->dir);
	if (access(path, F_OK) < 0 && errno == ENOENT) {
		snprintf(
		    err, errsize,
		    "%s has no lima.yaml: not a Lima instance (limactl list shows the instances)",
		    inst->dir);
		return VMC_EXIT_NO_INSTANCE;
	}
	int rc = load_yaml_file(path, true, &layers[1], err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	snprintf(path, sizeof path, "%s/_config/default.yaml", home);
	if ((rc = load_yaml_file(path, false, &layers[2], err, errsize)) != VMC_EXIT_OK)
		return rc;
	snprintf(path, sizeof path, "%s/_config/override.yaml", home);
	if ((rc = load_yaml_file(path, false, &layers[0], err, errsize)) != VMC_EXIT_OK)
		return rc;
	const struct lima_yaml_config *order[3] = {&layers[0], &layers[1], &layers[2]};
	merge_config(&merged, order);
	apply_builtin_defaults(inst, &merged);
	status_from_pid_files(inst);
	read_lima_version(inst);
	return VMC_EXIT_OK;
}

/* ---- public entry points ---------------------------------------------------------------- */

void lima_limactl_version(char *buf, size_t size)
{
	const char *argv[] = {"limactl", "--version", NULL};
	if (process_first_line(argv, 30000, buf, size) != 0)
		textf(buf, size, "limactl version unknown");
}

static bool use_limactl(void)
{
	char path[PATH_MAX];
	return process_find_on_path("limactl", path, sizeof path);
}

int lima_instance_load(const char *name, struct lima_instance *inst, char *err, size_t errsize)
{
	memset(inst, 0, sizeof *inst);
	if (!lima_name_valid(name)) {
		textf(err, errsize,
		      "\"%s\" is not a Lima instance name (letters, digits, and . _ - between "
		      "them): limactl list shows the instances",
		      name ? name : "");
		return VMC_EXIT_NO_INSTANCE;
	}
	char home[PATH_MAX - 300];
	if (lima_home(home, sizeof home) < 0) {
		textf(err, errsize, "neither LIMA_HOME nor HOME is set: set LIMA_HOME");
		return VMC_EXIT_FAILURE;
	}
	if (!use_limactl())
		return load_from_dir(home, name, inst, err, errsize);
	struct lima_instance *list;
	size_t n;
	int rc = limactl_list(name, &list, &n, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	if (n == 0) {
		free(list);
		textf(err, errsize, "unknown instance \"%s\": limactl list shows the instances",
		      name);
		return VMC_EXIT_NO_INSTANCE;
	}
	*inst = list[0];
	free(list);
	if (inst->unreadable) {
		textf(err, errsize, "%s: fix it, or see limactl list", inst->problem);
		return VMC_EXIT_MALFORMED;
	}
	if (inst->status == LIMA_STATUS_BROKEN && !inst->problem[0])
		textf(inst->problem, sizeof inst->problem,
		      "limactl reports it Broken: see limactl list and %s/ha.stderr.log",
		      inst->dir);
	return VMC_EXIT_OK;
}

int lima_instance_require_running(const char *name, struct lima_instance *inst, char *err,
				  size_t errsize)
{
	int rc = lima_instance_load(name, inst, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	switch (inst->status) {
	case LIMA_STATUS_RUNNING:
		return VMC_EXIT_OK;
	case LIMA_STATUS_BROKEN:
		textf(err, errsize,
		      "instance \"%s\" is broken (%s): stop it with limactl stop -f %s, then "
		      "limactl start %s",
		      name, inst->problem[0] ? inst->problem : "see limactl list", name, name);
		return VMC_EXIT_STOPPED;
	default:
		textf(err, errsize, "instance \"%s\" is %s: start it with limactl start %s", name,
		      inst->status == LIMA_STATUS_UNKNOWN ? "not running"
							  : lima_status_name(inst->status),
		      name);
		return VMC_EXIT_STOPPED;
	}
}

static int list_from_dir(const char *home, struct lima_instance **out, size_t *n, char *err,
			 size_t errsize)
{
	*out = NULL;
	*n = 0;
	DIR *d = opendir(home);
	if (!d) {
		if (errno == ENOENT)
			return VMC_EXIT_OK;
		if (errno == EACCES) {
			textf(err, errsize, "cannot open %s: permission denied", home);
			return VMC_EXIT_PERMISSION;
		}
		errorf(err, errsize, "cannot open %s:", home);
		return VMC_EXIT_FAILURE;
	}
	size_t cap = 0;
	struct dirent *e;
	int rc = VMC_EXIT_OK;
	while ((e = readdir(d))) {
		/* _config, _templates, _cache... are Lima's own; hidden entries are not instances.
		 */
		if (!lima_name_valid(e->d_name))
			continue;
		char yaml[PATH_MAX];
		snprintf(yaml, sizeof yaml, "%s/%s/lima.yaml", home, e->d_name);
		if (access(yaml, F_OK) < 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			struct lima_instance *grown = realloc(*out, cap * sizeof **out);
			if (!grown) {
				rc = VMC_EXIT_FAILURE;
				textf(err, errsize, "out of memory");
				break;
			}
			*out = grown;
		}
		char one_err[512];
		int one = load_from_dir(home, e->d_name, &(*out)[*n], one_err, sizeof one_err);
		if (one != VMC_EXIT_OK) {
			/* One bad instance must not hide the others: keep it, Broken, with why. */
			struct lima_instance *inst = &(*out)[*n];
			memset(inst, 0, sizeof *inst);
			inst->source = "directory";
			snprintf(inst->name, sizeof inst->name, "%s", e->d_name);
			snprintf(inst->dir, sizeof inst->dir, "%s/%s", home, e->d_name);
			snprintf(inst->vm_type, sizeof inst->vm_type, "?");
			inst->status = LIMA_STATUS_BROKEN;
			textf(inst->problem, sizeof inst->problem, "%s", one_err);
		}
		(*n)++;
	}
	closedir(d);
	if (rc != VMC_EXIT_OK) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int lima_instance_list(struct lima_instance **out, size_t *n, char *err, size_t errsize)
{
	*out = NULL;
	*n = 0;
	char home[PATH_MAX - 300];
	if (lima_home(home, sizeof home) < 0) {
		textf(err, errsize, "neither LIMA_HOME nor HOME is set: set LIMA_HOME");
		return VMC_EXIT_FAILURE;
	}
	int rc = use_limactl() ? limactl_list(NULL, out, n, err, errsize)
			       : list_from_dir(home, out, n, err, errsize);
	if (rc == VMC_EXIT_OK && *n > 1)
		qsort(*out, *n, sizeof **out, compare_names);
	return rc;
}
