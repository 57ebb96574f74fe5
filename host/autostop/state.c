/* SPDX-License-Identifier: Apache-2.0 */
#include "autostop/state.h"

#include "message.h"
#include "settle.h"
#include "units.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * libuv timers fire at or after their timeout in whole milliseconds, and "now" is read a little
 * before the timer is armed: an idle period that ran this close to its end counts as complete.
 */
#define IDLE_SLACK_S 0.25

const char *autostop_state_name(enum autostop_state s)
{
	switch (s) {
	case AUTOSTOP_CHECKING:
		return "checking";
	case AUTOSTOP_RUNNING:
		return "running";
	case AUTOSTOP_UNHEALTHY:
		return "unhealthy";
	case AUTOSTOP_STARTING:
		return "starting";
	case AUTOSTOP_STOPPING:
		return "stopping";
	case AUTOSTOP_STOPPED:
		return "stopped by autostop";
	case AUTOSTOP_DOWN:
		return "stopped";
	case AUTOSTOP_HEALING:
		return "healing docker.sock";
	}
	return "unknown";
}

const char *autostop_engine_name(enum autostop_engine e)
{
	switch (e) {
	case AUTOSTOP_ENGINE_UNKNOWN:
		return "unknown";
	case AUTOSTOP_ENGINE_RUNNING:
		return "running";
	case AUTOSTOP_ENGINE_FREEZING:
		return "freezing";
	case AUTOSTOP_ENGINE_FROZEN:
		return "frozen";
	case AUTOSTOP_ENGINE_THAWING:
		return "thawing";
	}
	return "unknown";
}

static void set_state(struct autostop *a, enum autostop_state s, double now)
{
	if (a->state != s)
		a->state_since = now;
	a->state = s;
}

/*
 * The same decision again within one idle period (a container still runs at every check, a
 * client polls every second) is no news: it is kept for --status but logged once.
 */
__attribute__((format(printf, 4, 5))) static void
decide(struct autostop *a, double now, struct autostop_actions *act, const char *fmt, ...)
{
	char line[sizeof a->decision];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	memcpy(a->decision, line, sizeof line);
	if (strcmp(line, a->logged) == 0 && now - a->logged_at < a->idle_period)
		return;
	memcpy(a->logged, line, sizeof line);
	a->logged_at = now;
	act->todo |= AUTOSTOP_DO_LOG;
}

static void kind(struct autostop *a, const char *k)
{
	vmc_textf(a->decision_kind, sizeof a->decision_kind, "%s", k);
}

static void arm(struct autostop_actions *act, double seconds)
{
	act->todo |= AUTOSTOP_DO_ARM_TIMER;
	act->todo &= ~(unsigned)AUTOSTOP_DO_DISARM_TIMER;
	act->timer_s = seconds;
}

static const char *plural(unsigned n)
{
	return n == 1 ? "" : "s";
}

/* A snapshot is at hand and --wake-on-any is off. */
static bool snapshot_usable(const struct autostop *a)
{
	return a->snapshot && !a->wake_on_any;
}

/* The VM stops or went away: whatever autostop froze went with it. */
static void engine_gone(struct autostop *a, double now)
{
	if (a->engine == AUTOSTOP_ENGINE_FROZEN || a->engine == AUTOSTOP_ENGINE_THAWING)
		a->frozen_total += now - a->frozen_since;
	a->engine = AUTOSTOP_ENGINE_UNKNOWN;
	a->thaw_wanted = a->thaw_for_stop = false;
}

static void begin_start(struct autostop *a, double now, struct autostop_actions *act)
{
	engine_gone(a, now);
	set_state(a, AUTOSTOP_STARTING, now);
	a->start_began = now;
	a->ping_answered = false;
	a->limactl_done = false;
	a->idle_since = 0;
	a->starts++;
	act->todo |= AUTOSTOP_DO_START | AUTOSTOP_DO_DISARM_TIMER;
	kind(a, "start");
}

struct autostop_actions autostop_init(struct autostop *a, const char *name, double idle_period,
				      bool instance_running, double now)
{
	struct autostop_actions act = {0};
	memset(a, 0, sizeof *a);
	vmc_textf(a->name, sizeof a->name, "%s", name);
	a->idle_period = idle_period;
	a->state_since = now;
	if (instance_running) {
		a->state = AUTOSTOP_CHECKING;
		act.todo |= AUTOSTOP_DO_CHECK;
		return act;
	}
	a->state = AUTOSTOP_DOWN;
	kind(a, "waiting");
	decide(a, now, &act, "%s is stopped: the first client will start it", a->name);
	return act;
}

/* The target's path without a /vX.Y prefix and without the query. */
static size_t api_path(const char *target, const char **path)
{
	const char *p = target;
	if (p[0] == '/' && p[1] == 'v' && p[2] >= '0' && p[2] <= '9') {
		const char *q = p + 2;
		while ((*q >= '0' && *q <= '9') || *q == '.')
			q++;
		if (*q == '/' || *q == '\0' || *q == '?')
			p = q;
	}
	*path = p;
	return strcspn(p, "?#");
}

static bool path_is(const char *path, size_t len, const char *want)
{
	return len == strlen(want) && memcmp(path, want, len) == 0;
}

/* /PREFIX/ID/SUFFIX with one non-empty ID segment. */
static bool path_is_object(const char *path, size_t len, const char *prefix, const char *suffix)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);
	if (len <= pl + sl || memcmp(path, prefix, pl) != 0 ||
	    memcmp(path + len - sl, suffix, sl) != 0)
		return false;
	const char *id = path + pl, *end = path + len - sl;
	return memchr(id, '/', (size_t)(end - id)) == NULL;
}

enum autostop_request autostop_request_kind(const char *method, const char *target, bool upgrade)
{
	static const char *const polls[] = {"/_ping",		"/version",	"/info",
					    "/containers/json", "/images/json", "/volumes",
					    "/networks",	"/system/df"};
	const char *path;
	size_t len = api_path(target, &path);
	if (upgrade || path_is(path, len, "/session") || path_is(path, len, "/grpc"))
		return AUTOSTOP_REQ_HIJACK;
	if (strcmp(method, "POST") == 0 && (path_is_object(path, len, "/containers/", "/attach") ||
					    path_is_object(path, len, "/exec/", "/start")))
		return AUTOSTOP_REQ_HIJACK;
	if (strcmp(method, "HEAD") == 0)
		return AUTOSTOP_REQ_POLL;
	if (strcmp(method, "GET") == 0)
		for (size_t i = 0; i < sizeof polls / sizeof polls[0]; i++)
			if (path_is(path, len, polls[i]))
				return AUTOSTOP_REQ_POLL;
	return AUTOSTOP_REQ_WORK;
}

static void begin_thaw(struct autostop *a, struct autostop_actions *act, const char *why)
{
	a->engine = AUTOSTOP_ENGINE_THAWING;
	if (why != a->thaw_why)
		vmc_textf(a->thaw_why, sizeof a->thaw_why, "%s", why);
	act->todo |= AUTOSTOP_DO_THAW;
}

/*
 * Before a client's bytes reach a frozen engine, autostop thaws it (a frozen dockerd reads
 * nothing): true while the client must be held for that.
 */
static bool engine_holds(struct autostop *a, struct autostop_actions *act, const char *why)
{
	switch (a->engine) {
	case AUTOSTOP_ENGINE_FROZEN:
		begin_thaw(a, act, why);
		return true;
	case AUTOSTOP_ENGINE_FREEZING:
		a->thaw_wanted = true; /* thawed as soon as the freeze is answered */
		vmc_textf(a->thaw_why, sizeof a->thaw_why, "%s", why);
		return true;
	case AUTOSTOP_ENGINE_THAWING:
		return true;
	case AUTOSTOP_ENGINE_UNKNOWN:
	case AUTOSTOP_ENGINE_RUNNING:
		break;
	}
	return false;
}

bool autostop_client_opened(struct autostop *a, double now, struct autostop_actions *act)
{
	(void)now;
	*act = (struct autostop_actions){0};
	a->clients++;
	if (a->state == AUTOSTOP_STARTING)
		return a->ping_answered; /* Docker answers; limactl start is only finishing */
	/* Settling after the stop: docker.sock refuses, then the snapshot answers. */
	if (a->state == AUTOSTOP_STOPPING)
		return autostop_snapshot_answers(a);
	if (a->state == AUTOSTOP_HEALING)
		return false;
	if (autostop_frozen_snapshot_serves(a))
		return false; /* held, and served from the snapshot while the engine stays frozen */
	return !engine_holds(a, act, "a client arrived");
}

struct autostop_actions autostop_client_closed(struct autostop *a, double now)
{
	(void)now;
	struct autostop_actions act = {0};
	if (a->clients > 0)
		a->clients--;
	return act;
}

static void count(unsigned *n, enum autostop_activity which, enum autostop_activity was,
		  enum autostop_activity is)
{
	if (was == which && *n > 0)
		(*n)--;
	if (is == which)
		(*n)++;
}

/* reaches_engine: the connection's bytes go to dockerd (false: the snapshot serves it). */
static struct autostop_actions activity(struct autostop *a, enum autostop_activity was,
					enum autostop_activity is, bool reaches_engine)
{
	struct autostop_actions act = {0};
	if (was == is)
		return act;
	count(&a->working, AUTOSTOP_WORKING, was, is);
	count(&a->polling, AUTOSTOP_POLLING, was, is);
	/* A connection kept open across the freeze sent a request: its bytes wait in dockerd's
	 * socket until the thaw. */
	if (is != AUTOSTOP_QUIET && reaches_engine)
		engine_holds(a, &act, "a connection kept open sent a request");
	if (is == AUTOSTOP_WORKING) {
		a->idle_since = 0;
		a->freeze_tried = false; /* the next idle period may freeze again */
		act.todo |= AUTOSTOP_DO_DISARM_TIMER;
		return act;
	}
	/* The Docker API is asked only once the work has ended a second ago: the docker CLI opens
	 * a new connection per request, and a check after each one doubled what dockerd had to
	 * answer. Work within that second disarms the timer, so a burst costs one check. */
	if (was == AUTOSTOP_WORKING && a->working == 0 &&
	    (a->state == AUTOSTOP_RUNNING || a->state == AUTOSTOP_UNHEALTHY))
		arm(&act, AUTOSTOP_QUIET_S);
	return act;
}

struct autostop_actions autostop_client_activity(struct autostop *a, double now,
						 enum autostop_activity was,
						 enum autostop_activity is)
{
	(void)now;
	return activity(a, was, is, true);
}

struct autostop_actions autostop_local_activity(struct autostop *a, double now,
						enum autostop_activity was,
						enum autostop_activity is)
{
	(void)now;
	return activity(a, was, is, false);
}

/* Seen running: whatever autostop can see of a dead or hung forward is healed, never started. */
static bool heal_may_begin(const struct autostop *a)
{
	return a->state == AUTOSTOP_RUNNING || a->state == AUTOSTOP_CHECKING ||
	       a->state == AUTOSTOP_UNHEALTHY;
}

/* cause: "docker.sock refused a client (connection refused)", for this line and the next. */
static void begin_heal(struct autostop *a, double now, struct autostop_actions *act,
		       const char *cause)
{
	set_state(a, AUTOSTOP_HEALING, now);
	a->idle_since = 0;
	act->todo |= AUTOSTOP_DO_HEAL | AUTOSTOP_DO_DISARM_TIMER;
	act->todo &= ~(unsigned)AUTOSTOP_DO_ARM_TIMER;
	vmc_textf(a->heal_cause, sizeof a->heal_cause, "%s", cause);
	kind(a, "heal");
	decide(a, now, act,
	       "%s while %s was running: asking Lima whether it still runs, to re-create the "
	       "forward",
	       a->heal_cause, a->name);
}

struct autostop_actions autostop_upstream_refused(struct autostop *a, double now, const char *why)
{
	struct autostop_actions act = {0};
	if (a->state == AUTOSTOP_STARTING || a->state == AUTOSTOP_STOPPING ||
	    a->state == AUTOSTOP_HEALING)
		return act; /* held; the start (or heal) in progress serves it */
	enum autostop_state was = a->state;
	if (heal_may_begin(a)) {
		/* Seen running: a dead forward is likelier than a VM gone (lima-vm/lima#5420). */
		char cause[sizeof a->heal_cause];
		vmc_textf(cause, sizeof cause, "docker.sock refused a client (%s)", why);
		begin_heal(a, now, &act, cause);
		return act;
	}
	begin_start(a, now, &act);
	decide(a, now, &act, "starting %s: a client is waiting and %s is %s; limactl start %s",
	       a->name, a->name, was == AUTOSTOP_STOPPED ? "stopped by autostop" : "stopped",
	       a->name);
	return act;
}

/* The engine is as autostop left it after a thaw or a check: nothing of it holds clients. */
static bool engine_settled(const struct autostop *a)
{
	return a->engine == AUTOSTOP_ENGINE_RUNNING || a->engine == AUTOSTOP_ENGINE_UNKNOWN;
}

struct autostop_actions autostop_upstream_silent(struct autostop *a, double now)
{
	(void)now;
	struct autostop_actions act = {0};
	/* A frozen engine answers nothing until thawed, and autostop thaws it itself. */
	if (a->hang_probing || a->hang_heal_failed || !heal_may_begin(a) || !engine_settled(a))
		return act;
	a->hang_probing = true;
	act.todo |= AUTOSTOP_DO_PROBE_HANG;
	return act;
}

struct autostop_actions autostop_hang_probed(struct autostop *a, double now, bool answered,
					     const char *why)
{
	struct autostop_actions act = {0};
	a->hang_probing = false;
	if (answered || !heal_may_begin(a) || !engine_settled(a))
		return act; /* a slow request, not a hung forward; or something else took over */
	char silent[32], cause[sizeof a->heal_cause];
	vmc_format_duration(AUTOSTOP_SILENT_S, silent, sizeof silent);
	vmc_textf(cause, sizeof cause,
		  "docker.sock accepted a client and sent no answer for %s, nor to /_ping on a new "
		  "connection (%s)",
		  silent, why && *why ? why : "no answer");
	begin_heal(a, now, &act, cause);
	act.todo |= AUTOSTOP_DO_HOLD_SILENT;
	return act;
}

struct autostop_actions autostop_agent_healed(struct autostop *a, double now, const char *what,
					      const char *how)
{
	struct autostop_actions act = {0};
	a->agent_heals++;
	kind(a, "healed");
	decide(a, now, &act,
	       "%s's vmcost-agent.sock did not answer the %s: %s; asked the agent again", a->name,
	       what, how && *how ? how : "its forward was re-created");
	return act;
}

struct autostop_actions autostop_heal_done(struct autostop *a, double now,
					   enum autostop_heal result, const char *why,
					   unsigned held)
{
	struct autostop_actions act = {0};
	if (a->state != AUTOSTOP_HEALING)
		return act;
	switch (result) {
	case AUTOSTOP_HEALED:
		set_state(a, AUTOSTOP_CHECKING, now);
		act.todo |= AUTOSTOP_DO_CONNECT_HELD | AUTOSTOP_DO_CHECK;
		a->heals++;
		a->healed_at = now;
		a->hang_heal_failed = false;
		kind(a, "healed");
		decide(a, now, &act,
		       "%s runs and docker.sock answers again (%s); relaying %u held "
		       "client%s",
		       a->name, why, held, plural(held));
		break;
	case AUTOSTOP_NOT_RUNNING:
		if (held == 0) {
			/* Nobody waits (a check found it): a VM stopped by hand is not started. */
			engine_gone(a, now);
			set_state(a, AUTOSTOP_DOWN, now);
			kind(a, "waiting");
			decide(
			    a, now, &act,
			    "%s is stopped (not by autostop; %s): the first client will start it",
			    a->name, a->heal_cause);
			break;
		}
		begin_start(a, now, &act);
		decide(a, now, &act,
		       "starting %s: %s and Lima says %s is not running: the VM went away behind "
		       "autostop's back; limactl start %s",
		       a->name, a->heal_cause, a->name, a->name);
		break;
	case AUTOSTOP_HEAL_FAILED:
		set_state(a, AUTOSTOP_UNHEALTHY, now);
		act.todo |= AUTOSTOP_DO_CLOSE_HELD;
		a->healed_at = now;
		a->hang_heal_failed = true;
		kind(a, "failed");
		decide(a, now, &act,
		       "%s runs but docker.sock stays dead: %s; closed %u held client%s (vmcost "
		       "doctor %s says how to heal it)",
		       a->name, why, held, plural(held), a->name);
		if (a->working == 0)
			arm(&act, a->idle_period);
		break;
	}
	return act;
}

struct autostop_actions autostop_upstream_connected(struct autostop *a, double now)
{
	struct autostop_actions act = {0};
	if (a->state == AUTOSTOP_DOWN || a->state == AUTOSTOP_STOPPED) {
		/* Someone started it by hand: learn its state before deciding anything. */
		set_state(a, AUTOSTOP_CHECKING, now);
		act.todo |= AUTOSTOP_DO_CHECK;
		kind(a, "found");
		decide(a, now, &act, "%s answers again: it was started outside autostop", a->name);
	}
	return act;
}

static void check_failed(struct autostop *a, double now, const struct autostop_check *c,
			 struct autostop_actions *act)
{
	a->idle_since = 0;
	if (c->instance_stopped) {
		engine_gone(a, now);
		bool news = a->state != AUTOSTOP_DOWN;
		set_state(a, AUTOSTOP_DOWN, now);
		act->todo |= AUTOSTOP_DO_DISARM_TIMER;
		if (news) {
			kind(a, "waiting");
			decide(a, now, act,
			       "%s is stopped (not by autostop): the first client will start it",
			       a->name);
		}
		return;
	}
	/* No answer at all while Lima says it runs: a forward that refuses or hangs, healed as
	 * for a client (once per idle period at most: a heal that did not help is not redone at
	 * every check). */
	if (c->no_answer && c->instance_running && engine_settled(a) &&
	    (a->healed_at <= 0 || now - a->healed_at >= a->idle_period)) {
		char cause[sizeof a->heal_cause];
		vmc_textf(cause, sizeof cause, "the Docker API did not answer a check (%s)",
			  c->error[0] ? c->error : "no answer");
		begin_heal(a, now, act, cause);
		return;
	}
	set_state(a, AUTOSTOP_UNHEALTHY, now);
	kind(a, "stay-up");
	decide(a, now, act,
	       "%s stays up: the Docker API does not answer (%s); autostop never stops an instance "
	       "it cannot see healthy",
	       a->name, c->error[0] ? c->error : "no answer");
	if (a->working == 0)
		arm(act, a->idle_period);
}

void autostop_set_freeze_after(struct autostop *a, double seconds)
{
	a->freeze_after = seconds > 0 && seconds < a->idle_period ? seconds : 0;
}

/* Seconds from now until a freeze is due (0: now), or -1 when none is ahead in this period. */
static double freeze_in(const struct autostop *a, double now, double idle_for)
{
	if (a->freeze_after <= 0 || a->freeze_tried || a->engine != AUTOSTOP_ENGINE_RUNNING)
		return -1;
	double in = a->freeze_after - idle_for;
	if (a->freeze_retry_at > 0 && a->freeze_retry_at - now > in)
		in = a->freeze_retry_at - now;
	return in - IDLE_SLACK_S <= 0 ? 0 : in;
}

/* The next check: at the freeze point if one is still ahead, else at the period's end. */
static void arm_idle(const struct autostop *a, struct autostop_actions *act, double now,
		     double idle_for)
{
	double left = a->idle_period - idle_for;
	double in = freeze_in(a, now, idle_for);
	if (in > 0 && in < left)
		left = in;
	arm(act, left);
}

static void end_freeze_wait(struct autostop *a, struct autostop_actions *act)
{
	/* The clients held for the thaw go on; a check held for it runs now. */
	a->thaw_wanted = false;
	act->todo |= AUTOSTOP_DO_CONNECT_HELD;
	if (a->thaw_for_stop) {
		a->thaw_for_stop = false;
		if (a->working == 0)
			act->todo |= AUTOSTOP_DO_CHECK;
	}
}

struct autostop_actions autostop_freeze_done(struct autostop *a, double now,
					     enum autostop_freeze_result result, const char *why)
{
	struct autostop_actions act = {0};
	if (a->engine != AUTOSTOP_ENGINE_FREEZING)
		return act; /* the VM went away meanwhile */
	char after[32];
	vmc_format_duration(a->freeze_after, after, sizeof after);
	const char *reason = why && *why ? why : "no reason given";
	kind(a, "freeze");
	if (result == AUTOSTOP_FREEZE_OK) {
		a->engine = AUTOSTOP_ENGINE_FROZEN;
		a->frozen_since = now;
		a->freezes++;
		a->freeze_retry_at = 0;
		if (a->thaw_wanted) {
			a->thaw_wanted = false;
			begin_thaw(a, &act, a->thaw_why);
			decide(a, now, &act,
			       "froze %s's Docker engine after %s idle; thawing it (%s)", a->name,
			       after, a->thaw_why);
			return act;
		}
		if (autostop_frozen_snapshot_serves(a))
			decide(a, now, &act,
			       "froze %s's Docker engine after %s idle (polls are answered from "
			       "the snapshot of %s; any other request thaws it); it stops at the "
			       "period's end",
			       a->name, after, a->snapshot_taken);
		else
			decide(a, now, &act,
			       "froze %s's Docker engine after %s idle (autostop thaws it for the "
			       "next client); it stops at the period's end",
			       a->name, after);
		return act;
	}
	a->engine = AUTOSTOP_ENGINE_RUNNING;
	if (result == AUTOSTOP_FREEZE_BUSY) {
		char retry[32];
		vmc_format_duration(AUTOSTOP_FREEZE_RETRY_S, retry, sizeof retry);
		a->freeze_tried = false;
		a->freeze_retry_at = now + AUTOSTOP_FREEZE_RETRY_S;
		decide(a, now, &act,
		       "%s's Docker engine stays thawed for now: the agent is busy (%s); asking "
		       "again in %s",
		       a->name, reason, retry);
		if (!a->thaw_wanted && a->working == 0 && a->idle_since > 0)
			arm_idle(a, &act, now, now - a->idle_since);
	} else if (result == AUTOSTOP_FREEZE_REFUSED) {
		decide(a, now, &act,
		       "%s's Docker engine stays thawed: the agent refused to freeze it (%s)",
		       a->name, reason);
	} else {
		decide(a, now, &act,
		       "%s's Docker engine stays thawed: the agent did not answer the freeze (%s)",
		       a->name, reason);
	}
	if (a->thaw_wanted || a->thaw_for_stop)
		end_freeze_wait(a, &act);
	return act;
}

struct autostop_actions autostop_thaw_done(struct autostop *a, double now, bool ok, const char *why,
					   unsigned held)
{
	struct autostop_actions act = {0};
	if (a->engine != AUTOSTOP_ENGINE_THAWING)
		return act;
	char frozen[32], relaying[64] = "";
	vmc_format_duration(now - a->frozen_since, frozen, sizeof frozen);
	a->frozen_total += now - a->frozen_since;
	a->engine = ok ? AUTOSTOP_ENGINE_RUNNING : AUTOSTOP_ENGINE_UNKNOWN;
	if (held > 0)
		vmc_textf(relaying, sizeof relaying, "; relaying %u held client%s", held,
			  plural(held));
	kind(a, "thaw");
	if (ok)
		decide(a, now, &act, "thawed %s's Docker engine after %s frozen (%s)%s", a->name,
		       frozen, a->thaw_why, relaying);
	else
		decide(a, now, &act,
		       "the agent did not thaw %s's Docker engine (%s); going on anyway: the "
		       "guard on the guest's docker.sock thaws it on the first connection%s",
		       a->name, why && *why ? why : "no reason given", relaying);
	end_freeze_wait(a, &act);
	return act;
}

double autostop_frozen_for(const struct autostop *a, double now)
{
	bool frozen = a->engine == AUTOSTOP_ENGINE_FROZEN || a->engine == AUTOSTOP_ENGINE_THAWING;
	return frozen && now > a->frozen_since ? now - a->frozen_since : 0;
}

struct autostop_actions autostop_check_done(struct autostop *a, double now,
					    const struct autostop_check *c)
{
	struct autostop_actions act = {0};
	if (a->state != AUTOSTOP_CHECKING && a->state != AUTOSTOP_RUNNING &&
	    a->state != AUTOSTOP_UNHEALTHY)
		return act; /* a start or stop began while the check ran: its answer is stale */
	if (!c->api_ok) {
		check_failed(a, now, c, &act);
		return act;
	}
	bool was_running = a->state == AUTOSTOP_RUNNING;
	set_state(a, AUTOSTOP_RUNNING, now);
	a->hang_heal_failed = false; /* docker.sock answers: a later hang is worth a heal again */
	a->containers = c->running;
	a->checked_once = true;
	if (a->engine == AUTOSTOP_ENGINE_FROZEN) {
		/* The check reached docker.sock, whose guard thawed the engine to answer it. */
		a->frozen_total += now - a->frozen_since;
		a->engine = AUTOSTOP_ENGINE_RUNNING;
	} else if (a->engine == AUTOSTOP_ENGINE_UNKNOWN) {
		a->engine = AUTOSTOP_ENGINE_RUNNING;
	}
	char period[32];
	vmc_format_duration(a->idle_period, period, sizeof period);
	if (a->working > 0) {
		if (!was_running) {
			kind(a, "running");
			decide(a, now, &act,
			       "%s is running and Docker answers; %u client%s at work", a->name,
			       a->working, plural(a->working));
		}
		return act;
	}
	if (c->running > 0) {
		a->idle_since = 0;
		kind(a, "stay-up");
		decide(a, now, &act, "%s stays up: %u container%s running (%s)", a->name,
		       c->running, plural(c->running), c->names[0] ? c->names : "?");
		arm(&act, a->idle_period);
		return act;
	}
	if (a->idle_since <= 0) {
		a->idle_since = now;
		a->freeze_tried = false;
		a->freeze_retry_at = 0;
		kind(a, "idle");
		decide(a, now, &act,
		       "%s is idle: no client at work, no running container; it stops in %s "
		       "unless that changes",
		       a->name, period);
		arm_idle(a, &act, now, 0);
		return act;
	}
	double idle_for = now - a->idle_since;
	if (idle_for + IDLE_SLACK_S < a->idle_period) {
		if (freeze_in(a, now, idle_for) == 0) {
			a->freeze_tried = true;
			a->engine = AUTOSTOP_ENGINE_FREEZING;
			act.todo |= AUTOSTOP_DO_FREEZE;
		}
		arm_idle(a, &act, now, idle_for);
		return act;
	}
	if (a->engine == AUTOSTOP_ENGINE_FREEZING || a->engine == AUTOSTOP_ENGINE_THAWING) {
		/* Never stop a half-frozen engine: the check comes again once it is thawed. */
		a->thaw_for_stop = true;
		if (a->engine == AUTOSTOP_ENGINE_FREEZING) {
			a->thaw_wanted = true;
			vmc_textf(a->thaw_why, sizeof a->thaw_why, "the idle period ends");
		}
		return act;
	}
	if (a->polling > 0) {
		/* A poll waits for its answer: stop once it has it. */
		arm(&act, AUTOSTOP_QUIET_S);
		return act;
	}
	set_state(a, AUTOSTOP_STOPPING, now);
	engine_gone(a, now);
	a->stops++;
	a->idle_since = 0;
	a->stop_done = false;
	kind(a, "stop");
	decide(a, now, &act,
	       "stopping %s: no client at work and no running container for %s; limactl stop %s",
	       a->name, period, a->name);
	act.todo |= AUTOSTOP_DO_STOP | AUTOSTOP_DO_DISARM_TIMER;
	return act;
}

struct autostop_actions autostop_timer_fired(struct autostop *a, double now)
{
	struct autostop_actions act = {0};
	if (a->working > 0 || (a->state != AUTOSTOP_RUNNING && a->state != AUTOSTOP_UNHEALTHY))
		return act;
	switch (a->engine) {
	case AUTOSTOP_ENGINE_FROZEN:
		/* Nothing came through the relay since the freeze. At the period's end the engine
		 * is thawed first: the check then asks a running dockerd, and the VM stops with
		 * one (a frozen dockerd ignores SIGTERM). */
		if (a->idle_since > 0 &&
		    autostop_idle_for(a, now) + IDLE_SLACK_S < a->idle_period) {
			arm(&act, a->idle_period - autostop_idle_for(a, now));
			return act;
		}
		a->thaw_for_stop = true;
		begin_thaw(a, &act, "the idle period ends");
		return act;
	case AUTOSTOP_ENGINE_FREEZING:
		a->thaw_wanted = a->thaw_for_stop = true;
		vmc_textf(a->thaw_why, sizeof a->thaw_why, "the idle period ends");
		return act;
	case AUTOSTOP_ENGINE_THAWING:
		a->thaw_for_stop = true;
		return act;
	case AUTOSTOP_ENGINE_UNKNOWN:
	case AUTOSTOP_ENGINE_RUNNING:
		break;
	}
	act.todo |= AUTOSTOP_DO_CHECK;
	return act;
}

static void finish_start(struct autostop *a, double now, struct autostop_actions *act)
{
	set_state(a, AUTOSTOP_RUNNING, now);
	act->todo |= AUTOSTOP_DO_END_START;
	if (a->working == 0)
		act->todo |= AUTOSTOP_DO_CHECK;
}

struct autostop_actions autostop_ping_answered(struct autostop *a, double now, unsigned held)
{
	struct autostop_actions act = {0};
	if (a->state != AUTOSTOP_STARTING || a->ping_answered)
		return act;
	a->ping_answered = true;
	a->has_last_start = true;
	a->last_start_s = now - a->start_began;
	char took[32];
	vmc_format_duration(a->last_start_s, took, sizeof took);
	kind(a, "ready");
	decide(a, now, &act,
	       "%s answers /_ping %s after the start decision; relaying %u held client%s", a->name,
	       took, held, plural(held));
	act.todo |= AUTOSTOP_DO_CONNECT_HELD;
	if (a->limactl_done)
		finish_start(a, now, &act);
	return act;
}

static void fail_start(struct autostop *a, double now, struct autostop_actions *act,
		       enum autostop_state next)
{
	set_state(a, next, now);
	act->todo |= AUTOSTOP_DO_CLOSE_HELD | AUTOSTOP_DO_END_START;
	kind(a, "failed");
}

struct autostop_actions autostop_start_exited(struct autostop *a, double now, int exit_code,
					      const char *last_line, unsigned held)
{
	struct autostop_actions act = {0};
	if (a->state != AUTOSTOP_STARTING)
		return act;
	a->limactl_done = true;
	if (a->ping_answered) {
		if (exit_code != 0) {
			kind(a, "running");
			decide(a, now, &act,
			       "limactl start %s exited %d (%s) but Docker answers: running",
			       a->name, exit_code,
			       last_line && *last_line ? last_line : "no output");
		}
		finish_start(a, now, &act);
		return act;
	}
	if (exit_code == 0)
		return act; /* up as far as Lima is concerned; keep pinging until the deadline */
	fail_start(a, now, &act, AUTOSTOP_DOWN);
	decide(a, now, &act,
	       "start of %s failed: limactl start exited %d: %s; closed %u held client%s", a->name,
	       exit_code, last_line && *last_line ? last_line : "no output", held, plural(held));
	return act;
}

struct autostop_actions autostop_start_timed_out(struct autostop *a, double now, double timeout_s,
						 unsigned held)
{
	struct autostop_actions act = {0};
	if (a->state != AUTOSTOP_STARTING || a->ping_answered)
		return act;
	char t[32];
	vmc_format_duration(timeout_s, t, sizeof t);
	fail_start(a, now, &act, a->limactl_done ? AUTOSTOP_UNHEALTHY : AUTOSTOP_DOWN);
	decide(a, now, &act,
	       "start of %s timed out: Docker did not answer /_ping within %s%s; closed %u held "
	       "client%s",
	       a->name, t, a->limactl_done ? " although limactl start succeeded" : "", held,
	       plural(held));
	if (a->state == AUTOSTOP_UNHEALTHY && a->working == 0)
		arm(&act, a->idle_period);
	return act;
}

struct autostop_actions autostop_start_failed(struct autostop *a, double now, const char *why,
					      unsigned held)
{
	struct autostop_actions act = {0};
	fail_start(a, now, &act, AUTOSTOP_DOWN);
	decide(a, now, &act, "start of %s failed: %s; closed %u held client%s", a->name, why, held,
	       plural(held));
	return act;
}

void autostop_stop_began(struct autostop *a, uint64_t host_free)
{
	a->settle = (struct autostop_settle){.before = host_free};
}

struct autostop_actions autostop_stop_exited(struct autostop *a, double now, int exit_code,
					     const char *last_line, double took_s)
{
	struct autostop_actions act = {0};
	if (a->state != AUTOSTOP_STOPPING)
		return act;
	a->last_stop_s = took_s;
	if (exit_code == 0) {
		a->stop_done = true;
		act.todo |= AUTOSTOP_DO_SETTLE;
		/* Held clients are refused now, and the snapshot serves them. */
		if (autostop_snapshot_answers(a))
			act.todo |= AUTOSTOP_DO_CONNECT_HELD;
		return act;
	}
	set_state(a, AUTOSTOP_CHECKING, now);
	kind(a, "failed");
	decide(a, now, &act, "stop of %s failed: limactl stop exited %d: %s; checking it again",
	       a->name, exit_code, last_line && *last_line ? last_line : "no output");
	act.todo |= AUTOSTOP_DO_CHECK;
	return act;
}

/* woke: a request the snapshot did not answer while free memory settled, or NULL. */
static void stop_settled(struct autostop *a, double now, struct autostop_actions *act,
			 const char *woke)
{
	const struct autostop_settle *s = &a->settle;
	int64_t freed = s->before && s->best ? (int64_t)s->best - (int64_t)s->before : 0;
	act->todo |= AUTOSTOP_DO_END_SETTLE;
	set_state(a, AUTOSTOP_STOPPED, now);
	a->has_last_freed = true;
	a->last_freed = freed;
	char took[32], gain[32];
	vmc_format_duration(a->last_stop_s, took, sizeof took);
	vmc_format_bytes_delta(freed, gain, sizeof gain);
	if (woke) {
		begin_start(a, now, act);
		decide(a, now, act,
		       "stopped %s in %s (host free memory %s); then the snapshot did not answer "
		       "%s: limactl start %s",
		       a->name, took, gain, woke, a->name);
		return;
	}
	if (a->clients > 0 && !autostop_snapshot_answers(a)) {
		begin_start(a, now, act);
		decide(a, now, act,
		       "stopped %s in %s (host free memory %s); %u client%s arrived meanwhile: "
		       "limactl start %s",
		       a->name, took, gain, a->clients, plural(a->clients), a->name);
		return;
	}
	kind(a, "stopped");
	if (autostop_snapshot_answers(a))
		decide(a, now, act,
		       "stopped %s in %s: host free memory %s; polls are answered from the "
		       "snapshot of %s until it starts again",
		       a->name, took, gain, a->snapshot_taken);
	else
		decide(a, now, act, "stopped %s in %s: host free memory %s", a->name, took, gain);
}

/* The stop's gain counts once free memory stops rising (the rule memtest uses), after
 * AUTOSTOP_SETTLE_MAX_SAMPLES, or at once when a client waits for a start. */
struct autostop_actions autostop_free_sampled(struct autostop *a, double now, uint64_t host_free)
{
	struct autostop_actions act = {0};
	if (a->state != AUTOSTOP_STOPPING) {
		act.todo |= AUTOSTOP_DO_END_SETTLE;
		return act;
	}
	struct autostop_settle *s = &a->settle;
	bool settled = false;
	if (s->samples > 0 && now > s->last_t) {
		double rise = ((double)host_free - (double)s->last) / (now - s->last_t);
		settled = vmc_free_settled(rise, 0);
	}
	s->samples++;
	s->last = host_free;
	s->last_t = now;
	if (host_free > s->best)
		s->best = host_free;
	/* Clients the snapshot serves do not wait for a start. */
	bool waiting = a->clients > 0 && !autostop_snapshot_answers(a);
	if (settled || s->samples >= AUTOSTOP_SETTLE_MAX_SAMPLES || waiting)
		stop_settled(a, now, &act, NULL);
	return act;
}

void autostop_set_wake_on_any(struct autostop *a, bool on)
{
	a->wake_on_any = on;
}

void autostop_snapshot_set(struct autostop *a, const char *taken)
{
	a->snapshot = taken != NULL;
	vmc_textf(a->snapshot_taken, sizeof a->snapshot_taken, "%s", taken ? taken : "");
	a->snapshot_answers = 0;
}

struct autostop_actions autostop_snapshot_loaded(struct autostop *a, double now, const char *taken)
{
	struct autostop_actions act = {0};
	autostop_snapshot_set(a, taken);
	if (a->state != AUTOSTOP_DOWN || !snapshot_usable(a))
		return act;
	set_state(a, AUTOSTOP_STOPPED, now);
	kind(a, "waiting");
	decide(a, now, &act,
	       "%s is stopped by autostop: polls are answered from the snapshot of %s; any other "
	       "request starts it",
	       a->name, a->snapshot_taken);
	return act;
}

bool autostop_snapshot_answers(const struct autostop *a)
{
	if (!snapshot_usable(a))
		return false;
	/* While it starts, until Docker answers, nothing has changed what the snapshot says. */
	return a->state == AUTOSTOP_STOPPED || (a->state == AUTOSTOP_STOPPING && a->stop_done) ||
	       (a->state == AUTOSTOP_STARTING && !a->ping_answered) ||
	       autostop_frozen_snapshot_serves(a);
}

bool autostop_frozen_snapshot_serves(const struct autostop *a)
{
	return snapshot_usable(a) && a->engine == AUTOSTOP_ENGINE_FROZEN &&
	       (a->state == AUTOSTOP_RUNNING || a->state == AUTOSTOP_UNHEALTHY);
}

void autostop_snapshot_answered(struct autostop *a)
{
	a->snapshot_answers++;
}

struct autostop_actions autostop_snapshot_missed(struct autostop *a, double now,
						 const char *request, const char *why)
{
	struct autostop_actions act = {0};
	char what[300];
	vmc_textf(what, sizeof what, "%s (%s)", request, why && *why ? why : "not a poll");
	if (a->state == AUTOSTOP_STOPPING && a->stop_done) {
		stop_settled(a, now, &act, what);
		return act;
	}
	if (a->state == AUTOSTOP_STARTING) {
		/* Held for the start under way, or relayed now if Docker already answers. */
		if (a->ping_answered)
			act.todo |= AUTOSTOP_DO_CONNECT_HELD;
		return act;
	}
	if (a->state == AUTOSTOP_RUNNING || a->state == AUTOSTOP_UNHEALTHY ||
	    a->state == AUTOSTOP_CHECKING) {
		/* Served from the snapshot while the engine was frozen: thawed for this request
		 * (or already thawing, or thawed: then it goes on to dockerd now). */
		if (!engine_holds(a, &act, what))
			act.todo |= AUTOSTOP_DO_CONNECT_HELD;
		return act;
	}
	if (a->state != AUTOSTOP_STOPPED)
		return autostop_upstream_refused(a, now, "connection refused");
	begin_start(a, now, &act);
	decide(a, now, &act, "starting %s: the snapshot does not answer %s; limactl start %s",
	       a->name, what, a->name);
	return act;
}

double autostop_idle_for(const struct autostop *a, double now)
{
	return a->idle_since > 0 && now > a->idle_since ? now - a->idle_since : 0;
}
