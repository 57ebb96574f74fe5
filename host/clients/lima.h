/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lima instance discovery (docs/lima.md#instance-directory, docs/lima.md#limactl-list-json):
 * `limactl list --format '{{json .}}' NAME` when limactl is on PATH (JSON Lines, limactl.c),
 * else the instance directory itself (lima_dir.c: lima.yaml via libyaml, ha.pid,
 * <vmType>.pid, status by Lima's own pid-file rule, docs/lima.md#instance-status).
 */
#ifndef VMC_LIMA_H
#define VMC_LIMA_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum lima_status {
	LIMA_STATUS_UNKNOWN = 0,
	LIMA_STATUS_RUNNING,
	LIMA_STATUS_STOPPED,
	LIMA_STATUS_BROKEN,
	LIMA_STATUS_INSTALLING,
	LIMA_STATUS_UNINITIALIZED,
};

struct lima_instance {
	char name[256];
	char dir[PATH_MAX];
	char vm_type[16]; /* qemu | vz | krunkit | wsl2 */
	char arch[16];	  /* x86_64 | aarch64 | ... */
	int cpus;
	uint64_t memory; /* bytes (0 if unknown) */
	uint64_t disk;	 /* bytes (0 if unknown) */
	enum lima_status status;
	pid_t ha_pid;	       /* hostAgentPID / ha.pid, 0 if none */
	pid_t driver_pid;      /* driverPID / <vmType>.pid, 0 if none */
	char lima_version[64]; /* limaVersion or <dir>/lima-version, "" if unknown */
	const char *source;    /* "limactl" or "directory": how it was found */
	char problem[256]; /* why it is Broken, or what was odd (stale pid file...), "" if none */
	char host_os[16];  /* "darwin", "linux": limactl's HostOS, else this machine's */
	bool vm_type_defaulted; /* lima.yaml left vmType out: Lima's per-OS default was applied */
	bool
	    unreadable; /* Lima cannot load its lima.yaml (limactl lists it with an empty status) */
};

const char *lima_status_name(enum lima_status status);

/* $LIMA_HOME, else ~/.lima. Returns 0 or -1 (HOME unset). */
int lima_home(char *buf, size_t size);

/*
 * Loads one instance by name. Returns VMC_EXIT_OK, or an exit code with a one-line message in
 * err that says what to do: VMC_EXIT_NO_INSTANCE, VMC_EXIT_MALFORMED (lima.yaml / limactl JSON),
 * VMC_EXIT_PERMISSION.
 */
int lima_instance_load(const char *name, struct lima_instance *inst, char *err, size_t errsize);

/* lima_instance_load + "is it running?" (VMC_EXIT_STOPPED: "start it with limactl start NAME"). */
int lima_instance_require_running(const char *name, struct lima_instance *inst, char *err,
				  size_t errsize);

/* Every instance (sorted by name); *out is malloc'd. Returns an exit code like above. */
int lima_instance_list(struct lima_instance **out, size_t *n, char *err, size_t errsize);

/* <dir>/<rel> into buf ("sock/vmcost-agent.sock", "qmp.sock", "ha.stderr.log"). */
int lima_instance_path(const struct lima_instance *inst, const char *rel, char *buf, size_t size);

/* Lima's identifier rule: letters and digits, single '.', '_' or '-' between them. */
bool lima_name_valid(const char *name);

/* First line of `limactl --version` ("limactl version 2.2.0"), or "limactl version unknown". */
void lima_limactl_version(char *buf, size_t size);

/*
 * Parses `limactl list --json` output (JSON Lines, or the indented form limactl prints on a
 * TTY). name == NULL keeps every instance, else only that one (none: *n == 0). Returns
 * VMC_EXIT_OK or VMC_EXIT_MALFORMED with the line and problem in err. *out is malloc'd.
 */
int lima_parse_list_json(const char *buf, size_t len, const char *name, struct lima_instance **out,
			 size_t *n, char *err, size_t errsize);

/* What one lima.yaml says (no defaults): fields it leaves out stay unset. */
struct lima_yaml_config {
	char vm_type[16], arch[16];
	int cpus;
	uint64_t memory, disk;
	bool has_vm_type, has_arch, has_cpus, has_memory, has_disk;
};

/*
 * Parses one lima.yaml (or _config/default.yaml, override.yaml) with libyaml. Returns
 * VMC_EXIT_OK or VMC_EXIT_MALFORMED with "FILE: line L: key: problem" in err (file names the
 * document in messages).
 */
int lima_parse_yaml(const char *buf, size_t len, const char *file, struct lima_yaml_config *cfg,
		    char *err, size_t errsize);

/* Lima's default vmType: vz on macOS for the native arch, qemu otherwise
 * (docs/lima.md#default-vmtype). */
const char *lima_default_vm_type(const char *host_os, const char *host_arch, const char *arch);

/* This machine as Lima names it: "darwin"/"linux", "aarch64"/"x86_64". */
void lima_host(char *os, size_t os_size, char *arch, size_t arch_size);

#endif
