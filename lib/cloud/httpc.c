/*
 * httpc.c - the options every request of a cloud API client has.
 */
#include "config.h"

#include "httpc.h"

void httpc_common(CURL *h, const char *ca_file, long connect_timeout_ms, long timeout_ms)
{
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, ca_file);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "slurm-burst/" PACKAGE_VERSION);
}
