/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's API through the socket Lima forwards to the host (portForwards guestSocket
 * /run/vmcost-agent.sock -> {{.Dir}}/sock/vmcost-agent.sock). Every failure names the next step:
 * the forward, the service in the guest, or the agent's own message.
 */
#include "clients/agent_client.h"

#include "clients/http.h"
#include "log.h"
#include "message.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int agent_socket_path(const struct lima_instance *inst, char *buf, size_t size)
{
	return lima_instance_path(inst, "sock/vmcost-agent.sock", buf, size);
}

size_t agent_socket_path_max(void)
{
	return sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
}

static void service_hint(const char *name, char *buf, size_t size)
{
	vmc_textf(
	    buf, size,
	    "check the agent in the guest: limactl shell %s sudo rc-service cache-trim status",
	    name);
}

static int check_socket(const char *socket_path, const char *name, char *err, size_t errsize)
{
	char hint[200];
	service_hint(name, hint, sizeof hint);
	if (strlen(socket_path) > agent_socket_path_max()) {
		vmc_textf(
		    err, errsize,
		    "the agent socket path %s is %zu bytes, longer than the %zu a unix socket "
		    "allows here: use a shorter LIMA_HOME",
		    socket_path, strlen(socket_path), agent_socket_path_max());
		return VMC_EXIT_AGENT;
	}
	struct stat st;
	if (stat(socket_path, &st) < 0) {
		if (errno == EACCES) {
			vmc_textf(
			    err, errsize,
			    "cannot reach %s: permission denied (another user's instance? run as "
			    "that user or root)",
			    socket_path);
			return VMC_EXIT_PERMISSION;
		}
		vmc_textf(err, errsize,
			  "vmcost-agent is not reachable: %s does not exist (is the agent's "
			  "portForwards entry in lima.yaml?); %s",
			  socket_path, hint);
		return VMC_EXIT_AGENT;
	}
	if (!S_ISSOCK(st.st_mode)) {
		vmc_textf(err, errsize, "%s is not a socket: remove it and restart the instance",
			  socket_path);
		return VMC_EXIT_AGENT;
	}
	if (access(socket_path, R_OK | W_OK) < 0 && errno == EACCES) {
		vmc_textf(err, errsize,
			  "cannot open %s: permission denied (another user's instance? run as that "
			  "user or root)",
			  socket_path);
		return VMC_EXIT_PERMISSION;
	}
	return VMC_EXIT_OK;
}

/* The agent's JSON errors carry "error" (or "message"); fall back to the raw first line. */
static void error_text(const struct http_response *resp, char *buf, size_t size)
{
	json_error_t jerr;
	json_t *j = resp->body ? json_loadb(resp->body, resp->body_len, 0, &jerr) : NULL;
	const char *msg = NULL;
	if (json_is_object(j)) {
		msg = json_string_value(json_object_get(j, "error"));
		if (!msg)
			msg = json_string_value(json_object_get(j, "message"));
	}
	if (msg)
		vmc_textf(buf, size, "%s", msg);
	else if (resp->body && resp->body_len)
		vmc_textf(buf, size, "%.*s", (int)strcspn(resp->body, "\r\n"), resp->body);
	else
		vmc_textf(buf, size, "no message");
	json_decref(j);
}

/* agent_call on a socket path already found (its checks, its messages). */
static int agent_call_socket(const char *socket_path, const char *name, const char *method,
			     const char *path, const char *body, long timeout_ms, json_t **out,
			     char *err, size_t errsize)
{
	*out = NULL;
	int rc = check_socket(socket_path, name, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	char hint[200];
	service_hint(name, hint, sizeof hint);
	struct http_request req = {
	    .socket_path = socket_path,
	    .method = method,
	    .path = path,
	    .body = body,
	    .timeout_ms = timeout_ms,
	};
	struct http_response resp;
	if (http_do(&req, &resp) < 0) {
		vmc_textf(err, errsize, "vmcost-agent did not answer %s %s through %s (%s): %s",
			  method, path, socket_path, resp.error, hint);
		http_response_free(&resp);
		return VMC_EXIT_AGENT;
	}
	if (resp.status < 200 || resp.status >= 300) {
		char msg[300];
		error_text(&resp, msg, sizeof msg);
		vmc_textf(err, errsize, "vmcost-agent answered %ld to %s %s: %s", resp.status,
			  method, path, msg);
		http_response_free(&resp);
		return VMC_EXIT_AGENT;
	}
	json_error_t jerr;
	json_t *j = resp.body ? json_loadb(resp.body, resp.body_len, 0, &jerr) : NULL;
	http_response_free(&resp);
	if (!j) {
		vmc_textf(err, errsize,
			  "the answer to %s %s is not JSON: is something other than vmcost-agent "
			  "listening on %s?",
			  method, path, socket_path);
		return VMC_EXIT_AGENT;
	}
	*out = j;
	return VMC_EXIT_OK;
}

int agent_call(const struct lima_instance *inst, const char *method, const char *path,
	       const char *body, long timeout_ms, json_t **out, char *err, size_t errsize)
{
	char sock[4096];
	*out = NULL;
	if (agent_socket_path(inst, sock, sizeof sock) < 0) {
		vmc_textf(err, errsize, "the instance directory %s is too long for a socket path",
			  inst->dir);
		return VMC_EXIT_AGENT;
	}
	return agent_call_socket(sock, inst->name, method, path, body, timeout_ms, out, err,
				 errsize);
}
