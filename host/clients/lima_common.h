/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A Lima instance as vmcost sees it, and the rules about instances that every way of finding
 * one shares: Lima's names, paths, statuses and default vmType. The lowest of the lima*.c files:
 * it calls none of them.
 */
#ifndef VMC_LIMA_COMMON_H
#define VMC_LIMA_COMMON_H

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

/* <dir>/<rel> into buf ("sock/vmcost-agent.sock", "qmp.sock", "ha.stderr.log"). */
int lima_instance_path(const struct lima_instance *inst, const char *rel, char *buf, size_t size);

/* Lima's identifier rule: letters and digits, single '.', '_' or '-' between them. */
bool lima_name_valid(const char *name);

/* Lima's default vmType: vz on macOS for the native arch, qemu otherwise
 * (docs/lima.md#default-vmtype). */
const char *lima_default_vm_type(const char *host_os, const char *host_arch, const char *arch);

/* This machine as Lima names it: "darwin"/"linux", "aarch64"/"x86_64". */
void lima_host(char *os, size_t os_size, char *arch, size_t arch_size);

#endif
