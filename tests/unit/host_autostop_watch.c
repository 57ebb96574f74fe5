/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What autostop reads from relayed bytes (host/autostop/http_watch.c): requests matched with
 * their responses, polls told from work, streams and hijacks, whatever the read boundaries.
 */
#include "autostop/http_watch.h"
#include "check.h"

#include <string.h>

/* Feeds s in pieces of at most step bytes (1: every byte its own read). */
static void client(struct http_watch *w, const char *s, size_t step)
{
	for (size_t i = 0, n = strlen(s); i < n; i += step)
		http_watch_client(w, s + i, n - i < step ? n - i : step);
}

static void upstream(struct http_watch *w, const char *s, size_t step)
{
	for (size_t i = 0, n = strlen(s); i < n; i += step)
		http_watch_upstream(w, s + i, n - i < step ? n - i : step);
}

static const char ping[] = "GET /_ping HTTP/1.1\r\nHost: docker\r\n\r\n";
static const char pong[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK";
static const char create[] = "POST /v1.47/containers/create HTTP/1.1\r\nHost: docker\r\n"
			     "Content-Type: application/json\r\nContent-Length: 18\r\n\r\n"
			     "{\"Image\":\"alpine\"}";
static const char created[] = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
			      "Transfer-Encoding: chunked\r\n\r\n"
			      "a\r\n{\"Id\":\"ab\"\r\n1\r\n}\r\n0\r\n\r\n";

TEST(a_poll_then_quiet_on_a_kept_alive_connection)
{
	size_t steps[] = {1, 3, 4096};
	for (size_t k = 0; k < 3; k++) {
		struct http_watch w;
		http_watch_init(&w);
		CHECK_INT(http_watch_activity(&w), AUTOSTOP_QUIET);
		client(&w, ping, steps[k]);
		CHECK_INT(http_watch_activity(&w), AUTOSTOP_POLLING);
		upstream(&w, pong, steps[k]);
		CHECK_INT(http_watch_activity(&w), AUTOSTOP_QUIET);
		client(&w, ping, steps[k]);
		upstream(&w, pong, steps[k]);
		CHECK_INT(http_watch_activity(&w), AUTOSTOP_QUIET);
		CHECK(!w.raw);
	}
}

TEST(work_lasts_until_its_response_ends)
{
	size_t steps[] = {1, 7, 4096};
	for (size_t k = 0; k < 3; k++) {
		struct http_watch w;
		http_watch_init(&w);
		client(&w, create, steps[k]);
		CHECK_INT(http_watch_activity(&w), AUTOSTOP_WORKING);
		upstream(&w, "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n",
			 steps[k]);
		CHECK_INT(http_watch_activity(&w), AUTOSTOP_WORKING);
		upstream(&w,
			 created +
			     strlen("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
				    "Transfer-Encoding: chunked\r\n\r\n"),
			 steps[k]);
		CHECK_INT(http_watch_activity(&w), AUTOSTOP_QUIET);
		CHECK(!w.raw);
	}
}

TEST(a_request_not_yet_read_whole_counts_as_work)
{
	struct http_watch w;
	http_watch_init(&w);
	client(&w, "GET /_pi", 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_WORKING);
	client(&w, "ng HTTP/1.1\r\nHost: x\r\n\r\n", 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_POLLING);
}

TEST(a_follow_stream_is_work_until_docker_ends_it)
{
	struct http_watch w;
	http_watch_init(&w);
	client(&w, "GET /v1.47/events HTTP/1.1\r\nHost: docker\r\n\r\n", 4096);
	upstream(&w, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_WORKING);
	upstream(&w, "0\r\n\r\n", 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_QUIET);
}

TEST(a_body_until_eof_ends_with_the_connection)
{
	struct http_watch w;
	http_watch_init(&w);
	client(&w, "GET /info HTTP/1.0\r\n\r\n", 4096);
	upstream(&w, "HTTP/1.0 200 OK\r\n\r\n{}", 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_POLLING);
	http_watch_upstream_eof(&w);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_QUIET);
}

TEST(head_answers_have_no_body)
{
	struct http_watch w;
	http_watch_init(&w);
	client(&w, "HEAD /_ping HTTP/1.1\r\nHost: docker\r\n\r\n", 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_POLLING);
	upstream(&w, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_QUIET);
	client(&w, ping, 4096);
	upstream(&w, pong, 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_QUIET);
	CHECK(!w.raw);
}

TEST(pipelined_requests_are_answered_in_order)
{
	struct http_watch w;
	http_watch_init(&w);
	char both[1024];
	snprintf(both, sizeof both, "%s%s", ping, create);
	client(&w, both, 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_WORKING);
	upstream(&w, pong, 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_WORKING);
	upstream(&w, created, 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_QUIET);
}

TEST(a_continue_comes_before_the_answer)
{
	struct http_watch w;
	http_watch_init(&w);
	client(&w, create, 4096);
	upstream(&w, "HTTP/1.1 100 Continue\r\n\r\n", 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_WORKING);
	upstream(&w, created, 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_QUIET);
}

TEST(upgrades_and_hijacks_go_raw)
{
	const char *hijacks[] = {
	    "POST /v1.47/containers/ab/attach?stream=1&stdin=1 HTTP/1.1\r\nHost: docker\r\n"
	    "Content-Length: 0\r\n\r\n",
	    "POST /v1.47/exec/ab/start HTTP/1.1\r\nHost: docker\r\nConnection: Upgrade\r\n"
	    "Upgrade: tcp\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
	    "POST /session HTTP/1.1\r\nHost: docker\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n",
	    "GET /anything HTTP/1.1\r\nHost: docker\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof hijacks / sizeof hijacks[0]; i++) {
		struct http_watch w;
		http_watch_init(&w);
		char with_stdin[512];
		snprintf(with_stdin, sizeof with_stdin, "%sls -l\n\x01\x02", hijacks[i]);
		client(&w, with_stdin, 4096);
		CHECK(w.raw);
		CHECK_INT(http_watch_activity(&w), AUTOSTOP_WORKING);
		upstream(&w,
			 "HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n"
			 "\x01\x00\x00\x00\x00\x00\x00\x02hi",
			 4096);
		CHECK_INT(http_watch_activity(&w), AUTOSTOP_WORKING);
	}
}

TEST(bytes_that_are_not_http_are_work)
{
	struct http_watch w;
	http_watch_init(&w);
	client(&w, "\x16\x03\x01 not http at all\r\n\r\n", 4096);
	CHECK(w.raw);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_WORKING);
}

TEST(a_long_target_is_not_a_poll)
{
	struct http_watch w;
	http_watch_init(&w);
	char req[1024];
	char pad[400];
	memset(pad, 'a', sizeof pad - 1);
	pad[sizeof pad - 1] = '\0';
	snprintf(req, sizeof req, "GET /_ping?%s HTTP/1.1\r\nHost: x\r\n\r\n", pad);
	client(&w, req, 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_WORKING);
	upstream(&w, pong, 4096);
	CHECK_INT(http_watch_activity(&w), AUTOSTOP_QUIET);
}

/* issue 22: while the VM is stopped the relay answers polls itself and must know where each
 * request ends, to forward the first one it cannot answer from its first byte. */
TEST(each_request_is_kept_with_its_target_and_where_it_ends)
{
	char three[2048];
	snprintf(three, sizeof three,
		 "HEAD /_ping HTTP/1.1\r\nHost: docker\r\n\r\n"
		 "GET /v1.41/containers/json?all=1 HTTP/1.1\r\nHost: docker\r\n\r\n%s",
		 create);
	size_t head_len = strlen("HEAD /_ping HTTP/1.1\r\nHost: docker\r\n\r\n");
	size_t list_len =
	    strlen("GET /v1.41/containers/json?all=1 HTTP/1.1\r\nHost: docker\r\n\r\n");
	size_t steps[] = {1, 5, 4096};
	for (size_t k = 0; k < 3; k++) {
		struct http_watch w;
		http_watch_init(&w);
		client(&w, three, steps[k]);
		const struct http_watch_request *q = http_watch_oldest(&w);
		CHECK(q != NULL);
		if (!q)
			continue;
		CHECK_STR(q->method, "HEAD");
		CHECK_STR(q->target, "/_ping");
		CHECK(q->head && q->complete && q->keep_alive);
		CHECK_INT(q->kind, AUTOSTOP_REQ_POLL);
		CHECK_U64(q->end, head_len);
		http_watch_answered(&w); /* answered by the relay itself */
		q = http_watch_oldest(&w);
		CHECK_STR(q->method, "GET");
		CHECK_STR(q->target, "/v1.41/containers/json?all=1");
		CHECK_U64(q->end, head_len + list_len);
		CHECK_INT(http_watch_activity(&w), AUTOSTOP_WORKING); /* the create waits */
		http_watch_answered(&w);
		q = http_watch_oldest(&w);
		CHECK_STR(q->method, "POST");
		CHECK_INT(q->kind, AUTOSTOP_REQ_WORK);
		CHECK(q->complete); /* its body is here: 18 bytes */
		CHECK_U64(q->end, strlen(three));
		CHECK_STR(w.api_version, "1.47");
		/* docker.sock answers the create, the only request it was sent. */
		upstream(&w, created, steps[k]);
		CHECK(http_watch_oldest(&w) == NULL);
		CHECK_INT(http_watch_activity(&w), AUTOSTOP_QUIET);
		CHECK(!w.raw);
	}
}

TEST(a_request_cut_half_way_is_not_complete_and_close_is_kept)
{
	struct http_watch w;
	http_watch_init(&w);
	client(&w, "POST /v1.41/containers/create HTTP/1.1\r\nContent-Length: 10\r\n\r\n{\"Im",
	       4096);
	const struct http_watch_request *q = http_watch_oldest(&w);
	CHECK(q && !q->complete);
	CHECK_STR(w.api_version, "1.41");
	http_watch_init(&w);
	client(&w, "GET /_ping HTTP/1.1\r\nConnection: close\r\n\r\n", 4096);
	q = http_watch_oldest(&w);
	CHECK(q && q->complete && !q->keep_alive);
	http_watch_init(&w);
	client(&w, "GET /version HTTP/1.0\r\n\r\n", 4096);
	q = http_watch_oldest(&w);
	CHECK(q && q->complete && !q->keep_alive);
	CHECK_STR(w.api_version, "");
}

int main(void)
{
	RUN(a_poll_then_quiet_on_a_kept_alive_connection);
	RUN(work_lasts_until_its_response_ends);
	RUN(a_request_not_yet_read_whole_counts_as_work);
	RUN(a_follow_stream_is_work_until_docker_ends_it);
	RUN(a_body_until_eof_ends_with_the_connection);
	RUN(head_answers_have_no_body);
	RUN(pipelined_requests_are_answered_in_order);
	RUN(a_continue_comes_before_the_answer);
	RUN(upgrades_and_hijacks_go_raw);
	RUN(bytes_that_are_not_http_are_work);
	RUN(a_long_target_is_not_a_poll);
	RUN(each_request_is_kept_with_its_target_and_where_it_ends);
	RUN(a_request_cut_half_way_is_not_complete_and_close_is_kept);
	return check_done();
}
