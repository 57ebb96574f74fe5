/* SPDX-License-Identifier: Apache-2.0 */
#include "autostop/probe.h"

#include "clients/http.h"
#include "clients/lima.h"
#include "log.h"
#include "message.h"

#include <jansson.h>
#include <string.h>

bool probe_ping(const char *docker_sock, long timeout_ms)
{
	char why[8];
	return probe_ping_why(docker_sock, timeout_ms, why, sizeof why);
}

bool probe_ping_why(const char *docker_sock, long timeout_ms, char *why, size_t whysize)
{
	struct http_request req = {.socket_path = docker_sock,
				   .method = "GET",
				   .path = "/_ping",
				   .timeout_ms = timeout_ms};
	struct http_response resp;
	int rc = http_do(&req, &resp);
	bool ok = rc == 0 && resp.status == 200;
	why[0] = '\0';
	if (rc != 0)
		vmc_textf(why, whysize, "%s", resp.error[0] ? resp.error : "no answer");
	else if (!ok)
		vmc_textf(why, whysize, "HTTP %ld", resp.status);
	http_response_free(&resp);
	return ok;
}

static void append_name(struct autostop_check *c, const char *name)
{
	size_t used = strlen(c->names);
	if (*name == '/') /* Docker lists names as "/pg" */
		name++;
	vmc_textf(c->names + used, sizeof c->names - used, "%s%s", used ? ", " : "", name);
}

int probe_parse_containers(const char *body, size_t len, struct autostop_check *c)
{
	c->running = 0;
	c->names[0] = '\0';
	json_t *list = json_loadb(body, len, 0, NULL);
	if (!json_is_array(list)) {
		json_decref(list);
		return -1;
	}
	size_t i;
	json_t *item;
	json_array_foreach(list, i, item)
	{
		c->running++;
		json_t *names = json_object_get(item, "Names");
		const char *name = json_string_value(json_array_get(names, 0));
		const char *id = json_string_value(json_object_get(item, "Id"));
		char short_id[13] = "?";
		if (!name && id)
			vmc_textf(short_id, sizeof short_id, "%.12s", id);
		append_name(c, name ? name : short_id);
	}
	json_decref(list);
	return 0;
}

void probe_check(const char *docker_sock, const char *instance, long timeout_ms,
		 struct autostop_check *c)
{
	memset(c, 0, sizeof *c);
	struct http_request req = {.socket_path = docker_sock,
				   .method = "GET",
				   .path = "/containers/json",
				   .timeout_ms = timeout_ms};
	struct http_response resp;
	if (http_do(&req, &resp) != 0) {
		c->no_answer = true;
		vmc_textf(c->error, sizeof c->error, "%s", resp.error);
	} else if (resp.status != 200) {
		vmc_textf(c->error, sizeof c->error, "GET /containers/json: HTTP %ld", resp.status);
	} else if (probe_parse_containers(resp.body ? resp.body : "", resp.body_len, c) < 0) {
		vmc_textf(c->error, sizeof c->error, "GET /containers/json: not a container list");
	} else {
		c->api_ok = true;
	}
	http_response_free(&resp);
	if (c->api_ok)
		return;
	struct lima_instance inst;
	char err[512];
	if (lima_instance_load(instance, &inst, err, sizeof err) == VMC_EXIT_OK) {
		c->instance_stopped = inst.status == LIMA_STATUS_STOPPED;
		c->instance_running = inst.status == LIMA_STATUS_RUNNING;
	}
}
