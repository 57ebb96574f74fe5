/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's HTTP API: libmicrohttpd on a unix socket that we create ourselves (server_socket.h),
 * one thread per connection so a slow GET /v1/wakeups never stalls a trim or a status request,
 * each request routed by server_route() (server_route.h).
 */
#ifndef VMC_AGENT_SERVER_H
#define VMC_AGENT_SERVER_H

#include "server_route.h"
#include "server_socket.h"

struct agent_server;

/*
 * Limits that keep the API answering under load (autostop wakes the engine through it).
 * A connection that sends nothing for SERVER_READ_TIMEOUT_S (a client stalled halfway through
 * its request, an idle keep-alive) is closed and its thread ends; time inside a handler (a long
 * wakeups) does not count. Connections are cheap (a thread sleeping in poll()), so their limit
 * is far above what a handful of stalled clients can hold within the timeout; beyond it new
 * ones wait in the listen backlog. The work is what is bounded: with SERVER_MAX_REQUESTS
 * requests running, the next one is answered 503 at once with Retry-After.
 */
#define SERVER_READ_TIMEOUT_S	5u
#define SERVER_MAX_CONNECTIONS	256u
#define SERVER_MAX_REQUESTS	16
#define SERVER_BUSY_RETRY_AFTER "1"

/*
 * Two steps, so that the daemon can switch its log to syslog in between: server_open creates the
 * socket (no thread yet; ctx must outlive the server), server_serve starts libmicrohttpd's
 * threads; on failure it removes the socket and frees the server.
 */
struct agent_server *server_open(const struct server_ctx *ctx, char *err, size_t errsize);
int server_serve(struct agent_server *srv, char *err, size_t errsize);
/*
 * Removes the socket file, stops accepting, waits up to grace_s for requests in flight and stops
 * the threads. Returns the number of requests still running when the grace ran out (their
 * threads are then left to the process exit; the server is not freed in that case).
 */
int server_stop(struct agent_server *srv, double grace_s);

#endif
