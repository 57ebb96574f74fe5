/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What vmcost autostop answers while the instance is stopped (host/autostop/snapshot.c): a
 * snapshot built from Docker's answers (as dockerd 24 sends them), stored and loaded again, the
 * exact bytes of each answer with its X-Vmcost-Snapshot marker, and every poll it must not
 * answer (filters, sizes, HEAD elsewhere than /_ping, versions not recorded, a container that
 * still ran) left to a start.
 */
#include "autostop/snapshot.h"
#include "check.h"
#include "host_testlib.h"

#include <dirent.h>
#include <jansson.h>
#include <stdbool.h>
#include <time.h>
#include <utime.h>

/* 2026-01-02T03:04:05Z */
#define TAKEN 1767323045
/* 1 h 30 min 17 s later: Fri, 02 Jan 2026 04:34:22 GMT */
#define LATER (TAKEN + 5417.0)

static const struct http_header ping_headers[] = {
    {"Api-Version", "1.43"},
    {"Builder-Version", "2"},
    {"Cache-Control", "no-cache, no-store, must-revalidate"},
    {"Content-Length", "2"},
    {"Content-Type", "text/plain; charset=utf-8"},
    {"Date", "Fri, 02 Jan 2026 03:04:05 GMT"},
    {"Docker-Experimental", "false"},
    {"Ostype", "linux"},
    {"Pragma", "no-cache"},
    {"Server", "Docker/24.0.7 (linux)"},
    {"Swarm", "inactive"},
};
static const struct http_header head_ping_headers[] = {
    {"Api-Version", "1.43"},
    {"Builder-Version", "2"},
    {"Cache-Control", "no-cache, no-store, must-revalidate"},
    {"Content-Length", "0"},
    {"Content-Type", "text/plain; charset=utf-8"},
    {"Date", "Fri, 02 Jan 2026 03:04:05 GMT"},
    {"Docker-Experimental", "false"},
    {"Ostype", "linux"},
    {"Pragma", "no-cache"},
    {"Server", "Docker/24.0.7 (linux)"},
    {"Swarm", "inactive"},
};
/* JSON answers: chunked (Go's server for larger bodies), so no Content-Length. */
static const struct http_header json_headers[] = {
    {"Api-Version", "1.43"},
    {"Content-Type", "application/json"},
    {"Date", "Fri, 02 Jan 2026 03:04:05 GMT"},
    {"Docker-Experimental", "false"},
    {"Ostype", "linux"},
    {"Server", "Docker/24.0.7 (linux)"},
    {"Transfer-Encoding", "chunked"},
};
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char version_body[] =
    "{\"Platform\":{\"Name\":\"Docker Engine - Community\"},\"Version\":\"24.0.7\","
    "\"ApiVersion\":\"1.43\",\"MinAPIVersion\":\"1.12\",\"Os\":\"linux\",\"Arch\":\"arm64\"}\n";
static const char version_141_body[] =
    "{\"Version\":\"24.0.7\",\"ApiVersion\":\"1.43\",\"MinAPIVersion\":\"1.12\"}\n";
/* Two stopped containers, as GET /containers/json?all=1 lists them at the snapshot. */
static const char containers_body[] =
    "[{\"Id\":\"aaaa1111\",\"Names\":[\"/pg\"],\"Image\":\"postgres:16\",\"Created\":1767300000,"
    "\"State\":\"exited\",\"Status\":\"Exited (0) 30 minutes ago\"},"
    "{\"Id\":\"bbbb2222\",\"Names\":[\"/job\"],\"Image\":\"alpine\",\"Created\":1767200000,"
    "\"State\":\"created\",\"Status\":\"Created\"}]\n";
static const char images_body[] =
    "[{\"Id\":\"sha256:1234\",\"RepoTags\":[\"alpine:latest\"],\"Size\":7800000}]\n";

static struct snapshot *built(void)
{
	struct snapshot *s = snapshot_new("dev", TAKEN);
	CHECK(s != NULL);
	CHECK_INT(snapshot_add(s, "GET", "/_ping", ping_headers, N(ping_headers), "OK", 2), 0);
	CHECK_INT(snapshot_add(s, "HEAD", "/_ping", head_ping_headers, N(head_ping_headers), "", 0),
		  0);
	CHECK_INT(snapshot_add(s, "GET", "/version", json_headers, N(json_headers), version_body,
			       strlen(version_body)),
		  0);
	CHECK_INT(snapshot_add(s, "GET", "/v1.41/version", json_headers, N(json_headers),
			       version_141_body, strlen(version_141_body)),
		  0);
	CHECK_INT(snapshot_add_version(s, "1.41"), 0);
	CHECK_INT(snapshot_add(s, "GET", "/containers/json?all=1", json_headers, N(json_headers),
			       containers_body, strlen(containers_body)),
		  0);
	CHECK_INT(snapshot_add_exit(s, "aaaa1111", "2026-01-02T02:34:05.5Z", 0), 0);
	CHECK_INT(snapshot_add(s, "GET", "/images/json", json_headers, N(json_headers), images_body,
			       strlen(images_body)),
		  0);
	return s;
}

/* Compares whole answers; on a mismatch prints both, since check.h's line would cut them. */
static void check_bytes(const char *got, size_t len, const char *want)
{
	bool same = got && len == strlen(want) && memcmp(got, want, len) == 0;
	CHECK(same);
	if (!same)
		fprintf(stderr, "---- got\n%.*s\n---- want\n%s\n----\n", (int)len, got ? got : "",
			want);
}

/* The answer's bytes, or NULL with why when the snapshot does not answer. */
static char *answer(const struct snapshot *s, const char *method, const char *target,
		    bool keep_alive, size_t *len, char *why, size_t whysize)
{
	char *out = NULL;
	why[0] = '\0';
	if (snapshot_answer(s, method, target, keep_alive, LATER, &out, len, why, whysize) < 0) {
		CHECK(out == NULL);
		return NULL;
	}
	return out;
}

static const char ping_answer[] = "HTTP/1.1 200 OK\r\n"
				  "Api-Version: 1.43\r\n"
				  "Builder-Version: 2\r\n"
				  "Cache-Control: no-cache, no-store, must-revalidate\r\n"
				  "Content-Length: 2\r\n"
				  "Content-Type: text/plain; charset=utf-8\r\n"
				  "Date: Fri, 02 Jan 2026 04:34:22 GMT\r\n"
				  "Docker-Experimental: false\r\n"
				  "Ostype: linux\r\n"
				  "Pragma: no-cache\r\n"
				  "Server: Docker/24.0.7 (linux)\r\n"
				  "Swarm: inactive\r\n"
				  "X-Vmcost-Snapshot: 2026-01-02T03:04:05Z\r\n"
				  "\r\n"
				  "OK";

TEST(ping_and_version_are_answered_byte_for_byte_with_the_marker)
{
	struct snapshot *s = built();
	CHECK_STR(snapshot_taken(s), "2026-01-02T03:04:05Z");
	char why[300];
	size_t len;
	char *out = answer(s, "GET", "/_ping", true, &len, why, sizeof why);
	check_bytes(out, len, ping_answer);
	free(out);
	/* Under the daemon's own API version, and under any: /_ping is the same. */
	out = answer(s, "GET", "/v1.43/_ping", true, &len, why, sizeof why);
	check_bytes(out, len, ping_answer);
	free(out);
	out = answer(s, "GET", "/version", true, &len, why, sizeof why);
	char want[2048];
	snprintf(want, sizeof want,
		 "HTTP/1.1 200 OK\r\n"
		 "Api-Version: 1.43\r\n"
		 "Content-Length: %zu\r\n"
		 "Content-Type: application/json\r\n"
		 "Date: Fri, 02 Jan 2026 04:34:22 GMT\r\n"
		 "Docker-Experimental: false\r\n"
		 "Ostype: linux\r\n"
		 "Server: Docker/24.0.7 (linux)\r\n"
		 "X-Vmcost-Snapshot: 2026-01-02T03:04:05Z\r\n"
		 "\r\n%s",
		 strlen(version_body), version_body);
	check_bytes(out, len, want);
	free(out);
	/* /v1.43 is the daemon's version: the unversioned answer. */
	out = answer(s, "GET", "/v1.43/version", true, &len, why, sizeof why);
	check_bytes(out, len, want);
	free(out);
	/* Docker reads no parameter of /version: a query changes nothing. */
	out = answer(s, "GET", "/version?cachebust=7", true, &len, why, sizeof why);
	check_bytes(out, len, want);
	free(out);
	snapshot_free(s);
}

TEST(each_recorded_api_version_answers_as_recorded_and_no_other)
{
	struct snapshot *s = built();
	char why[300];
	size_t len;
	char *out = answer(s, "GET", "/v1.41/version", true, &len, why, sizeof why);
	CHECK(out != NULL);
	CHECK(out && strstr(out, version_141_body) != NULL);
	CHECK(out && strstr(out, "\"Platform\"") == NULL);
	free(out);
	CHECK(answer(s, "GET", "/v1.40/version", true, &len, why, sizeof why) == NULL);
	CHECK_STR(why, "API version 1.40 was not recorded");
	/* Recorded for 1.41 only at /version: its container list was not. */
	CHECK(answer(s, "GET", "/v1.41/containers/json?all=1", true, &len, why, sizeof why) ==
	      NULL);
	CHECK_STR(why, "GET /v1.41/containers/json?all=1 is not in the snapshot");
	const char *v[4];
	CHECK_INT(snapshot_versions(s, v, 4), 1);
	CHECK_STR(v[0], "1.41");
	snapshot_free(s);
}

TEST(head_is_headers_only_and_only_for_ping)
{
	struct snapshot *s = built();
	char why[300];
	size_t len;
	char *out = answer(s, "HEAD", "/_ping", true, &len, why, sizeof why);
	check_bytes(out, len,
		    "HTTP/1.1 200 OK\r\n"
		    "Api-Version: 1.43\r\n"
		    "Builder-Version: 2\r\n"
		    "Cache-Control: no-cache, no-store, must-revalidate\r\n"
		    "Content-Length: 0\r\n"
		    "Content-Type: text/plain; charset=utf-8\r\n"
		    "Date: Fri, 02 Jan 2026 04:34:22 GMT\r\n"
		    "Docker-Experimental: false\r\n"
		    "Ostype: linux\r\n"
		    "Pragma: no-cache\r\n"
		    "Server: Docker/24.0.7 (linux)\r\n"
		    "Swarm: inactive\r\n"
		    "X-Vmcost-Snapshot: 2026-01-02T03:04:05Z\r\n"
		    "\r\n");
	free(out);
	CHECK(answer(s, "HEAD", "/version", true, &len, why, sizeof why) == NULL);
	CHECK_CONTAINS(why, "HEAD is recorded for /_ping only");
	CHECK(answer(s, "POST", "/_ping", true, &len, why, sizeof why) == NULL);
	CHECK(answer(s, "GET", "/containers/pg/json", true, &len, why, sizeof why) == NULL);
	CHECK_STR(why, "not a poll the snapshot holds");
	snapshot_free(s);
}

TEST(connection_close_is_said_and_kept)
{
	struct snapshot *s = built();
	char why[300];
	size_t len;
	char *out = answer(s, "GET", "/_ping", false, &len, why, sizeof why);
	CHECK(out != NULL);
	CHECK(out && strstr(out, "\r\nConnection: close\r\n") != NULL);
	CHECK(out && len > 2 && memcmp(out + len - 6, "\r\n\r\nOK", 6) == 0);
	free(out);
	snapshot_free(s);
}

TEST(containers_are_all_stopped_and_their_exits_aged)
{
	struct snapshot *s = built();
	char why[300];
	size_t len;
	/* Without all=1 Docker lists the running ones: with the VM stopped, none. */
	char *out = answer(s, "GET", "/v1.43/containers/json", true, &len, why, sizeof why);
	check_bytes(out, len,
		    "HTTP/1.1 200 OK\r\n"
		    "Api-Version: 1.43\r\n"
		    "Content-Length: 3\r\n"
		    "Content-Type: application/json\r\n"
		    "Date: Fri, 02 Jan 2026 04:34:22 GMT\r\n"
		    "Docker-Experimental: false\r\n"
		    "Ostype: linux\r\n"
		    "Server: Docker/24.0.7 (linux)\r\n"
		    "X-Vmcost-Snapshot: 2026-01-02T03:04:05Z\r\n"
		    "\r\n"
		    "[]\n");
	free(out);
	out = answer(s, "GET", "/containers/json?all=0", true, &len, why, sizeof why);
	CHECK(out && strstr(out, "\r\n\r\n[]\n") != NULL);
	free(out);
	/* With all=1 (or true), the list as recorded; pg finished 2 h before the answer, not 30
	 * minutes as at the snapshot. */
	const char *list =
	    "[{\"Id\":\"aaaa1111\",\"Names\":[\"/pg\"],\"Image\":\"postgres:16\",\"Created\":"
	    "1767300000,\"State\":\"exited\",\"Status\":\"Exited (0) 2 hours ago\"},"
	    "{\"Id\":\"bbbb2222\",\"Names\":[\"/job\"],\"Image\":\"alpine\",\"Created\":1767200000,"
	    "\"State\":\"created\",\"Status\":\"Created\"}]\n";
	const char *targets[] = {"/containers/json?all=1", "/v1.43/containers/json?all=true",
				 "/containers/json?all=1&size=0&limit=-1&filters=%7B%7D",
				 "/containers/json?filters=%7B%22label%22%3A%7B%7D%7D&all=1"};
	for (size_t i = 0; i < N(targets); i++) {
		out = answer(s, "GET", targets[i], true, &len, why, sizeof why);
		CHECK(out != NULL);
		if (!out) {
			fprintf(stderr, "%s: %s\n", targets[i], why);
			continue;
		}
		char *body = strstr(out, "\r\n\r\n");
		CHECK_STR(body ? body + 4 : "", list);
		char cl[64];
		snprintf(cl, sizeof cl, "\r\nContent-Length: %zu\r\n", strlen(list));
		CHECK_CONTAINS(out, cl);
		free(out);
	}
	snapshot_free(s);
}

TEST(queries_that_ask_for_what_was_not_recorded_wake_it)
{
	struct snapshot *s = built();
	static const struct {
		const char *target, *why;
	} wake[] = {
	    {"/containers/json?all=1&filters=%7B%22status%22%3A%7B%22exited%22%3Atrue%7D%7D",
	     "filters={\"status\":{\"exited\":true}} is not applied to the snapshot"},
	    {"/containers/json?all=1&size=1", "size=1 is not applied to the snapshot"},
	    {"/containers/json?limit=5", "limit=5 is not applied to the snapshot"},
	    {"/containers/json?since=abc", "since=abc is not applied to the snapshot"},
	    {"/containers/json?all=1;size=1", "a query that does not decode"},
	    {"/images/json?all=1", "all=1 is not applied to the snapshot"},
	    {"/images/json?filters=%7B%22dangling%22%3A%5B%22true%22%5D%7D",
	     "filters={\"dangling\":[\"true\"]} is not applied to the snapshot"},
	    {"/images/json?shared-size=1", "shared-size=1 is not applied to the snapshot"},
	    {"/system/df?type=volume", "type=volume is not applied to the snapshot"},
	    {"/volumes", "GET /volumes is not in the snapshot"},
	};
	char why[300];
	size_t len;
	for (size_t i = 0; i < N(wake); i++) {
		CHECK(answer(s, "GET", wake[i].target, true, &len, why, sizeof why) == NULL);
		CHECK_STR(why, wake[i].why);
	}
	/* What asks for nothing more than was recorded is answered. */
	char *out = answer(s, "GET", "/images/json?all=0&filters=", true, &len, why, sizeof why);
	CHECK(out && strstr(out, images_body) != NULL);
	free(out);
	snapshot_free(s);
}

TEST(a_container_that_still_ran_is_not_listed_as_stopped)
{
	struct snapshot *s = built();
	const char running[] = "[{\"Id\":\"cccc\",\"Names\":[\"/web\"],\"State\":\"running\","
			       "\"Status\":\"Up 2 hours\"}]\n";
	CHECK_INT(snapshot_add(s, "GET", "/containers/json?all=1", json_headers, N(json_headers),
			       running, strlen(running)),
		  0);
	char why[300];
	size_t len;
	CHECK(answer(s, "GET", "/containers/json?all=1", true, &len, why, sizeof why) == NULL);
	CHECK_STR(why, "container /web was running at the snapshot");
	/* None runs now, whatever ran then. */
	char *out = answer(s, "GET", "/containers/json", true, &len, why, sizeof why);
	CHECK(out && strstr(out, "\r\n\r\n[]\n") != NULL);
	free(out);
	snapshot_free(s);
}

TEST(stored_and_loaded_it_answers_the_same)
{
	t_setup("snapshot");
	char dir[256];
	snprintf(dir, sizeof dir, "%s/lima/dev", t_root);
	t_write("vmType: qemu\n", "lima/dev/lima.yaml");
	struct snapshot *s = built();
	char err[600];
	CHECK_INT(snapshot_store(s, dir, err, sizeof err), 0);
	snapshot_free(s);
	char path[400];
	snprintf(path, sizeof path, "%s/%s", dir, SNAPSHOT_FILE_NAME);
	struct stat st;
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	/* Written beside, then renamed: no temporary file is left. */
	DIR *dd = opendir(dir);
	CHECK(dd != NULL);
	unsigned files = 0, tmp = 0;
	for (struct dirent *e; dd && (e = readdir(dd));) {
		files++;
		tmp += strstr(e->d_name, "tmp") != NULL;
	}
	if (dd)
		closedir(dd);
	CHECK_INT(files, 4); /* ., .., lima.yaml and the snapshot */
	CHECK_INT(tmp, 0);
	json_t *doc = json_load_file(path, 0, NULL);
	CHECK_STR(json_string_value(json_object_get(doc, "taken")), "2026-01-02T03:04:05Z");
	CHECK_STR(json_string_value(json_object_get(doc, "api_version")), "1.43");
	json_decref(doc);

	s = snapshot_load(dir, "dev", err, sizeof err);
	CHECK(s != NULL);
	if (s) {
		char why[300];
		size_t len;
		char *out = answer(s, "GET", "/_ping", true, &len, why, sizeof why);
		check_bytes(out, len, ping_answer);
		free(out);
		out = answer(s, "GET", "/containers/json?all=1", true, &len, why, sizeof why);
		CHECK(out && strstr(out, "Exited (0) 2 hours ago") != NULL);
		free(out);
		snapshot_free(s);
	}
	CHECK(snapshot_load(dir, "other", err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "is a snapshot of dev, not of other");

	/* Lima's host agent logged after it: the instance ran since, the snapshot is stale. */
	t_write("time=... msg=\"Starting the host agent\"\n", "lima/dev/ha.stderr.log");
	char log[400];
	snprintf(log, sizeof log, "%s/ha.stderr.log", dir);
	struct utimbuf later = {.actime = st.st_mtime + 5, .modtime = st.st_mtime + 5};
	CHECK_INT(utime(log, &later), 0);
	CHECK(snapshot_load(dir, "dev", err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "is stale: dev ran since (its ha.stderr.log is newer)");
	/* An older log (the run the snapshot was taken in) is no objection. */
	struct utimbuf earlier = {.actime = st.st_mtime - 5, .modtime = st.st_mtime - 5};
	CHECK_INT(utime(log, &earlier), 0);
	s = snapshot_load(dir, "dev", err, sizeof err);
	CHECK(s != NULL);
	snapshot_free(s);

	t_write("{\"format\":\"something else\"}", "lima/dev/%s", SNAPSHOT_FILE_NAME);
	CHECK(snapshot_load(dir, "dev", err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "is not a snapshot vmcost autostop wrote");
	snapshot_remove(dir);
	CHECK(stat(path, &st) != 0);
	CHECK(snapshot_load(dir, "dev", err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "No such file or directory");
	t_cleanup();
}

TEST(a_body_that_is_not_utf8_is_refused)
{
	struct snapshot *s = snapshot_new("dev", TAKEN);
	CHECK_INT(snapshot_add(s, "GET", "/info", json_headers, N(json_headers), "\xff\xfe", 2),
		  -1);
	char why[300];
	size_t len;
	CHECK(answer(s, "GET", "/info", true, &len, why, sizeof why) == NULL);
	snapshot_free(s);
}

/* docker/go-units' HumanDuration, which Docker words "Exited (0) ... ago" with. */
TEST(durations_as_docker_words_them)
{
	static const struct {
		double s;
		const char *words;
	} cases[] = {
	    {0.45, "Less than a second"},
	    {1, "1 second"},
	    {47, "47 seconds"},
	    {60, "About a minute"},
	    {3 * 60, "3 minutes"},
	    {35 * 60 + 40, "35 minutes"},
	    {59 * 60, "59 minutes"},
	    {3600, "About an hour"},
	    {3600 + 29 * 60, "About an hour"},
	    {3600 + 31 * 60, "2 hours"},
	    {3 * 3600 + 29 * 60, "3 hours"},
	    {3 * 3600 + 31 * 60, "4 hours"},
	    {24 * 3600, "24 hours"},
	    {36 * 3600, "36 hours"},
	    {2 * 86400, "2 days"},
	    {13 * 86400 + 5 * 3600, "13 days"},
	    {14 * 86400, "2 weeks"},
	    {30 * 86400, "4 weeks"},
	    {44 * 86400, "6 weeks"},
	    {60 * 86400, "2 months"},
	    {720 * 86400, "24 months"},
	    {734 * 86400, "2 years"},
	    {3 * 365 * 86400 + 60 * 86400, "3 years"},
	};
	for (size_t i = 0; i < N(cases); i++) {
		char buf[64];
		snapshot_human_duration(cases[i].s, buf, sizeof buf);
		CHECK_STR(buf, cases[i].words);
	}
}

int main(void)
{
	RUN(ping_and_version_are_answered_byte_for_byte_with_the_marker);
	RUN(each_recorded_api_version_answers_as_recorded_and_no_other);
	RUN(head_is_headers_only_and_only_for_ping);
	RUN(connection_close_is_said_and_kept);
	RUN(containers_are_all_stopped_and_their_exits_aged);
	RUN(queries_that_ask_for_what_was_not_recorded_wake_it);
	RUN(a_container_that_still_ran_is_not_listed_as_stopped);
	RUN(stored_and_loaded_it_answers_the_same);
	RUN(a_body_that_is_not_utf8_is_refused);
	RUN(durations_as_docker_words_them);
	return check_done();
}
