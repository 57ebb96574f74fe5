/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /etc/vmcost/agent.yaml: a flat mapping of documented keys (provision/vmcost-agent.yaml is the
 * commented default). Strict on purpose: a typo in a key must not silently leave a default in
 * place on a machine nobody watches, so unknown keys, duplicates and bad values are errors that
 * name file, line and key.
 */
#include "config.h"

#include "log.h"
#include "message.h"
#include "readfile.h"
#include "units.h"
#include "yamlutil.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A config bigger than this is not something we wrote or documented. */
#define CONFIG_MAX_BYTES (256u * 1024u)

void agent_config_defaults(struct agent_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->interval_s = 600;
	cfg->idle_cpu_percent = 0.5;
	cfg->idle_load1 = 0.2;
	cfg->idle_psi_percent = 1.0;
	cfg->floor_bytes = 128 * VMC_MIB;
	cfg->step_bytes = 0;
	cfg->method = TRIM_METHOD_AUTO;
	snprintf(cfg->socket_path, sizeof cfg->socket_path, "%s", AGENT_DEFAULT_SOCKET);
	snprintf(cfg->socket_owner, sizeof cfg->socket_owner, "%s", "root");
	snprintf(cfg->socket_group, sizeof cfg->socket_group, "%s", "docker");
	cfg->socket_mode = 0660;
	cfg->log_level = VMC_LOG_INFO;
	cfg->trim_enabled = true;
	cfg->max_request_bytes = 64 * 1024;
	snprintf(cfg->engine_cgroups, sizeof cfg->engine_cgroups, "%s", "auto");
	cfg->engine_freeze_lima_agent = false;
	cfg->engine_freeze_timeout_s = 5;
	snprintf(cfg->docker_socket, sizeof cfg->docker_socket, "%s", AGENT_DEFAULT_DOCKER_SOCKET);
}

/* Where an error is reported: "FILE:LINE: key \"KEY\": MESSAGE". */
struct config_site {
	const char *name;
	int line;
	const char *key;
	char *err;
	size_t errsize;
};

__attribute__((format(printf, 2, 3))) static int bad_value(const struct config_site *site,
							   const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(site->err, site->errsize, "%s:%d: key \"%s\": %s", site->name, site->line,
		 site->key, msg);
	return -1;
}

/* A plain decimal number ("0.5", "2"), optionally followed by '%' when percent is set. */
static int parse_number(const char *s, bool percent, double *value)
{
	if (vmc_parse_decimal(&s, value) < 0)
		return -1;
	if (percent && *s == '%')
		s++;
	return *s == '\0' ? 0 : -1;
}

static int set_interval(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	double v;
	if (vmc_parse_duration(s, &v) < 0)
		return bad_value(site, "\"%s\" is not a duration (examples: 600, 10m, 90s)", s);
	if (v < 1 || v > 7 * 86400)
		return bad_value(site, "%s is out of range (1s to 7 days)", s);
	cfg->interval_s = v;
	return 0;
}

static int set_percent(const struct config_site *site, const char *s, double *out)
{
	double v;
	if (parse_number(s, true, &v) < 0)
		return bad_value(site, "\"%s\" is not a percentage (example: 0.5)", s);
	if (v > 100)
		return bad_value(site, "%s is more than 100 %%", s);
	*out = v;
	return 0;
}

static int set_load1(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	double v;
	if (parse_number(s, false, &v) < 0)
		return bad_value(site, "\"%s\" is not a load average (example: 0.2)", s);
	if (v > 1024)
		return bad_value(site, "%s is out of range (0 to 1024)", s);
	cfg->idle_load1 = v;
	return 0;
}

static int set_size(const struct config_site *site, const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (vmc_parse_size(s, &v) < 0)
		return bad_value(site, "\"%s\" is not a size (examples: 128MiB, 1G, 0)", s);
	if (v > 64 * 1024 * VMC_GIB)
		return bad_value(site, "%s is more than 64 TiB", s);
	*out = v;
	return 0;
}

static int set_step(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	if (strcmp(s, "auto") == 0) {
		cfg->step_bytes = 0;
		return 0;
	}
	uint64_t v = 0;
	if (set_size(site, s, &v) < 0)
		return -1;
	if (v != 0 && v < VMC_MIB)
		return bad_value(site, "%s is below 1 MiB (0 or auto = MemTotal/32)", s);
	cfg->step_bytes = v;
	return 0;
}

static int set_method(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	if (strcmp(s, "auto") == 0)
		cfg->method = TRIM_METHOD_AUTO;
	else if (strcmp(s, "reclaim") == 0)
		cfg->method = TRIM_METHOD_RECLAIM;
	else if (strcmp(s, "drop-caches") == 0)
		cfg->method = TRIM_METHOD_DROP_CACHES;
	else
		return bad_value(site, "\"%s\" is not one of auto, reclaim, drop-caches", s);
	return 0;
}

static int set_socket_path(const struct config_site *site, const char *s, char *out, size_t size)
{
	if (s[0] != '/')
		return bad_value(site, "\"%s\" is not an absolute path", s);
	if (strlen(s) >= size)
		return bad_value(site, "path is longer than %zu bytes (a unix socket limit)",
				 size - 1);
	snprintf(out, size, "%s", s);
	return 0;
}

static int set_socket(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	return set_socket_path(site, s, cfg->socket_path, sizeof cfg->socket_path);
}

static int set_docker_socket(const struct config_site *site, const char *s,
			     struct agent_config *cfg)
{
	return set_socket_path(site, s, cfg->docker_socket, sizeof cfg->docker_socket);
}

/* "auto", or cgroup paths below /sys/fs/cgroup: no "..", no leading '/', no blanks. */
static int set_engine_cgroups(const struct config_site *site, const char *s,
			      struct agent_config *cfg)
{
	if (strlen(s) >= sizeof cfg->engine_cgroups)
		return bad_value(site, "longer than %zu characters",
				 sizeof cfg->engine_cgroups - 1);
	if (s[0] == '\0')
		return bad_value(site, "needs auto or a list of cgroups (delete the line to keep "
				       "the default, auto)");
	if (strcmp(s, "auto") != 0) {
		int count = 1;
		for (const char *p = s; *p; p++)
			count += *p == ',';
		if (count > AGENT_MAX_ENGINE_CGROUPS)
			return bad_value(site, "more than %d cgroups", AGENT_MAX_ENGINE_CGROUPS);
		if (s[0] == '/' || s[0] == ',' || strstr(s, "..") || strstr(s, ",,") ||
		    strstr(s, ",/") || s[strlen(s) - 1] == ',' || strpbrk(s, " \t\n"))
			return bad_value(
			    site,
			    "\"%s\" is not auto or a list of cgroups below "
			    "/sys/fs/cgroup (example: openrc.docker,openrc.containerd)",
			    s);
	}
	snprintf(cfg->engine_cgroups, sizeof cfg->engine_cgroups, "%s", s);
	return 0;
}

static int set_freeze_timeout(const struct config_site *site, const char *s,
			      struct agent_config *cfg)
{
	double v;
	if (vmc_parse_duration(s, &v) < 0)
		return bad_value(site, "\"%s\" is not a duration (examples: 5s, 500ms)", s);
	if (v < 0.1 || v > 60)
		return bad_value(site, "%s is out of range (100ms to 60s)", s);
	cfg->engine_freeze_timeout_s = v;
	return 0;
}

/* A user or group name as /etc/passwd and /etc/group can hold it, or a numeric id. */
static int set_name(const struct config_site *site, const char *s, const char *what, char *out,
		    size_t size)
{
	if (*s == '\0' || strlen(s) >= size)
		return bad_value(site, "needs a %s name of 1 to %zu characters", what, size - 1);
	for (const char *p = s; *p; p++)
		if (*p == ':' || *p == ',' || isspace((unsigned char)*p) ||
		    iscntrl((unsigned char)*p))
			return bad_value(site, "\"%s\" is not a valid %s name", s, what);
	snprintf(out, size, "%s", s);
	return 0;
}

static int set_owner(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	return set_name(site, s, "user", cfg->socket_owner, sizeof cfg->socket_owner);
}

static int set_group(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	return set_name(site, s, "group", cfg->socket_group, sizeof cfg->socket_group);
}

/* Octal as chmod reads it: 0660, 660 and YAML 1.2's 0o660 all mean rw-rw----. */
static int set_mode(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	const char *digits = (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) ? s + 2 : s;
	unsigned long v = 0;
	if (*digits == '\0' || strlen(digits) > 6)
		return bad_value(site, "\"%s\" is not an octal mode (example: 0660)", s);
	for (const char *p = digits; *p; p++) {
		if (*p < '0' || *p > '7')
			return bad_value(site, "\"%s\" is not an octal mode (example: 0660)", s);
		v = v * 8 + (unsigned long)(*p - '0');
	}
	if (v > 0777)
		return bad_value(site, "%s has bits beyond 0777", s);
	if ((v & 0600) != 0600)
		return bad_value(site, "%s does not let the owner read and write", s);
	cfg->socket_mode = (unsigned)v;
	return 0;
}

static int set_log_level(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	int level = vmc_log_level_parse(s);
	if (level < 0)
		return bad_value(site, "\"%s\" is not one of error, warn, info, debug", s);
	cfg->log_level = level;
	return 0;
}

static int set_max_request(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	uint64_t v = 0;
	if (set_size(site, s, &v) < 0)
		return -1;
	if (v < 1024 || v > 16 * VMC_MIB)
		return bad_value(site, "%s is out of range (1KiB to 16MiB)", s);
	cfg->max_request_bytes = (size_t)v;
	return 0;
}

struct config_key {
	const char *name;
	int (*set)(const struct config_site *site, const char *value, struct agent_config *cfg);
};

static int set_idle_cpu(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	return set_percent(site, s, &cfg->idle_cpu_percent);
}

static int set_idle_psi(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	return set_percent(site, s, &cfg->idle_psi_percent);
}

static int set_floor(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	return set_size(site, s, &cfg->floor_bytes);
}

static int set_bool(const struct config_site *site, const char *s, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on"};
	static const char *const no[] = {"false", "no", "off"};
	for (size_t i = 0; i < 3; i++) {
		if (strcasecmp(s, yes[i]) == 0 || strcasecmp(s, no[i]) == 0) {
			*out = strcasecmp(s, yes[i]) == 0;
			return 0;
		}
	}
	return bad_value(site, "\"%s\" is not true or false", s);
}

static int set_trim(const struct config_site *site, const char *s, struct agent_config *cfg)
{
	return set_bool(site, s, &cfg->trim_enabled);
}

static int set_freeze_lima_agent(const struct config_site *site, const char *s,
				 struct agent_config *cfg)
{
	return set_bool(site, s, &cfg->engine_freeze_lima_agent);
}

static const struct config_key config_keys[] = {
    {"interval", set_interval},
    {"idle-cpu-percent", set_idle_cpu},
    {"idle-load1", set_load1},
    {"idle-psi-percent", set_idle_psi},
    {"floor", set_floor},
    {"step", set_step},
    {"method", set_method},
    {"socket", set_socket},
    {"socket-owner", set_owner},
    {"socket-group", set_group},
    {"socket-mode", set_mode},
    {"log-level", set_log_level},
    {"trim", set_trim},
    {"max-request", set_max_request},
    {"engine-cgroups", set_engine_cgroups},
    {"engine-freeze-lima-agent", set_freeze_lima_agent},
    {"engine-freeze-timeout", set_freeze_timeout},
    {"docker-socket", set_docker_socket},
};

static const struct config_key *find_key(const char *name)
{
	for (size_t i = 0; i < sizeof config_keys / sizeof config_keys[0]; i++)
		if (strcmp(config_keys[i].name, name) == 0)
			return &config_keys[i];
	return NULL;
}

static int apply_pair(struct vmc_yaml *y, const yaml_node_t *root, size_t i,
		      struct config_site *site, struct agent_config *cfg)
{
	yaml_node_t *value;
	const char *key = vmc_yaml_map_key(y, root, i, &value);
	yaml_node_pair_t *pair = root->data.mapping.pairs.start + i;
	site->line = vmc_yaml_line(vmc_yaml_node(y, pair->key));
	if (!key) {
		snprintf(site->err, site->errsize, "%s:%d: keys must be plain names", site->name,
			 site->line);
		return -1;
	}
	site->key = key;
	const struct config_key *known = find_key(key);
	if (!known) {
		char names[512] = "";
		for (size_t k = 0; k < sizeof config_keys / sizeof config_keys[0]; k++)
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
				 k ? ", " : "", config_keys[k].name);
		return bad_value(site, "unknown key (known keys: %s)", names);
	}
	for (size_t j = 0; j < i; j++) {
		const char *earlier = vmc_yaml_map_key(y, root, j, NULL);
		if (earlier && strcmp(earlier, key) == 0)
			return bad_value(site, "given twice");
	}
	const char *text = vmc_yaml_scalar(value);
	site->line = vmc_yaml_line(value);
	if (!text)
		return bad_value(site, "needs a single value, not a list or mapping");
	if (vmc_yaml_is_null(value))
		return bad_value(site, "needs a value (delete the line to keep the default)");
	return known->set(site, text, cfg);
}

int agent_config_parse(const char *buf, size_t len, const char *name, struct agent_config *cfg,
		       char *err, size_t errsize)
{
	struct vmc_yaml y;
	char yerr[256];
	agent_config_defaults(cfg);
	if (vmc_yaml_load(&y, buf, len, yerr, sizeof yerr) < 0) {
		snprintf(err, errsize, "%s: %s", name, yerr);
		return -1;
	}
	struct agent_config parsed = *cfg;
	yaml_node_t *root = vmc_yaml_root(&y);
	int rc = 0;
	if (root && !vmc_yaml_is_null(root)) {
		if (root->type != YAML_MAPPING_NODE) {
			snprintf(err, errsize, "%s:%d: expected a mapping of keys (key: value)",
				 name, vmc_yaml_line(root));
			rc = -1;
		}
		struct config_site site = {name, 0, "", err, errsize};
		size_t n = vmc_yaml_map_size(root);
		for (size_t i = 0; rc == 0 && i < n; i++)
			rc = apply_pair(&y, root, i, &site, &parsed);
	}
	vmc_yaml_free(&y);
	/* Nothing half-applied: the caller sees either the whole file or the defaults. */
	if (rc == 0)
		*cfg = parsed;
	return rc;
}

/* Why a config could not be read, as an exit code: the README's table, never the text. */
static int read_failure(int errnum, const char *path, bool must_exist, char *err, size_t errsize)
{
	errno = errnum;
	switch (errnum) {
	case EFBIG:
		snprintf(err, errsize, "%s: larger than %u KiB: not a vmcost-agent config", path,
			 CONFIG_MAX_BYTES / 1024);
		return VMC_EXIT_MALFORMED;
	case EACCES:
	case EPERM:
		vmc_errorf(err, errsize, "%s: cannot read (run as root):", path);
		return VMC_EXIT_PERMISSION;
	case ENOENT:
	case ENOTDIR:
	case EISDIR:
		vmc_errorf(err, errsize,
			   must_exist ? "%s: cannot read (check the --config path):"
				      : "%s: cannot read:",
			   path);
		return must_exist ? VMC_EXIT_USAGE : VMC_EXIT_FAILURE;
	default:
		vmc_errorf(err, errsize, "%s: cannot read:", path);
		return VMC_EXIT_FAILURE;
	}
}

int agent_config_load(const char *path, bool must_exist, struct agent_config *cfg, char *err,
		      size_t errsize)
{
	char *buf;
	size_t len;
	agent_config_defaults(cfg);
	if (vmc_read_file(path, CONFIG_MAX_BYTES, &buf, &len) < 0) {
		if (errno == ENOENT && !must_exist)
			return VMC_EXIT_OK;
		return read_failure(errno, path, must_exist, err, errsize);
	}
	int rc = agent_config_parse(buf, len, path, cfg, err, errsize);
	free(buf);
	if (rc == 0)
		snprintf(cfg->source, sizeof cfg->source, "%s", path);
	return rc < 0 ? VMC_EXIT_MALFORMED : VMC_EXIT_OK;
}
