/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Docker Engine API client over a unix socket (the instance's <dir>/sock/docker.sock), with
 * http_do (libcurl) and jansson: images and containers here, exec in docker_exec.h, the client
 * and its one call helper in docker_call.h. Unversioned paths: dockerd serves its own API
 * version, so the same client talks to Docker 20.10 (API 1.41) in the lab and Docker 29 in the
 * Lima template.
 *
 * Every call returns VMC_EXIT_OK or VMC_EXIT_DOCKER with a one-line message in err that says
 * what to do (daemon down, image missing, pull failed, container gone).
 */
#ifndef VMC_DOCKER_H
#define VMC_DOCKER_H

#include "clients/docker_call.h"
#include "clients/docker_exec.h"
#include "clients/docker_stream.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* GET /_ping then GET /version; *version gets the daemon's JSON (caller decrefs). */
int docker_version(const struct docker *d, json_t **version, char *err, size_t errsize);

/* GET /images/NAME/json: *present true on 200, false on 404. */
int docker_image_present(const struct docker *d, const char *image, bool *present, char *err,
			 size_t errsize);

/*
 * GET /distribution/IMAGE/json: dockerd asks the registry for the image's manifest, as a pull
 * would first, without downloading a layer. VMC_EXIT_OK when the registry answers with it;
 * VMC_EXIT_DOCKER with Docker's own reason (no route, unknown image, unauthorized), or a
 * timeout, otherwise.
 */
int docker_registry_has_image(const struct docker *d, const char *image, long timeout_ms, char *err,
			      size_t errsize);

/*
 * POST /images/create?fromImage=REPO&tag=TAG. progress (may be NULL) sees every event. An
 * "error" event or a non-200 status is a pull failure with Docker's own message.
 */
int docker_image_pull(const struct docker *d, const char *image, docker_pull_progress_fn progress,
		      void *ctx, char *err, size_t errsize);

/* Splits "repo[:tag]" (registry ports and @digests respected) into fromImage and tag. */
void docker_split_image(const char *image, char *repo, size_t repo_size, char *tag,
			size_t tag_size);

/*
 * POST /containers/create?name=NAME with config (Image, Env, Cmd, HostConfig...). name may be
 * NULL. id gets the full container id.
 */
int docker_container_create(const struct docker *d, const char *name, const json_t *config,
			    char *id, size_t idsize, char *err, size_t errsize);
int docker_container_start(const struct docker *d, const char *id, char *err, size_t errsize);
/* DELETE /containers/ID?force=1&v=1 (404 = already gone, fine). */
int docker_container_remove(const struct docker *d, const char *id, char *err, size_t errsize);
/* GET /containers/ID/json: State.Running. */
int docker_container_running(const struct docker *d, const char *id, bool *running, char *err,
			     size_t errsize);

#endif
