/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent client and the QMP client against fake peers on real unix sockets: a child process
 * plays vmcost-agent (canned HTTP answers) or QEMU (greeting, events, answers), so the error
 * mapping and the framing are tested without a VM.
 */
#include "check.h"
#include "clients/agent_client.h"
#include "clients/qmp.h"
#include "host_testlib.h"
#include "log.h"

#include <sys/socket.h>
#include <sys/un.h>

static char err[1024];

static pid_t fake_agent(const char *path, const char *response, int count)
{
	return t_fake_peer(path, response, count, false);
}

static char sock_path[4200];
static struct lima_instance inst;

/* status line and headers, then the body with its real Content-Length */
static void http_case(const char *head, const char *body, int want_rc, const char *want_text)
{
	char response[2048];
	if (head[0])
		snprintf(response, sizeof response,
			 "%s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s", head,
			 strlen(body), body);
	else
		response[0] = '\0';
	pid_t child = fake_agent(sock_path, response, 1);
	json_t *doc = NULL;
	err[0] = '\0';
	int rc = agent_call(&inst, "GET", "/v1/status", NULL, 3000, &doc, err, sizeof err);
	CHECK_INT(rc, want_rc);
	if (want_text) {
		char *text = rc == VMC_EXIT_OK ? json_dumps(doc, 0) : NULL;
		CHECK_CONTAINS(text ? text : err, want_text);
		free(text);
	}
	json_decref(doc);
	waitpid(child, NULL, 0);
}

TEST(agent_answers_and_errors)
{
	http_case("HTTP/1.1 200 OK\r\nContent-Type: application/json",
		  "{\"memory\": {\"total\": 1024}}", VMC_EXIT_OK, "\"total\": 1024");
	http_case("HTTP/1.1 500 Internal Server Error", "{\"error\": \"cannot read meminfo\"}",
		  VMC_EXIT_AGENT, "answered 500 to GET /v1/status: cannot read meminfo");
	http_case("HTTP/1.1 404 Not Found", "no route\n", VMC_EXIT_AGENT,
		  "answered 404 to GET /v1/status: no route");
	http_case("HTTP/1.1 200 OK", "hello", VMC_EXIT_AGENT, "is not JSON");
	/* The peer hangs up without a word. */
	http_case("", "", VMC_EXIT_AGENT, "did not answer GET /v1/status");
}

TEST(agent_socket_problems)
{
	json_t *doc;
	unlink(sock_path);
	CHECK_INT(agent_call(&inst, "GET", "/v1/status", NULL, 1000, &doc, err, sizeof err),
		  VMC_EXIT_AGENT);
	CHECK_CONTAINS(err, "does not exist");
	CHECK_CONTAINS(err, "limactl shell dev sudo rc-service cache-trim status");
	/* A socket file nobody listens on: refused. */
	int fd = t_listen_unix(sock_path);
	close(fd);
	CHECK_INT(agent_call(&inst, "GET", "/v1/status", NULL, 1000, &doc, err, sizeof err),
		  VMC_EXIT_AGENT);
	CHECK_CONTAINS(err, "did not answer");
	/* A regular file where the socket should be. */
	unlink(sock_path);
	t_write("x", "lima/dev/sock/vmcost-agent.sock");
	CHECK_INT(agent_call(&inst, "GET", "/v1/status", NULL, 1000, &doc, err, sizeof err),
		  VMC_EXIT_AGENT);
	CHECK_CONTAINS(err, "is not a socket");
	unlink(sock_path);
	/* Longer than sun_path allows. */
	struct lima_instance longer = inst;
	memset(longer.dir, 'd', 150);
	longer.dir[0] = '/';
	longer.dir[150] = '\0';
	CHECK_INT(agent_call(&longer, "GET", "/v1/status", NULL, 1000, &doc, err, sizeof err),
		  VMC_EXIT_AGENT);
	CHECK_CONTAINS(err, "longer than the");
	CHECK(agent_socket_path_max() == 107 || agent_socket_path_max() == 103);
}

TEST(qmp_balloon_round_trip)
{
	char path[400];
	snprintf(path, sizeof path, "%s/qmp.sock", t_root);
	pid_t child = t_fake_qemu(path, true);
	struct qmp q;
	char cls[64];
	CHECK_INT(qmp_open(&q, path, 3000, err, sizeof err), VMC_EXIT_OK);
	CHECK_STR(q.version, "7.2.22");
	uint64_t actual = 0;
	CHECK_INT(qmp_query_balloon(&q, &actual, cls, sizeof cls, err, sizeof err), VMC_EXIT_OK);
	CHECK_U64(actual, 2147483648ull);
	CHECK_INT(qmp_balloon(&q, 1073741824ull, cls, sizeof cls, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(qmp_query_balloon(&q, &actual, cls, sizeof cls, err, sizeof err), VMC_EXIT_OK);
	CHECK_U64(actual, 1073741824ull);
	json_t *ret;
	CHECK_INT(qmp_execute(&q, "frobnicate", NULL, &ret, cls, sizeof cls, err, sizeof err),
		  VMC_EXIT_FAILURE);
	CHECK_STR(cls, "CommandNotFound");
	qmp_close(&q);
	waitpid(child, NULL, 0);
}

TEST(qmp_without_balloon_device)
{
	char path[400];
	snprintf(path, sizeof path, "%s/qmp2.sock", t_root);
	pid_t child = t_fake_qemu(path, false);
	struct qmp q;
	char cls[64];
	uint64_t actual;
	CHECK_INT(qmp_open(&q, path, 3000, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(qmp_query_balloon(&q, &actual, cls, sizeof cls, err, sizeof err),
		  VMC_EXIT_FAILURE);
	CHECK_STR(cls, "DeviceNotActive");
	CHECK_CONTAINS(err, "No balloon device");
	qmp_close(&q);
	waitpid(child, NULL, 0);
	/* Nothing listening: the instance is not running. */
	CHECK_INT(qmp_open(&q, path, 500, err, sizeof err), VMC_EXIT_FAILURE);
	unlink(path);
	CHECK_INT(qmp_open(&q, path, 500, err, sizeof err), VMC_EXIT_STOPPED);
}

TEST(qmp_garbage_and_silence)
{
	char path[400];
	snprintf(path, sizeof path, "%s/qmp3.sock", t_root);
	pid_t child = t_fake_peer(path, "this is not QMP\r\n", 1, true);
	struct qmp q;
	CHECK_INT(qmp_open(&q, path, 1000, err, sizeof err), VMC_EXIT_FAILURE);
	CHECK_CONTAINS(err, "not a QMP message");
	waitpid(child, NULL, 0);
	/* A peer that accepts and says nothing: the timeout ends it. */
	int lfd = t_listen_unix(path);
	CHECK_INT(qmp_open(&q, path, 300, err, sizeof err), VMC_EXIT_FAILURE);
	CHECK_CONTAINS(err, "did not answer on QMP within 300 ms");
	close(lfd);
	CHECK(qmp_parse_message("[1]\n", 4) == NULL);
	json_t *m = qmp_parse_message("{\"return\": {}}\r\n", 16);
	CHECK(m != NULL);
	json_decref(m);
}

int main(void)
{
	t_setup("host-clients");
	memset(&inst, 0, sizeof inst);
	strcpy(inst.name, "dev");
	snprintf(inst.dir, sizeof inst.dir, "%s/lima/dev", t_root);
	t_write("", "lima/dev/sock/.keep");
	snprintf(sock_path, sizeof sock_path, "%s/sock/vmcost-agent.sock", inst.dir);
	RUN(agent_answers_and_errors);
	RUN(agent_socket_problems);
	RUN(qmp_balloon_round_trip);
	RUN(qmp_without_balloon_device);
	RUN(qmp_garbage_and_silence);
	t_cleanup();
	return check_done();
}
