/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Instances read from $LIMA_HOME itself, the way Lima reads them when limactl is not there
 * (docs/lima.md#instance-directory, docs/lima.md#limayaml): lima.yaml merged with
 * _config/default.yaml and override.yaml, Lima's defaults, and pid files that count only while
 * their process lives.
 */
#include "clients/lima_dir.h"

#include "log.h"
#include "message.h"
#include "platform/platform.h"
#include "readfile.h"
#include "units.h"
#include "yamlutil.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Lima refuses larger templates; a bigger file is not a config we should trust. */
#define LIMA_YAML_MAX (4u << 20)

static bool known_vm_type(const char *s)
{
	return strcmp(s, "qemu") == 0 || strcmp(s, "vz") == 0 || strcmp(s, "krunkit") == 0 ||
	       strcmp(s, "wsl2") == 0;
}

static int yaml_fail(char *err, size_t errsize, const char *file, const yaml_node_t *node,
		     const char *key, const char *problem)
{
	vmc_textf(err, errsize, "%s: line %d: %s: %s", file, vmc_yaml_line(node), key, problem);
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
		vmc_textf(err, errsize, "%s: %s", file, yerr);
		return VMC_EXIT_MALFORMED;
	}
	int rc = VMC_EXIT_OK;
	yaml_node_t *root = vmc_yaml_root(&y);
	if (!root || vmc_yaml_is_null(root))
		goto done;
	if (root->type != YAML_MAPPING_NODE) {
		vmc_textf(err, errsize, "%s: line %d: the document is not a mapping of keys", file,
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
			vmc_textf(err, errsize,
				  "cannot read %s: permission denied (another user's instance? run "
				  "as that user or root)",
				  path);
			return VMC_EXIT_PERMISSION;
		}
		if (errno == EFBIG) {
			vmc_textf(err, errsize, "%s is larger than 4 MiB: not a Lima config", path);
			return VMC_EXIT_MALFORMED;
		}
		vmc_errorf(err, errsize, "cannot read %s:", path);
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
			vmc_textf(problem, psize, "%s does not hold a pid", leaf);
		return 0;
	}
	if (!platform_pid_alive((pid_t)pid)) {
		if (!problem[0])
			vmc_textf(problem, psize, "%s names pid %ld, which is not running (stale)",
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
			vmc_textf(inst->problem, sizeof inst->problem,
				  "%s is running (pid %ld) but the hostagent is not (%s)", leaf,
				  (long)inst->driver_pid, ha_problem[0] ? ha_problem : "no ha.pid");
		else
			vmc_textf(inst->problem, sizeof inst->problem,
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

int lima_dir_load(const char *home, const char *name, struct lima_instance *inst, char *err,
		  size_t errsize)
{
	memset(inst, 0, sizeof *inst);
	inst->source = "directory";
	snprintf(inst->name, sizeof inst->name, "%s", name);
	int n = snprintf(inst->dir, sizeof inst->dir, "%s/%s", home, name);
	if (n < 0 || (size_t)n >= sizeof inst->dir) {
		vmc_textf(err, errsize, "instance path %s/%s is too long", home, name);
		return VMC_EXIT_FAILURE;
	}
	struct stat st;
	if (stat(inst->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		if (errno == EACCES) {
			vmc_textf(err, errsize,
				  "cannot open %s: permission denied (another user's instance? run "
				  "as that user or root)",
				  inst->dir);
			return VMC_EXIT_PERMISSION;
		}
		vmc_textf(err, errsize,
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

int lima_dir_list(const char *home, struct lima_instance **out, size_t *n, char *err,
		  size_t errsize)
{
	*out = NULL;
	*n = 0;
	DIR *d = opendir(home);
	if (!d) {
		if (errno == ENOENT)
			return VMC_EXIT_OK;
		if (errno == EACCES) {
			vmc_textf(err, errsize, "cannot open %s: permission denied", home);
			return VMC_EXIT_PERMISSION;
		}
		vmc_errorf(err, errsize, "cannot open %s:", home);
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
				vmc_textf(err, errsize, "out of memory");
				break;
			}
			*out = grown;
		}
		char one_err[512];
		int one = lima_dir_load(home, e->d_name, &(*out)[*n], one_err, sizeof one_err);
		if (one != VMC_EXIT_OK) {
			/* One bad instance must not hide the others: keep it, Broken, with why. */
			struct lima_instance *inst = &(*out)[*n];
			memset(inst, 0, sizeof *inst);
			inst->source = "directory";
			snprintf(inst->name, sizeof inst->name, "%s", e->d_name);
			snprintf(inst->dir, sizeof inst->dir, "%s/%s", home, e->d_name);
			snprintf(inst->vm_type, sizeof inst->vm_type, "?");
			inst->status = LIMA_STATUS_BROKEN;
			vmc_textf(inst->problem, sizeof inst->problem, "%s", one_err);
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
