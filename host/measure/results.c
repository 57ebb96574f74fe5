/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/results.h"

#include "clients/process.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"
#include "platform/platform.h"
#include "procfs.h"
#include "units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The value of "KEY=value" or KEY="value" at a line start (os-release). */
static int os_release_value(const char *buf, const char *key, char *out, size_t size)
{
	const char *v = vmc_find_key(buf, key);
	if (!v)
		return -1;
	bool quoted = *v == '"';
	if (quoted)
		v++;
	size_t len = strcspn(v, quoted ? "\"\n" : "\n");
	if (len >= size)
		len = size - 1;
	memcpy(out, v, len);
	out[len] = '\0';
	return 0;
}

/* "model name\t: AMD EPYC ..." from /proc/cpuinfo. */
static int cpuinfo_model(const char *buf, char *out, size_t size)
{
	const char *v = vmc_find_key(buf, "model name");
	if (!v)
		return -1;
	v += strspn(v, " \t:");
	size_t len = strcspn(v, "\n");
	if (len >= size)
		len = size - 1;
	memcpy(out, v, len);
	out[len] = '\0';
	return 0;
}

static void describe_os(char *os, size_t size)
{
	char *buf = NULL;
	size_t len;
	os[0] = '\0';
	if (vmc_fs_read("/etc/os-release", &buf, &len, 64 * 1024) == 0) {
		os_release_value(buf, "PRETTY_NAME=", os, size);
		free(buf);
		return;
	}
	char name[64], version[64];
	const char *name_argv[] = {"sw_vers", "-productName", NULL};
	const char *ver_argv[] = {"sw_vers", "-productVersion", NULL};
	process_first_line(name_argv, 5000, name, sizeof name);
	process_first_line(ver_argv, 5000, version, sizeof version);
	if (*name)
		snprintf(os, size, "%s %s", name, version);
}

static void describe_cpu(char *cpu, size_t size)
{
	char *buf = NULL;
	size_t len;
	cpu[0] = '\0';
	if (vmc_fs_read("/proc/cpuinfo", &buf, &len, 4 << 20) == 0) {
		cpuinfo_model(buf, cpu, size);
		free(buf);
		return;
	}
	const char *argv[] = {"sysctl", "-n", "machdep.cpu.brand_string", NULL};
	process_first_line(argv, 5000, cpu, size);
}

json_t *results_machine(void)
{
	char os[128], cpu[128], kernel[256] = "";
	describe_os(os, sizeof os);
	describe_cpu(cpu, sizeof cpu);
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(kernel, sizeof kernel, "%s %s %s", u.sysname, u.release, u.machine);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct platform_host_memory hm;
	uint64_t total = platform_host_memory(&hm) == 0 ? hm.total : 0;
	json_t *m = json_object();
	json_object_set_new(m, "os", *os ? json_string(os) : json_null());
	json_object_set_new(m, "kernel", json_string(kernel));
	json_object_set_new(m, "cpu", *cpu ? json_string(cpu) : json_null());
	json_object_set_new(m, "cpus", json_integer(cpus > 0 ? cpus : 0));
	json_object_set_new(m, "memory", vmc_json_u64(total));
	return m;
}

void results_machine_line(const json_t *machine, char *buf, size_t size)
{
	const char *os = vmc_json_get_str(machine, "os");
	const char *kernel = vmc_json_get_str(machine, "kernel");
	const char *cpu = vmc_json_get_str(machine, "cpu");
	uint64_t mem = 0, cpus = 0;
	vmc_json_get_u64(machine, "memory", &mem);
	vmc_json_get_u64(machine, "cpus", &cpus);
	char m[32];
	snprintf(buf, size, "%s, %s, %llu × %s, %s RAM", os ? os : "unknown OS",
		 kernel ? kernel : "?", (unsigned long long)cpus, cpu ? cpu : "unknown CPU",
		 vmc_format_bytes(mem, m, sizeof m));
}

int results_base(const char *dir, const char *kind, const char *instance, time_t when, char *buf,
		 size_t size)
{
	struct tm tm;
	localtime_r(&when, &tm);
	char stamp[32];
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	int n = snprintf(buf, size, "%s/%s-%s-%s", dir, kind, instance, stamp);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

void results_iso_time(time_t when, char *buf, size_t size)
{
	struct tm tm;
	gmtime_r(&when, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int results_ensure_dir(const char *dir, char *err, size_t errsize)
{
	char path[4096];
	if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
		snprintf(err, errsize, "results directory path is too long");
		return VMC_EXIT_FAILURE;
	}
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			goto fail;
		*p = '/';
	}
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		goto fail;
	if (access(path, W_OK) != 0)
		goto fail;
	return VMC_EXIT_OK;
fail:
	vmc_errorf(
	    err, errsize,
	    "cannot create or write results directory %s (choose another with --results DIR):",
	    dir);
	return VMC_EXIT_FAILURE;
}

int results_write_file(const char *path, int (*writer)(FILE *f, void *ctx), void *ctx)
{
	char tmp[4200];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	int rc = writer(f, ctx);
	if (fclose(f) != 0)
		rc = -1;
	if (rc == 0 && rename(tmp, path) == 0)
		return 0;
	int saved = errno;
	unlink(tmp);
	errno = saved;
	return -1;
}

static int write_json(FILE *f, void *ctx)
{
	return vmc_json_write(f, ctx);
}

int results_write_json(const char *path, const json_t *doc)
{
	return results_write_file(path, write_json, (void *)doc);
}
