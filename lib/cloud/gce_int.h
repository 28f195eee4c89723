/*
 * gce_int.h - what gce.c and gce_auth.c share: one HTTP exchange.
 */
#ifndef BURST_GCE_INT_H
#define BURST_GCE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

#include "burst_err.h"
#include "strutil.h"

/* the longest answer read (an aggregatedList page of 500 instances is
 * about 2 MB); a longer one fails the request */
#define GCE_MAX_BODY (64L << 20)

struct gce_http_req {
	const char *method;      /* GET, POST, DELETE */
	const char *url;
	const char *body;        /* NULL: none */
	const char *content_type;/* with body (NULL: application/json) */
	const char *bearer;      /* an access token for Authorization, or NULL */
	bool metadata_flavor;    /* send "Metadata-Flavor: Google" */
	const char *ca_file;
	long timeout_ms;
};

struct gce_http_resp {
	long status;             /* 0: no answer (err says why) */
	struct strbuf body;      /* sb_init'ed by gce_http; caller sb_free's */
	bool flavor_google;      /* the answer carried "Metadata-Flavor: Google" */
	bool too_long;
};

/* One exchange on h (reset first). 0 when an answer came (any status), -1
 * with err (the method, the URL and curl's reason) when none did. */
int gce_http(CURL *h, const struct gce_http_req *rq, struct gce_http_resp *rs, burst_err_t *err);

/* Is url http (not https)? */
bool gce_url_is_http(const char *url);

#endif
