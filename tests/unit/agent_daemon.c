/* SPDX-License-Identifier: Apache-2.0 */
/*
 * guest-agent/daemon.c: agent_run() whole, as the service runs it (stderr not a terminal, so it
 * logs to syslog once serving): a client thread talks to the API while the daemon starts and
 * then sends SIGTERM. Under ThreadSanitizer (make tsan) this is the suite that sees the daemon's
 * start-up against the server's threads; here it checks the exit code and the socket's removal.
 */
#include "agent.h"
#include "check.h"
#include "config.h"
#include "log.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/agent-daemon-XXXXXX";
static struct agent_config cfg;

struct client {
	int answered; /* requests that got a 200 */
	int attempts;
};

static size_t discard(char *data, size_t size, size_t n, void *userp)
{
	(void)data;
	(void)userp;
	return size * n;
}

static long get_status(const char *path)
{
	char url[128];
	long status = 0;
	snprintf(url, sizeof url, "http://localhost%s", path);
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, cfg.socket_path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	return status;
}

/* Asks from the moment the socket exists, so requests overlap the daemon's start-up. */
static void *client(void *arg)
{
	struct client *cl = arg;
	struct timespec tick = {0, 2 * 1000 * 1000};
	for (int i = 0; i < 2500 && cl->answered < 20; i++) {
		struct stat sb;
		if (lstat(cfg.socket_path, &sb) < 0) {
			nanosleep(&tick, NULL);
			continue;
		}
		cl->attempts++;
		if (get_status("/v1/version") == 200)
			cl->answered++;
	}
	kill(getpid(), SIGTERM);
	return NULL;
}

TEST(the_daemon_serves_while_starting_and_stops_on_sigterm)
{
	/* Blocked before the client thread exists, so SIGTERM waits for the daemon's
	 * sigtimedwait() instead of killing the process in the client thread. */
	sigset_t signals;
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);
	struct client cl = {0, 0};
	pthread_t thread;
	pthread_create(&thread, NULL, client, &cl);
	int rc = agent_run(&cfg);
	pthread_join(thread, NULL);
	CHECK_INT(rc, VMC_EXIT_OK);
	CHECK_INT(cl.answered, 20);
	struct stat sb;
	CHECK(lstat(cfg.socket_path, &sb) < 0 && errno == ENOENT);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 2;
	vmc_log_init("agent_daemon");
	agent_config_defaults(&cfg);
	snprintf(cfg.socket_path, sizeof cfg.socket_path, "%s/agent.sock", tmpdir);
	snprintf(cfg.socket_group, sizeof cfg.socket_group, "root");
	cfg.trim_enabled = false;
	/* Every request logs a line, from the server's threads. */
	cfg.log_level = VMC_LOG_DEBUG;
	/* The daemon logs to syslog when stderr is not a terminal, as under the service. */
	if (isatty(STDERR_FILENO) && !freopen("/dev/null", "w", stderr))
		return 2;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	RUN(the_daemon_serves_while_starting_and_stops_on_sigterm);
	curl_global_cleanup();
	rmdir(tmpdir);
	return check_done();
}
