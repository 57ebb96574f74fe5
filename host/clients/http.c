/* SPDX-License-Identifier: Apache-2.0 */
/* HTTP over unix sockets with libcurl: the URL's host only fills the Host: header. */
#include "clients/http.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bodies we buffer are JSON documents; anything larger is a misbehaving peer. */
#define HTTP_MAX_BUFFERED (64u << 20)

struct sink {
	const struct http_request *req;
	struct http_response *resp;
	size_t cap;
	int aborted;
};

static size_t on_data(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct sink *sink = userdata;
	size_t len = size * nmemb;
	if (sink->req->on_chunk) {
		if (sink->req->on_chunk(data, len, sink->req->ctx) != 0) {
			sink->aborted = 1;
			return 0;
		}
		return len;
	}
	struct http_response *resp = sink->resp;
	if (resp->body_len + len + 1 > HTTP_MAX_BUFFERED)
		return 0;
	if (resp->body_len + len + 1 > sink->cap) {
		size_t cap = sink->cap ? sink->cap : 4096;
		while (cap < resp->body_len + len + 1)
			cap *= 2;
		char *grown = realloc(resp->body, cap);
		if (!grown)
			return 0;
		resp->body = grown;
		sink->cap = cap;
	}
	memcpy(resp->body + resp->body_len, data, len);
	resp->body_len += len;
	resp->body[resp->body_len] = '\0';
	return len;
}

static void free_headers(struct http_response *resp)
{
	for (size_t i = 0; i < resp->nheaders; i++) {
		free(resp->headers[i].name);
		free(resp->headers[i].value);
	}
	free(resp->headers);
	resp->headers = NULL;
	resp->nheaders = 0;
}

/* The final response's headers (not those of a 100 Continue before it). */
static int keep_headers(CURL *curl, struct http_response *resp)
{
	size_t n = 0;
	struct curl_header *h = NULL;
	while ((h = curl_easy_nextheader(curl, CURLH_HEADER, -1, h)) != NULL)
		n++;
	if (n == 0)
		return 0;
	resp->headers = calloc(n, sizeof *resp->headers);
	if (!resp->headers)
		return -1;
	h = NULL;
	while ((h = curl_easy_nextheader(curl, CURLH_HEADER, -1, h)) != NULL &&
	       resp->nheaders < n) {
		struct http_header *out = &resp->headers[resp->nheaders];
		out->name = strdup(h->name);
		out->value = strdup(h->value ? h->value : "");
		if (!out->name || !out->value) {
			free(out->name);
			free(out->value);
			return -1;
		}
		resp->nheaders++;
	}
	return 0;
}

static void describe_error(CURLcode rc, const char *detail, struct http_response *resp)
{
	const char *what = curl_easy_strerror(rc);
	if (rc == CURLE_COULDNT_CONNECT)
		what = "connection refused or socket missing";
	else if (rc == CURLE_OPERATION_TIMEDOUT)
		what = "timed out";
	/* Truncating a long curl detail is fine: the message stays one readable line. */
	if (snprintf(resp->error, sizeof resp->error, "%s%s%s", what, *detail ? ": " : "",
		     detail) >= (int)sizeof resp->error)
		resp->error[sizeof resp->error - 1] = '\0';
}

int http_do(const struct http_request *req, struct http_response *resp)
{
	memset(resp, 0, sizeof *resp);
	CURL *curl = curl_easy_init();
	if (!curl) {
		snprintf(resp->error, sizeof resp->error, "curl_easy_init failed");
		return -1;
	}
	char url[2048];
	snprintf(url, sizeof url, "http://localhost%s", req->path);
	char errbuf[CURL_ERROR_SIZE] = "";
	struct sink sink = {.req = req, .resp = resp};
	struct curl_slist *headers = NULL;
	if (req->body) {
		char ct[128];
		snprintf(ct, sizeof ct, "Content-Type: %s",
			 req->content_type ? req->content_type : "application/json");
		headers = curl_slist_append(headers, ct);
	}
	/* curl adds "Expect: 100-continue" for larger bodies; neither peer needs the round trip. */
	headers = curl_slist_append(headers, "Expect:");

	curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, req->socket_path);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req->method);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	if (strcmp(req->method, "HEAD") == 0)
		curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
	if (req->timeout_ms > 0)
		curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, req->timeout_ms);
	if (req->body) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req->body);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(req->body));
	} else if (strcmp(req->method, "POST") == 0 || strcmp(req->method, "PUT") == 0) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
	}

	CURLcode rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp->status);
	curl_slist_free_all(headers);
	if (rc == CURLE_OK && req->want_headers && keep_headers(curl, resp) < 0) {
		rc = CURLE_OUT_OF_MEMORY;
		snprintf(errbuf, sizeof errbuf, "keeping the response headers");
	}
	curl_easy_cleanup(curl);
	if (rc != CURLE_OK && !(sink.aborted && resp->status > 0)) {
		describe_error(rc, errbuf, resp);
		resp->status = 0;
		free_headers(resp);
		return -1;
	}
	return 0;
}

void http_response_free(struct http_response *resp)
{
	free(resp->body);
	resp->body = NULL;
	resp->body_len = 0;
	free_headers(resp);
}
