/* SPDX-License-Identifier: Apache-2.0 */
#include "autostop/snapshot.h"

#include "jsonutil.h"
#include "message.h"
#include "readfile.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The file: {"format", "instance", "taken", "api_version", "versions": ["1.41"],
 * "answers": {"GET /v1.41/version": {"headers": {"Api-Version": "1.41", ...}, "body": "..."}},
 * "exits": {"<id>": {"FinishedAt": "...", "ExitCode": 0}}}. Bodies are kept as Docker sent them.
 */
#define SNAPSHOT_FORMAT "vmcost-autostop-snapshot/1"
/* One request of the snapshot may take this long (a /system/df on many images is slow). */
#define SNAPSHOT_REQUEST_MS 10000L

struct snapshot {
	json_t *doc;
};

/* What each recorded poll is asked with, under every version prefix. */
static const char *const recorded_paths[] = {
    "/version",	 "/info",      "/containers/json?all=1", "/images/json", "/volumes",
    "/networks", "/system/df",
};

static void rfc3339(time_t t, char *buf, size_t size)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* An HTTP date (RFC 9110's IMF-fixdate), in English whatever the locale. */
static void http_date(time_t t, char *buf, size_t size)
{
	static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	struct tm tm;
	gmtime_r(&t, &tm);
	vmc_textf(buf, size, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday % 7],
		  tm.tm_mday, months[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
		  tm.tm_sec);
}

/* RFC 3339 ("2024-05-01T10:00:00.123456789Z", or with +02:00) into seconds since the epoch;
 * false for anything else, and for Go's zero time (year 1: "never"). */
static bool parse_rfc3339(const char *s, double *out)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	int n = 0;
	if (!s ||
	    sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    n != 19 || tm.tm_year <= 1)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	double frac = 0;
	const char *p = s + n;
	if (*p == '.') {
		double scale = 0.1;
		for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
			frac += (*p - '0') * scale;
	}
	long offset = 0;
	if (*p == '+' || *p == '-') {
		int hh, mm, m = 0;
		if (sscanf(p + 1, "%2d:%2d%n", &hh, &mm, &m) != 2 || m != 5 || p[6] != '\0')
			return false;
		offset = (*p == '-' ? -1 : 1) * (hh * 3600L + mm * 60L);
	} else if (strcmp(p, "Z") != 0) {
		return false;
	}
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return false;
	*out = (double)t - (double)offset + frac;
	return true;
}

void snapshot_human_duration(double seconds, char *buf, size_t size)
{
	long long s = (long long)seconds;
	long long minutes = (long long)(seconds / 60);
	long long hours = llround(seconds / 3600);
	if (s < 1)
		vmc_textf(buf, size, "Less than a second");
	else if (s == 1)
		vmc_textf(buf, size, "1 second");
	else if (s < 60)
		vmc_textf(buf, size, "%lld seconds", s);
	else if (minutes == 1)
		vmc_textf(buf, size, "About a minute");
	else if (minutes < 60)
		vmc_textf(buf, size, "%lld minutes", minutes);
	else if (hours == 1)
		vmc_textf(buf, size, "About an hour");
	else if (hours < 48)
		vmc_textf(buf, size, "%lld hours", hours);
	else if (hours < 24 * 7 * 2)
		vmc_textf(buf, size, "%lld days", hours / 24);
	else if (hours < 24 * 30 * 2)
		vmc_textf(buf, size, "%lld weeks", hours / 24 / 7);
	else if (hours < 24 * 365 * 2)
		vmc_textf(buf, size, "%lld months", hours / 24 / 30);
	else
		vmc_textf(buf, size, "%lld years", (long long)(seconds / 3600) / 24 / 365);
}

/* ---- building ------------------------------------------------------------------------------ */

struct snapshot *snapshot_new(const char *instance, time_t taken)
{
	struct snapshot *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	char when[32];
	rfc3339(taken, when, sizeof when);
	s->doc =
	    json_pack("{s:s,s:s,s:s,s:s,s:[],s:{},s:{}}", "format", SNAPSHOT_FORMAT, "instance",
		      instance, "taken", when, "api_version", "", "versions", "answers", "exits");
	if (!s->doc) {
		free(s);
		return NULL;
	}
	return s;
}

void snapshot_free(struct snapshot *s)
{
	if (!s)
		return;
	json_decref(s->doc);
	free(s);
}

/* Headers that belong to one answer on one connection, never to the recorded content. */
static bool own_header(const char *name)
{
	static const char *const own[] = {"Content-Length", "Transfer-Encoding",
					  "Connection",	    "Keep-Alive",
					  "Date",	    SNAPSHOT_HEADER};
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
		if (strcasecmp(name, own[i]) == 0)
			return true;
	return false;
}

int snapshot_add(struct snapshot *s, const char *method, const char *target,
		 const struct http_header *headers, size_t nheaders, const char *body, size_t len)
{
	json_t *h = json_object();
	json_t *b = json_stringn(body ? body : "", body ? len : 0);
	if (!h || !b) {
		json_decref(h);
		json_decref(b);
		return -1;
	}
	for (size_t i = 0; i < nheaders; i++)
		if (!own_header(headers[i].name))
			json_object_set_new(h, headers[i].name, json_string(headers[i].value));
	char key[512];
	vmc_textf(key, sizeof key, "%s %s", method, target);
	json_t *answer = json_pack("{s:o,s:o}", "headers", h, "body", b);
	if (!answer || json_object_set_new(json_object_get(s->doc, "answers"), key, answer) < 0)
		return -1;
	if (strcmp(method, "GET") == 0 && strcmp(target, "/_ping") == 0) {
		const char *v = json_string_value(json_object_get(h, "Api-Version"));
		json_object_set_new(s->doc, "api_version", json_string(v ? v : ""));
	}
	return 0;
}

int snapshot_add_exit(struct snapshot *s, const char *id, const char *finished_at, int exit_code)
{
	json_t *e = json_pack("{s:s,s:i}", "FinishedAt", finished_at, "ExitCode", exit_code);
	return e && json_object_set_new(json_object_get(s->doc, "exits"), id, e) == 0 ? 0 : -1;
}

/* "1.41": digits and dots, as in a /vX.Y prefix. */
static bool version_ok(const char *v)
{
	size_t n = strlen(v);
	return n > 0 && n < 16 && strspn(v, "0123456789.") == n && v[0] != '.';
}

int snapshot_add_version(struct snapshot *s, const char *version)
{
	json_t *list = json_object_get(s->doc, "versions");
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v) if (strcmp(json_string_value(v), version) == 0) return 0;
	return json_array_append_new(list, json_string(version));
}

const char *snapshot_taken(const struct snapshot *s)
{
	return vmc_json_get_str_or(s->doc, "taken", "?");
}

size_t snapshot_versions(const struct snapshot *s, const char **out, size_t max)
{
	json_t *list = json_object_get(s->doc, "versions");
	size_t n = 0, i;
	json_t *v;
	json_array_foreach(list, i, v)
	{
		if (n < max && json_is_string(v))
			out[n++] = json_string_value(v);
	}
	return n;
}

/* ---- taking ------------------------------------------------------------------------------- */

struct take {
	struct snapshot *s;
	const char *sock;
	double deadline;
	char error[300]; /* the last request's failure */
};

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One request, recorded when Docker answers 200. Returns 0 when recorded. */
static int record(struct take *t, const char *method, const char *target,
		  struct http_response *keep)
{
	long left = (long)((t->deadline - mono_s()) * 1000);
	if (left <= 0) {
		vmc_textf(t->error, sizeof t->error, "%s %s: out of time", method, target);
		return -1;
	}
	struct http_request req = {.socket_path = t->sock,
				   .method = method,
				   .path = target,
				   .timeout_ms =
				       left < SNAPSHOT_REQUEST_MS ? left : SNAPSHOT_REQUEST_MS,
				   .want_headers = true};
	struct http_response resp;
	int rc = -1;
	if (http_do(&req, &resp) != 0)
		vmc_textf(t->error, sizeof t->error, "%s %s: %s", method, target, resp.error);
	else if (resp.status != 200)
		vmc_textf(t->error, sizeof t->error, "%s %s: HTTP %ld", method, target,
			  resp.status);
	else if (snapshot_add(t->s, method, target, resp.headers, resp.nheaders, resp.body,
			      resp.body_len) < 0)
		vmc_textf(t->error, sizeof t->error, "%s %s: cannot keep the answer", method,
			  target);
	else
		rc = 0;
	if (rc == 0 && keep) {
		*keep = resp;
		return 0;
	}
	http_response_free(&resp);
	return rc;
}

static bool hex_id(const char *id)
{
	size_t n = id ? strlen(id) : 0;
	return n > 0 && n <= 64 && strspn(id, "0123456789abcdef") == n;
}

/* The exits of the stopped containers, from the unversioned list. */
static void record_exits(struct take *t, const struct http_response *list)
{
	json_t *all = json_loadb(list->body ? list->body : "", list->body_len, 0, NULL);
	size_t i, asked = 0;
	json_t *c;
	json_array_foreach(all, i, c)
	{
		const char *id = json_string_value(json_object_get(c, "Id"));
		const char *state = json_string_value(json_object_get(c, "State"));
		if (!hex_id(id) || !state || strcmp(state, "exited") != 0 ||
		    asked++ >= SNAPSHOT_EXITS_MAX)
			continue;
		char path[128];
		vmc_textf(path, sizeof path, "/containers/%s/json", id);
		long left = (long)((t->deadline - mono_s()) * 1000);
		if (left <= 0)
			break;
		struct http_request req = {
		    .socket_path = t->sock,
		    .method = "GET",
		    .path = path,
		    .timeout_ms = left < SNAPSHOT_REQUEST_MS ? left : SNAPSHOT_REQUEST_MS};
		struct http_response resp;
		if (http_do(&req, &resp) == 0 && resp.status == 200) {
			json_t *inspect =
			    json_loadb(resp.body ? resp.body : "", resp.body_len, 0, NULL);
			json_t *st = json_object_get(inspect, "State");
			const char *finished = json_string_value(json_object_get(st, "FinishedAt"));
			json_t *code = json_object_get(st, "ExitCode");
			if (finished && json_is_integer(code))
				snapshot_add_exit(t->s, id, finished,
						  (int)json_integer_value(code));
			json_decref(inspect);
		}
		http_response_free(&resp);
	}
	json_decref(all);
}

struct snapshot *snapshot_take(const char *docker_sock, const char *instance,
			       const char *const *versions, size_t nversions, long budget_ms,
			       char *err, size_t errsize)
{
	struct take t = {.sock = docker_sock, .deadline = mono_s() + (double)budget_ms / 1000};
	t.s = snapshot_new(instance, time(NULL));
	if (!t.s)
		return vmc_errorf(err, errsize, "out of memory"), NULL;
	if (record(&t, "GET", "/_ping", NULL) < 0) {
		vmc_errorf(err, errsize, "%s", t.error);
		snapshot_free(t.s);
		return NULL;
	}
	record(&t, "HEAD", "/_ping", NULL);
	const char *api = vmc_json_get_str_or(t.s->doc, "api_version", "");
	const char *prefixes[SNAPSHOT_VERSIONS_MAX + 1] = {""};
	size_t np = 1;
	for (size_t i = 0; i < nversions && np < SNAPSHOT_VERSIONS_MAX + 1; i++) {
		bool dup = !version_ok(versions[i]) || strcmp(versions[i], api) == 0;
		for (size_t j = 1; j < np && !dup; j++)
			dup = strcmp(prefixes[j], versions[i]) == 0;
		if (!dup)
			prefixes[np++] = versions[i];
	}
	for (size_t i = 0; i < np; i++) {
		if (i > 0)
			snapshot_add_version(t.s, prefixes[i]);
		for (size_t k = 0; k < sizeof recorded_paths / sizeof recorded_paths[0]; k++) {
			char target[256];
			vmc_textf(target, sizeof target, "%s%s%s", i ? "/v" : "", prefixes[i],
				  recorded_paths[k]);
			struct http_response list;
			bool is_list =
			    i == 0 && strcmp(recorded_paths[k], "/containers/json?all=1") == 0;
			if (record(&t, "GET", target, is_list ? &list : NULL) == 0 && is_list) {
				record_exits(&t, &list);
				http_response_free(&list);
			}
		}
	}
	return t.s;
}

/* ---- the file ----------------------------------------------------------------------------- */

static void file_path(const char *instance_dir, char *buf, size_t size)
{
	vmc_textf(buf, size, "%s/%s", instance_dir, SNAPSHOT_FILE_NAME);
}

int snapshot_store(const struct snapshot *s, const char *instance_dir, char *err, size_t errsize)
{
	char path[4200], tmp[4300];
	file_path(instance_dir, path, sizeof path);
	vmc_textf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
	char *text = json_dumps(s->doc, JSON_INDENT(1));
	if (!text)
		return vmc_errorf(err, errsize, "out of memory"), -1;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc = -1;
	if (fd < 0) {
		vmc_errorf(err, errsize, "cannot write %s:", tmp);
	} else if (vmc_write_all(fd, text, strlen(text)) < 0 || vmc_write_all(fd, "\n", 1) < 0 ||
		   fsync(fd) < 0) {
		vmc_errorf(err, errsize, "cannot write %s:", tmp);
	} else {
		rc = 0;
	}
	if (fd >= 0 && close(fd) < 0 && rc == 0) {
		vmc_errorf(err, errsize, "cannot write %s:", tmp);
		rc = -1;
	}
	if (rc == 0 && rename(tmp, path) < 0) {
		vmc_errorf(err, errsize, "cannot rename %s to %s:", tmp, path);
		rc = -1;
	}
	if (rc < 0)
		unlink(tmp);
	free(text);
	return rc;
}

void snapshot_remove(const char *instance_dir)
{
	char path[4200];
	file_path(instance_dir, path, sizeof path);
	unlink(path);
}

/* Lima's host agent writes these while the instance runs: newer than the snapshot, it ran
 * after autostop's stop. */
static const char *ran_since(const char *instance_dir, time_t snapshot_mtime)
{
	static const char *const logs[] = {"ha.stderr.log", "ha.stdout.log"};
	for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
		char path[4200];
		struct stat st;
		vmc_textf(path, sizeof path, "%s/%s", instance_dir, logs[i]);
		if (stat(path, &st) == 0 && st.st_mtime > snapshot_mtime)
			return logs[i];
	}
	return NULL;
}

struct snapshot *snapshot_load(const char *instance_dir, const char *instance, char *err,
			       size_t errsize)
{
	char path[4200];
	file_path(instance_dir, path, sizeof path);
	struct stat st;
	if (stat(path, &st) < 0)
		return vmc_errorf(err, errsize, "%s:", path), NULL;
	const char *log = ran_since(instance_dir, st.st_mtime);
	if (log)
		return vmc_errorf(err, errsize, "%s is stale: %s ran since (its %s is newer)", path,
				  instance, log),
		       NULL;
	char *text = NULL;
	size_t len = 0;
	if (vmc_read_file(path, SNAPSHOT_MAX_BYTES, &text, &len) < 0)
		return vmc_errorf(err, errsize, "cannot read %s:", path), NULL;
	json_error_t jerr;
	json_t *doc = json_loadb(text, len, 0, &jerr);
	free(text);
	const char *format = vmc_json_get_str(doc, "format");
	const char *who = vmc_json_get_str(doc, "instance");
	double taken;
	if (!format || strcmp(format, SNAPSHOT_FORMAT) != 0 ||
	    !json_is_object(json_object_get(doc, "answers")) ||
	    !json_is_object(json_object_get(doc, "exits")) ||
	    !json_is_array(json_object_get(doc, "versions")) ||
	    !parse_rfc3339(vmc_json_get_str(doc, "taken"), &taken)) {
		json_decref(doc);
		return vmc_errorf(err, errsize, "%s is not a snapshot vmcost autostop wrote", path),
		       NULL;
	}
	if (!who || strcmp(who, instance) != 0) {
		vmc_errorf(err, errsize, "%s is a snapshot of %s, not of %s", path,
			   who ? who : "another instance", instance);
		json_decref(doc);
		return NULL;
	}
	struct snapshot *s = calloc(1, sizeof *s);
	if (!s) {
		json_decref(doc);
		return vmc_errorf(err, errsize, "out of memory"), NULL;
	}
	s->doc = doc;
	return s;
}

/* ---- answering ---------------------------------------------------------------------------- */

/* A query's parameters, decoded ('+' is a space, then %XX), first value of each name. */
struct param {
	char *name, *value;
};

struct query {
	struct param p[16];
	size_t n;
	bool bad; /* too many, or not decodable */
};

static char *decode(const char *s, size_t len)
{
	char *plus = malloc(len + 1);
	if (!plus)
		return NULL;
	for (size_t i = 0; i < len; i++)
		plus[i] = s[i] == '+' ? ' ' : s[i];
	plus[len] = '\0';
	int outlen = 0;
	char *u = curl_easy_unescape(NULL, plus, (int)len, &outlen);
	free(plus);
	if (!u)
		return NULL;
	char *copy = strlen(u) == (size_t)outlen ? strdup(u) : NULL; /* no NUL inside */
	curl_free(u);
	return copy;
}

static void query_parse(const char *q, size_t len, struct query *out)
{
	memset(out, 0, sizeof *out);
	const char *p = q, *end = q + len;
	while (p < end && !out->bad) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *stop = amp ? amp : end;
		if (stop > p) {
			const char *eq = memchr(p, '=', (size_t)(stop - p));
			const char *name_end = eq ? eq : stop;
			if (memchr(p, ';', (size_t)(stop - p)) || out->n == 16) {
				out->bad = true; /* Go's query parser refuses ';' */
				break;
			}
			char *name = decode(p, (size_t)(name_end - p));
			char *value = eq ? decode(eq + 1, (size_t)(stop - eq - 1)) : strdup("");
			if (!name || !value) {
				free(name);
				free(value);
				out->bad = true;
				break;
			}
			bool seen = false;
			for (size_t i = 0; i < out->n && !seen; i++)
				seen = strcmp(out->p[i].name, name) == 0;
			if (seen) {
				free(name);
				free(value);
			} else {
				out->p[out->n++] = (struct param){name, value};
			}
		}
		p = amp ? amp + 1 : end;
	}
}

static void query_free(struct query *q)
{
	for (size_t i = 0; i < q->n; i++) {
		free(q->p[i].name);
		free(q->p[i].value);
	}
}

/* Docker's httputils.BoolValue: false for "", 0, no, false, none (any case, trimmed). */
static bool docker_bool(const char *v)
{
	while (*v == ' ' || *v == '\t')
		v++;
	size_t n = strlen(v);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	static const char *const no[] = {"", "0", "no", "false", "none"};
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (strlen(no[i]) == n && strncasecmp(v, no[i], n) == 0)
			return false;
	return true;
}

/* filters={} or {"label":{}} or {"label":[]}: nothing is filtered. */
static bool no_filter(const char *v)
{
	if (!*v)
		return true;
	json_t *f = json_loads(v, 0, NULL);
	bool none = json_is_object(f);
	const char *k;
	json_t *val;
	json_object_foreach(f, k, val)
	{
		if (!((json_is_object(val) && json_object_size(val) == 0) ||
		      (json_is_array(val) && json_array_size(val) == 0)))
			none = false;
	}
	json_decref(f);
	return none;
}

/* limit=N with N <= 0 lists every container, as no limit does. */
static bool no_limit(const char *v)
{
	if (!*v)
		return true;
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	return errno == 0 && *end == '\0' && end != v && n <= 0;
}

enum rule { RULE_ALL, RULE_FALSE, RULE_NO_FILTER, RULE_NO_LIMIT };

struct allowed {
	const char *name;
	enum rule rule;
};

struct poll_path {
	const char *path;
	bool any_query; /* Docker reads no parameter here */
	struct allowed allowed[4];
};

static const struct poll_path poll_paths[] = {
    {"/_ping", true, {{0}}},
    {"/version", true, {{0}}},
    {"/info", true, {{0}}},
    {"/containers/json",
     false,
     {{"all", RULE_ALL},
      {"size", RULE_FALSE},
      {"limit", RULE_NO_LIMIT},
      {"filters", RULE_NO_FILTER}}},
    {"/images/json",
     false,
     {{"all", RULE_FALSE},
      {"filters", RULE_NO_FILTER},
      {"shared-size", RULE_FALSE},
      {"manifests", RULE_FALSE}}},
    {"/volumes", false, {{"filters", RULE_NO_FILTER}}},
    {"/networks", false, {{"filters", RULE_NO_FILTER}}},
    {"/system/df", false, {{0}}},
};

/* Whether the query asks only for what was recorded; *all: containers' all=1. */
static bool query_ok(const struct poll_path *pp, const struct query *q, bool *all, char *why,
		     size_t whysize)
{
	*all = false;
	if (pp->any_query)
		return true;
	if (q->bad)
		return vmc_errorf(why, whysize, "a query that does not decode"), false;
	for (size_t i = 0; i < q->n; i++) {
		const struct allowed *a = NULL;
		for (size_t k = 0; k < 4 && pp->allowed[k].name; k++)
			if (strcmp(pp->allowed[k].name, q->p[i].name) == 0)
				a = &pp->allowed[k];
		const char *v = q->p[i].value;
		bool ok = a != NULL;
		if (a && a->rule == RULE_ALL)
			*all = docker_bool(v);
		else if (a && a->rule == RULE_FALSE)
			ok = !docker_bool(v);
		else if (a && a->rule == RULE_NO_FILTER)
			ok = no_filter(v);
		else if (a && a->rule == RULE_NO_LIMIT)
			ok = no_limit(v);
		if (!ok)
			return vmc_errorf(why, whysize, "%s=%s is not applied to the snapshot",
					  q->p[i].name, v),
			       false;
	}
	return true;
}

/* The containers as Docker lists them now, with the VM stopped: each exit's age worded anew.
 * NULL with why when one was not stopped at the snapshot. */
static char *containers_now(const struct snapshot *s, const char *body, double now, char *why,
			    size_t whysize)
{
	json_t *list = json_loads(body, 0, NULL);
	if (!json_is_array(list)) {
		json_decref(list);
		vmc_errorf(why, whysize, "the recorded container list is not a list");
		return NULL;
	}
	json_t *exits = json_object_get(s->doc, "exits");
	size_t i;
	json_t *c;
	json_array_foreach(list, i, c)
	{
		const char *state = vmc_json_get_str_or(c, "State", "");
		if (strcmp(state, "created") == 0 || strcmp(state, "dead") == 0)
			continue;
		if (strcmp(state, "exited") != 0) {
			json_t *names = json_object_get(c, "Names");
			vmc_errorf(why, whysize, "container %s was %s at the snapshot",
				   json_string_value(json_array_get(names, 0))
				       ? json_string_value(json_array_get(names, 0))
				       : vmc_json_get_str_or(c, "Id", "?"),
				   *state ? state : "in an unknown state");
			json_decref(list);
			return NULL;
		}
		json_t *e = json_object_get(exits, vmc_json_get_str_or(c, "Id", ""));
		double finished;
		if (!e || !parse_rfc3339(vmc_json_get_str(e, "FinishedAt"), &finished))
			continue; /* as recorded */
		char ago[64], status[128];
		snapshot_human_duration(now - finished, ago, sizeof ago);
		vmc_textf(status, sizeof status, "Exited (%lld) %s ago",
			  (long long)json_integer_value(json_object_get(e, "ExitCode")), ago);
		json_object_set_new(c, "Status", json_string(status));
	}
	char *text = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	if (!text) {
		vmc_errorf(why, whysize, "out of memory");
		return NULL;
	}
	/* Docker's JSON encoder ends each document with a newline. */
	size_t n = strlen(text);
	char *out = realloc(text, n + 2);
	if (!out) {
		free(text);
		vmc_errorf(why, whysize, "out of memory");
		return NULL;
	}
	memcpy(out + n, "\n", 2);
	return out;
}

struct line {
	const char *name;
	char value[256];
	const char *long_value; /* when set, instead of value */
};

static int line_cmp(const void *a, const void *b)
{
	return strcasecmp(((const struct line *)a)->name, ((const struct line *)b)->name);
}

/* Status line, headers sorted by name (as Go writes them), the body unless HEAD. */
static int respond(const struct snapshot *s, const json_t *answer, const char *body,
		   size_t body_len, bool head, bool keep_alive, double now, char **out, size_t *len)
{
	json_t *headers = json_object_get(answer, "headers");
	size_t n = json_object_size(headers) + 4;
	struct line *lines = calloc(n, sizeof *lines);
	if (!lines)
		return -1;
	size_t k = 0;
	const char *name;
	json_t *v;
	json_object_foreach(headers, name, v)
	{
		if (!json_is_string(v) || own_header(name))
			continue;
		lines[k].name = name;
		lines[k].long_value = json_string_value(v);
		k++;
	}
	lines[k].name = "Content-Length";
	vmc_textf(lines[k++].value, sizeof lines[0].value, "%zu", body_len);
	lines[k].name = "Date";
	http_date((time_t)now, lines[k++].value, sizeof lines[0].value);
	lines[k].name = SNAPSHOT_HEADER;
	vmc_textf(lines[k++].value, sizeof lines[0].value, "%s", snapshot_taken(s));
	if (!keep_alive) {
		lines[k].name = "Connection";
		vmc_textf(lines[k++].value, sizeof lines[0].value, "close");
	}
	qsort(lines, k, sizeof *lines, line_cmp);
	size_t cap = 64 + (head ? 0 : body_len) + 1;
	for (size_t i = 0; i < k; i++)
		cap += strlen(lines[i].name) + 4 +
		       strlen(lines[i].long_value ? lines[i].long_value : lines[i].value);
	char *buf = malloc(cap);
	if (!buf) {
		free(lines);
		return -1;
	}
	size_t used = (size_t)snprintf(buf, cap, "HTTP/1.1 200 OK\r\n");
	for (size_t i = 0; i < k; i++)
		used +=
		    (size_t)snprintf(buf + used, cap - used, "%s: %s\r\n", lines[i].name,
				     lines[i].long_value ? lines[i].long_value : lines[i].value);
	used += (size_t)snprintf(buf + used, cap - used, "\r\n");
	if (!head) {
		memcpy(buf + used, body, body_len);
		used += body_len;
	}
	buf[used] = '\0';
	free(lines);
	*out = buf;
	*len = used;
	return 0;
}

/* "/v1.41/images/json?x" into version "1.41", path "/images/json", query "x". */
static bool split_target(const char *target, char *version, size_t vsize, char *path, size_t psize,
			 const char **query, size_t *qlen)
{
	const char *p = target;
	version[0] = '\0';
	if (p[0] == '/' && p[1] == 'v' && p[2] >= '0' && p[2] <= '9') {
		size_t n = strspn(p + 2, "0123456789.");
		if (p[2 + n] == '/' && n < vsize) {
			memcpy(version, p + 2, n);
			version[n] = '\0';
			p += 2 + n;
		}
	}
	if (strchr(p, '#'))
		return false;
	size_t plen = strcspn(p, "?");
	if (plen >= psize)
		return false;
	memcpy(path, p, plen);
	path[plen] = '\0';
	*query = p[plen] == '?' ? p + plen + 1 : "";
	*qlen = strlen(*query);
	return true;
}

int snapshot_answer(const struct snapshot *s, const char *method, const char *target,
		    bool keep_alive, double now, char **out, size_t *len, char *why, size_t whysize)
{
	*out = NULL;
	*len = 0;
	char version[16], path[128];
	const char *qs;
	size_t qlen;
	if (!target || !*target ||
	    !split_target(target, version, sizeof version, path, sizeof path, &qs, &qlen))
		return vmc_errorf(why, whysize, "not a poll the snapshot holds"), -1;
	const struct poll_path *pp = NULL;
	for (size_t i = 0; i < sizeof poll_paths / sizeof poll_paths[0]; i++)
		if (strcmp(poll_paths[i].path, path) == 0)
			pp = &poll_paths[i];
	if (!pp)
		return vmc_errorf(why, whysize, "not a poll the snapshot holds"), -1;
	bool head = strcmp(method, "HEAD") == 0;
	if (!head && strcmp(method, "GET") != 0)
		return vmc_errorf(why, whysize, "%s is not a poll", method), -1;
	if (head && strcmp(path, "/_ping") != 0)
		return vmc_errorf(why, whysize,
				  "HEAD is recorded for /_ping only (Docker answers 404 to it)"),
		       -1;
	/* The daemon's own version is its unversioned answer; _ping is the same in each. */
	const char *api = vmc_json_get_str_or(s->doc, "api_version", "");
	const char *versions[SNAPSHOT_VERSIONS_MAX];
	size_t nv = snapshot_versions(s, versions, SNAPSHOT_VERSIONS_MAX);
	bool recorded = !version[0] || strcmp(version, api) == 0;
	bool own = recorded;
	for (size_t i = 0; i < nv && !recorded; i++)
		recorded = strcmp(versions[i], version) == 0;
	if (!recorded)
		return vmc_errorf(why, whysize, "API version %s was not recorded", version), -1;
	struct query q;
	query_parse(qs, qlen, &q);
	bool all;
	bool ok = query_ok(pp, &q, &all, why, whysize);
	query_free(&q);
	if (!ok)
		return -1;
	char key[256];
	bool containers = strcmp(path, "/containers/json") == 0;
	vmc_textf(key, sizeof key, "%s %s%s%s%s", head ? "HEAD" : "GET",
		  own || strcmp(path, "/_ping") == 0 ? "" : "/v",
		  own || strcmp(path, "/_ping") == 0 ? "" : version, path,
		  containers ? "?all=1" : "");
	json_t *answer = json_object_get(json_object_get(s->doc, "answers"), key);
	const char *body = vmc_json_get_str(answer, "body");
	if (!body)
		return vmc_errorf(why, whysize, "%s is not in the snapshot", key), -1;
	size_t body_len = json_string_length(json_object_get(answer, "body"));
	char *made = NULL;
	if (containers && !all) {
		body = "[]\n"; /* the running ones: none, the VM is stopped */
		body_len = 3;
	} else if (containers) {
		made = containers_now(s, body, now, why, whysize);
		if (!made)
			return -1;
		body = made;
		body_len = strlen(made);
	}
	int rc = respond(s, answer, body, body_len, head, keep_alive, now, out, len);
	free(made);
	if (rc < 0)
		return vmc_errorf(why, whysize, "out of memory"), -1;
	return 0;
}
