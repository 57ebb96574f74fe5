/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The API with the real agent core behind a real unix socket (libcurl as the client). The core
 * reads a fake root made of copies of this machine's /proc files, and its writes (memory.reclaim,
 * drop_caches, compact_memory) land in that tree: the test never drops this machine's caches.
 */
#include "check.h"
#include "config.h"
#include "log.h"
#include "procfs.h"
#include "server.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char root[] = "/tmp/agent-server-core-XXXXXX";
static struct agent_config cfg;

static void make_dirs(const char *path)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
}

static void put_file(const char *rel, const char *text, size_t len)
{
	char path[512];
	snprintf(path, sizeof path, "%s%s", root, rel);
	make_dirs(path);
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fwrite(text, 1, len, f);
	fclose(f);
}

/* A snapshot of a real pseudo-file (skipped when this machine has none). */
static void copy_real(const char *abs)
{
	FILE *f = fopen(abs, "r");
	if (!f)
		return;
	char *buf = malloc(1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	put_file(abs, buf, n);
	free(buf);
}

static char *read_fake(const char *rel)
{
	char path[512];
	snprintf(path, sizeof path, "%s%s", root, rel);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = calloc(1, 4096);
	size_t n = fread(buf, 1, 4095, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void build_fake_root(void)
{
	static const char *const real[] = {
	    "/proc/meminfo",
	    "/proc/stat",
	    "/proc/loadavg",
	    "/proc/vmstat",
	    "/proc/interrupts",
	    "/proc/softirqs",
	    "/proc/cmdline",
	    "/proc/version",
	    "/proc/uptime",
	    "/proc/mounts",
	    "/proc/pressure/cpu",
	    "/proc/pressure/io",
	    "/proc/pressure/memory",
	    "/proc/sys/kernel/osrelease",
	    "/proc/sys/vm/compaction_proactiveness",
	    "/sys/kernel/mm/transparent_hugepage/enabled",
	    "/sys/kernel/mm/transparent_hugepage/defrag",
	};
	for (size_t i = 0; i < sizeof real / sizeof real[0]; i++)
		copy_real(real[i]);
	/* The kernel's write-only knobs, as files that record what was written. */
	put_file("/sys/fs/cgroup/memory.reclaim", "", 0);
	put_file("/proc/sys/vm/drop_caches", "", 0);
	put_file("/proc/sys/vm/compact_memory", "", 0);
	/* A virtio-balloon with free-page reporting (features bit 5) and its order knob. */
	put_file("/sys/bus/virtio/devices/virtio3/device", "0x0005\n", 7);
	put_file("/sys/bus/virtio/devices/virtio3/features",
		 "0110010000000000000000000000000000000000000000000000000000000000\n", 65);
	put_file("/sys/module/page_reporting/parameters/page_reporting_order", "9\n", 2);
	char run[512];
	snprintf(run, sizeof run, "%s/run/", root);
	make_dirs(run);
}

struct http_result {
	long status;
	json_t *body;
};

static size_t collect_body(char *data, size_t size, size_t n, void *userp)
{
	char **buf = userp;
	size_t old = *buf ? strlen(*buf) : 0, add = size * n;
	char *grown = realloc(*buf, old + add + 1);
	if (!grown)
		return 0;
	memcpy(grown + old, data, add);
	grown[old + add] = '\0';
	*buf = grown;
	return add;
}

static struct http_result http(const char *method, const char *path, const char *body)
{
	struct http_result res = {0};
	char url[256], *text = NULL;
	snprintf(url, sizeof url, "http://localhost%s", path);
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, cfg.socket_path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &text);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	if (curl_easy_perform(c) == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res.status);
		res.body = text ? json_loads(text, 0, NULL) : NULL;
		if (!res.body)
			fprintf(stderr, "%s %s: not JSON: %s\n", method, path, text ? text : "");
	}
	free(text);
	curl_easy_cleanup(c);
	return res;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void expect_object(const char *method, const char *path, const char *body)
{
	struct http_result r = http(method, path, body);
	CHECK_INT(r.status, 200);
	CHECK(json_is_object(r.body) && json_object_size(r.body) > 0);
	if (r.status != 200)
		fprintf(stderr, "%s %s: %s\n", method, path,
			json_string_value(json_object_get(r.body, "error")));
	json_decref(r.body);
}

TEST(every_endpoint_answers_with_a_document)
{
	expect_object("GET", "/v1/status", NULL);
	expect_object("GET", "/v1/checks", NULL);
	expect_object("GET", "/v1/balloon", NULL);
	expect_object("GET", "/v1/wakeups?seconds=1", NULL);
	expect_object("POST", "/v1/trim", "{\"dry_run\": true}");
	expect_object("PUT", "/v1/balloon/order", "{\"order\": 10}");
	expect_object("GET", "/v1/version", NULL);
}

TEST(order_goes_to_the_kernel_knob)
{
	char *knob = read_fake("/sys/module/page_reporting/parameters/page_reporting_order");
	CHECK(knob && strtol(knob, NULL, 10) == 10);
	free(knob);
	struct http_result r = http("PUT", "/v1/balloon/order", "{\"order\": 99}");
	CHECK_INT(r.status, 400);
	json_decref(r.body);
}

TEST(a_dry_run_writes_nothing_and_a_forced_trim_writes_the_fake_tree)
{
	char *reclaim = read_fake("/sys/fs/cgroup/memory.reclaim");
	char *drop = read_fake("/proc/sys/vm/drop_caches");
	CHECK_STR(reclaim, "");
	CHECK_STR(drop, "");
	free(reclaim);
	free(drop);
	struct http_result r = http("POST", "/v1/trim", "{\"force\": true}");
	CHECK_INT(r.status, 200);
	CHECK(json_is_true(json_object_get(r.body, "forced")));
	json_decref(r.body);
	reclaim = read_fake("/sys/fs/cgroup/memory.reclaim");
	drop = read_fake("/proc/sys/vm/drop_caches");
	/* The copied meminfo has cache above the 1 MiB floor: something was asked of a knob. */
	CHECK((reclaim && reclaim[0]) || (drop && drop[0]));
	free(reclaim);
	free(drop);
}

static void *slow_wakeups(void *arg)
{
	struct http_result *res = arg;
	*res = http("GET", "/v1/wakeups?seconds=3", NULL);
	return NULL;
}

TEST(status_answers_while_a_3s_wakeups_request_runs)
{
	struct http_result slow;
	pthread_t thread;
	double start = now_s();
	pthread_create(&thread, NULL, slow_wakeups, &slow);
	struct timespec settle = {0, 300 * 1000 * 1000};
	nanosleep(&settle, NULL);
	double t0 = now_s();
	struct http_result status = http("GET", "/v1/status", NULL);
	double took = now_s() - t0;
	double answered_at = now_s() - start;
	pthread_join(thread, NULL);
	double slow_took = now_s() - start;
	CHECK_INT(status.status, 200);
	CHECK(took < 1.5);
	CHECK(answered_at < 2.5);
	CHECK_INT(slow.status, 200);
	CHECK(slow_took >= 2.9);
	json_decref(status.body);
	json_decref(slow.body);
}

int main(void)
{
	if (!mkdtemp(root))
		return 1;
	vmc_log_init("agent_server_core");
	vmc_log_set_level(VMC_LOG_ERROR);
	build_fake_root();
	vmc_fs_set_root(root);
	agent_config_defaults(&cfg);
	snprintf(cfg.socket_path, sizeof cfg.socket_path, "%s/run/vmcost-agent.sock", root);
	snprintf(cfg.socket_group, sizeof cfg.socket_group, "root");
	cfg.floor_bytes = 1024 * 1024;
	curl_global_init(CURL_GLOBAL_DEFAULT);

	struct agent_state *st = agent_state_new();
	struct server_ctx ctx = {&server_core_ops, st, &cfg};
	char err[256] = "";
	struct agent_server *srv = server_open(&ctx, err, sizeof err);
	if (srv && server_serve(srv, err, sizeof err) < 0)
		srv = NULL;
	CHECK(srv != NULL);
	if (!srv) {
		fprintf(stderr, "starting the server: %s\n", err);
		return check_done();
	}
	RUN(every_endpoint_answers_with_a_document);
	RUN(order_goes_to_the_kernel_knob);
	RUN(a_dry_run_writes_nothing_and_a_forced_trim_writes_the_fake_tree);
	RUN(status_answers_while_a_3s_wakeups_request_runs);
	CHECK_INT(server_stop(srv, 5.0), 0);
	agent_state_free(st);
	curl_global_cleanup();
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return check_done();
}
