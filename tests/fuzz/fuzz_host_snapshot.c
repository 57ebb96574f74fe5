/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What autostop answers from its snapshot while the VM is stopped (host/autostop/snapshot.c):
 * any request target a client sends, with its query decoded and checked. The first byte picks
 * the method (GET, HEAD, POST) and whether the connection is kept alive. An answer must be a
 * whole 200 response carrying the marker; a refusal must say why.
 */
#include "autostop/snapshot.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const struct http_header headers[] = {
    {"Api-Version", "1.43"},
    {"Content-Type", "application/json"},
    {"Server", "Docker/24.0.7 (linux)"},
};

static struct snapshot *snapshot(void)
{
	static const char list[] = "[{\"Id\":\"aa\",\"Names\":[\"/pg\"],\"State\":\"exited\","
				   "\"Status\":\"Exited (0) 1 minute ago\"},{\"Id\":\"bb\","
				   "\"State\":\"created\",\"Status\":\"Created\"}]\n";
	struct snapshot *s = snapshot_new("dev", 1767323045);
	snapshot_add(s, "GET", "/_ping", headers, 3, "OK", 2);
	snapshot_add(s, "HEAD", "/_ping", headers, 3, "", 0);
	snapshot_add(s, "GET", "/version", headers, 3, "{}\n", 3);
	snapshot_add(s, "GET", "/v1.41/version", headers, 3, "{}\n", 3);
	snapshot_add_version(s, "1.41");
	snapshot_add(s, "GET", "/containers/json?all=1", headers, 3, list, strlen(list));
	snapshot_add_exit(s, "aa", "2026-01-02T02:34:05.5Z", 0);
	snapshot_add(s, "GET", "/images/json", headers, 3, "[]\n", 3);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct snapshot *s;
	if (!s)
		s = snapshot();
	if (size == 0 || size > 4096)
		return 0;
	static const char *const methods[] = {"GET", "HEAD", "POST"};
	const char *method = methods[data[0] % 3];
	bool keep_alive = (data[0] & 0x80) != 0;
	char *target = malloc(size);
	if (!target)
		return 0;
	memcpy(target, data + 1, size - 1);
	target[size - 1] = '\0';
	char *out = NULL, why[300] = "";
	size_t len = 0;
	int rc = snapshot_answer(s, method, target, keep_alive, 1767323045.0 + 5417, &out, &len,
				 why, sizeof why);
	if (rc == 0) {
		if (!out || len < 17 || memcmp(out, "HTTP/1.1 200 OK\r\n", 17) != 0 ||
		    !strstr(out, "\r\n" SNAPSHOT_HEADER ": 2026-01-02T03:04:05Z\r\n") ||
		    !strstr(out, "\r\n\r\n"))
			abort();
	} else if (out || !why[0]) {
		abort();
	}
	free(out);
	free(target);
	return 0;
}
