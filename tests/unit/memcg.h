/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small memory cgroup for tests that allocate on purpose, so they can never endanger the
 * machine: cgroup v1's memory controller when mounted (/sys/fs/cgroup/memory), else cgroup v2.
 * The cgroup is created below the caller's own one. Header-only, for tests/unit/host_*.c.
 */
#ifndef VMC_MEMCG_H
#define VMC_MEMCG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

struct memcg {
	char path[512];
	char procs[600];
	bool v1;
};

static inline int memcg_write(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int rc = fputs(value, f) < 0 ? -1 : 0;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

/* The caller's cgroup path for a v1 controller ("memory") or v2 (""), from /proc/self/cgroup. */
static inline int memcg_self(const char *controller, char *out, size_t size)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return -1;
	char line[1024];
	int rc = -1;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *ctrls = c1 + 1;
		bool match = *controller ? strstr(ctrls, controller) != NULL && *ctrls
					 : *ctrls == '\0' && strncmp(line, "0", 1) == 0;
		if (match) {
			snprintf(out, size, "%s", c2 + 1);
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/* Returns 0, or -1 when no memory cgroup can be made here (not Linux, not root, no controller). */
static inline int memcg_create(struct memcg *cg, const char *name, uint64_t limit)
{
	memset(cg, 0, sizeof *cg);
	char self[400], file[700], value[32];
	snprintf(value, sizeof value, "%llu", (unsigned long long)limit);
	if (access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) == 0 &&
	    memcg_self("memory", self, sizeof self) == 0) {
		cg->v1 = true;
		snprintf(cg->path, sizeof cg->path, "/sys/fs/cgroup/memory%.400s/%.40s-%d",
			 strcmp(self, "/") == 0 ? "" : self, name, (int)getpid());
		if (mkdir(cg->path, 0755) != 0)
			return -1;
		snprintf(file, sizeof file, "%s/memory.limit_in_bytes", cg->path);
	} else if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0 &&
		   memcg_self("", self, sizeof self) == 0) {
		char parent[512];
		snprintf(parent, sizeof parent, "/sys/fs/cgroup%s",
			 strcmp(self, "/") == 0 ? "" : self);
		snprintf(file, sizeof file, "%s/cgroup.subtree_control", parent);
		memcg_write(file, "+memory"); /* may already be on */
		snprintf(cg->path, sizeof cg->path, "%.400s/%.40s-%d", parent, name, (int)getpid());
		if (mkdir(cg->path, 0755) != 0)
			return -1;
		snprintf(file, sizeof file, "%s/memory.max", cg->path);
	} else {
		return -1;
	}
	snprintf(cg->procs, sizeof cg->procs, "%s/cgroup.procs", cg->path);
	if (memcg_write(file, value) != 0) {
		rmdir(cg->path);
		return -1;
	}
	return 0;
}

/* Moves pid (0 = the caller) into the cgroup. */
static inline int memcg_enter(const struct memcg *cg, pid_t pid)
{
	char value[32];
	snprintf(value, sizeof value, "%d", pid ? (int)pid : (int)getpid());
	return memcg_write(cg->procs, value);
}

static inline void memcg_remove(struct memcg *cg)
{
	if (!cg->path[0])
		return;
	for (int i = 0; i < 50 && rmdir(cg->path) != 0; i++)
		usleep(100 * 1000);
	cg->path[0] = '\0';
}

#endif
