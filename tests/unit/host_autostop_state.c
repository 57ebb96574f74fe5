/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost autostop's decisions (host/autostop/state.c) event by event, with the clock in the
 * test's hand: when it stops, when it must not, how a start holds and releases clients.
 */
#include "autostop/probe.h"
#include "autostop/state.h"
#include "check.h"

#include <string.h>

#define T0   1000.0
#define IDLE 20.0

static struct autostop_check api_ok(unsigned running, const char *names)
{
	struct autostop_check c = {.api_ok = true, .running = running};
	snprintf(c.names, sizeof c.names, "%s", names);
	return c;
}

static bool has(struct autostop_actions act, enum autostop_action what)
{
	return (act.todo & what) != 0;
}

/* A daemon that found dev running and answering, with no client. */
static void running_idle(struct autostop *a, double *now)
{
	struct autostop_actions act = autostop_init(a, "dev", IDLE, true, T0);
	CHECK(has(act, AUTOSTOP_DO_CHECK));
	CHECK_INT(a->state, AUTOSTOP_CHECKING);
	struct autostop_check c = api_ok(0, "");
	act = autostop_check_done(a, T0 + 0.1, &c);
	*now = T0 + 0.1;
	CHECK_INT(a->state, AUTOSTOP_RUNNING);
	CHECK(has(act, AUTOSTOP_DO_ARM_TIMER));
	CHECK_DBL(act.timer_s, IDLE, 0.001);
	CHECK_STR(a->decision_kind, "idle");
}

TEST(stops_after_a_whole_idle_period)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	CHECK_CONTAINS(a.decision, "stops in 20.0 s");
	struct autostop_actions act = autostop_timer_fired(&a, now + IDLE);
	CHECK(has(act, AUTOSTOP_DO_CHECK));
	struct autostop_check c = api_ok(0, "");
	act = autostop_check_done(&a, now + IDLE + 0.05, &c);
	CHECK(has(act, AUTOSTOP_DO_STOP));
	CHECK(has(act, AUTOSTOP_DO_LOG));
	CHECK_INT(a.state, AUTOSTOP_STOPPING);
	CHECK_STR(a.decision_kind, "stop");
	CHECK_CONTAINS(a.decision, "no client at work and no running container for 20.0 s");
	CHECK_INT(a.stops, 1);
}

TEST(an_early_check_rearms_for_the_rest_of_the_period)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_check c = api_ok(0, "");
	struct autostop_actions act = autostop_check_done(&a, now + 5, &c);
	CHECK(!has(act, AUTOSTOP_DO_STOP));
	CHECK(has(act, AUTOSTOP_DO_ARM_TIMER));
	CHECK_DBL(act.timer_s, IDLE - 5, 0.001);
	CHECK(!has(act, AUTOSTOP_DO_LOG)); /* nothing new was decided */
}

TEST(a_running_container_keeps_it_up_and_restarts_the_period)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_check c = api_ok(1, "sleeper");
	struct autostop_actions act = autostop_check_done(&a, now + IDLE, &c);
	CHECK(!has(act, AUTOSTOP_DO_STOP));
	CHECK(has(act, AUTOSTOP_DO_ARM_TIMER));
	CHECK_STR(a.decision_kind, "stay-up");
	CHECK_CONTAINS(a.decision, "1 container running (sleeper)");
	CHECK(has(act, AUTOSTOP_DO_LOG));
	CHECK_DBL(autostop_idle_for(&a, now + IDLE), 0, 0.001);
	/* A client that comes and goes every second, with the container still running: the same
	 * decision, logged once per idle period (testcontainers made one line per connection). */
	for (int i = 1; i <= 10; i++) {
		CHECK(autostop_client_opened(&a, now + IDLE + i, &act));
		autostop_client_closed(&a, now + IDLE + i + 0.5);
		act = autostop_check_done(&a, now + IDLE + i + 0.6, &c);
		CHECK(!has(act, AUTOSTOP_DO_LOG));
		CHECK(has(act, AUTOSTOP_DO_ARM_TIMER));
	}
	CHECK_CONTAINS(a.decision, "1 container running (sleeper)");
	/* A whole period later it is said again. */
	act = autostop_check_done(&a, now + 2.1 * IDLE, &c);
	CHECK(has(act, AUTOSTOP_DO_LOG));
	/* The container ended: the period starts now, not at the first idle check. */
	c = api_ok(0, "");
	act = autostop_check_done(&a, now + 2.2 * IDLE, &c);
	CHECK(!has(act, AUTOSTOP_DO_STOP));
	CHECK_STR(a.decision_kind, "idle");
	act = autostop_check_done(&a, now + 3.2 * IDLE, &c);
	CHECK(has(act, AUTOSTOP_DO_STOP));
}

/* A connection's activity goes from was to is (what the relay reports). */
static struct autostop_actions activity(struct autostop *a, double now, enum autostop_activity was,
					enum autostop_activity is)
{
	return autostop_client_activity(a, now, was, is);
}

TEST(a_client_at_work_keeps_it_up)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_actions act;
	CHECK(autostop_client_opened(&a, now + 1, &act));
	CHECK_INT(act.todo, 0); /* a connection alone is no work */
	act = activity(&a, now + 1, AUTOSTOP_QUIET, AUTOSTOP_WORKING); /* docker logs -f */
	CHECK(has(act, AUTOSTOP_DO_DISARM_TIMER));
	CHECK_INT(a.working, 1);
	CHECK_DBL(autostop_idle_for(&a, now + 2), 0, 0.001);
	/* A check that was already under way answers while the stream is open. */
	struct autostop_check c = api_ok(0, "");
	act = autostop_check_done(&a, now + IDLE + 1, &c);
	CHECK(!has(act, AUTOSTOP_DO_STOP));
	CHECK(!has(act, AUTOSTOP_DO_ARM_TIMER));
	act = autostop_timer_fired(&a, now + IDLE + 1);
	CHECK(!has(act, AUTOSTOP_DO_CHECK));
	/* Ten minutes later the stream ends: only now does a new period start. */
	act = activity(&a, now + 600, AUTOSTOP_WORKING, AUTOSTOP_QUIET);
	CHECK(!has(act, AUTOSTOP_DO_CHECK));
	CHECK(has(act, AUTOSTOP_DO_ARM_TIMER));
	CHECK_DBL(act.timer_s, AUTOSTOP_QUIET_S, 0.001);
	act = autostop_client_closed(&a, now + 600);
	CHECK_INT(act.todo, 0);
	act = autostop_timer_fired(&a, now + 600 + AUTOSTOP_QUIET_S);
	CHECK(has(act, AUTOSTOP_DO_CHECK));
	act = autostop_check_done(&a, now + 600.1, &c);
	CHECK(!has(act, AUTOSTOP_DO_STOP));
	CHECK_STR(a.decision_kind, "idle");
	act = autostop_check_done(&a, now + 600.1 + IDLE, &c);
	CHECK(has(act, AUTOSTOP_DO_STOP));
}

TEST(a_burst_of_short_clients_asks_the_docker_api_once_after_it)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_actions act;
	/* The docker CLI: one connection per request, back to back. Each request's end arms the
	 * quiet timer, each new request disarms it; no check while the burst lasts. */
	for (int i = 0; i < 100; i++) {
		CHECK(autostop_client_opened(&a, now + i * 0.01, &act));
		act = activity(&a, now + i * 0.01, AUTOSTOP_QUIET, AUTOSTOP_WORKING);
		CHECK(has(act, AUTOSTOP_DO_DISARM_TIMER));
		act = activity(&a, now + i * 0.01 + 0.004, AUTOSTOP_WORKING, AUTOSTOP_QUIET);
		CHECK(!has(act, AUTOSTOP_DO_CHECK));
		CHECK(has(act, AUTOSTOP_DO_ARM_TIMER));
		CHECK_DBL(act.timer_s, AUTOSTOP_QUIET_S, 0.001);
		act = autostop_client_closed(&a, now + i * 0.01 + 0.005);
		CHECK_INT(act.todo, 0);
	}
	/* The quiet timer fires once: one check, and the idle period starts from it. */
	act = autostop_timer_fired(&a, now + 2);
	CHECK(has(act, AUTOSTOP_DO_CHECK));
	struct autostop_check c = api_ok(0, "");
	act = autostop_check_done(&a, now + 2.1, &c);
	CHECK(!has(act, AUTOSTOP_DO_STOP));
	CHECK_STR(a.decision_kind, "idle");
	CHECK_DBL(act.timer_s, IDLE, 0.001);
	/* A client at work when the timer fires: no check. */
	CHECK(autostop_client_opened(&a, now + 3, &act));
	activity(&a, now + 3, AUTOSTOP_QUIET, AUTOSTOP_WORKING);
	act = autostop_timer_fired(&a, now + 4);
	CHECK(!has(act, AUTOSTOP_DO_CHECK));
}

/* issue 22: an IDE's Docker view or `watch docker ps` asks every 5 s; it must not keep the VM
 * up. */
TEST(polls_every_five_seconds_do_not_keep_it_up)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_check c = api_ok(0, "");
	struct autostop_actions act;
	double t = now;
	bool stopped = false;
	double next_check = now + IDLE;
	while (t < now + 4 * IDLE && !stopped) {
		t += 5;
		CHECK(autostop_client_opened(&a, t, &act));
		act = activity(&a, t, AUTOSTOP_QUIET, AUTOSTOP_POLLING);
		CHECK(!has(act, AUTOSTOP_DO_DISARM_TIMER));
		act = activity(&a, t + 0.01, AUTOSTOP_POLLING, AUTOSTOP_QUIET);
		CHECK(!has(act, AUTOSTOP_DO_ARM_TIMER));
		autostop_client_closed(&a, t + 0.02);
		if (t >= next_check) {
			act = autostop_timer_fired(&a, t + 0.5);
			CHECK(has(act, AUTOSTOP_DO_CHECK));
			act = autostop_check_done(&a, t + 0.6, &c);
			stopped = has(act, AUTOSTOP_DO_STOP);
			next_check = t + act.timer_s;
		}
	}
	CHECK(stopped);
	CHECK(t <= now + IDLE + 5);
	CHECK_INT(a.state, AUTOSTOP_STOPPING);
}

TEST(a_poll_in_flight_delays_the_stop_without_restarting_the_period)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_check c = api_ok(0, "");
	struct autostop_actions act;
	autostop_client_opened(&a, now + IDLE - 0.1, &act);
	activity(&a, now + IDLE - 0.1, AUTOSTOP_QUIET, AUTOSTOP_POLLING);
	act = autostop_check_done(&a, now + IDLE, &c);
	CHECK(!has(act, AUTOSTOP_DO_STOP));
	CHECK(has(act, AUTOSTOP_DO_ARM_TIMER));
	CHECK_DBL(act.timer_s, AUTOSTOP_QUIET_S, 0.001);
	activity(&a, now + IDLE + 0.2, AUTOSTOP_POLLING, AUTOSTOP_QUIET);
	/* The connection stays open, kept alive between requests: still no work. */
	act = autostop_timer_fired(&a, now + IDLE + 1);
	CHECK(has(act, AUTOSTOP_DO_CHECK));
	act = autostop_check_done(&a, now + IDLE + 1.1, &c);
	CHECK(has(act, AUTOSTOP_DO_STOP));
	CHECK_INT(a.clients, 1);
}

TEST(work_after_polls_restarts_the_period)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_check c = api_ok(0, "");
	struct autostop_actions act;
	autostop_client_opened(&a, now + 5, &act);
	activity(&a, now + 5, AUTOSTOP_QUIET, AUTOSTOP_POLLING);
	/* The same kept-alive connection now creates a container. */
	act = activity(&a, now + 6, AUTOSTOP_POLLING, AUTOSTOP_WORKING);
	CHECK(has(act, AUTOSTOP_DO_DISARM_TIMER));
	CHECK_INT(a.polling, 0);
	CHECK_INT(a.working, 1);
	act = activity(&a, now + 7, AUTOSTOP_WORKING, AUTOSTOP_QUIET);
	CHECK(has(act, AUTOSTOP_DO_ARM_TIMER));
	autostop_timer_fired(&a, now + 8);
	act = autostop_check_done(&a, now + 8, &c);
	CHECK(!has(act, AUTOSTOP_DO_STOP));
	CHECK_DBL(act.timer_s, IDLE, 0.001);
	act = autostop_check_done(&a, now + IDLE + 1, &c); /* the old period would be over */
	CHECK(!has(act, AUTOSTOP_DO_STOP));
	act = autostop_check_done(&a, now + 8 + IDLE, &c);
	CHECK(has(act, AUTOSTOP_DO_STOP));
}

/* issue 21: deep idle before the stop, once per idle period. */

/* dev idle since T0, the freeze asked for at T0 + 5 (--freeze-after 5 s). */
static void freezing_idle(struct autostop *a)
{
	autostop_init(a, "dev", IDLE, true, T0 - 0.1);
	autostop_set_freeze_after(a, 5);
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(a, T0, &c);
	CHECK_INT(a->engine, AUTOSTOP_ENGINE_RUNNING);
	struct autostop_actions act = autostop_check_done(a, T0 + 5, &c);
	CHECK(has(act, AUTOSTOP_DO_FREEZE));
	CHECK_INT(a->engine, AUTOSTOP_ENGINE_FREEZING);
}

/* The same, frozen at T0 + 5.5. */
static void frozen_idle(struct autostop *a)
{
	freezing_idle(a);
	autostop_freeze_done(a, T0 + 5.5, AUTOSTOP_FREEZE_OK, "");
	CHECK_INT(a->engine, AUTOSTOP_ENGINE_FROZEN);
}

TEST(freeze_after_freezes_once_then_stops_at_the_end)
{
	struct autostop a;
	double now;
	autostop_init(&a, "dev", IDLE, true, T0);
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_UNKNOWN);
	autostop_set_freeze_after(&a, 5);
	struct autostop_check c = api_ok(0, "");
	struct autostop_actions act = autostop_check_done(&a, T0 + 0.1, &c);
	now = T0 + 0.1;
	CHECK_STR(a.decision_kind, "idle");
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_RUNNING);
	CHECK(has(act, AUTOSTOP_DO_ARM_TIMER));
	CHECK_DBL(act.timer_s, 5, 0.001); /* the freeze point first */
	act = autostop_timer_fired(&a, now + 5);
	CHECK(has(act, AUTOSTOP_DO_CHECK));
	act = autostop_check_done(&a, now + 5, &c);
	CHECK(has(act, AUTOSTOP_DO_FREEZE));
	CHECK(!has(act, AUTOSTOP_DO_STOP));
	CHECK_DBL(act.timer_s, IDLE - 5, 0.001); /* then the period's end */
	act = autostop_freeze_done(&a, now + 6, AUTOSTOP_FREEZE_OK, "");
	CHECK(has(act, AUTOSTOP_DO_LOG));
	CHECK_CONTAINS(a.decision, "froze dev's Docker engine after 5.0 s idle");
	CHECK_INT(a.freezes, 1);
	CHECK_STR(autostop_engine_name(a.engine), "frozen");
	CHECK_DBL(autostop_frozen_for(&a, now + 10), 4, 0.001);
	/* The period's end: the engine is thawed first, and only then asked whether it is idle,
	 * so that the check meets a running dockerd and the VM stops with one. */
	act = autostop_timer_fired(&a, now + IDLE);
	CHECK(has(act, AUTOSTOP_DO_THAW));
	CHECK(!has(act, AUTOSTOP_DO_CHECK));
	CHECK(!has(act, AUTOSTOP_DO_STOP));
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_THAWING);
	act = autostop_thaw_done(&a, now + IDLE + 0.1, true, "", 0);
	CHECK(has(act, AUTOSTOP_DO_CHECK));
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_RUNNING);
	CHECK_CONTAINS(a.decision, "thawed dev's Docker engine after 14.1 s frozen (the idle "
				   "period ends)");
	CHECK_DBL(a.frozen_total, 14.1, 0.001);
	act = autostop_check_done(&a, now + IDLE + 0.2, &c);
	CHECK(has(act, AUTOSTOP_DO_STOP));
	CHECK(!has(act, AUTOSTOP_DO_FREEZE));
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_UNKNOWN); /* the VM stops */
}

TEST(an_early_timer_while_frozen_rearms_without_waking_the_engine)
{
	struct autostop a;
	frozen_idle(&a);
	struct autostop_actions act = autostop_timer_fired(&a, T0 + 8);
	CHECK(!has(act, AUTOSTOP_DO_THAW));
	CHECK(!has(act, AUTOSTOP_DO_CHECK));
	CHECK(has(act, AUTOSTOP_DO_ARM_TIMER));
	CHECK_DBL(act.timer_s, IDLE - 8, 0.001);
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_FROZEN);
}

TEST(a_client_while_frozen_is_held_until_the_engine_is_thawed)
{
	struct autostop a;
	frozen_idle(&a);
	struct autostop_actions act;
	CHECK(!autostop_client_opened(&a, T0 + 8, &act)); /* held: its bytes wait */
	CHECK(has(act, AUTOSTOP_DO_THAW));
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_THAWING);
	/* A second client while the thaw runs: held too, no second thaw. */
	CHECK(!autostop_client_opened(&a, T0 + 8.01, &act));
	CHECK(!has(act, AUTOSTOP_DO_THAW));
	act = autostop_thaw_done(&a, T0 + 8.03, true, "", 2);
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	CHECK(!has(act, AUTOSTOP_DO_CHECK)); /* the clients say what they do */
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_RUNNING);
	CHECK_CONTAINS(a.decision, "thawed dev's Docker engine after 2.5 s frozen (a client "
				   "arrived); relaying 2 held clients");
	CHECK_STR(a.decision_kind, "thaw");
	CHECK_DBL(autostop_frozen_for(&a, T0 + 9), 0, 0.001);
	/* Once connected, clients are relayed at once again. */
	CHECK(autostop_client_opened(&a, T0 + 9, &act));
	CHECK(!has(act, AUTOSTOP_DO_THAW));
}

TEST(a_thaw_the_agent_does_not_answer_still_lets_the_clients_go)
{
	struct autostop a;
	frozen_idle(&a);
	struct autostop_actions act;
	CHECK(!autostop_client_opened(&a, T0 + 8, &act));
	act = autostop_thaw_done(&a, T0 + 18, false, "connection refused", 1);
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	CHECK_CONTAINS(a.decision, "the agent did not thaw dev's Docker engine (connection "
				   "refused); going on anyway");
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_UNKNOWN);
	/* The next check that answers shows it running. */
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(&a, T0 + 19, &c);
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_RUNNING);
}

TEST(a_connection_kept_open_across_the_freeze_thaws_it_when_it_speaks)
{
	struct autostop a;
	autostop_init(&a, "dev", IDLE, true, T0 - 0.1);
	autostop_set_freeze_after(&a, 5);
	struct autostop_actions act;
	CHECK(autostop_client_opened(&a, T0 - 0.05, &act)); /* connected, says nothing */
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(&a, T0, &c);
	act = autostop_check_done(&a, T0 + 5, &c);
	CHECK(has(act, AUTOSTOP_DO_FREEZE)); /* a quiet connection is no work */
	autostop_freeze_done(&a, T0 + 5.5, AUTOSTOP_FREEZE_OK, "");
	/* Its request reaches the frozen dockerd's socket: autostop thaws it. */
	act = autostop_client_activity(&a, T0 + 7, AUTOSTOP_QUIET, AUTOSTOP_POLLING);
	CHECK(has(act, AUTOSTOP_DO_THAW));
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_THAWING);
	act = autostop_thaw_done(&a, T0 + 7.02, true, "", 0);
	CHECK_CONTAINS(a.decision, "(a connection kept open sent a request)");
	/* A poll: the period goes on, and it is not frozen again within it. */
	autostop_client_activity(&a, T0 + 7.1, AUTOSTOP_POLLING, AUTOSTOP_QUIET);
	act = autostop_check_done(&a, T0 + 8, &c);
	CHECK(!has(act, AUTOSTOP_DO_FREEZE));
	act = autostop_check_done(&a, T0 + IDLE, &c);
	CHECK(has(act, AUTOSTOP_DO_STOP));
}

/* With a snapshot taken before the freeze, a client is served from it while the engine stays
 * frozen; the first request it does not answer thaws the engine and goes on to dockerd. */
TEST(with_a_snapshot_polls_while_frozen_are_answered_and_other_requests_thaw)
{
	struct autostop a;
	freezing_idle(&a);
	struct autostop_actions act;
	autostop_snapshot_set(&a, "2026-12-04T14:00:05Z"); /* taken before the freeze */
	CHECK(!autostop_frozen_snapshot_serves(&a));	   /* not frozen yet */
	CHECK(!autostop_snapshot_answers(&a));
	autostop_freeze_done(&a, T0 + 5.5, AUTOSTOP_FREEZE_OK, "");
	CHECK_CONTAINS(a.decision, "froze dev's Docker engine after 5.0 s idle (polls are answered "
				   "from the snapshot of 2026-12-04T14:00:05Z; any other request "
				   "thaws it)");
	CHECK(autostop_frozen_snapshot_serves(&a));
	CHECK(autostop_snapshot_answers(&a));
	/* A client: held to be served from the snapshot, the engine left frozen. */
	CHECK(!autostop_client_opened(&a, T0 + 8, &act));
	CHECK(!has(act, AUTOSTOP_DO_THAW));
	act = autostop_local_activity(&a, T0 + 8.01, AUTOSTOP_QUIET, AUTOSTOP_POLLING);
	CHECK(!has(act, AUTOSTOP_DO_THAW));
	autostop_snapshot_answered(&a);
	autostop_local_activity(&a, T0 + 8.02, AUTOSTOP_POLLING, AUTOSTOP_QUIET);
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_FROZEN);
	CHECK_INT(a.snapshot_answers, 1);
	act = autostop_timer_fired(&a, T0 + 9); /* polls are no work: the period goes on */
	CHECK(!has(act, AUTOSTOP_DO_THAW));
	CHECK(!has(act, AUTOSTOP_DO_CHECK));
	/* Work: counted, and the snapshot's miss thaws the engine (no start: the VM runs). */
	act = autostop_local_activity(&a, T0 + 10, AUTOSTOP_QUIET, AUTOSTOP_WORKING);
	CHECK(!has(act, AUTOSTOP_DO_THAW));
	CHECK_INT(a.working, 1);
	act = autostop_snapshot_missed(&a, T0 + 10, "POST /containers/create", "not a poll");
	CHECK(has(act, AUTOSTOP_DO_THAW));
	CHECK(!has(act, AUTOSTOP_DO_START));
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_THAWING);
	CHECK(!autostop_snapshot_answers(&a));
	act = autostop_thaw_done(&a, T0 + 10.05, true, "", 1);
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	CHECK_CONTAINS(a.decision, "frozen (POST /containers/create (not a poll)); relaying 1 "
				   "held client");
	/* A miss once the engine runs again: straight on to dockerd. */
	act = autostop_snapshot_missed(&a, T0 + 11, "GET /info", "no snapshot holds any more");
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	CHECK(!has(act, AUTOSTOP_DO_THAW));
	CHECK(!has(act, AUTOSTOP_DO_START));
}

TEST(with_wake_on_any_a_frozen_engine_serves_no_snapshot)
{
	struct autostop a;
	frozen_idle(&a);
	autostop_snapshot_set(&a, "2026-12-04T14:00:05Z");
	CHECK(autostop_frozen_snapshot_serves(&a));
	autostop_set_wake_on_any(&a, true);
	CHECK(!autostop_frozen_snapshot_serves(&a));
	struct autostop_actions act;
	CHECK(!autostop_client_opened(&a, T0 + 8, &act));
	CHECK(has(act, AUTOSTOP_DO_THAW));
}

TEST(a_client_during_the_freeze_is_held_and_thawed_for_at_once)
{
	struct autostop a;
	autostop_init(&a, "dev", IDLE, true, T0 - 0.1);
	autostop_set_freeze_after(&a, 5);
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(&a, T0, &c);
	autostop_check_done(&a, T0 + 5, &c);
	struct autostop_actions act;
	CHECK(!autostop_client_opened(&a, T0 + 5.2, &act));
	CHECK(!has(act, AUTOSTOP_DO_THAW)); /* the freeze's answer first */
	act = autostop_freeze_done(&a, T0 + 5.5, AUTOSTOP_FREEZE_OK, "");
	CHECK(has(act, AUTOSTOP_DO_THAW));
	CHECK_CONTAINS(a.decision, "froze dev's Docker engine after 5.0 s idle; thawing it (a "
				   "client arrived)");
	CHECK_INT(a.freezes, 1);
	act = autostop_thaw_done(&a, T0 + 5.6, true, "", 1);
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	/* Refused instead: the held client goes on at once. */
	autostop_init(&a, "dev", IDLE, true, T0 - 0.1);
	autostop_set_freeze_after(&a, 5);
	autostop_check_done(&a, T0, &c);
	autostop_check_done(&a, T0 + 5, &c);
	CHECK(!autostop_client_opened(&a, T0 + 5.2, &act));
	act = autostop_freeze_done(&a, T0 + 5.5, AUTOSTOP_FREEZE_REFUSED, "container abc runs");
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	CHECK(!has(act, AUTOSTOP_DO_THAW));
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_RUNNING);
}

TEST(the_period_ending_during_the_freeze_thaws_then_checks)
{
	struct autostop a;
	autostop_init(&a, "dev", 6, true, T0 - 0.1);
	autostop_set_freeze_after(&a, 5);
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(&a, T0, &c);
	autostop_check_done(&a, T0 + 5, &c);
	/* The freeze takes its time (the agent waits for frozen 1); the period ends. */
	struct autostop_actions act = autostop_timer_fired(&a, T0 + 6);
	CHECK(!has(act, AUTOSTOP_DO_CHECK));
	act = autostop_freeze_done(&a, T0 + 6.5, AUTOSTOP_FREEZE_OK, "");
	CHECK(has(act, AUTOSTOP_DO_THAW));
	act = autostop_thaw_done(&a, T0 + 6.6, true, "", 0);
	CHECK(has(act, AUTOSTOP_DO_CHECK));
	act = autostop_check_done(&a, T0 + 6.7, &c);
	CHECK(has(act, AUTOSTOP_DO_STOP));
}

TEST(work_thaws_and_the_next_period_freezes_again)
{
	struct autostop a;
	frozen_idle(&a);
	struct autostop_actions act;
	CHECK(!autostop_client_opened(&a, T0 + 7, &act));
	autostop_client_activity(&a, T0 + 7, AUTOSTOP_QUIET, AUTOSTOP_WORKING);
	autostop_thaw_done(&a, T0 + 7.05, true, "", 1);
	CHECK(!a.freeze_tried);
	autostop_client_activity(&a, T0 + 8, AUTOSTOP_WORKING, AUTOSTOP_QUIET);
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(&a, T0 + 9, &c); /* a new period */
	act = autostop_check_done(&a, T0 + 14, &c);
	CHECK(has(act, AUTOSTOP_DO_FREEZE));
	autostop_freeze_done(&a, T0 + 14.5, AUTOSTOP_FREEZE_OK, "");
	CHECK_INT(a.freezes, 2);
	CHECK_DBL(a.frozen_total, 1.55, 0.001);
	CHECK_DBL(autostop_frozen_for(&a, T0 + 15.5), 1, 0.001);
}

TEST(a_refused_freeze_is_logged_and_not_retried_in_the_period)
{
	struct autostop a;
	autostop_init(&a, "dev", IDLE, true, T0);
	autostop_set_freeze_after(&a, 5);
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(&a, T0, &c);
	autostop_check_done(&a, T0 + 5, &c);
	struct autostop_actions act = autostop_freeze_done(
	    &a, T0 + 5.5, AUTOSTOP_FREEZE_REFUSED, "processes that are not the engine's run");
	CHECK_CONTAINS(a.decision,
		       "refused to freeze it (processes that are not the engine's run)");
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_RUNNING);
	act = autostop_check_done(&a, T0 + 7, &c);
	CHECK(!has(act, AUTOSTOP_DO_FREEZE));
	CHECK_INT(a.freezes, 0);
	/* No agent at all: the same, said so. */
	autostop_init(&a, "dev", IDLE, true, T0);
	autostop_set_freeze_after(&a, 5);
	autostop_check_done(&a, T0, &c);
	autostop_check_done(&a, T0 + 5, &c);
	autostop_freeze_done(&a, T0 + 5.5, AUTOSTOP_FREEZE_FAILED, "connection refused");
	CHECK_CONTAINS(a.decision, "the agent did not answer the freeze (connection refused)");
	act = autostop_check_done(&a, T0 + 7, &c);
	CHECK(!has(act, AUTOSTOP_DO_FREEZE));
	/* Longer than the idle period: never. */
	autostop_set_freeze_after(&a, IDLE + 1);
	CHECK_DBL(a.freeze_after, 0, 0.001);
}

TEST(a_busy_agent_is_asked_again_later_in_the_period)
{
	struct autostop a;
	autostop_init(&a, "dev", IDLE, true, T0);
	autostop_set_freeze_after(&a, 5);
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(&a, T0, &c);
	autostop_check_done(&a, T0 + 5, &c);
	struct autostop_actions act = autostop_freeze_done(
	    &a, T0 + 5.2, AUTOSTOP_FREEZE_BUSY, "the agent is busy: 16 requests running");
	CHECK_CONTAINS(a.decision, "stays thawed for now: the agent is busy (the agent is busy: "
				   "16 requests running); asking again in 5.0 s");
	CHECK(has(act, AUTOSTOP_DO_ARM_TIMER));
	CHECK_DBL(act.timer_s, AUTOSTOP_FREEZE_RETRY_S, 0.001);
	CHECK_INT(a.engine, AUTOSTOP_ENGINE_RUNNING);
	/* Not before the retry time... */
	act = autostop_check_done(&a, T0 + 7, &c);
	CHECK(!has(act, AUTOSTOP_DO_FREEZE));
	CHECK_DBL(act.timer_s, T0 + 5.2 + AUTOSTOP_FREEZE_RETRY_S - (T0 + 7), 0.001);
	/* ...then again. */
	act = autostop_timer_fired(&a, T0 + 10.2);
	CHECK(has(act, AUTOSTOP_DO_CHECK));
	act = autostop_check_done(&a, T0 + 10.2, &c);
	CHECK(has(act, AUTOSTOP_DO_FREEZE));
	autostop_freeze_done(&a, T0 + 10.5, AUTOSTOP_FREEZE_OK, "");
	CHECK_INT(a.freezes, 1);
	/* A retry due after the period's end is not waited for: the stop comes on time. */
	autostop_init(&a, "dev", IDLE, true, T0);
	autostop_set_freeze_after(&a, 5);
	autostop_check_done(&a, T0, &c);
	autostop_check_done(&a, T0 + IDLE - 2, &c);
	act = autostop_freeze_done(&a, T0 + IDLE - 1.9, AUTOSTOP_FREEZE_BUSY, "busy");
	CHECK_DBL(act.timer_s, 1.9, 0.001);
	act = autostop_check_done(&a, T0 + IDLE, &c);
	CHECK(has(act, AUTOSTOP_DO_STOP));
}

TEST(requests_are_told_apart)
{
	CHECK_INT(autostop_request_kind("GET", "/_ping", false), AUTOSTOP_REQ_POLL);
	CHECK_INT(autostop_request_kind("HEAD", "/_ping", false), AUTOSTOP_REQ_POLL);
	CHECK_INT(autostop_request_kind("GET", "/v1.47/containers/json?all=1", false),
		  AUTOSTOP_REQ_POLL);
	CHECK_INT(autostop_request_kind("GET", "/v1.41/version", false), AUTOSTOP_REQ_POLL);
	CHECK_INT(autostop_request_kind("GET", "/info", false), AUTOSTOP_REQ_POLL);
	CHECK_INT(autostop_request_kind("GET", "/images/json", false), AUTOSTOP_REQ_POLL);
	CHECK_INT(autostop_request_kind("GET", "/v1.47/volumes", false), AUTOSTOP_REQ_POLL);
	CHECK_INT(autostop_request_kind("GET", "/networks?filters=%7B%7D", false),
		  AUTOSTOP_REQ_POLL);
	CHECK_INT(autostop_request_kind("GET", "/system/df", false), AUTOSTOP_REQ_POLL);
	CHECK_INT(autostop_request_kind("HEAD", "/v1.47/containers/abc/archive?path=/", false),
		  AUTOSTOP_REQ_POLL);
	/* Work: anything else, streams included. */
	CHECK_INT(autostop_request_kind("POST", "/containers/create", false), AUTOSTOP_REQ_WORK);
	CHECK_INT(autostop_request_kind("POST", "/_ping", false), AUTOSTOP_REQ_WORK);
	CHECK_INT(autostop_request_kind("GET", "/containers/abc/json", false), AUTOSTOP_REQ_WORK);
	CHECK_INT(autostop_request_kind("GET", "/containers/abc/logs?follow=1", false),
		  AUTOSTOP_REQ_WORK);
	CHECK_INT(autostop_request_kind("GET", "/events", false), AUTOSTOP_REQ_WORK);
	CHECK_INT(autostop_request_kind("GET", "/volumes/x", false), AUTOSTOP_REQ_WORK);
	CHECK_INT(autostop_request_kind("GET", "/_pingx", false), AUTOSTOP_REQ_WORK);
	CHECK_INT(autostop_request_kind("GET", "/vx/_ping", false), AUTOSTOP_REQ_WORK);
	CHECK_INT(autostop_request_kind("GET", "/v1.47", false), AUTOSTOP_REQ_WORK);
	/* Hijacks: raw after the request. */
	CHECK_INT(autostop_request_kind("POST", "/v1.47/containers/abc/attach?stream=1", false),
		  AUTOSTOP_REQ_HIJACK);
	CHECK_INT(autostop_request_kind("POST", "/exec/abc/start", false), AUTOSTOP_REQ_HIJACK);
	CHECK_INT(autostop_request_kind("POST", "/session", false), AUTOSTOP_REQ_HIJACK);
	CHECK_INT(autostop_request_kind("POST", "/v1.47/grpc", false), AUTOSTOP_REQ_HIJACK);
	CHECK_INT(autostop_request_kind("GET", "/_ping", true), AUTOSTOP_REQ_HIJACK);
	CHECK_INT(autostop_request_kind("POST", "/exec/abc/resize", false), AUTOSTOP_REQ_WORK);
	CHECK_INT(autostop_request_kind("POST", "/containers/a/b/attach", false),
		  AUTOSTOP_REQ_WORK);
}

TEST(never_stops_what_it_did_not_see_healthy)
{
	struct autostop a;
	struct autostop_actions act = autostop_init(&a, "dev", IDLE, true, T0);
	struct autostop_check bad = {.api_ok = false};
	snprintf(bad.error, sizeof bad.error, "Connection refused");
	for (int i = 0; i < 5; i++) {
		act = autostop_check_done(&a, T0 + i * IDLE, &bad);
		CHECK(!has(act, AUTOSTOP_DO_STOP));
		CHECK_INT(a.state, AUTOSTOP_UNHEALTHY);
		CHECK(has(act, AUTOSTOP_DO_ARM_TIMER));
	}
	CHECK_CONTAINS(a.decision, "never stops an instance it cannot see healthy");
	CHECK_CONTAINS(a.decision, "Connection refused");
	/* Healthy again: the period starts from the first good answer. */
	struct autostop_check good = api_ok(0, "");
	act = autostop_check_done(&a, T0 + 200, &good);
	CHECK(!has(act, AUTOSTOP_DO_STOP));
	act = autostop_check_done(&a, T0 + 200 + IDLE, &good);
	CHECK(has(act, AUTOSTOP_DO_STOP));
}

TEST(a_vm_stopped_by_hand_is_waited_for_not_stopped)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_check gone = {.api_ok = false, .instance_stopped = true};
	struct autostop_actions act = autostop_check_done(&a, now + IDLE, &gone);
	CHECK_INT(a.state, AUTOSTOP_DOWN);
	CHECK(has(act, AUTOSTOP_DO_DISARM_TIMER));
	CHECK(!has(act, AUTOSTOP_DO_ARM_TIMER));
	CHECK_CONTAINS(a.decision, "not by autostop");
	act = autostop_timer_fired(&a, now + 2 * IDLE);
	CHECK(!has(act, AUTOSTOP_DO_CHECK));
}

TEST(init_with_a_stopped_instance_waits_for_a_client)
{
	struct autostop a;
	struct autostop_actions act = autostop_init(&a, "dev", IDLE, false, T0);
	CHECK_INT(a.state, AUTOSTOP_DOWN);
	CHECK(has(act, AUTOSTOP_DO_LOG));
	CHECK(!has(act, AUTOSTOP_DO_CHECK));
	CHECK(!has(act, AUTOSTOP_DO_ARM_TIMER));
	CHECK_CONTAINS(a.decision, "the first client will start it");
}

/* A client found docker.sock refusing while dev is stopped: one start for everybody. */
static void start_with_clients(struct autostop *a, unsigned clients)
{
	autostop_init(a, "dev", IDLE, false, T0);
	struct autostop_actions act;
	for (unsigned i = 0; i < clients; i++)
		CHECK(autostop_client_opened(a, T0 + 1, &act));
	act = autostop_upstream_refused(a, T0 + 1, "no such file or directory");
	CHECK(has(act, AUTOSTOP_DO_START));
	CHECK_INT(a->state, AUTOSTOP_STARTING);
	CHECK_STR(a->decision_kind, "start");
	CHECK_CONTAINS(a->decision, "limactl start dev");
	for (unsigned i = 1; i < clients; i++) {
		act = autostop_upstream_refused(a, T0 + 1, "no such file or directory");
		CHECK(!has(act, AUTOSTOP_DO_START));
	}
	CHECK_INT(a->starts, 1);
}

TEST(ten_clients_share_one_start)
{
	struct autostop a;
	start_with_clients(&a, 10);
	struct autostop_actions act;
	/* More clients during the start are held, not connected. */
	CHECK(!autostop_client_opened(&a, T0 + 2, &act));
	CHECK(!has(act, AUTOSTOP_DO_START));
	act = autostop_ping_answered(&a, T0 + 13.5, 11);
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	CHECK_DBL(a.last_start_s, 12.5, 0.001);
	CHECK_CONTAINS(a.decision, "relaying 11 held clients");
	/* Docker answers but limactl start still runs: new clients go straight through. */
	CHECK(autostop_client_opened(&a, T0 + 14, &act));
	activity(&a, T0 + 14, AUTOSTOP_QUIET, AUTOSTOP_WORKING);
	act = autostop_start_exited(&a, T0 + 20, 0, "READY", 0);
	CHECK_INT(a.state, AUTOSTOP_RUNNING);
	CHECK(has(act, AUTOSTOP_DO_END_START));
	CHECK(!has(act, AUTOSTOP_DO_CHECK)); /* a client is at work */
	CHECK_INT(a.starts, 1);
}

TEST(limactl_done_before_docker_answers_keeps_pinging)
{
	struct autostop a;
	start_with_clients(&a, 1);
	struct autostop_actions act = autostop_start_exited(&a, T0 + 10, 0, "READY", 1);
	CHECK_INT(a.state, AUTOSTOP_STARTING);
	CHECK(!has(act, AUTOSTOP_DO_END_START));
	act = autostop_ping_answered(&a, T0 + 11, 1);
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	CHECK(has(act, AUTOSTOP_DO_END_START));
	CHECK_INT(a.state, AUTOSTOP_RUNNING);
}

TEST(never_stops_during_a_start)
{
	struct autostop a;
	start_with_clients(&a, 1);
	struct autostop_check c = api_ok(0, "");
	struct autostop_actions act = autostop_check_done(&a, T0 + 500, &c);
	CHECK_INT(act.todo, 0);
	act = autostop_timer_fired(&a, T0 + 500);
	CHECK_INT(act.todo, 0);
	act = autostop_client_closed(&a, T0 + 500);
	CHECK(!has(act, AUTOSTOP_DO_CHECK));
	CHECK_INT(a.state, AUTOSTOP_STARTING);
}

TEST(a_failed_start_closes_the_held_clients)
{
	struct autostop a;
	start_with_clients(&a, 3);
	struct autostop_actions act =
	    autostop_start_exited(&a, T0 + 4, 1, "level=fatal msg=\"disk locked\"", 3);
	CHECK(has(act, AUTOSTOP_DO_CLOSE_HELD));
	CHECK(has(act, AUTOSTOP_DO_END_START));
	CHECK_INT(a.state, AUTOSTOP_DOWN);
	CHECK_STR(a.decision_kind, "failed");
	CHECK_CONTAINS(a.decision, "exited 1: level=fatal msg=\"disk locked\"; closed 3 held");
	/* The next client tries again. */
	CHECK(autostop_client_opened(&a, T0 + 30, &act));
	act = autostop_upstream_refused(&a, T0 + 30, "connection refused");
	CHECK(has(act, AUTOSTOP_DO_START));
	CHECK_INT(a.starts, 2);
}

TEST(a_start_that_never_answers_times_out)
{
	struct autostop a;
	start_with_clients(&a, 2);
	struct autostop_actions act = autostop_start_timed_out(&a, T0 + 601, 600, 2);
	CHECK(has(act, AUTOSTOP_DO_CLOSE_HELD));
	CHECK_INT(a.state, AUTOSTOP_DOWN);
	CHECK_CONTAINS(a.decision, "did not answer /_ping within 10 min 00 s");
	struct autostop b;
	start_with_clients(&b, 1);
	autostop_start_exited(&b, T0 + 100, 0, "", 1);
	act = autostop_start_timed_out(&b, T0 + 601, 600, 1);
	CHECK_INT(b.state, AUTOSTOP_UNHEALTHY);
	CHECK_CONTAINS(b.decision, "although limactl start succeeded");
}

TEST(limactl_missing_is_a_failed_start)
{
	struct autostop a;
	start_with_clients(&a, 1);
	struct autostop_actions act =
	    autostop_start_failed(&a, T0 + 1, "limactl is not on PATH (install Lima)", 1);
	CHECK(has(act, AUTOSTOP_DO_CLOSE_HELD));
	CHECK_CONTAINS(a.decision, "limactl is not on PATH");
}

TEST(the_vm_went_away_behind_its_back)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_actions act;
	CHECK(autostop_client_opened(&a, now + 1, &act));
	act = autostop_upstream_refused(&a, now + 1, "connection refused");
	/* Lima is asked first: a dead forward looks the same from here. */
	CHECK(has(act, AUTOSTOP_DO_HEAL));
	CHECK(!has(act, AUTOSTOP_DO_START));
	CHECK_INT(a.state, AUTOSTOP_HEALING);
	act = autostop_heal_done(&a, now + 2, AUTOSTOP_NOT_RUNNING, "", 1);
	CHECK(has(act, AUTOSTOP_DO_START));
	CHECK_CONTAINS(a.decision, "connection refused");
	CHECK_CONTAINS(a.decision, "went away behind autostop's back");
}

/* issue 22: Lima's docker.sock forward died while the VM runs; limactl start would not help. */
TEST(a_dead_forward_is_healed_not_started)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_actions act;
	CHECK(autostop_client_opened(&a, now + 1, &act));
	act = autostop_upstream_refused(&a, now + 1, "connection refused");
	CHECK(has(act, AUTOSTOP_DO_HEAL));
	CHECK(has(act, AUTOSTOP_DO_DISARM_TIMER));
	/* More clients and refusals meanwhile are held, and cause nothing more. */
	CHECK(!autostop_client_opened(&a, now + 1.5, &act));
	act = autostop_upstream_refused(&a, now + 1.5, "connection refused");
	CHECK_INT(act.todo, 0);
	act = autostop_heal_done(&a, now + 2, AUTOSTOP_HEALED, "its forward was dead", 2);
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	CHECK(has(act, AUTOSTOP_DO_CHECK));
	CHECK(!has(act, AUTOSTOP_DO_START));
	CHECK_INT(a.state, AUTOSTOP_CHECKING);
	CHECK_INT(a.starts, 0);
	CHECK_INT(a.heals, 1);
	CHECK_STR(a.decision_kind, "healed");
	CHECK_CONTAINS(a.decision, "relaying 2 held clients");
}

TEST(a_forward_that_cannot_be_healed_closes_the_held_clients)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_actions act;
	autostop_client_opened(&a, now + 1, &act);
	autostop_upstream_refused(&a, now + 1, "connection refused");
	act = autostop_heal_done(&a, now + 20, AUTOSTOP_HEAL_FAILED,
				 "ssh (Lima's SSH master): Permission denied", 1);
	CHECK(has(act, AUTOSTOP_DO_CLOSE_HELD));
	CHECK(!has(act, AUTOSTOP_DO_START));
	CHECK_INT(a.state, AUTOSTOP_UNHEALTHY);
	CHECK_CONTAINS(a.decision, "Permission denied");
	CHECK_CONTAINS(a.decision, "vmcost doctor dev");
	/* A stale answer after the state moved on changes nothing. */
	act = autostop_heal_done(&a, now + 21, AUTOSTOP_HEALED, "", 0);
	CHECK_INT(act.todo, 0);
}

/* issue 22: a forward that accepts and hangs, while Lima runs the instance. */
static void hung_forward_found(struct autostop *a, double *now)
{
	running_idle(a, now);
	struct autostop_actions act;
	CHECK(autostop_client_opened(a, *now + 1, &act)); /* relayed: docker.sock accepted */
	activity(a, *now + 1, AUTOSTOP_QUIET, AUTOSTOP_POLLING);
	act = autostop_upstream_silent(a, *now + 1 + AUTOSTOP_SILENT_S);
	CHECK(has(act, AUTOSTOP_DO_PROBE_HANG));
	CHECK(!has(act, AUTOSTOP_DO_HEAL));
	/* One probe at a time, whatever else falls silent meanwhile. */
	act = autostop_upstream_silent(a, *now + 3.5);
	CHECK_INT(act.todo, 0);
	act = autostop_hang_probed(a, *now + 5, false, "timed out");
	CHECK(has(act, AUTOSTOP_DO_HEAL));
	CHECK(has(act, AUTOSTOP_DO_HOLD_SILENT));
	CHECK(has(act, AUTOSTOP_DO_DISARM_TIMER));
	CHECK(has(act, AUTOSTOP_DO_LOG));
	CHECK(!has(act, AUTOSTOP_DO_START));
	CHECK_INT(a->state, AUTOSTOP_HEALING);
	CHECK_STR(a->decision_kind, "heal");
	CHECK_CONTAINS(a->decision, "docker.sock accepted a client and sent no answer for 2.0 s, "
				    "nor to /_ping on a new connection (timed out) while "
				    "dev was running: asking Lima");
	*now += 5;
}

TEST(a_forward_that_hangs_is_healed_not_started)
{
	struct autostop a;
	double now;
	hung_forward_found(&a, &now);
	/* While it heals, clients are held and silences ask nothing more. */
	struct autostop_actions act;
	CHECK(!autostop_client_opened(&a, now + 0.5, &act));
	act = autostop_upstream_silent(&a, now + 1);
	CHECK_INT(act.todo, 0);
	act = autostop_heal_done(&a, now + 2, AUTOSTOP_HEALED, "its forward was dead", 2);
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	CHECK(!has(act, AUTOSTOP_DO_START));
	CHECK_INT(a.starts, 0);
	CHECK_INT(a.heals, 1);
	CHECK_CONTAINS(a.decision, "dev runs and docker.sock answers again (its forward was dead); "
				   "relaying 2 held clients");
	/* Lima says it is gone while a client waits: that, and only that, starts it. */
	struct autostop b;
	hung_forward_found(&b, &now);
	act = autostop_heal_done(&b, now + 1, AUTOSTOP_NOT_RUNNING, "", 1);
	CHECK(has(act, AUTOSTOP_DO_START));
	CHECK_CONTAINS(b.decision, "sent no answer for 2.0 s");
	CHECK_CONTAINS(b.decision, "Lima says dev is not running");
}

TEST(a_slow_request_is_not_a_hung_forward)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_actions act;
	CHECK(autostop_client_opened(&a, now + 1, &act));
	activity(&a, now + 1, AUTOSTOP_QUIET, AUTOSTOP_WORKING); /* docker stop: 10 s, silent */
	act = autostop_upstream_silent(&a, now + 3);
	CHECK(has(act, AUTOSTOP_DO_PROBE_HANG));
	act = autostop_hang_probed(&a, now + 3.01, true, "");
	CHECK_INT(act.todo, 0);
	CHECK_INT(a.state, AUTOSTOP_RUNNING);
	/* The next silence may be a hang again. */
	act = autostop_upstream_silent(&a, now + 20);
	CHECK(has(act, AUTOSTOP_DO_PROBE_HANG));
	/* Probes that fail after something else took over change nothing. */
	act = autostop_upstream_refused(&a, now + 21, "connection refused");
	CHECK(has(act, AUTOSTOP_DO_HEAL));
	act = autostop_hang_probed(&a, now + 22, false, "timed out");
	CHECK_INT(act.todo, 0);
	CHECK_CONTAINS(a.decision, "docker.sock refused a client (connection refused)");
}

TEST(no_hang_probe_while_frozen_starting_or_stopped)
{
	struct autostop a;
	frozen_idle(&a);
	struct autostop_actions act = autostop_upstream_silent(&a, T0 + 8);
	CHECK_INT(act.todo, 0); /* a frozen engine answers nothing: autostop thaws it itself */
	struct autostop b;
	start_with_clients(&b, 1);
	act = autostop_upstream_silent(&b, T0 + 8);
	CHECK_INT(act.todo, 0);
	struct autostop c;
	autostop_init(&c, "dev", IDLE, false, T0);
	act = autostop_upstream_silent(&c, T0 + 8);
	CHECK_INT(act.todo, 0);
}

TEST(a_heal_that_failed_is_not_redone_for_each_silence)
{
	struct autostop a;
	double now;
	hung_forward_found(&a, &now);
	struct autostop_actions act = autostop_heal_done(
	    &a, now + 1, AUTOSTOP_HEAL_FAILED, "forwarded again, but GET /_ping timed out", 1);
	CHECK(has(act, AUTOSTOP_DO_CLOSE_HELD));
	CHECK_INT(a.state, AUTOSTOP_UNHEALTHY);
	act = autostop_upstream_silent(&a, now + 5);
	CHECK_INT(act.todo, 0);
	/* docker.sock answers a check again: a later hang is worth a heal again. */
	struct autostop_check good = api_ok(0, "");
	autostop_check_done(&a, now + 30, &good);
	act = autostop_upstream_silent(&a, now + 40);
	CHECK(has(act, AUTOSTOP_DO_PROBE_HANG));
}

TEST(a_check_with_no_answer_while_lima_runs_heals)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_check hung = {.api_ok = false, .no_answer = true, .instance_running = true};
	snprintf(hung.error, sizeof hung.error, "timed out");
	struct autostop_actions act = autostop_check_done(&a, now + IDLE, &hung);
	CHECK(has(act, AUTOSTOP_DO_HEAL));
	CHECK(!has(act, AUTOSTOP_DO_ARM_TIMER));
	CHECK(!has(act, AUTOSTOP_DO_START));
	CHECK_INT(a.state, AUTOSTOP_HEALING);
	CHECK_CONTAINS(a.decision, "the Docker API did not answer a check (timed out) "
				   "while dev was running");
	/* Nobody waits: Lima saying it is not running makes it stopped, not started. */
	act = autostop_heal_done(&a, now + IDLE + 3, AUTOSTOP_NOT_RUNNING, "", 0);
	CHECK(!has(act, AUTOSTOP_DO_START));
	CHECK_INT(a.state, AUTOSTOP_DOWN);
	CHECK_INT(a.starts, 0);
	CHECK_CONTAINS(a.decision,
		       "dev is stopped (not by autostop; the Docker API did not answer");
	/* An answer with an error, or Lima not saying it runs: unhealthy, as before. */
	struct autostop b;
	running_idle(&b, &now);
	struct autostop_check http500 = {.api_ok = false, .instance_running = true};
	snprintf(http500.error, sizeof http500.error, "GET /containers/json: HTTP 500");
	act = autostop_check_done(&b, now + IDLE, &http500);
	CHECK(!has(act, AUTOSTOP_DO_HEAL));
	CHECK_INT(b.state, AUTOSTOP_UNHEALTHY);
	struct autostop_check unknown = {.api_ok = false, .no_answer = true};
	act = autostop_check_done(&b, now + 2 * IDLE, &unknown);
	CHECK(!has(act, AUTOSTOP_DO_HEAL));
	CHECK_INT(b.state, AUTOSTOP_UNHEALTHY);
	/* A heal that did not help is redone once per idle period, not at every check. */
	act = autostop_check_done(&b, now + 3 * IDLE, &hung);
	CHECK(has(act, AUTOSTOP_DO_HEAL));
	act = autostop_heal_done(&b, now + 3 * IDLE + 1, AUTOSTOP_HEAL_FAILED, "ssh: timed out", 0);
	CHECK(has(act, AUTOSTOP_DO_ARM_TIMER));
	act = autostop_check_done(&b, now + 3 * IDLE + 2, &hung);
	CHECK(!has(act, AUTOSTOP_DO_HEAL));
	CHECK_INT(b.state, AUTOSTOP_UNHEALTHY);
	act = autostop_check_done(&b, now + 4 * IDLE + 1, &hung);
	CHECK(has(act, AUTOSTOP_DO_HEAL));
}

TEST(a_healed_agent_forward_is_logged)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_actions act = autostop_agent_healed(
	    &a, now + 1, "engine freeze",
	    "/x/sock/vmcost-agent.sock refuses connections (a stale socket file: nobody listens); "
	    "removed the socket file and forwarded it again with ssh -O forward in 0.1 s");
	CHECK(has(act, AUTOSTOP_DO_LOG));
	CHECK_INT(a.agent_heals, 1);
	CHECK_INT(a.state, AUTOSTOP_RUNNING); /* docker.sock's state is not the agent's */
	CHECK_STR(a.decision_kind, "healed");
	CHECK_CONTAINS(a.decision, "dev's vmcost-agent.sock did not answer the engine freeze: "
				   "/x/sock/vmcost-agent.sock refuses connections");
	CHECK_CONTAINS(a.decision, "; asked the agent again");
}

TEST(started_by_hand_is_learned_again)
{
	struct autostop a;
	autostop_init(&a, "dev", IDLE, false, T0);
	struct autostop_actions act;
	CHECK(autostop_client_opened(&a, T0 + 1, &act));
	activity(&a, T0 + 1, AUTOSTOP_QUIET, AUTOSTOP_WORKING);
	act = autostop_upstream_connected(&a, T0 + 1);
	CHECK(has(act, AUTOSTOP_DO_CHECK));
	CHECK_INT(a.state, AUTOSTOP_CHECKING);
	struct autostop_check c = api_ok(0, "");
	act = autostop_check_done(&a, T0 + 1.1, &c);
	CHECK_INT(a.state, AUTOSTOP_RUNNING);
	CHECK(!has(act, AUTOSTOP_DO_ARM_TIMER)); /* the client is still at work */
}

TEST(a_stop_reports_the_ram_it_gave_back)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(&a, now + IDLE, &c);
	CHECK_INT(a.state, AUTOSTOP_STOPPING);
	uint64_t before = (uint64_t)4 << 30;
	autostop_stop_began(&a, before);
	struct autostop_actions act = autostop_stop_exited(&a, now + IDLE + 4, 0, "", 4.2);
	CHECK(has(act, AUTOSTOP_DO_SETTLE));
	CHECK_INT(a.state, AUTOSTOP_STOPPING);
	/* The kernel still frees the VM's pages: 1 GiB at exit, 512 MiB more in the next second. */
	act = autostop_free_sampled(&a, now + IDLE + 4, before + ((uint64_t)1 << 30));
	CHECK(!has(act, AUTOSTOP_DO_END_SETTLE));
	act = autostop_free_sampled(&a, now + IDLE + 5, before + ((uint64_t)1536 << 20));
	CHECK(!has(act, AUTOSTOP_DO_END_SETTLE));
	CHECK_INT(a.state, AUTOSTOP_STOPPING);
	/* 4 MiB in a second is below the shared rule's 8 MiB/s: settled. */
	act = autostop_free_sampled(&a, now + IDLE + 6, before + ((uint64_t)1540 << 20));
	CHECK(has(act, AUTOSTOP_DO_END_SETTLE));
	CHECK_INT(a.state, AUTOSTOP_STOPPED);
	CHECK(a.has_last_freed);
	CHECK_INT(a.last_freed, (int64_t)1540 << 20);
	CHECK_CONTAINS(a.decision, "stopped dev in 4.2 s: host free memory +1.50 GiB");
	CHECK_STR(autostop_state_name(a.state), "stopped by autostop");
}

TEST(a_client_during_the_stop_starts_it_again)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(&a, now + IDLE, &c);
	struct autostop_actions act;
	CHECK(!autostop_client_opened(&a, now + IDLE + 1, &act)); /* held */
	autostop_stop_began(&a, (uint64_t)1 << 30);
	act = autostop_stop_exited(&a, now + IDLE + 4, 0, "", 3);
	/* Free memory still rises, but a client waits: no more samples. */
	act = autostop_free_sampled(&a, now + IDLE + 4, ((uint64_t)1 << 30) + (100 << 20));
	CHECK(has(act, AUTOSTOP_DO_END_SETTLE));
	CHECK(has(act, AUTOSTOP_DO_START));
	CHECK_INT(a.state, AUTOSTOP_STARTING);
	CHECK_CONTAINS(a.decision, "1 client arrived meanwhile");
}

TEST(settling_ends_after_the_last_sample)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(&a, now + IDLE, &c);
	autostop_stop_began(&a, 0); /* host free memory could not be read */
	autostop_stop_exited(&a, now + IDLE + 1, 0, "", 1);
	struct autostop_actions act = {0};
	uint64_t free_now = (uint64_t)1 << 30;
	unsigned n = 0;
	while (!has(act, AUTOSTOP_DO_END_SETTLE) && n < 100) {
		free_now += 100 << 20; /* a host whose free memory keeps rising fast */
		act = autostop_free_sampled(&a, now + IDLE + 1 + n, free_now);
		n++;
	}
	CHECK_INT(n, AUTOSTOP_SETTLE_MAX_SAMPLES);
	CHECK_INT(a.state, AUTOSTOP_STOPPED);
	CHECK_INT(a.last_freed, 0); /* nothing to compare with */
}

TEST(a_failed_stop_checks_again)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(&a, now + IDLE, &c);
	struct autostop_actions act = autostop_stop_exited(&a, now + IDLE + 1, 1, "boom", 1);
	CHECK(has(act, AUTOSTOP_DO_CHECK));
	CHECK_INT(a.state, AUTOSTOP_CHECKING);
	CHECK_CONTAINS(a.decision, "stop of dev failed: limactl stop exited 1: boom");
}

/* ---- issue 22: answers from the snapshot while stopped ------------------------------------ */

#define TAKEN "2026-01-02T03:04:05Z"

/* CHECK_STR for a whole decision line: check.h's message would cut it. */
#define CHECK_LINE(actual, expected)                                                               \
	do {                                                                                       \
		bool same_ = strcmp((actual), (expected)) == 0;                                    \
		CHECK(same_ &&#actual);                                                            \
		if (!same_)                                                                        \
			fprintf(stderr, "  got:  %s\n  want: %s\n", (actual), (expected));         \
	} while (0)

/* dev idle for a whole period, stopped by autostop with a snapshot taken before the stop;
 * free memory settled. *now: when it settled. */
static void stopped_with_snapshot(struct autostop *a, double *now, bool wake_on_any)
{
	running_idle(a, now);
	autostop_set_wake_on_any(a, wake_on_any);
	struct autostop_check c = api_ok(0, "");
	struct autostop_actions act = autostop_check_done(a, *now + IDLE, &c);
	CHECK(has(act, AUTOSTOP_DO_STOP));
	autostop_stop_began(a, (uint64_t)1 << 30);
	if (!wake_on_any)
		autostop_snapshot_set(a, TAKEN); /* the daemon kept it: limactl stop exited 0 */
	act = autostop_stop_exited(a, *now + IDLE + 2, 0, "", 2);
	CHECK(has(act, AUTOSTOP_DO_SETTLE));
	act = autostop_free_sampled(a, *now + IDLE + 2, (uint64_t)2 << 30);
	act = autostop_free_sampled(a, *now + IDLE + 3, (uint64_t)2 << 30);
	CHECK(has(act, AUTOSTOP_DO_END_SETTLE));
	CHECK_INT(a->state, AUTOSTOP_STOPPED);
	*now += IDLE + 3;
}

/* One client connection carrying polls: each answered without docker.sock. */
static void poll_locally(struct autostop *a, double t, unsigned polls)
{
	struct autostop_actions act;
	for (unsigned i = 0; i < polls; i++) {
		CHECK(autostop_snapshot_answers(a));
		act = activity(a, t + i, AUTOSTOP_QUIET, AUTOSTOP_POLLING);
		CHECK(!has(act, AUTOSTOP_DO_START));
		autostop_snapshot_answered(a);
		act = activity(a, t + i + 0.001, AUTOSTOP_POLLING, AUTOSTOP_QUIET);
		CHECK(!has(act, AUTOSTOP_DO_START));
		CHECK(!has(act, AUTOSTOP_DO_CHECK));
	}
}

TEST(polls_while_stopped_are_answered_from_the_snapshot_without_a_start)
{
	struct autostop a;
	double now;
	stopped_with_snapshot(&a, &now, false);
	CHECK_CONTAINS(a.decision, "stopped dev in 2.0 s: host free memory +1.00 GiB; polls are "
				   "answered from the snapshot of 2026-01-02T03:04:05Z");
	/* An IDE polls every 5 s for ten minutes, one connection each time. */
	for (double t = now + 5; t < now + 600; t += 5) {
		struct autostop_actions act;
		CHECK(autostop_client_opened(&a, t, &act)); /* connected: refused, then served */
		CHECK(!has(act, AUTOSTOP_DO_START));
		poll_locally(&a, t, 1);
		act = autostop_client_closed(&a, t + 0.01);
		CHECK(!has(act, AUTOSTOP_DO_START));
	}
	CHECK_INT(a.state, AUTOSTOP_STOPPED);
	CHECK_INT(a.starts, 0);
	CHECK_INT(a.snapshot_answers, 119);
}

TEST(a_request_after_polls_on_one_connection_starts_it)
{
	struct autostop a;
	double now;
	stopped_with_snapshot(&a, &now, false);
	struct autostop_actions act;
	CHECK(autostop_client_opened(&a, now + 10, &act));
	poll_locally(&a, now + 10, 3); /* HEAD /_ping, GET /version, GET /containers/json */
	CHECK_INT(a.starts, 0);
	act = activity(&a, now + 14, AUTOSTOP_QUIET, AUTOSTOP_WORKING); /* POST ... create */
	act = autostop_snapshot_missed(&a, now + 14, "POST /v1.43/containers/create", "not a poll");
	CHECK(has(act, AUTOSTOP_DO_START));
	CHECK(has(act, AUTOSTOP_DO_LOG));
	CHECK_INT(a.state, AUTOSTOP_STARTING);
	CHECK_STR(a.decision_kind, "start");
	CHECK_LINE(a.decision, "starting dev: the snapshot does not answer POST "
			       "/v1.43/containers/create (not a poll); limactl start dev");
	CHECK(autostop_snapshot_answers(&a)); /* starting: new clients' polls are still answered */
	/* Docker answers: the held connection is relayed, from the request's first byte. */
	act = autostop_ping_answered(&a, now + 30, 1);
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	CHECK_INT(a.starts, 1);
}

TEST(a_poll_the_snapshot_cannot_answer_starts_it)
{
	struct autostop a;
	double now;
	stopped_with_snapshot(&a, &now, false);
	struct autostop_actions act =
	    autostop_snapshot_missed(&a, now + 1, "GET /containers/json?filters=...",
				     "filters={...} is not applied to the snapshot");
	CHECK(has(act, AUTOSTOP_DO_START));
	CHECK_CONTAINS(a.decision, "(filters={...} is not applied to the snapshot)");
}

/* Until Docker answers after the start, nothing has changed what the snapshot says: a new
 * client is held and served from it; its first miss waits for the start like the rest. */
TEST(while_it_starts_the_snapshot_still_answers_until_docker_does)
{
	struct autostop a;
	double now;
	stopped_with_snapshot(&a, &now, false);
	struct autostop_actions act =
	    autostop_snapshot_missed(&a, now + 1, "POST /containers/create", "not a poll");
	CHECK(has(act, AUTOSTOP_DO_START));
	CHECK_INT(a.state, AUTOSTOP_STARTING);
	CHECK(autostop_snapshot_answers(&a));
	CHECK(!autostop_client_opened(&a, now + 2, &act)); /* held, and served from it */
	CHECK(!has(act, AUTOSTOP_DO_START));
	act = autostop_snapshot_missed(&a, now + 3, "GET /containers/x/json", "not a poll");
	CHECK(!has(act, AUTOSTOP_DO_START)); /* one start */
	CHECK(!has(act, AUTOSTOP_DO_CONNECT_HELD));
	act = autostop_ping_answered(&a, now + 40, 2);
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	CHECK(!autostop_snapshot_answers(&a));
	/* limactl start is still finishing: a miss now goes on to Docker at once. */
	act = autostop_snapshot_missed(&a, now + 41, "GET /_ping", "no snapshot holds any more");
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	CHECK(!has(act, AUTOSTOP_DO_START));
}

TEST(wake_on_any_starts_on_a_poll)
{
	struct autostop a;
	double now;
	stopped_with_snapshot(&a, &now, true);
	CHECK_LINE(a.decision, "stopped dev in 2.0 s: host free memory +1.00 GiB");
	/* Even with a snapshot at hand, --wake-on-any does not answer from it. */
	autostop_snapshot_set(&a, TAKEN);
	CHECK(!autostop_snapshot_answers(&a));
	struct autostop_actions act;
	CHECK(autostop_client_opened(&a, now + 5, &act));
	activity(&a, now + 5, AUTOSTOP_QUIET, AUTOSTOP_POLLING); /* GET /_ping, held */
	act = autostop_upstream_refused(&a, now + 5, "connection refused");
	CHECK(has(act, AUTOSTOP_DO_START));
	CHECK_CONTAINS(a.decision, "starting dev: a client is waiting and dev is stopped by "
				   "autostop");
}

TEST(without_a_snapshot_a_poll_starts_it)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(&a, now + IDLE, &c);
	autostop_stop_began(&a, 0);
	autostop_stop_exited(&a, now + IDLE + 1, 0, "", 1); /* the snapshot failed: none kept */
	CHECK(!autostop_snapshot_answers(&a));
	struct autostop_actions act;
	CHECK(!autostop_client_opened(&a, now + IDLE + 1.5, &act)); /* held while it settles */
	act = autostop_free_sampled(&a, now + IDLE + 2, 1 << 20);
	CHECK(has(act, AUTOSTOP_DO_START));
}

TEST(while_free_memory_settles_the_snapshot_already_answers)
{
	struct autostop a;
	double now;
	running_idle(&a, &now);
	struct autostop_check c = api_ok(0, "");
	autostop_check_done(&a, now + IDLE, &c);
	struct autostop_actions act;
	/* A client during limactl stop is held: Docker is going. */
	CHECK(!autostop_client_opened(&a, now + IDLE + 0.5, &act));
	autostop_stop_began(&a, (uint64_t)1 << 30);
	autostop_snapshot_set(&a, TAKEN);
	act = autostop_stop_exited(&a, now + IDLE + 2, 0, "", 2);
	/* Stopped: the held client goes to docker.sock, is refused, and the snapshot serves it. */
	CHECK(has(act, AUTOSTOP_DO_CONNECT_HELD));
	CHECK(has(act, AUTOSTOP_DO_SETTLE));
	CHECK(autostop_snapshot_answers(&a));
	CHECK(autostop_client_opened(&a, now + IDLE + 2.5, &act));
	/* Served clients do not cut the settling short, nor start anything. */
	act = autostop_free_sampled(&a, now + IDLE + 2, (uint64_t)1536 << 20);
	CHECK(!has(act, AUTOSTOP_DO_END_SETTLE));
	CHECK(!has(act, AUTOSTOP_DO_START));
	act = autostop_free_sampled(&a, now + IDLE + 3, (uint64_t)2 << 30);
	CHECK(!has(act, AUTOSTOP_DO_END_SETTLE));
	/* Then one sends a request it does not hold: the gain so far counts, and it starts. */
	act =
	    autostop_snapshot_missed(&a, now + IDLE + 3.5, "POST /containers/create", "not a poll");
	CHECK(has(act, AUTOSTOP_DO_END_SETTLE));
	CHECK(has(act, AUTOSTOP_DO_START));
	CHECK_INT(a.state, AUTOSTOP_STARTING);
	CHECK_INT(a.last_freed, (int64_t)1 << 30);
	CHECK_LINE(a.decision, "stopped dev in 2.0 s (host free memory +1.00 GiB); then the "
			       "snapshot did not answer POST /containers/create (not a poll): "
			       "limactl start dev");
}

TEST(a_snapshot_found_at_start_up_means_stopped_by_autostop)
{
	struct autostop a;
	autostop_init(&a, "dev", IDLE, false, T0);
	struct autostop_actions act = autostop_snapshot_loaded(&a, T0, TAKEN);
	CHECK_INT(a.state, AUTOSTOP_STOPPED);
	CHECK(has(act, AUTOSTOP_DO_LOG));
	CHECK_LINE(a.decision, "dev is stopped by autostop: polls are answered from the snapshot "
			       "of 2026-01-02T03:04:05Z; any other request starts it");
	CHECK(autostop_snapshot_answers(&a));
	act = autostop_snapshot_missed(&a, T0 + 1, "POST /build", "not a poll");
	CHECK(has(act, AUTOSTOP_DO_START));
	/* Once Docker answers the daemon drops it: nothing is answered from it any more. */
	autostop_ping_answered(&a, T0 + 20, 1);
	autostop_snapshot_set(&a, NULL);
	autostop_start_exited(&a, T0 + 21, 0, "", 0);
	CHECK_INT(a.state, AUTOSTOP_RUNNING);
	CHECK(!autostop_snapshot_answers(&a));

	/* With --wake-on-any a stopped instance is waited for, as without a snapshot. */
	autostop_init(&a, "dev", IDLE, false, T0);
	autostop_set_wake_on_any(&a, true);
	act = autostop_snapshot_loaded(&a, T0, TAKEN);
	CHECK_INT(a.state, AUTOSTOP_DOWN);
	CHECK(!has(act, AUTOSTOP_DO_LOG));
	CHECK(!autostop_snapshot_answers(&a));
}

TEST(container_list_parsing)
{
	struct autostop_check c;
	const char *two = "[{\"Id\":\"0123456789abcdef\",\"Names\":[\"/pg\"]},"
			  "{\"Id\":\"fedcba9876543210ff\"}]";
	CHECK_INT(probe_parse_containers(two, strlen(two), &c), 0);
	CHECK_INT(c.running, 2);
	CHECK_STR(c.names, "pg, fedcba987654");
	CHECK_INT(probe_parse_containers("[]", 2, &c), 0);
	CHECK_INT(c.running, 0);
	CHECK_STR(c.names, "");
	CHECK_INT(probe_parse_containers("{\"message\":\"x\"}", 15, &c), -1);
	CHECK_INT(probe_parse_containers("garbage", 7, &c), -1);
}

int main(void)
{
	RUN(stops_after_a_whole_idle_period);
	RUN(an_early_check_rearms_for_the_rest_of_the_period);
	RUN(a_running_container_keeps_it_up_and_restarts_the_period);
	RUN(a_client_at_work_keeps_it_up);
	RUN(a_burst_of_short_clients_asks_the_docker_api_once_after_it);
	RUN(polls_every_five_seconds_do_not_keep_it_up);
	RUN(a_poll_in_flight_delays_the_stop_without_restarting_the_period);
	RUN(work_after_polls_restarts_the_period);
	RUN(requests_are_told_apart);
	RUN(freeze_after_freezes_once_then_stops_at_the_end);
	RUN(an_early_timer_while_frozen_rearms_without_waking_the_engine);
	RUN(a_client_while_frozen_is_held_until_the_engine_is_thawed);
	RUN(a_thaw_the_agent_does_not_answer_still_lets_the_clients_go);
	RUN(a_connection_kept_open_across_the_freeze_thaws_it_when_it_speaks);
	RUN(with_a_snapshot_polls_while_frozen_are_answered_and_other_requests_thaw);
	RUN(with_wake_on_any_a_frozen_engine_serves_no_snapshot);
	RUN(a_client_during_the_freeze_is_held_and_thawed_for_at_once);
	RUN(the_period_ending_during_the_freeze_thaws_then_checks);
	RUN(work_thaws_and_the_next_period_freezes_again);
	RUN(a_refused_freeze_is_logged_and_not_retried_in_the_period);
	RUN(a_busy_agent_is_asked_again_later_in_the_period);
	RUN(never_stops_what_it_did_not_see_healthy);
	RUN(a_vm_stopped_by_hand_is_waited_for_not_stopped);
	RUN(init_with_a_stopped_instance_waits_for_a_client);
	RUN(ten_clients_share_one_start);
	RUN(limactl_done_before_docker_answers_keeps_pinging);
	RUN(never_stops_during_a_start);
	RUN(a_failed_start_closes_the_held_clients);
	RUN(a_start_that_never_answers_times_out);
	RUN(limactl_missing_is_a_failed_start);
	RUN(the_vm_went_away_behind_its_back);
	RUN(a_dead_forward_is_healed_not_started);
	RUN(a_forward_that_cannot_be_healed_closes_the_held_clients);
	RUN(a_forward_that_hangs_is_healed_not_started);
	RUN(a_slow_request_is_not_a_hung_forward);
	RUN(no_hang_probe_while_frozen_starting_or_stopped);
	RUN(a_heal_that_failed_is_not_redone_for_each_silence);
	RUN(a_check_with_no_answer_while_lima_runs_heals);
	RUN(a_healed_agent_forward_is_logged);
	RUN(started_by_hand_is_learned_again);
	RUN(a_stop_reports_the_ram_it_gave_back);
	RUN(a_client_during_the_stop_starts_it_again);
	RUN(settling_ends_after_the_last_sample);
	RUN(a_failed_stop_checks_again);
	RUN(polls_while_stopped_are_answered_from_the_snapshot_without_a_start);
	RUN(a_request_after_polls_on_one_connection_starts_it);
	RUN(a_poll_the_snapshot_cannot_answer_starts_it);
	RUN(while_it_starts_the_snapshot_still_answers_until_docker_does);
	RUN(wake_on_any_starts_on_a_poll);
	RUN(without_a_snapshot_a_poll_starts_it);
	RUN(while_free_memory_settles_the_snapshot_already_answers);
	RUN(a_snapshot_found_at_start_up_means_stopped_by_autostop);
	RUN(container_list_parsing);
	return check_done();
}
