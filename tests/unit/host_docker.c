/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Docker client against a fake daemon that records the exact request bytes and replays
 * recorded responses (tests/unit/fixtures/docker/NAME.{request,response}). With
 * VMC_RECORD_REQUESTS=1 the requests the client sent are written as the new .request files
 * (review the diff before committing them).
 */
#include "check.h"
#include "clients/docker.h"
#include "fake_daemon.h"
#include "log.h"

#include <stdarg.h>
#include <sys/socket.h>
#include <sys/un.h>

#define FIX "tests/unit/fixtures/docker"

static const char *const CID = "bf849b8b2aa5412bbdd950e6b09bbee8a447a681e3bf49baa71ac6468f3a0878";

static struct fake_daemon fake;
static struct docker dk;
static const char *names[FAKE_MAX_EXCHANGES];

static void script(const char *first, ...)
{
	fake_free(&fake);
	va_list ap;
	va_start(ap, first);
	for (const char *n = first; n; n = va_arg(ap, const char *)) {
		names[fake.n] = n;
		if (fake_add_files(&fake, FIX, n) != 0)
			CHECK(!"fixture present");
	}
	va_end(ap);
	CHECK_INT(fake_start(&fake), 0);
	docker_init_socket(&dk, fake.sock, "dev");
}

/* Stops the daemon and checks every request byte for byte. */
static void verify(size_t expect_served)
{
	fake_stop(&fake);
	CHECK_INT(fake.served, expect_served);
	bool record = getenv("VMC_RECORD_REQUESTS") != NULL;
	for (size_t i = 0; i < fake.served; i++) {
		if (record) {
			char path[512];
			snprintf(path, sizeof path, "%s/%s.request", FIX, names[i]);
			FILE *f = fopen(path, "wb");
			if (f) {
				fwrite(fake.ex[i].got, 1, fake.ex[i].got_len, f);
				fclose(f);
			}
			continue;
		}
		CHECK(fake_request_matches(&fake, i));
	}
}

TEST(version_pings_then_reads_version)
{
	script("ping", "version", NULL);
	json_t *v = NULL;
	char err[512] = "";
	CHECK_INT(docker_version(&dk, &v, err, sizeof err), VMC_EXIT_OK);
	CHECK_STR(json_string_value(json_object_get(v, "Version")), "20.10.24+dfsg1");
	CHECK_STR(json_string_value(json_object_get(v, "ApiVersion")), "1.41");
	json_decref(v);
	verify(2);
}

TEST(image_present_and_missing)
{
	script("image-inspect-200", "image-inspect-404", NULL);
	bool present = false;
	char err[512] = "";
	CHECK_INT(docker_image_present(&dk, "vmcost/postgres:15-debian", &present, err, sizeof err),
		  VMC_EXIT_OK);
	CHECK(present);
	CHECK_INT(docker_image_present(&dk, "postgres:17-alpine", &present, err, sizeof err),
		  VMC_EXIT_OK);
	CHECK(!present);
	verify(2);
}

/* memtest's pre-flight asks whether a pull could work, without pulling. */
TEST(registry_lookup_without_a_pull)
{
	script("distribution-200", "distribution-500", NULL);
	char err[512] = "";
	CHECK_INT(docker_registry_has_image(&dk, "postgres:17-alpine", 5000, err, sizeof err),
		  VMC_EXIT_OK);
	CHECK_INT(docker_registry_has_image(&dk, "postgres:17-alpine", 5000, err, sizeof err),
		  VMC_EXIT_DOCKER);
	CHECK_CONTAINS(err, "dockerd could not look postgres:17-alpine up in its registry (HTTP "
			    "500)");
	CHECK_CONTAINS(err, "lookup registry-1.docker.io");
	verify(2);
	script(NULL);
	CHECK_INT(docker_registry_has_image(&dk, "bad image", 5000, err, sizeof err),
		  VMC_EXIT_DOCKER);
	verify(0);
}

TEST(image_reference_with_spaces_is_refused_before_any_request)
{
	script(NULL);
	bool present = true;
	char err[512] = "";
	CHECK_INT(docker_image_present(&dk, "bad image", &present, err, sizeof err),
		  VMC_EXIT_DOCKER);
	CHECK_CONTAINS(err, "invalid image reference");
	CHECK_INT(docker_image_pull(&dk, "../../x", NULL, NULL, err, sizeof err), VMC_EXIT_DOCKER);
	verify(0);
}

struct progress_seen {
	int events;
	uint64_t last_current, last_total;
	char last_status[128];
};

static void on_progress(const struct docker_pull_event *ev, void *ctx)
{
	struct progress_seen *seen = ctx;
	seen->events++;
	if (ev->total) {
		seen->last_current = ev->current;
		seen->last_total = ev->total;
	}
	snprintf(seen->last_status, sizeof seen->last_status, "%s", ev->status ? ev->status : "");
}

TEST(pull_streams_progress_events)
{
	script("pull-ok", NULL);
	fake.reply_piece = 7; /* JSON lines and chunk headers split at odd places */
	struct progress_seen seen = {0};
	char err[512] = "";
	CHECK_INT(docker_image_pull(&dk, "postgres:17-alpine", on_progress, &seen, err, sizeof err),
		  VMC_EXIT_OK);
	CHECK_INT(seen.events, 7);
	CHECK_U64(seen.last_current, 4096);
	CHECK_U64(seen.last_total, 4096);
	CHECK_STR(seen.last_status, "Status: Downloaded newer image for postgres:17-alpine");
	verify(1);
}

TEST(pull_error_in_stream_is_a_failure_with_dockers_message)
{
	script("pull-error-stream", NULL);
	char err[512] = "";
	CHECK_INT(docker_image_pull(&dk, "postgres:17-alpine", NULL, NULL, err, sizeof err),
		  VMC_EXIT_DOCKER);
	CHECK_CONTAINS(err, "pulling postgres:17-alpine failed");
	CHECK_CONTAINS(err, "unauthorized: authentication required");
	CHECK_CONTAINS(err, "docker load");
	verify(1);
}

TEST(pull_http_500_names_the_registry_error)
{
	script("pull-error-500", NULL);
	char err[512] = "";
	CHECK_INT(docker_image_pull(&dk, "postgres:17-alpine", NULL, NULL, err, sizeof err),
		  VMC_EXIT_DOCKER);
	CHECK_CONTAINS(err, "HTTP 500");
	CHECK_CONTAINS(err, "registry-1.docker.io");
	verify(1);
}

/* The container configs of the recorded session (tests/unit/fixtures/docker/README.md). */
static json_t *pg_config(void)
{
	return json_pack("{s:s, s:[s], s:{s:b}}", "Image", "vmcost/postgres:15-debian", "Env",
			 "POSTGRES_HOST_AUTH_METHOD=trust", "HostConfig", "AutoRemove", 0);
}

TEST(container_lifecycle)
{
	script("create-201", "start-204", "container-inspect-200", "remove-204", NULL);
	char id[128] = "", err[512] = "";
	json_t *config = pg_config();
	CHECK_INT(docker_container_create(&dk, "vmcost-pg", config, id, sizeof id, err, sizeof err),
		  VMC_EXIT_OK);
	json_decref(config);
	CHECK_STR(id, CID);
	CHECK_INT(docker_container_start(&dk, id, err, sizeof err), VMC_EXIT_OK);
	bool running = false;
	CHECK_INT(docker_container_running(&dk, id, &running, err, sizeof err), VMC_EXIT_OK);
	CHECK(running);
	CHECK_INT(docker_container_remove(&dk, id, err, sizeof err), VMC_EXIT_OK);
	verify(4);
}

TEST(create_conflict_and_missing_image)
{
	script("create-409", "create-404", NULL);
	char id[128] = "", err[512] = "";
	json_t *config = pg_config();
	CHECK_INT(docker_container_create(&dk, "vmcost-pg", config, id, sizeof id, err, sizeof err),
		  VMC_EXIT_DOCKER);
	json_decref(config);
	CHECK_CONTAINS(err, "already exists");
	CHECK_CONTAINS(err, "docker rm -f vmcost-pg");
	config = json_pack("{s:s}", "Image", "postgres:17-alpine");
	CHECK_INT(docker_container_create(&dk, NULL, config, id, sizeof id, err, sizeof err),
		  VMC_EXIT_DOCKER);
	json_decref(config);
	CHECK_CONTAINS(err, "image postgres:17-alpine is not present");
	CHECK_CONTAINS(err, "instance \"dev\"");
	verify(2);
}

struct output_seen {
	size_t out, err;
};

static void on_output(int stream, const char *data, size_t len, void *ctx)
{
	(void)data;
	struct output_seen *seen = ctx;
	if (stream == 2)
		seen->err += len;
	else
		seen->out += len;
}

TEST(exec_demultiplexes_output_and_reads_exit_code)
{
	script("exec-create-201", "exec-start-200", "exec-inspect-200", NULL);
	fake.reply_piece = 5; /* frame headers split across reads */
	const char *const argv[] = {
	    "sh", "-c", "echo transaction type; echo progress: 5.0 s >&2; echo tps = 814.2; exit 3",
	    NULL};
	struct docker_exec_result res;
	struct output_seen seen = {0};
	char err[512] = "";
	CHECK_INT(docker_exec_stream(&dk, CID, argv, NULL, 10000, on_output, &seen, &res, err,
				     sizeof err),
		  VMC_EXIT_OK);
	CHECK_INT(res.exit_code, 3);
	CHECK_STR(res.out, "transaction type\ntps = 814.2\n");
	CHECK_STR(res.errout, "progress: 5.0 s\n");
	CHECK_U64(seen.out, res.out_len);
	CHECK_U64(seen.err, res.errout_len);
	CHECK(!res.truncated);
	docker_exec_result_free(&res);
	verify(3);
}

TEST(exec_output_cut_inside_a_frame_is_an_error)
{
	script("exec-create-201", "exec-start-truncated", NULL);
	const char *const argv[] = {
	    "sh", "-c", "echo transaction type; echo progress: 5.0 s >&2; echo tps = 814.2; exit 3",
	    NULL};
	struct docker_exec_result res;
	char err[512] = "";
	CHECK_INT(docker_exec(&dk, CID, argv, NULL, 10000, &res, err, sizeof err), VMC_EXIT_DOCKER);
	CHECK_CONTAINS(err, "the output stream is not Docker's multiplexed framing");
	docker_exec_result_free(&res);
	verify(2);
}

TEST(exec_in_stopped_container_says_so)
{
	script("exec-create-409", NULL);
	const char *const argv[] = {"true", NULL};
	struct docker_exec_result res;
	char err[512] = "";
	CHECK_INT(docker_exec(&dk, CID, argv, NULL, 1000, &res, err, sizeof err), VMC_EXIT_DOCKER);
	CHECK_CONTAINS(err, "is not running");
	docker_exec_result_free(&res);
	verify(1);
}

TEST(daemon_down_socket_missing)
{
	docker_init_socket(&dk, "/tmp/vmcost-no-such-dir/docker.sock", "dev");
	json_t *v = NULL;
	char err[512] = "";
	CHECK_INT(docker_version(&dk, &v, err, sizeof err), VMC_EXIT_DOCKER);
	CHECK(v == NULL);
	CHECK_CONTAINS(err, "does not exist");
	CHECK_CONTAINS(err, "--workload fill");
}

TEST(daemon_down_connection_refused)
{
	/* A socket file nobody listens on: what a dead dockerd leaves behind. */
	char dir[] = "/tmp/vmcost-dead-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[100];
	snprintf(path, sizeof path, "%.60s/docker.sock", dir);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	snprintf(addr.sun_path, sizeof addr.sun_path, "%.100s", path);
	CHECK_INT(bind(s, (struct sockaddr *)&addr, sizeof addr), 0);
	close(s);
	docker_init_socket(&dk, path, "dev");
	json_t *v = NULL;
	char err[512] = "";
	CHECK_INT(docker_version(&dk, &v, err, sizeof err), VMC_EXIT_DOCKER);
	CHECK_CONTAINS(err, "dockerd is not answering");
	CHECK_CONTAINS(err, "limactl shell dev");
	unlink(path);
	rmdir(dir);
}

/* ---- framing and JSON Lines, without a socket ------------------------------------------------ */

struct frames {
	char out[256], errs[256];
	size_t out_len, err_len;
	int calls;
};

static void collect(int stream, const char *data, size_t len, void *ctx)
{
	struct frames *f = ctx;
	f->calls++;
	char *dst = stream == 2 ? f->errs : f->out;
	size_t *n = stream == 2 ? &f->err_len : &f->out_len;
	if (*n + len < sizeof f->out) {
		memcpy(dst + *n, data, len);
		*n += len;
		dst[*n] = '\0';
	}
}

static const char stream_bytes[] = "\x01\x00\x00\x00\x00\x00\x00\x03"
				   "abc"
				   "\x02\x00\x00\x00\x00\x00\x00\x02"
				   "E!"
				   "\x01\x00\x00\x00\x00\x00\x00\x00"
				   "\x01\x00\x00\x00\x00\x00\x00\x01"
				   "d";

TEST(demux_byte_by_byte)
{
	struct frames f = {0};
	struct docker_demux dm;
	docker_demux_init(&dm, collect, &f);
	for (size_t i = 0; i < sizeof stream_bytes - 1; i++) {
		CHECK_INT(docker_demux_feed(&dm, stream_bytes + i, 1), 0);
		if (i == 9)
			CHECK(!docker_demux_complete(&dm)); /* inside a frame */
	}
	CHECK(docker_demux_complete(&dm));
	CHECK_STR(f.out, "abcd");
	CHECK_STR(f.errs, "E!");
}

TEST(demux_all_at_once)
{
	struct frames f = {0};
	struct docker_demux dm;
	docker_demux_init(&dm, collect, &f);
	CHECK_INT(docker_demux_feed(&dm, stream_bytes, sizeof stream_bytes - 1), 0);
	CHECK(docker_demux_complete(&dm));
	CHECK_STR(f.out, "abcd");
	CHECK_INT(f.calls, 3); /* the empty frame delivers nothing */
}

TEST(demux_rejects_tty_stream_and_bad_padding)
{
	struct frames f = {0};
	struct docker_demux dm;
	docker_demux_init(&dm, collect, &f);
	/* A TTY exec is not framed: plain text looks like a header with stream 't'. */
	CHECK_INT(docker_demux_feed(&dm, "tps = 814.2\n", 12), -1);
	CHECK(!docker_demux_complete(&dm));
	CHECK_INT(docker_demux_feed(&dm, stream_bytes, 8), -1);
	CHECK_INT(f.calls, 0);
	docker_demux_init(&dm, collect, &f);
	CHECK_INT(docker_demux_feed(&dm, "\x01\x00\x01\x00\x00\x00\x00\x01x", 9), -1);
}

TEST(demux_truncated_frame_is_incomplete)
{
	struct frames f = {0};
	struct docker_demux dm;
	docker_demux_init(&dm, collect, &f);
	CHECK_INT(docker_demux_feed(&dm, stream_bytes, 5), 0);
	CHECK(!docker_demux_complete(&dm));
	CHECK_INT(f.calls, 0);
}

struct lines_seen {
	int n;
	char first_status[64];
	char error[128];
};

static void on_line(const struct docker_pull_event *ev, void *ctx)
{
	struct lines_seen *s = ctx;
	if (s->n++ == 0)
		snprintf(s->first_status, sizeof s->first_status, "%s",
			 ev->status ? ev->status : "");
	if (ev->error)
		snprintf(s->error, sizeof s->error, "%s", ev->error);
}

TEST(lines_split_anywhere_skip_junk_keep_error)
{
	const char *text = "{\"status\":\"Pulling\"}\r\nnot json\n\n[1,2]\n{\"error\":\"boom\"}\n"
			   "{\"status\":\"tail without newline\"}";
	struct lines_seen s = {0};
	struct docker_lines dl;
	docker_lines_init(&dl, on_line, &s);
	size_t total = strlen(text);
	for (size_t i = 0; i < total; i += 3)
		docker_lines_feed(&dl, text + i, total - i < 3 ? total - i : 3);
	docker_lines_finish(&dl);
	CHECK_INT(s.n, 3);
	CHECK_STR(s.first_status, "Pulling");
	CHECK_STR(s.error, "boom");
	CHECK(strcmp(dl.error, "boom") == 0);
}

TEST(lines_overlong_line_is_dropped)
{
	struct lines_seen s = {0};
	struct docker_lines dl;
	docker_lines_init(&dl, on_line, &s);
	char *big = malloc(70000);
	memset(big, 'x', 70000);
	big[0] = '{';
	docker_lines_feed(&dl, big, 70000);
	docker_lines_feed(&dl, "}\n{\"status\":\"next\"}\n", 20);
	docker_lines_finish(&dl);
	free(big);
	CHECK_INT(s.n, 1);
	CHECK_STR(s.first_status, "next");
}

TEST(split_image_references)
{
	char repo[128], tag[64];
	docker_split_image("postgres:17-alpine", repo, sizeof repo, tag, sizeof tag);
	CHECK_STR(repo, "postgres");
	CHECK_STR(tag, "17-alpine");
	docker_split_image("localhost:5000/team/pg", repo, sizeof repo, tag, sizeof tag);
	CHECK_STR(repo, "localhost:5000/team/pg");
	CHECK_STR(tag, "latest");
	docker_split_image("localhost:5000/pg:15", repo, sizeof repo, tag, sizeof tag);
	CHECK_STR(repo, "localhost:5000/pg");
	CHECK_STR(tag, "15");
	docker_split_image("pg@sha256:abcd", repo, sizeof repo, tag, sizeof tag);
	CHECK_STR(repo, "pg@sha256:abcd");
	CHECK_STR(tag, "");
}

int main(void)
{
	vmc_log_init("host_docker");
	fake.listen_fd = -1;
	RUN(version_pings_then_reads_version);
	RUN(image_present_and_missing);
	RUN(registry_lookup_without_a_pull);
	RUN(image_reference_with_spaces_is_refused_before_any_request);
	RUN(pull_streams_progress_events);
	RUN(pull_error_in_stream_is_a_failure_with_dockers_message);
	RUN(pull_http_500_names_the_registry_error);
	RUN(container_lifecycle);
	RUN(create_conflict_and_missing_image);
	RUN(exec_demultiplexes_output_and_reads_exit_code);
	RUN(exec_output_cut_inside_a_frame_is_an_error);
	RUN(exec_in_stopped_container_says_so);
	RUN(daemon_down_socket_missing);
	RUN(daemon_down_connection_refused);
	RUN(demux_byte_by_byte);
	RUN(demux_all_at_once);
	RUN(demux_rejects_tty_stream_and_bad_padding);
	RUN(demux_truncated_frame_is_incomplete);
	RUN(lines_split_anywhere_skip_junk_keep_error);
	RUN(lines_overlong_line_is_dropped);
	RUN(split_image_references);
	fake_free(&fake);
	return check_done();
}
