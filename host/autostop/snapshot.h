/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What `vmcost autostop` answers while the instance it stopped is down: the Docker API's own
 * answers to the polls (autostop_request_kind), recorded just before the stop, headers and
 * bodies, and kept in the instance directory so that a daemon started again (socket activation)
 * still has them. Every answer carries `X-Vmcost-Snapshot: <when it was taken>`, so a tool can
 * tell it from a live one.
 *
 * Recorded: GET and HEAD /_ping, and GET of /version, /info, /containers/json?all=1,
 * /images/json, /volumes, /networks and /system/df, unversioned and under each /vX.Y prefix
 * clients used (the docker CLI asks /v1.41/... after negotiating; Docker adapts some answers
 * to the version, so each is recorded as asked). For each stopped container, its exit
 * (GET /containers/ID/json): "Exited (0) 5 minutes ago" is worked out again at each answer, the
 * way Docker words it, instead of staying "5 minutes" for hours.
 *
 * Answered only what the snapshot answers faithfully; anything else, snapshot_answer says why
 * and the VM starts:
 *   - /containers/json lists only running containers: none run once the VM is stopped, so it
 *     is "[]"; with all=1 the list as recorded, provided every container was already stopped
 *     then (exited, created or dead; autostop stops only when none runs);
 *   - a query must not ask for what was not recorded: filters (other than empty ones), size,
 *     limit, before, since, images' all or shared-size, /system/df's type, or a parameter
 *     this file does not know; /_ping, /version and /info take no parameters, so any query
 *     is theirs to ignore, as Docker does;
 *   - HEAD only for /_ping (Docker routes HEAD nowhere else and answers 404);
 *   - an API version that was not recorded.
 */
#ifndef VMC_AUTOSTOP_SNAPSHOT_H
#define VMC_AUTOSTOP_SNAPSHOT_H

#include "clients/http.h"

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* In the instance directory, beside lima.yaml. */
#define SNAPSHOT_FILE_NAME "vmcost-autostop-snapshot.json"
/* The response header that marks an answer from the snapshot. */
#define SNAPSHOT_HEADER "X-Vmcost-Snapshot"
/* API versions recorded besides the unversioned paths. */
#define SNAPSHOT_VERSIONS_MAX 4
/* Stopped containers whose exit time is asked for (GET /containers/ID/json). */
#define SNAPSHOT_EXITS_MAX 100
/* A snapshot file larger than this is not one. */
#define SNAPSHOT_MAX_BYTES (64u << 20)

struct snapshot;

/* An empty snapshot of instance's Docker API, taken at `taken`. NULL when out of memory. */
struct snapshot *snapshot_new(const char *instance, time_t taken);
void snapshot_free(struct snapshot *s);

/*
 * Records Docker's 200 answer to METHOD TARGET ("GET", "/v1.41/version"): its headers (those
 * of the connection and the message's length are left out: they are the answer's own) and
 * its body. GET /_ping's Api-Version is the daemon's API version. Returns 0, or -1 (a body that
 * is not UTF-8, out of memory).
 */
int snapshot_add(struct snapshot *s, const char *method, const char *target,
		 const struct http_header *headers, size_t nheaders, const char *body, size_t len);
/* Records a stopped container's exit, from its State (FinishedAt in RFC 3339, ExitCode). */
int snapshot_add_exit(struct snapshot *s, const char *id, const char *finished_at, int exit_code);
/* Records which API versions ("1.41") were asked for, for the next snapshot. */
int snapshot_add_version(struct snapshot *s, const char *version);

/*
 * Takes a snapshot through docker_sock (blocking: libcurl), unversioned and for each of the
 * versions given, within budget_ms in all. An answer that does not come is left out (its polls
 * start the VM); only GET /_ping must answer. Returns NULL with a one-line reason in err.
 */
struct snapshot *snapshot_take(const char *docker_sock, const char *instance,
			       const char *const *versions, size_t nversions, long budget_ms,
			       char *err, size_t errsize);

/* Writes it to <instance_dir>/SNAPSHOT_FILE_NAME atomically (a new file renamed over the old
 * one, mode 0600). Returns 0, or -1 with a one-line reason in err. */
int snapshot_store(const struct snapshot *s, const char *instance_dir, char *err, size_t errsize);
/*
 * Reads <instance_dir>/SNAPSHOT_FILE_NAME for instance. NULL with the reason in err when there
 * is none, it is not a snapshot of instance, or it is stale: Lima's host agent wrote its log
 * (ha.stderr.log, ha.stdout.log) after it, so the instance ran since.
 */
struct snapshot *snapshot_load(const char *instance_dir, const char *instance, char *err,
			       size_t errsize);
/* Removes <instance_dir>/SNAPSHOT_FILE_NAME (no error if there is none). */
void snapshot_remove(const char *instance_dir);

/* When it was taken, RFC 3339 in UTC ("2026-01-02T03:04:05Z"). */
const char *snapshot_taken(const struct snapshot *s);
/* The API versions it recorded besides the unversioned paths: up to max into out. */
size_t snapshot_versions(const struct snapshot *s, const char **out, size_t max);

/*
 * The whole HTTP response to METHOD TARGET from the snapshot, marked with SNAPSHOT_HEADER, into
 * *out (malloc'd, *len bytes and a NUL; no body for HEAD). keep_alive false adds "Connection:
 * close". now (seconds since the epoch) dates the answer and words the containers' exits. Returns
 * 0, or -1 with why it cannot be answered faithfully (then the VM must start).
 */
int snapshot_answer(const struct snapshot *s, const char *method, const char *target,
		    bool keep_alive, double now, char **out, size_t *len, char *why,
		    size_t whysize);

/* Docker's (go-units') words for a duration: "Less than a second", "About a minute", "3 hours". */
void snapshot_human_duration(double seconds, char *buf, size_t size);

#endif
