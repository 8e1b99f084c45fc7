/* Pushing profiles to a continuous-profiling server (Pyroscope's HTTP
 * /ingest), off the application's threads.
 *
 * The agent hands over one gzip'd pprof per period; a thread of ours sends
 * them in order with libcurl (http and https), retrying a failed one with
 * backoff (1 s doubling to 60 s). While the server is down the queue holds
 * at most `queue` periods (HP_UPLOAD_QUEUE by default): the oldest is
 * dropped, and counted, when a new one comes. hp_upload_push only takes a mutex for a pointer swap:
 * the caller (the agent's own thread) never waits on the network. */
#ifndef HP_UPLOAD_H
#define HP_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#define HP_UPLOAD_QUEUE 32             /* default; upload_queue= sets it (1..1024) */

struct hp_upload;

struct hp_upload_stats {
	uint64_t delivered, dropped, attempts_failed;
	unsigned queued;
	char last_error[256];
};

/* url: the server's base ("http://host:4040"); app: the application name;
 * labels: "k=v;k=v" or ""; queue: periods kept while the server is down. 0, or a negative errno with the reason in err
 * (bad URL, libcurl not usable). Starts the sending thread. */
int hp_upload_start(struct hp_upload **out, const char *url, const char *app, const char *labels, unsigned queue,
		    char *err, size_t errlen);

/* Queues one period's profile (takes ownership of gz). from/until: the
 * period, Unix seconds. Never blocks on the network. */
void hp_upload_push(struct hp_upload *u, unsigned char *gz, size_t len, int64_t from_s, int64_t until_s);

/* Sends what is queued for up to wait_ms, then stops the thread and frees
 * everything; what is still queued is counted as dropped. */
void hp_upload_stop(struct hp_upload *u, int wait_ms, struct hp_upload_stats *final);

void hp_upload_stats(struct hp_upload *u, struct hp_upload_stats *out);

#endif
