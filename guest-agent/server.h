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
 * Limits that keep the API answering under load (autostop freezes and thaws the engine through
 * it):
 *   - A request must be complete (head and body) within SERVER_REQUEST_DEADLINE_S of the
 *     connection (or, kept alive, of the previous response): a client that sends a byte every
 *     few seconds, which an inactivity timeout never ends, is cut then. Time inside a handler
 *     (a long wakeups) does not count.
 *   - A connection that sends nothing for SERVER_READ_TIMEOUT_S is closed too, while its
 *     response is sent as well.
 *   - Up to SERVER_MAX_CONNECTIONS connections are served; SERVER_SPARE_CONNECTIONS more are
 *     accepted only to answer their request 503 at once (Retry-After, Connection: close), so a
 *     client learns the agent is full instead of waiting. Those too must send their request
 *     within the deadline, so stalled clients hold every connection for at most that long.
 *     Beyond both, libmicrohttpd closes a new connection at once.
 *   - With SERVER_MAX_REQUESTS requests running, the next one is answered 503 at once.
 * Connections are cheap (a thread sleeping in poll()). The deadlines are kept by one thread
 * that sleeps without a timeout while no connection waits for a request, so an idle guest pays
 * nothing for them.
 */
#define SERVER_REQUEST_DEADLINE_S 5.0
#define SERVER_READ_TIMEOUT_S	  5u
#define SERVER_MAX_CONNECTIONS	  256u
#define SERVER_SPARE_CONNECTIONS  256u
#define SERVER_MAX_REQUESTS	  16
#define SERVER_BUSY_RETRY_AFTER	  "1"

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
