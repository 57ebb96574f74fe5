/* SPDX-License-Identifier: Apache-2.0 */
/*
 * guest-agent/server*.c with the agent core replaced by recording doubles: routing without a
 * socket (every status code the API promises), then the same over a real unix socket with
 * libcurl (headers, 413 on announced and on chunked bodies, concurrency, stop). The socket file
 * itself is agent_server_socket.c's; agent_server_core.c runs the real core behind the socket.
 */
#include "check.h"
#include "config.h"
#include "log.h"
#include "procfs.h"
#include "scratch.h"
#include "server.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ---- doubles for the agent core ----------------------------------------------------------- */

/* Written by the server's connection threads, read by the test: atomic (make tsan). */
static _Atomic int calls_status, calls_trim;
static _Atomic double last_seconds;
static atomic_bool last_dry_run, last_force;
static atomic_int last_order = -1;
static atomic_bool core_fails;

static json_t *fake_status(struct agent_state *st, char *err, size_t errsize)
{
	(void)st;
	calls_status++;
	if (core_fails) {
		snprintf(err, errsize, "cannot read /proc/meminfo: No such file or directory");
		return NULL;
	}
	return json_pack("{s:s}", "doc", "status");
}

static json_t *fake_checks(char *err, size_t errsize)
{
	(void)err;
	(void)errsize;
	return json_pack("{s:s}", "doc", "checks");
}

/* Really waits, like the profiler: the concurrency tests depend on it. */
static json_t *fake_wakeups(double seconds, char *err, size_t errsize)
{
	(void)err;
	(void)errsize;
	last_seconds = seconds;
	struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
	nanosleep(&ts, NULL);
	return json_pack("{s:s,s:f}", "doc", "wakeups", "seconds", seconds);
}

static json_t *fake_trim(struct agent_state *st, const struct agent_config *cfg, bool dry_run,
			 bool force, char *err, size_t errsize)
{
	(void)st;
	(void)cfg;
	(void)err;
	(void)errsize;
	calls_trim++;
	last_dry_run = dry_run;
	last_force = force;
	return json_pack("{s:s,s:b,s:b}", "doc", "trim", "dry_run", dry_run, "force", force);
}

static json_t *fake_balloon(char *err, size_t errsize)
{
	(void)err;
	(void)errsize;
	return json_pack("{s:s}", "doc", "balloon");
}

static json_t *fake_set_order(int order, char *err, size_t errsize)
{
	if (order == 7) {
		snprintf(err, errsize, "no virtio-balloon device: nothing to tune");
		return NULL;
	}
	last_order = order;
	return json_pack("{s:s,s:i}", "doc", "balloon", "order", order);
}

static json_t *fake_array(char *err, size_t errsize)
{
	(void)err;
	(void)errsize;
	return json_array();
}

static atomic_bool engine_refuses;
static atomic_bool engine_unguarded;
static _Atomic int calls_freeze;

static json_t *fake_engine_status(const struct agent_config *c, char *err, size_t errsize)
{
	(void)c;
	(void)err;
	(void)errsize;
	return json_pack("{s:s}", "doc", "engine");
}

static json_t *fake_engine_freeze(const struct agent_config *c, char *err, size_t errsize)
{
	(void)c;
	calls_freeze++;
	if (engine_refuses) {
		snprintf(err, errsize, "container 0123456789ab is running");
		errno = EBUSY;
		return NULL;
	}
	if (engine_unguarded) {
		snprintf(err, errsize, "/var/run/docker.sock is not a socket the agent can guard");
		errno = ENOTSOCK;
		return NULL;
	}
	return json_pack("{s:s}", "doc", "freeze");
}

static json_t *fake_engine_thaw(const struct agent_config *c, char *err, size_t errsize)
{
	(void)c;
	if (engine_refuses) {
		snprintf(err, errsize, "cannot lock /run/vmcost-agent/engine.lock");
		errno = EIO;
		return NULL;
	}
	return json_pack("{s:s}", "doc", "thaw");
}

static const struct server_ops fake_ops = {
    fake_status,    fake_checks,	fake_wakeups,	    fake_trim,	     fake_balloon,
    fake_set_order, fake_engine_status, fake_engine_freeze, fake_engine_thaw};

static struct agent_config cfg;
static struct server_ctx ctx = {&fake_ops, NULL, &cfg};

/* ---- routing without a socket ------------------------------------------------------------- */

static struct server_reply route(const char *method, const char *path, const char *body,
				 const struct server_arg *args, size_t nargs)
{
	struct server_request req = {method, path, args, nargs, body, body ? strlen(body) : 0};
	struct server_reply reply;
	server_route(&ctx, &req, &reply);
	return reply;
}

static const char *doc_of(const struct server_reply *r)
{
	return json_string_value(json_object_get(r->body, "doc"));
}

static const char *error_of(const struct server_reply *r)
{
	return json_string_value(json_object_get(r->body, "error"));
}

TEST(every_endpoint_routes_to_its_core_function)
{
	static const struct {
		const char *method, *path, *doc;
	} cases[] = {
	    {"GET", "/v1/status", "status"},   {"GET", "/v1/checks", "checks"},
	    {"POST", "/v1/trim", "trim"},      {"GET", "/v1/balloon", "balloon"},
	    {"GET", "/v1/wakeups", "wakeups"},
	};
	struct server_arg quick = {"seconds", "0.1"};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bool wakeups = strcmp(cases[i].path, "/v1/wakeups") == 0;
		struct server_reply r =
		    route(cases[i].method, cases[i].path, NULL, &quick, wakeups ? 1 : 0);
		CHECK_INT(r.status, 200);
		CHECK_STR(doc_of(&r), cases[i].doc);
		CHECK(r.allow == NULL);
		json_decref(r.body);
	}
	struct server_reply r = route("PUT", "/v1/balloon/order", "{\"order\": 9}", NULL, 0);
	CHECK_INT(r.status, 200);
	CHECK_INT(last_order, 9);
	CHECK_INT(json_integer_value(json_object_get(r.body, "order")), 9);
	json_decref(r.body);
	static const struct {
		const char *method, *path, *doc;
	} engine[] = {{"GET", "/v1/engine", "engine"},
		      {"POST", "/v1/engine/freeze", "freeze"},
		      {"POST", "/v1/engine/thaw", "thaw"}};
	for (size_t i = 0; i < sizeof engine / sizeof engine[0]; i++) {
		r = route(engine[i].method, engine[i].path, NULL, NULL, 0);
		CHECK_INT(r.status, 200);
		CHECK_STR(doc_of(&r), engine[i].doc);
		json_decref(r.body);
	}
	r = route("GET", "/v1/version", NULL, NULL, 0);
	CHECK_INT(r.status, 200);
	CHECK(json_string_length(json_object_get(r.body, "version")) > 0);
	CHECK_INT(json_integer_value(json_object_get(r.body, "api")), 1);
	json_decref(r.body);
}

TEST(a_refused_freeze_is_409_and_a_failed_thaw_500)
{
	engine_refuses = true;
	struct server_reply r = route("POST", "/v1/engine/freeze", NULL, NULL, 0);
	CHECK_INT(r.status, 409);
	CHECK_CONTAINS(error_of(&r), "container 0123456789ab is running");
	json_decref(r.body);
	r = route("POST", "/v1/engine/thaw", NULL, NULL, 0);
	CHECK_INT(r.status, 500);
	CHECK_CONTAINS(error_of(&r), "cannot lock");
	json_decref(r.body);
	engine_refuses = false;
	/* A docker.sock the guard cannot hold is a refusal too. */
	engine_unguarded = true;
	r = route("POST", "/v1/engine/freeze", NULL, NULL, 0);
	engine_unguarded = false;
	CHECK_INT(r.status, 409);
	CHECK_CONTAINS(error_of(&r), "not a socket the agent can guard");
	json_decref(r.body);
	int freezes = calls_freeze;
	r = route("POST", "/v1/engine/freeze", "{\"now\": true}", NULL, 0);
	CHECK_INT(r.status, 400);
	CHECK_CONTAINS(error_of(&r), "takes no request body");
	json_decref(r.body);
	struct server_arg arg = {"force", "1"};
	r = route("POST", "/v1/engine/freeze", NULL, &arg, 1);
	CHECK_INT(r.status, 400);
	json_decref(r.body);
	r = route("GET", "/v1/engine/freeze", NULL, NULL, 0);
	CHECK_INT(r.status, 405);
	CHECK_STR(r.allow, "POST");
	json_decref(r.body);
	CHECK_INT(calls_freeze, freezes);
}

TEST(unknown_paths_are_404_with_the_list_of_endpoints)
{
	static const char *const paths[] = {"/",
					    "/v1",
					    "/v1/status/",
					    "/v1/STATUS",
					    "/v2/status",
					    "/v1/balloon/",
					    "/v1/trim/now",
					    "//v1/status",
					    ""};
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		struct server_reply r = route("GET", paths[i], NULL, NULL, 0);
		CHECK_INT(r.status, 404);
		CHECK_CONTAINS(error_of(&r), "no such endpoint");
		CHECK_CONTAINS(error_of(&r), "POST /v1/trim");
		json_decref(r.body);
	}
}

TEST(wrong_method_is_405_with_allow)
{
	static const struct {
		const char *method, *path, *allow;
	} cases[] = {
	    {"POST", "/v1/status", "GET"},  {"DELETE", "/v1/checks", "GET"},
	    {"GET", "/v1/trim", "POST"},    {"PUT", "/v1/trim", "POST"},
	    {"HEAD", "/v1/balloon", "GET"}, {"GET", "/v1/balloon/order", "PUT"},
	    {"POST", "/v1/wakeups", "GET"}, {"get", "/v1/status", "GET"},
	};
	int trims = calls_trim;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct server_reply r = route(cases[i].method, cases[i].path, NULL, NULL, 0);
		CHECK_INT(r.status, 405);
		CHECK_STR(r.allow, cases[i].allow);
		CHECK_CONTAINS(error_of(&r), "method not allowed");
		json_decref(r.body);
	}
	CHECK_INT(calls_trim, trims);
}

TEST(trim_options_come_from_the_json_body)
{
	struct server_reply r = route("POST", "/v1/trim", "", NULL, 0);
	CHECK_INT(r.status, 200);
	CHECK(!last_dry_run && !last_force);
	json_decref(r.body);
	r = route("POST", "/v1/trim", " \n", NULL, 0);
	CHECK_INT(r.status, 200);
	json_decref(r.body);
	r = route("POST", "/v1/trim", "{\"dry_run\": true}", NULL, 0);
	CHECK_INT(r.status, 200);
	CHECK(last_dry_run && !last_force);
	json_decref(r.body);
	r = route("POST", "/v1/trim", "{\"force\": true, \"dry_run\": false}", NULL, 0);
	CHECK_INT(r.status, 200);
	CHECK(!last_dry_run && last_force);
	json_decref(r.body);
	r = route("POST", "/v1/trim", "{}", NULL, 0);
	CHECK_INT(r.status, 200);
	CHECK(!last_dry_run && !last_force);
	json_decref(r.body);
}

TEST(bad_bodies_are_400_and_never_reach_the_core)
{
	static const struct {
		const char *method, *path, *body, *expect;
	} cases[] = {
	    {"POST", "/v1/trim", "{", "request body is not valid JSON"},
	    {"POST", "/v1/trim", "dry_run=1", "request body is not valid JSON"},
	    {"POST", "/v1/trim", "{} {}", "request body is not valid JSON"},
	    {"POST", "/v1/trim", "[true]", "must be a JSON object"},
	    {"POST", "/v1/trim", "true", "not valid JSON: '[' or '{' expected"},
	    {"POST", "/v1/trim", "{\"dryrun\": true}", "unknown option \"dryrun\""},
	    {"POST", "/v1/trim", "{\"dry_run\": 1}", "\"dry_run\" must be true or false"},
	    {"POST", "/v1/trim", "{\"force\": \"yes\"}", "\"force\" must be true or false"},
	    {"POST", "/v1/trim", "{\"force\": true, \"force\": false}", "not valid JSON"},
	    {"PUT", "/v1/balloon/order", "", "\"order\" must be an integer from 0 to 10"},
	    {"PUT", "/v1/balloon/order", "{\"order\": 11}", "from 0 to 10"},
	    {"PUT", "/v1/balloon/order", "{\"order\": -1}", "from 0 to 10"},
	    {"PUT", "/v1/balloon/order", "{\"order\": 9.0}", "from 0 to 10"},
	    {"PUT", "/v1/balloon/order", "{\"order\": \"9\"}", "from 0 to 10"},
	    {"PUT", "/v1/balloon/order", "{\"order\": 99999999999999999999}", "not valid JSON"},
	    {"PUT", "/v1/balloon/order", "{\"order\": 9, \"now\": 1}", "unknown option \"now\""},
	};
	int trims = calls_trim;
	last_order = -1;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct server_reply r =
		    route(cases[i].method, cases[i].path, cases[i].body, NULL, 0);
		CHECK_INT(r.status, 400);
		CHECK_CONTAINS(error_of(&r), cases[i].expect);
		json_decref(r.body);
	}
	CHECK_INT(calls_trim, trims);
	CHECK_INT(last_order, -1);
}

TEST(wakeups_seconds_parameter)
{
	struct server_arg ok[] = {{"seconds", "0.2"}};
	struct server_reply r = route("GET", "/v1/wakeups", NULL, ok, 1);
	CHECK_INT(r.status, 200);
	CHECK_DBL(last_seconds, 0.2, 1e-9);
	json_decref(r.body);
	struct server_arg ms[] = {{"seconds", "150ms"}};
	r = route("GET", "/v1/wakeups", NULL, ms, 1);
	CHECK_INT(r.status, 200);
	CHECK_DBL(last_seconds, 0.15, 1e-9);
	json_decref(r.body);

	static const struct server_arg bad[][2] = {
	    {{"seconds", "0"}},	  {{"seconds", "301"}},
	    {{"seconds", "-5"}},  {{"seconds", "abc"}},
	    {{"seconds", NULL}},  {{"seconds", ""}},
	    {{"seconds", "1e9"}}, {{"seconds", "nan"}},
	    {{"second", "5"}},	  {{"seconds", "1"}, {"seconds", "2"}},
	};
	static const char *const expect[] = {
	    "expected a duration from 0.1 to 300",
	    "expected a duration",
	    "expected a duration",
	    "seconds=abc: expected a duration",
	    "expected a duration",
	    "expected a duration",
	    "expected a duration",
	    "expected a duration",
	    "unknown query parameter \"second\" for /v1/wakeups (it takes: seconds)",
	    "given twice",
	};
	last_seconds = -1;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		size_t n = bad[i][1].key ? 2 : 1;
		r = route("GET", "/v1/wakeups", NULL, bad[i], n);
		CHECK_INT(r.status, 400);
		CHECK_CONTAINS(error_of(&r), expect[i]);
		json_decref(r.body);
	}
	CHECK_DBL(last_seconds, -1, 0);
}

TEST(endpoints_without_parameters_refuse_them)
{
	struct server_arg arg = {"verbose", "1"};
	struct server_reply r = route("GET", "/v1/status", NULL, &arg, 1);
	CHECK_INT(r.status, 400);
	CHECK_CONTAINS(error_of(&r), "unknown query parameter \"verbose\": /v1/status takes none");
	json_decref(r.body);
	r = route("POST", "/v1/trim", NULL, &arg, 1);
	CHECK_INT(r.status, 400);
	json_decref(r.body);
}

TEST(core_failures_are_500_with_the_core_message)
{
	core_fails = true;
	struct server_reply r = route("GET", "/v1/status", NULL, NULL, 0);
	core_fails = false;
	CHECK_INT(r.status, 500);
	CHECK_STR(error_of(&r), "cannot read /proc/meminfo: No such file or directory");
	json_decref(r.body);
	r = route("PUT", "/v1/balloon/order", "{\"order\": 7}", NULL, 0);
	CHECK_INT(r.status, 500);
	CHECK_STR(error_of(&r), "no virtio-balloon device: nothing to tune");
	json_decref(r.body);

	struct server_ops odd = fake_ops;
	odd.checks = fake_array;
	struct server_ctx odd_ctx = {&odd, NULL, &cfg};
	struct server_request req = {"GET", "/v1/checks", NULL, 0, NULL, 0};
	server_route(&odd_ctx, &req, &r);
	CHECK_INT(r.status, 500);
	CHECK_CONTAINS(error_of(&r), "malformed document");
	json_decref(r.body);
}

/* Whatever bytes a client sends, the error is a valid JSON document. */
TEST(hostile_bytes_in_paths_still_give_json)
{
	struct server_reply r = route("GET", "/v1/\xff\xfe\x01status", NULL, NULL, 0);
	CHECK_INT(r.status, 404);
	CHECK_CONTAINS(error_of(&r), "/v1/???status");
	json_decref(r.body);
	r = route("GET", "/v1/caf\xc3\xa9", NULL, NULL, 0);
	CHECK_CONTAINS(error_of(&r), "/v1/caf\xc3\xa9");
	json_decref(r.body);
	r = route(NULL, NULL, NULL, NULL, 0);
	CHECK_INT(r.status, 404);
	json_decref(r.body);
	struct server_request req = {"POST", "/v1/trim", NULL, 0, "{\"a\0b\": 1}", 10};
	server_route(&ctx, &req, &r);
	CHECK_INT(r.status, 400);
	CHECK(error_of(&r) != NULL);
	json_decref(r.body);
}

static char tmpdir[] = "/tmp/agent-server-XXXXXX";

/* ---- over a real socket --------------------------------------------------------------------- */

struct http_result {
	long status;
	json_t *body;
	char allow[64];
	char content_type[64];
	double seconds;
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

static void copy_header(char *dst, size_t size, const char *line, size_t len, size_t skip)
{
	size_t n = len - skip;
	while (n > 0 && (line[skip + n - 1] == '\r' || line[skip + n - 1] == '\n'))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(dst, line + skip, n);
	dst[n] = '\0';
}

static size_t collect_header(char *data, size_t size, size_t n, void *userp)
{
	struct http_result *res = userp;
	size_t len = size * n;
	if (len > 7 && strncasecmp(data, "Allow: ", 7) == 0)
		copy_header(res->allow, sizeof res->allow, data, len, 7);
	if (len > 14 && strncasecmp(data, "Content-Type: ", 14) == 0)
		copy_header(res->content_type, sizeof res->content_type, data, len, 14);
	return len;
}

/* Sends body chunked (no Content-Length) when chunked is set. */
struct upload {
	const char *data;
	size_t left;
};

static size_t read_upload(char *buf, size_t size, size_t n, void *userp)
{
	struct upload *up = userp;
	size_t take = size * n < up->left ? size * n : up->left;
	memcpy(buf, up->data, take);
	up->data += take;
	up->left -= take;
	return take;
}

static struct http_result http(const char *method, const char *path, const char *body,
			       size_t body_len, bool chunked)
{
	struct http_result res = {0};
	char url[256], *text = NULL;
	snprintf(url, sizeof url, "http://localhost%s", path);
	CURL *c = curl_easy_init();
	struct curl_slist *headers = NULL;
	struct upload up = {body, body_len};
	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, cfg.socket_path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &text);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, collect_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &res);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	if (chunked) {
		headers = curl_slist_append(headers, "Transfer-Encoding: chunked");
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, read_upload);
		curl_easy_setopt(c, CURLOPT_READDATA, &up);
	} else if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	}
	headers = curl_slist_append(headers, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	CURLcode rc = curl_easy_perform(c);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res.status);
		curl_easy_getinfo(c, CURLINFO_TOTAL_TIME, &res.seconds);
		res.body = text ? json_loads(text, 0, NULL) : NULL;
	} else {
		fprintf(stderr, "curl %s %s: %s\n", method, path, curl_easy_strerror(rc));
	}
	free(text);
	curl_slist_free_all(headers);
	curl_easy_cleanup(c);
	return res;
}

static struct http_result get(const char *path)
{
	return http("GET", path, NULL, 0, false);
}

static struct agent_server *srv;

static void start_server(void)
{
	char err[256] = "";
	srv = server_open(&ctx, err, sizeof err);
	if (srv && server_serve(srv, err, sizeof err) < 0)
		srv = NULL;
	if (!srv)
		fprintf(stderr, "starting the server: %s\n", err);
}

TEST(socket_is_created_with_mode_and_group)
{
	struct stat sb;
	CHECK(srv != NULL);
	CHECK_INT(lstat(cfg.socket_path, &sb), 0);
	CHECK(S_ISSOCK(sb.st_mode));
	CHECK_INT(sb.st_mode & 07777, 0640);
	CHECK_INT(sb.st_gid, 4321);
}

TEST(every_endpoint_over_the_socket)
{
	struct http_result r = get("/v1/status");
	CHECK_INT(r.status, 200);
	CHECK_STR(r.content_type, "application/json");
	CHECK_STR(json_string_value(json_object_get(r.body, "doc")), "status");
	json_decref(r.body);
	r = get("/v1/checks");
	CHECK_INT(r.status, 200);
	CHECK_STR(json_string_value(json_object_get(r.body, "doc")), "checks");
	json_decref(r.body);
	r = get("/v1/wakeups?seconds=0.2");
	CHECK_INT(r.status, 200);
	CHECK_DBL(json_real_value(json_object_get(r.body, "seconds")), 0.2, 1e-9);
	json_decref(r.body);
	const char *opts = "{\"dry_run\": true, \"force\": true}";
	r = http("POST", "/v1/trim", opts, strlen(opts), false);
	CHECK_INT(r.status, 200);
	CHECK(json_is_true(json_object_get(r.body, "dry_run")));
	CHECK(json_is_true(json_object_get(r.body, "force")));
	json_decref(r.body);
	r = http("POST", "/v1/trim", NULL, 0, false);
	CHECK_INT(r.status, 200);
	CHECK(json_is_false(json_object_get(r.body, "dry_run")));
	json_decref(r.body);
	r = get("/v1/balloon");
	CHECK_INT(r.status, 200);
	CHECK_STR(json_string_value(json_object_get(r.body, "doc")), "balloon");
	json_decref(r.body);
	r = http("PUT", "/v1/balloon/order", "{\"order\": 10}", 13, false);
	CHECK_INT(r.status, 200);
	CHECK_INT(json_integer_value(json_object_get(r.body, "order")), 10);
	json_decref(r.body);
	r = get("/v1/version");
	CHECK_INT(r.status, 200);
	CHECK_INT(json_integer_value(json_object_get(r.body, "api")), 1);
	json_decref(r.body);
}

TEST(errors_over_the_socket)
{
	struct http_result r = http("DELETE", "/v1/trim", NULL, 0, false);
	CHECK_INT(r.status, 405);
	CHECK_STR(r.allow, "POST");
	CHECK_CONTAINS(json_string_value(json_object_get(r.body, "error")), "method not allowed");
	json_decref(r.body);
	r = get("/v1/nothing");
	CHECK_INT(r.status, 404);
	CHECK_STR(r.content_type, "application/json");
	CHECK_CONTAINS(json_string_value(json_object_get(r.body, "error")), "/v1/nothing");
	json_decref(r.body);
	r = http("POST", "/v1/trim", "{nope", 5, false);
	CHECK_INT(r.status, 400);
	CHECK_CONTAINS(json_string_value(json_object_get(r.body, "error")), "not valid JSON");
	json_decref(r.body);
	r = get("/v1/wakeups?seconds=forever");
	CHECK_INT(r.status, 400);
	json_decref(r.body);
	r = get("/v1/wakeups?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9");
	CHECK_INT(r.status, 400);
	CHECK_CONTAINS(json_string_value(json_object_get(r.body, "error")),
		       "more than 8 query parameters");
	json_decref(r.body);
	r = get("/v1/st%61tus");
	CHECK_INT(r.status, 200);
	json_decref(r.body);
}

TEST(oversized_requests_are_413)
{
	size_t big = cfg.max_request_bytes + 1;
	char *body = malloc(big + 1);
	memset(body, ' ', big);
	body[0] = '{';
	body[big - 1] = '}';
	body[big] = '\0';
	int trims = calls_trim;
	struct http_result r = http("POST", "/v1/trim", body, big, false);
	CHECK_INT(r.status, 413);
	CHECK_CONTAINS(json_string_value(json_object_get(r.body, "error")),
		       "request body larger than 4.00 KiB");
	json_decref(r.body);
	r = http("POST", "/v1/trim", body, big, true);
	CHECK_INT(r.status, 413);
	json_decref(r.body);
	/* A body exactly at the limit is fine. */
	body[big - 2] = '}';
	r = http("POST", "/v1/trim", body, big - 1, true);
	CHECK_INT(r.status, 200);
	json_decref(r.body);
	CHECK_INT(calls_trim, trims + 1);
	/* And the server still answers afterwards. */
	r = get("/v1/status");
	CHECK_INT(r.status, 200);
	json_decref(r.body);
	free(body);
}

static void *slow_wakeups(void *arg)
{
	struct http_result *res = arg;
	*res = get("/v1/wakeups?seconds=3");
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TEST(a_slow_wakeups_request_does_not_stall_status_or_trim)
{
	struct http_result slow[2];
	pthread_t threads[2];
	double start = now_s();
	for (int i = 0; i < 2; i++)
		pthread_create(&threads[i], NULL, slow_wakeups, &slow[i]);
	struct timespec settle = {0, 300 * 1000 * 1000};
	nanosleep(&settle, NULL);
	double t0 = now_s();
	struct http_result status = get("/v1/status");
	double status_s = now_s() - t0;
	t0 = now_s();
	struct http_result trim = http("POST", "/v1/trim", "{\"dry_run\": true}", 17, false);
	double trim_s = now_s() - t0;
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	double total = now_s() - start;
	CHECK_INT(status.status, 200);
	CHECK_INT(trim.status, 200);
	CHECK(status_s < 1.0);
	CHECK(trim_s < 1.0);
	/* Both answered while the wakeups requests were still running. */
	CHECK(t0 - start < 2.5);
	for (int i = 0; i < 2; i++) {
		CHECK_INT(slow[i].status, 200);
		CHECK(slow[i].seconds >= 2.9);
		json_decref(slow[i].body);
	}
	/* The two 3 s requests ran side by side, not one after the other. */
	CHECK(total < 5.5);
	json_decref(status.body);
	json_decref(trim.body);
}

TEST(a_second_server_on_a_live_socket_is_refused)
{
	char err[256] = "";
	struct server_socket second;
	CHECK_INT(server_listen_unix(&cfg, &second, err, sizeof err), -1);
	CHECK_CONTAINS(err, "another process is serving");
	/* ... and the running one is untouched. */
	struct http_result r = get("/v1/status");
	CHECK_INT(r.status, 200);
	json_decref(r.body);
}

TEST(stop_removes_the_socket_file)
{
	CHECK_INT(server_stop(srv, 2.0), 0);
	srv = NULL;
	CHECK(access(cfg.socket_path, F_OK) < 0 && errno == ENOENT);
	CHECK_INT(scratch_connect(cfg.socket_path), -1);
}

TEST(stop_waits_for_requests_in_flight_only_as_long_as_the_grace)
{
	start_server();
	struct http_result slow;
	pthread_t thread;
	pthread_create(&thread, NULL, slow_wakeups, &slow);
	struct timespec settle = {0, 300 * 1000 * 1000};
	nanosleep(&settle, NULL);
	double t0 = now_s();
	CHECK_INT(server_stop(srv, 0.5), 1);
	double waited = now_s() - t0;
	CHECK(waited >= 0.45 && waited < 1.5);
	CHECK(access(cfg.socket_path, F_OK) < 0);
	pthread_join(thread, NULL);
	/* The request that was running still got its answer. */
	CHECK_INT(slow.status, 200);
	json_decref(slow.body);
	srv = NULL; /* left to the process exit by design */
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	vmc_log_init("agent_server");
	vmc_log_set_level(VMC_LOG_ERROR);
	agent_config_defaults(&cfg);
	snprintf(cfg.socket_path, sizeof cfg.socket_path, "%s/agent.sock", tmpdir);
	snprintf(cfg.socket_group, sizeof cfg.socket_group, "4321");
	cfg.socket_mode = 0640;
	cfg.max_request_bytes = 4096;
	curl_global_init(CURL_GLOBAL_DEFAULT);

	RUN(every_endpoint_routes_to_its_core_function);
	RUN(a_refused_freeze_is_409_and_a_failed_thaw_500);
	RUN(unknown_paths_are_404_with_the_list_of_endpoints);
	RUN(wrong_method_is_405_with_allow);
	RUN(trim_options_come_from_the_json_body);
	RUN(bad_bodies_are_400_and_never_reach_the_core);
	RUN(wakeups_seconds_parameter);
	RUN(endpoints_without_parameters_refuse_them);
	RUN(core_failures_are_500_with_the_core_message);
	RUN(hostile_bytes_in_paths_still_give_json);

	start_server();
	RUN(socket_is_created_with_mode_and_group);
	RUN(every_endpoint_over_the_socket);
	RUN(errors_over_the_socket);
	RUN(oversized_requests_are_413);
	RUN(a_slow_wakeups_request_does_not_stall_status_or_trim);
	RUN(a_second_server_on_a_live_socket_is_refused);
	RUN(stop_removes_the_socket_file);
	RUN(stop_waits_for_requests_in_flight_only_as_long_as_the_grace);

	curl_global_cleanup();
	rmdir(tmpdir);
	return check_done();
}
