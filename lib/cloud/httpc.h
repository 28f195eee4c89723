/*
 * httpc.h - what every request of a cloud API client has (EC2, OpenStack):
 * http or https only, the peer's certificate and name checked (against
 * ca_file when one is given), no redirect followed, no signal used for
 * timeouts (the clients run on worker threads), a connection and a whole
 * answer each bounded in time, the project's user agent.
 */
#ifndef BURST_HTTPC_H
#define BURST_HTTPC_H

#include <curl/curl.h>

/* Sets those options on h; the handle keeps them until curl_easy_reset. */
void httpc_common(CURL *h, const char *ca_file, long connect_timeout_ms, long timeout_ms);

#endif
