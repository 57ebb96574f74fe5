/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /etc/vmcost/agent.yaml (libyaml). Every key has a default; unknown keys and bad values are
 * errors naming the file, line and key.
 */
#ifndef VMC_AGENT_CONFIG_H
#define VMC_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_DEFAULT_CONFIG	    "/etc/vmcost/agent.yaml"
#define AGENT_DEFAULT_SOCKET	    "/run/vmcost-agent.sock"
#define AGENT_DEFAULT_DOCKER_SOCKET "/var/run/docker.sock"
/* Most cgroups engine-cgroups may name. */
#define AGENT_MAX_ENGINE_CGROUPS 4

enum trim_method {
	TRIM_METHOD_AUTO,	 /* memory.reclaim, falling back to drop_caches */
	TRIM_METHOD_RECLAIM,	 /* root cgroup memory.reclaim only */
	TRIM_METHOD_DROP_CACHES, /* echo 1 > /proc/sys/vm/drop_caches */
};

struct agent_config {
	double interval_s;	  /* interval: one trim decision per interval (600 s) */
	double idle_cpu_percent;  /* idle-cpu-percent: max busy share over the interval (0.5) */
	double idle_load1;	  /* idle-load1: max 1-minute load average (0.2) */
	double idle_psi_percent;  /* idle-psi-percent: max PSI some avg60, cpu/io/memory (1.0) */
	uint64_t floor_bytes;	  /* floor: file cache kept (128 MiB) */
	uint64_t step_bytes;	  /* step: bytes per memory.reclaim write; 0 = MemTotal/32 in
				     [256 MiB, 1 GiB] */
	enum trim_method method;  /* method: auto | reclaim | drop-caches */
	char socket_path[108];	  /* socket: /run/vmcost-agent.sock */
	char socket_owner[64];	  /* socket-owner: root (falls back to root if missing) */
	char socket_group[64];	  /* socket-group: docker (falls back to root if missing) */
	unsigned socket_mode;	  /* socket-mode: 0660 */
	int log_level;		  /* log-level: error | warn | info | vmc_debug (enum vmc_level) */
	bool trim_enabled;	  /* trim: true (false = API and checks only) */
	size_t max_request_bytes; /* max-request: request body limit (64 KiB) */
	/* engine-cgroups: auto (found at run time) or a comma-separated list of cgroups below
	   /sys/fs/cgroup ("openrc.docker,openrc.containerd") */
	char engine_cgroups[512];
	bool engine_freeze_lima_agent;	/* engine-freeze-lima-agent: false */
	double engine_freeze_timeout_s; /* engine-freeze-timeout: wait for frozen 1 (5 s) */
	char docker_socket[108];	/* docker-socket: /var/run/docker.sock */
	char source[512];		/* the file it was read from, "" for the defaults */
};

void agent_config_defaults(struct agent_config *cfg);
/* Parses YAML text; name is used in messages ("agent.yaml:7: key \"floor\": ..."). */
int agent_config_parse(const char *buf, size_t len, const char *name, struct agent_config *cfg,
		       char *err, size_t errsize);
/*
 * Loads a file; a missing one means the defaults, unless must_exist (the user named it).
 * Returns 0, or the exit code with err: 2 for a named file that is missing or not a file,
 * 7 when it cannot be read for permission, 8 for a malformed one, 1 for other read errors.
 */
int agent_config_load(const char *path, bool must_exist, struct agent_config *cfg, char *err,
		      size_t errsize);

#endif
