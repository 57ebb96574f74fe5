/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What `vmcost autostop` decides, without sockets or processes: every event (a client opened
 * or closed, a check of the Docker API answered, limactl exited, a timer fired) goes in with
 * the time, and out come the actions the daemon must take and, for each decision, one log line.
 * The rules (issues 12 and 22):
 *   - stop only when, for the whole idle period, no client was at work and the Docker API
 *     reported no running container; the period starts when a check finds both true;
 *   - a client is at work while one of its requests other than a poll (autostop_request_kind)
 *     waits for its response or streams, or its connection was hijacked or upgraded (attach,
 *     exec, BuildKit); polls and a kept-alive connection between requests are not work;
 *   - never stop an instance not seen running and healthy (answering), never during a start;
 *   - a client that finds docker.sock refusing is held while one shared start runs, until
 *     /_ping answers; a failed or timed-out start closes the held clients;
 *   - docker.sock refusing while the VM was seen running is first taken for a dead forward:
 *     held clients wait while Lima is asked, and the forward re-created if the VM still runs;
 *     limactl start only runs when Lima says it does not;
 *   - so is a docker.sock that accepts and then hangs: a relayed client that has had no byte of
 *     answer for AUTOSTOP_SILENT_S makes the daemon ask /_ping on a new connection, and when
 *     that gets no answer either, the clients still waiting for a first byte are held again
 *     (those that sent only polls; their bytes go again once healed) and the forward healed;
 *     a check that gets no answer while Lima says the instance runs heals it the same way;
 *     neither ever starts a running instance;
 *   - after a stop, host free memory is sampled until it settles (lib/settle.h, the rule
 *     memtest uses) or a client waits: the gain is what the stop gave back;
 *   - while stopped by autostop, polls are answered from the snapshot of the Docker API taken
 *     just before the stop (snapshot.h), unless --wake-on-any: only a request the snapshot
 *     cannot answer starts the VM.
 */
#ifndef VMC_AUTOSTOP_STATE_H
#define VMC_AUTOSTOP_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum autostop_state {
	AUTOSTOP_CHECKING,  /* started up, or something changed: asking the Docker API */
	AUTOSTOP_RUNNING,   /* seen answering: the only state that can lead to a stop */
	AUTOSTOP_UNHEALTHY, /* Lima runs it but Docker does not answer: never stopped */
	AUTOSTOP_STARTING,  /* limactl start runs, or /_ping has not answered yet */
	AUTOSTOP_STOPPING,  /* limactl stop runs, then host free memory settles */
	AUTOSTOP_STOPPED,   /* stopped by autostop */
	AUTOSTOP_DOWN,	    /* not running, and not stopped by autostop */
	AUTOSTOP_HEALING,   /* docker.sock refused or hung while the VM was running: asking
			       Lima, and re-creating the forward if the VM still runs */
};

/* Actions, combined in a bit mask. */
enum autostop_action {
	AUTOSTOP_DO_CHECK = 1 << 0,	   /* ask the Docker API: health and running containers */
	AUTOSTOP_DO_ARM_TIMER = 1 << 1,	   /* (re)arm the idle timer for timer_s */
	AUTOSTOP_DO_DISARM_TIMER = 1 << 2, /* no idle timer: not idle */
	AUTOSTOP_DO_START = 1 << 3,	   /* run limactl start NAME, ping until it answers */
	AUTOSTOP_DO_STOP = 1 << 4,	   /* close the quiet client connections (kept alive
					      between requests), run limactl stop NAME */
	AUTOSTOP_DO_SETTLE = 1 << 5,	   /* sample host free memory now and every
					      AUTOSTOP_SETTLE_INTERVAL_S: autostop_free_sampled */
	AUTOSTOP_DO_CONNECT_HELD = 1 << 6, /* connect every held client to docker.sock */
	AUTOSTOP_DO_CLOSE_HELD = 1 << 7,   /* close every held client: the start failed */
	AUTOSTOP_DO_END_START = 1 << 8,	   /* stop pinging and the start deadline */
	AUTOSTOP_DO_LOG = 1 << 9,	   /* a decision was made: log state->decision */
	AUTOSTOP_DO_END_SETTLE = 1 << 10,  /* stop sampling host free memory */
	AUTOSTOP_DO_FREEZE = 1 << 12,	   /* POST /v1/engine/freeze to the agent:
					      autostop_freeze_done */
	AUTOSTOP_DO_HEAL = 1 << 11, /* ask Lima whether it runs; if so re-create docker.sock's
				       forward: autostop_heal_done */
	AUTOSTOP_DO_THAW = 1 << 13, /* POST /v1/engine/thaw to the agent: autostop_thaw_done */
	AUTOSTOP_DO_PROBE_HANG = 1 << 14,  /* GET /_ping on a new connection to docker.sock:
					      autostop_hang_probed */
	AUTOSTOP_DO_HOLD_SILENT = 1 << 15, /* hold again every relayed client still waiting for
					      docker.sock's first byte that sent only polls (the
					      heal that follows relays their bytes again) */
};

/*
 * The guest's Docker engine as autostop froze and thawed it (--freeze-after). Autostop thaws it
 * itself before it relays a client or stops the VM; the agent's guard on the guest's docker.sock
 * only serves clients that come through Lima's forward directly.
 */
enum autostop_engine {
	AUTOSTOP_ENGINE_UNKNOWN,  /* the VM is not seen running (or a thaw went unanswered) */
	AUTOSTOP_ENGINE_RUNNING,  /* seen answering, not frozen by autostop */
	AUTOSTOP_ENGINE_FREEZING, /* the freeze was asked for: new clients are held */
	AUTOSTOP_ENGINE_FROZEN,	  /* the agent froze it */
	AUTOSTOP_ENGINE_THAWING,  /* the thaw was asked for: new clients are held */
};
const char *autostop_engine_name(enum autostop_engine e);

/* How the agent answered POST /v1/engine/freeze. */
enum autostop_freeze_result {
	AUTOSTOP_FREEZE_OK,	 /* 200: frozen */
	AUTOSTOP_FREEZE_REFUSED, /* answered with a reason (409: a container runs...): not again in
				    this idle period */
	AUTOSTOP_FREEZE_BUSY,	/* 503: the agent is busy; asked again AUTOSTOP_FREEZE_RETRY_S later
				 */
	AUTOSTOP_FREEZE_FAILED, /* no answer (no agent in the guest, its forward is dead) */
};

/* A freeze the agent was too busy for (503) is asked for again this much later. */
#define AUTOSTOP_FREEZE_RETRY_S 5.0

/* What became of a dead docker.sock (forward.h). */
enum autostop_heal {
	AUTOSTOP_HEALED,      /* forwarded again (or it answered again by itself) */
	AUTOSTOP_NOT_RUNNING, /* Lima says the instance is not running: it went away */
	AUTOSTOP_HEAL_FAILED, /* Lima runs it, but the forward could not be made to answer */
};

/* A relayed client that has had no byte of docker.sock's answer for this long makes autostop
 * ask /_ping on a new connection: a slow request, or a forward that accepts and hangs. */
#define AUTOSTOP_SILENT_S 2.0

/* Host free memory after a stop: one sample at once, then one a second, at most this many. */
#define AUTOSTOP_SETTLE_INTERVAL_S  1.0
#define AUTOSTOP_SETTLE_MAX_SAMPLES 15

/* The last client closed this long ago before the Docker API is asked whether it is idle. */
#define AUTOSTOP_QUIET_S 1.0

struct autostop_actions {
	unsigned todo;	/* enum autostop_action bits */
	double timer_s; /* with AUTOSTOP_DO_ARM_TIMER */
};

/* What a request on a client connection is, from its method and target (request line). */
enum autostop_request {
	AUTOSTOP_REQ_POLL,   /* read-only listing: does not keep the VM up */
	AUTOSTOP_REQ_WORK,   /* anything else */
	AUTOSTOP_REQ_HIJACK, /* the connection carries a raw stream after this request */
};

/*
 * Polls: HEAD of anything, and GET of /_ping, /version, /info, /containers/json,
 * /images/json, /volumes, /networks, /system/df, each with an optional /vX.Y prefix and any
 * query. Hijacks: attach (POST /containers/ID/attach), exec start (POST /exec/ID/start),
 * BuildKit's /session and /grpc, and any request asking for an upgrade.
 */
enum autostop_request autostop_request_kind(const char *method, const char *target, bool upgrade);

/* What a client connection does now, as far as idleness goes. */
enum autostop_activity {
	AUTOSTOP_QUIET,	  /* between requests, or not a word yet */
	AUTOSTOP_POLLING, /* polls wait for their answers: a stop waits for them, the idle
			     period goes on */
	AUTOSTOP_WORKING, /* work in flight, a stream, or a hijacked connection */
};

/* What one check of the Docker API found. */
struct autostop_check {
	bool api_ok;	       /* GET /containers/json answered */
	unsigned running;      /* running containers */
	char names[200];       /* "pg, fdb" (may be truncated) */
	char error[200];       /* why the API did not answer */
	bool instance_stopped; /* Lima says the instance is stopped (when !api_ok) */
	bool instance_running; /* Lima says the instance runs (when !api_ok) */
	bool no_answer;	       /* no HTTP answer at all: refused, timed out, reset (when !api_ok) */
};

/* Host free memory around a stop (bytes; 0 = could not be read). */
struct autostop_settle {
	uint64_t before;     /* just before limactl stop */
	uint64_t best, last; /* after it: the highest so far, the latest */
	double last_t;
	unsigned samples;
};

struct autostop {
	enum autostop_state state;
	double state_since;
	double idle_period;  /* seconds */
	char name[256];	     /* instance, for log lines */
	unsigned clients;    /* open client connections, held ones included */
	unsigned working;    /* of them, AUTOSTOP_WORKING */
	unsigned polling;    /* of them, AUTOSTOP_POLLING */
	double idle_since;   /* > 0: since then no client, no running container */
	unsigned containers; /* running containers at the last check */
	bool checked_once;   /* a check answered since the daemon started */
	/* the start in progress */
	double start_began;
	bool ping_answered, limactl_done;
	/* what the status shows */
	bool has_last_start;
	double last_start_s; /* start decision to the first /_ping answer */
	bool has_last_freed;
	int64_t last_freed; /* host free-memory gain of the last stop (bytes) */
	double last_stop_s; /* limactl stop's own duration */
	struct autostop_settle settle;
	unsigned starts, stops, heals, agent_heals;
	/* the snapshot polls are answered from while stopped (snapshot.h) */
	bool wake_on_any;	   /* --wake-on-any: no snapshot, every request starts the VM */
	bool snapshot;		   /* one is at hand: taken before autostop's last stop */
	char snapshot_taken[32];   /* its time, RFC 3339 */
	unsigned snapshot_answers; /* polls answered from it */
	bool stop_done;		   /* limactl stop exited 0; free memory may still settle */
	/* deep idle (--freeze-after) */
	double freeze_after;	/* seconds idle before the engine is frozen; 0: never */
	bool freeze_tried;	/* asked to freeze in this idle period: not again in it */
	double freeze_retry_at; /* > 0: the agent was busy; ask again from then on */
	enum autostop_engine engine;
	bool thaw_wanted;	/* a client came while freezing: thaw as soon as it froze */
	bool thaw_for_stop;	/* the thaw in flight is the one before the period's check */
	char thaw_why[64];	/* what the thaw in flight is for, for the log */
	unsigned freezes;	/* freezes the agent carried out */
	double frozen_since;	/* when the engine froze (FROZEN, THAWING) */
	double frozen_total;	/* seconds frozen, freezes that ended */
	char heal_cause[300];	/* why docker.sock is being healed ("docker.sock refused a
				   client (connection refused)"), while healing */
	bool hang_probing;	/* the /_ping of AUTOSTOP_DO_PROBE_HANG is in flight */
	bool hang_heal_failed;	/* a heal failed: no heal for a hang until a check answers */
	double healed_at;	/* when the last heal of docker.sock ended (a check heals at most
				   once per idle period) */
	char decision_kind[16]; /* "start", "stop", "stay-up", "idle", "ready", "failed", ... */
	char decision[400];	/* the last decision, one line */
	char logged[400];	/* the last line logged, and when: see decide() */
	double logged_at;
};

const char *autostop_state_name(enum autostop_state s);

/* instance_running: Lima's status when the daemon starts. */
struct autostop_actions autostop_init(struct autostop *a, const char *name, double idle_period,
				      bool instance_running, double now);

/* A client connected. Returns true when it should be connected to docker.sock now, false
 * when it is held (a start, a stop or a thaw of the engine is under way, or the engine is
 * frozen and the snapshot serves it: autostop_frozen_snapshot_serves). */
bool autostop_client_opened(struct autostop *a, double now, struct autostop_actions *act);
struct autostop_actions autostop_client_closed(struct autostop *a, double now);

/*
 * Deep idle (--freeze-after): once per idle period, after this many seconds of it, the Docker
 * engine in the guest is frozen through vmcost-agent (POST /v1/engine/freeze). A client that
 * arrives meanwhile is held while the engine is thawed (AUTOSTOP_DO_THAW), and so is a
 * connection kept open across the freeze once it sends a request; at the period's end the engine
 * is thawed before the check that leads to the stop. 0, or not shorter than the idle period:
 * never. With a snapshot taken just before the freeze (autostop_snapshot_set while FREEZING),
 * a new client is served from it instead while the engine stays frozen, as while the VM is
 * stopped: a frozen engine changes nothing, so the snapshot is exact; the first request it does
 * not answer thaws the engine (autostop_snapshot_missed).
 */
void autostop_set_freeze_after(struct autostop *a, double seconds);
/* The agent's answer to the freeze; why: its reason, or what failed. */
struct autostop_actions autostop_freeze_done(struct autostop *a, double now,
					     enum autostop_freeze_result result, const char *why);
/* The agent's answer to the thaw (ok: 200); held: clients held for it, now to be relayed. */
struct autostop_actions autostop_thaw_done(struct autostop *a, double now, bool ok, const char *why,
					   unsigned held);
/* Seconds the engine has been frozen so far, this freeze (0 when it is not frozen). */
double autostop_frozen_for(const struct autostop *a, double now);

/* A client connection's activity changed (the daemon reports each change, and a closing
 * connection's last activity as a change to AUTOSTOP_QUIET before it closes). */
struct autostop_actions autostop_client_activity(struct autostop *a, double now,
						 enum autostop_activity was,
						 enum autostop_activity is);
/* The same for a client served from the snapshot (never reaching dockerd): it counts, but its
 * requests do not thaw the engine; what the snapshot cannot answer does (snapshot_missed). */
struct autostop_actions autostop_local_activity(struct autostop *a, double now,
						enum autostop_activity was,
						enum autostop_activity is);

/* A client's connect to docker.sock failed (why: "connection refused"). */
struct autostop_actions autostop_upstream_refused(struct autostop *a, double now, const char *why);
/* The heal asked for with AUTOSTOP_DO_HEAL is over (why: what failed, or what was healed;
 * held: the clients held for it). NOT_RUNNING starts the VM only when a client waits. */
struct autostop_actions autostop_heal_done(struct autostop *a, double now,
					   enum autostop_heal result, const char *why,
					   unsigned held);

/*
 * A relayed client has had no byte of docker.sock's answer for AUTOSTOP_SILENT_S (the daemon
 * tells each silence once, and not one that began before docker.sock last answered). Asks for
 * AUTOSTOP_DO_PROBE_HANG when a hung forward is worth ruling out: the VM seen running, its
 * engine not frozen by autostop, no probe or heal under way.
 */
struct autostop_actions autostop_upstream_silent(struct autostop *a, double now);
/* The answer to that /_ping: answered (200), or why not ("timed out: ..."). Unanswered,
 * the forward is healed (AUTOSTOP_DO_HEAL) and the silent clients held for it. */
struct autostop_actions autostop_hang_probed(struct autostop *a, double now, bool answered,
					     const char *why);

/* vmcost-agent.sock did not answer a request (what: "engine freeze") and its forward was
 * re-created (how: what was found and done); the request was sent once more, and its answer
 * comes next (autostop_freeze_done, autostop_thaw_done). */
struct autostop_actions autostop_agent_healed(struct autostop *a, double now, const char *what,
					      const char *how);

/* A client's connect to docker.sock succeeded. */
struct autostop_actions autostop_upstream_connected(struct autostop *a, double now);

struct autostop_actions autostop_check_done(struct autostop *a, double now,
					    const struct autostop_check *c);
struct autostop_actions autostop_timer_fired(struct autostop *a, double now);

/* During a start: /_ping answered; limactl start exited (last_line: its last output line). */
struct autostop_actions autostop_ping_answered(struct autostop *a, double now, unsigned held);
struct autostop_actions autostop_start_exited(struct autostop *a, double now, int exit_code,
					      const char *last_line, unsigned held);
struct autostop_actions autostop_start_timed_out(struct autostop *a, double now, double timeout_s,
						 unsigned held);
/* limactl start could not even be run (why: "limactl is not on PATH"). */
struct autostop_actions autostop_start_failed(struct autostop *a, double now, const char *why,
					      unsigned held);

/* Host free memory just before limactl stop runs (0 when it cannot be read). */
void autostop_stop_began(struct autostop *a, uint64_t host_free);
struct autostop_actions autostop_stop_exited(struct autostop *a, double now, int exit_code,
					     const char *last_line, double took_s);
/* One sample of host free memory after the stop (AUTOSTOP_DO_SETTLE); once it settled, the
 * gain is logged and kept for the status. */
struct autostop_actions autostop_free_sampled(struct autostop *a, double now, uint64_t host_free);

/* --wake-on-any: every request starts a stopped VM, no poll is answered from a snapshot. */
void autostop_set_wake_on_any(struct autostop *a, bool on);
/* A snapshot of the Docker API's answers to polls is at hand (taken: its RFC 3339 time), or
 * none any more (NULL): the daemon keeps one from autostop's stop until the VM answers again. */
void autostop_snapshot_set(struct autostop *a, const char *taken);
/* At start-up, the instance is stopped and the snapshot autostop's last stop left is valid:
 * it is stopped by autostop, and polls are answered from it. */
struct autostop_actions autostop_snapshot_loaded(struct autostop *a, double now, const char *taken);
/* Whether a client is served from the snapshot now, with a snapshot and without
 * --wake-on-any: stopped by autostop (or settling after its stop; a client docker.sock
 * refuses), starting until Docker answers (a new client, held meanwhile), or running with the
 * engine frozen (autostop_frozen_snapshot_serves). */
bool autostop_snapshot_answers(const struct autostop *a);
/* Running with the engine frozen and a snapshot of it: a new client is served from it. */
bool autostop_frozen_snapshot_serves(const struct autostop *a);
/* A poll was answered from the snapshot. */
void autostop_snapshot_answered(struct autostop *a);
/* A request the snapshot does not answer (request: "POST /containers/create", why: the
 * snapshot's reason): the VM must start for it, or the frozen engine thaw for it. */
struct autostop_actions autostop_snapshot_missed(struct autostop *a, double now,
						 const char *request, const char *why);

/* Seconds idle so far (0 when not idle). */
double autostop_idle_for(const struct autostop *a, double now);

#endif
