/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Instances as limactl reports them (docs/lima.md#limactl-list-json): `limactl list --format
 * '{{json .}}'` run and its JSON Lines parsed, every key variant from Lima 2.x to 3.0.
 */
#include "clients/limactl.h"

#include "clients/process.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* limactl list is a Go program reading every instance; on a busy Mac it can take seconds. */
#define LIMACTL_TIMEOUT_MS 30000

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
		vmc_textf(inst->problem, sizeof inst->problem, "Lima cannot load %s/lima.yaml",
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

int limactl_parse_list_json(const char *buf, size_t len, const char *name,
			    struct lima_instance **out, size_t *n, char *err, size_t errsize)
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
			vmc_textf(err, errsize, "limactl list --json: line %zu: %s",
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
			vmc_textf(err, errsize,
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
				vmc_textf(err, errsize, "out of memory");
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

int limactl_list(const char *name, struct lima_instance **out, size_t *n, char *err, size_t errsize)
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
	if (process_run(
		argv,
		&(struct process_options){.timeout_ms = LIMACTL_TIMEOUT_MS, .unset_env = unset},
		&res) < 0) {
		vmc_errorf(err, errsize, "cannot run limactl:");
		return VMC_EXIT_FAILURE;
	}
	int rc;
	if (res.truncated) {
		vmc_textf(err, errsize,
			  "limactl list --json printed more than %zu MiB: not Lima's output",
			  PROCESS_MAX_OUTPUT >> 20);
		rc = VMC_EXIT_MALFORMED;
	} else if (res.timed_out) {
		vmc_textf(
		    err, errsize,
		    "limactl list --json did not answer in %d s: check Lima with limactl list",
		    LIMACTL_TIMEOUT_MS / 1000);
		rc = VMC_EXIT_FAILURE;
	} else if (res.exit_code != 0) {
		char line[200];
		process_last_line(res.err, line, sizeof line);
		if (name && (strstr(res.err, "unmatched") || strstr(res.err, "No instance")))
			vmc_textf(err, errsize,
				  "unknown instance \"%s\": limactl list shows the instances",
				  name);
		else
			vmc_textf(err, errsize, "limactl list --json failed (exit %d): %s",
				  res.exit_code, line[0] ? line : "no message");
		rc = name && (strstr(res.err, "unmatched") || strstr(res.err, "No instance"))
			 ? VMC_EXIT_NO_INSTANCE
			 : VMC_EXIT_FAILURE;
	} else {
		rc = limactl_parse_list_json(res.out, res.out_len, name, out, n, err, errsize);
		for (size_t i = 0; rc == VMC_EXIT_OK && i < *n; i++) {
			struct lima_instance *inst = &(*out)[i];
			char why[200] = "";
			if (inst->unreadable && res.err)
				limactl_instance_error(res.err, inst->name, why, sizeof why);
			if (why[0])
				vmc_textf(inst->problem, sizeof inst->problem,
					  "Lima cannot load %s/lima.yaml: %s", inst->dir, why);
		}
	}
	process_result_free(&res);
	return rc;
}
