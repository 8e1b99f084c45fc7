#include "agent/upload.h"
#include "vmstructs/clock.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* libcurl, loaded when upload= is used rather than linked: with its TLS,
 * Kerberos, LDAP and SSH libraries it is ~5.5 MB resident in every JVM
 * the agent runs in (javac: a third of what the agent added), and only
 * uploads need it. The headers give the types and constants; the
 * functions come from the shared library by dlsym. */
static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *c);
	void (*easy_reset)(CURL *c);
	CURLcode (*easy_setopt)(CURL *c, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode rc);
	char *(*easy_escape)(CURL *c, const char *s, int len);
	void (*free)(void *p);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} cu;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static char cu_error[256];

static void load_curl(void)
{
	static const char *const names[] = { "libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so" };
	snprintf(cu_error, sizeof(cu_error), "libcurl is not installed");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			snprintf(cu_error, sizeof(cu_error), "libcurl is not installed (%s)", dlerror());
			continue;
		}
#define CU(field, sym)                                                                           \
		if (!(*(void **)&cu.field = dlsym(h, sym))) {                                    \
			snprintf(cu_error, sizeof(cu_error), "%s lacks %s", names[i], sym);      \
			memset(&cu, 0, sizeof(cu));                                              \
			dlclose(h);                                                              \
			continue;                                                                \
		}
		CU(global_init, "curl_global_init")
		CU(easy_init, "curl_easy_init")
		CU(easy_cleanup, "curl_easy_cleanup")
		CU(easy_reset, "curl_easy_reset")
		CU(easy_setopt, "curl_easy_setopt")
		CU(easy_perform, "curl_easy_perform")
		CU(easy_getinfo, "curl_easy_getinfo")
		CU(easy_strerror, "curl_easy_strerror")
		CU(easy_escape, "curl_easy_escape")
		CU(free, "curl_free")
		CU(slist_append, "curl_slist_append")
		CU(slist_free_all, "curl_slist_free_all")
#undef CU
		return;
	}
}

struct item {
	unsigned char *gz;
	size_t len;
	int64_t from, until;
};

struct hp_upload {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item *q;                     /* ring of qcap: head is the oldest */
	unsigned head, count, qcap;
	bool stopping;
	int64_t deadline_ms;                /* stop: give up sending after this (CLOCK_MONOTONIC ms) */
	char *base;                         /* "http://host:4040/ingest?name=app%7Bk%3Dv%7D&spyName=heapprobe&format=pprof" */
	struct hp_upload_stats st;
};

/* Waits on the condition until woken or ms elapsed (the clock is
 * CLOCK_REALTIME for pthread_cond_timedwait by default). Lock held. */
static void wait_ms(struct hp_upload *u, int64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&u->cond, &u->lock, &ts);
}

/* libcurl's progress callback, called about once a second and on every
 * transfer step: ends a request in flight once the agent is stopping and
 * its deadline has passed (a request begun before the stop has the
 * ordinary 10 s timeout, which the JVM's exit would otherwise wait out). */
static int stop_check(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct hp_upload *u = arg;
	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return __atomic_load_n(&u->stopping, __ATOMIC_ACQUIRE) &&
	       hp_mono_ms() >= __atomic_load_n(&u->deadline_ms, __ATOMIC_ACQUIRE);
}

/* One POST. 0, or -1 with the reason in why (lock not held). */
static int post(struct hp_upload *u, CURL *c, const struct item *it, long timeout_ms, char *why, size_t whylen)
{
	char url[2048];
	snprintf(url, sizeof(url), "%s&from=%lld&until=%lld", u->base, (long long)it->from, (long long)it->until);
	struct curl_slist *h = cu.slist_append(NULL, "Content-Type: application/octet-stream");
	cu.easy_reset(c);
	cu.easy_setopt(c, CURLOPT_URL, url);
	cu.easy_setopt(c, CURLOPT_POST, 1L);
	cu.easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)it->gz);
	cu.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)it->len);
	cu.easy_setopt(c, CURLOPT_HTTPHEADER, h);
	cu.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	cu.easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	cu.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);      /* no SIGALRM in the JVM for DNS timeouts */
	cu.easy_setopt(c, CURLOPT_USERAGENT, "heapprobe");
	cu.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, stop_check);
	cu.easy_setopt(c, CURLOPT_XFERINFODATA, u);
	cu.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	char curl_err[CURL_ERROR_SIZE] = "";
	cu.easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
	CURLcode rc = cu.easy_perform(c);
	long status = 0;
	cu.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	cu.slist_free_all(h);
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		snprintf(why, whylen, "no answer by the deadline the exit gives uploads");
		return -1;
	}
	if (rc != CURLE_OK) {
		snprintf(why, whylen, "%s", curl_err[0] ? curl_err : cu.easy_strerror(rc));
		return -1;
	}
	if (status < 200 || status >= 300) {
		snprintf(why, whylen, "server answered HTTP %ld", status);
		return -1;
	}
	return 0;
}

static void *sender(void *arg)
{
	struct hp_upload *u = arg;
	CURL *c = cu.easy_init();
	int64_t backoff = 1000;
	pthread_mutex_lock(&u->lock);
	for (;;) {
		while (!u->count && !u->stopping)
			pthread_cond_wait(&u->cond, &u->lock);
		if (!u->count || (u->stopping && hp_mono_ms() >= u->deadline_ms))
			break;
		/* Take the oldest out of the queue while it is sent: a push
		 * meanwhile may drop queued periods, never the one on the wire. */
		struct item it = u->q[u->head];
		u->q[u->head].gz = NULL;
		u->head = (u->head + 1) % u->qcap;
		u->count--;
		/* 10 s a request; when stopping, no later than the deadline:
		 * the JVM's exit waits for this thread. */
		long timeout = 10000;
		if (u->stopping && u->deadline_ms - hp_mono_ms() < timeout)
			timeout = (long)(u->deadline_ms - hp_mono_ms()) > 100 ? (long)(u->deadline_ms - hp_mono_ms()) : 100;
		pthread_mutex_unlock(&u->lock);
		char why[256] = "libcurl unavailable";
		int rc = c ? post(u, c, &it, timeout, why, sizeof(why)) : -1;
		pthread_mutex_lock(&u->lock);
		if (rc == 0) {
			u->st.delivered++;
			backoff = 1000;
			free(it.gz);
		} else {
			/* Back at the head to be retried, if the newer periods
			 * that came meanwhile left room; else it is the oldest
			 * and goes. */
			if (u->count < u->qcap) {
				u->head = (u->head + u->qcap - 1) % u->qcap;
				u->q[u->head] = it;
				u->count++;
			} else {
				free(it.gz);
				u->st.dropped++;
			}
			u->st.attempts_failed++;
			snprintf(u->st.last_error, sizeof(u->st.last_error), "%s", why);
			int64_t w = backoff;
			if (u->stopping && u->deadline_ms - hp_mono_ms() < w)
				w = u->deadline_ms - hp_mono_ms();
			if (w > 0)
				wait_ms(u, w);
			backoff = backoff * 2 > 60000 ? 60000 : backoff * 2;
		}
	}
	pthread_mutex_unlock(&u->lock);
	if (c)
		cu.easy_cleanup(c);
	return NULL;
}

int hp_upload_start(struct hp_upload **out, const char *url, const char *app, const char *labels, unsigned queue,
		    char *err, size_t errlen)
{
	*out = NULL;
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
		snprintf(err, errlen, "heapprobe: upload=%s: the URL must start with http:// or https://", url);
		return -EINVAL;
	}
	pthread_once(&cu_once, load_curl);
	if (!cu.global_init) {
		snprintf(err, errlen, "heapprobe: upload: %s", cu_error);
		return -ENOTSUP;
	}
	if (cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errlen, "heapprobe: upload: libcurl cannot be initialised");
		return -ENOTSUP;
	}
	/* The series name: app{k=v,...} (labels given as k=v;k=v). */
	char name[1024];
	size_t n = (size_t)snprintf(name, sizeof(name), "%s{", app && *app ? app : "heapprobe");
	for (const char *p = labels ? labels : ""; *p && n < sizeof(name) - 2;) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len && n + len + 2 < sizeof(name))
			n += (size_t)snprintf(name + n, sizeof(name) - n, "%s%.*s", name[n - 1] == '{' ? "" : ",", (int)len, p);
		p += len + (end ? 1 : 0);
	}
	snprintf(name + n, sizeof(name) - n, "}");
	char *esc = cu.easy_escape(NULL, name, 0);
	struct hp_upload *u = calloc(1, sizeof(*u));
	size_t blen = strlen(url) + (esc ? strlen(esc) : 0) + 96;
	if (u)
		u->qcap = queue ? queue : HP_UPLOAD_QUEUE;
	if (!u || !esc || !(u->base = malloc(blen)) || !(u->q = calloc(u->qcap, sizeof(*u->q)))) {
		cu.free(esc);
		if (u)
			free(u->base);
		free(u);
		snprintf(err, errlen, "heapprobe: upload: out of memory");
		return -ENOMEM;
	}
	const char *slash = url[strlen(url) - 1] == '/' ? "" : "/";
	snprintf(u->base, blen, "%s%singest?name=%s&spyName=heapprobe&format=pprof", url, slash, esc);
	cu.free(esc);
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);
	if (pthread_create(&u->thread, NULL, sender, u) != 0) {
		free(u->q);
		free(u->base);
		free(u);
		snprintf(err, errlen, "heapprobe: upload: cannot start its thread");
		return -EAGAIN;
	}
	*out = u;
	return 0;
}

void hp_upload_push(struct hp_upload *u, unsigned char *gz, size_t len, int64_t from_s, int64_t until_s)
{
	pthread_mutex_lock(&u->lock);
	if (u->stopping) {
		pthread_mutex_unlock(&u->lock);
		free(gz);
		return;
	}
	if (u->count == u->qcap) {
		/* Full: the oldest queued period goes (the one being sent,
		 * if any, is out of the queue). */
		free(u->q[u->head].gz);
		u->q[u->head].gz = NULL;
		u->head = (u->head + 1) % u->qcap;
		u->count--;
		u->st.dropped++;
	}
	u->q[(u->head + u->count) % u->qcap] = (struct item){ gz, len, from_s, until_s };
	u->count++;
	pthread_cond_signal(&u->cond);
	pthread_mutex_unlock(&u->lock);
}

void hp_upload_stats(struct hp_upload *u, struct hp_upload_stats *out)
{
	pthread_mutex_lock(&u->lock);
	*out = u->st;
	out->queued = u->count;
	pthread_mutex_unlock(&u->lock);
}

void hp_upload_stop(struct hp_upload *u, int wait, struct hp_upload_stats *final)
{
	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	__atomic_store_n(&u->deadline_ms, hp_mono_ms() + wait, __ATOMIC_RELEASE);
	__atomic_store_n(&u->stopping, true, __ATOMIC_RELEASE);      /* read by stop_check without the lock */
	pthread_cond_signal(&u->cond);
	pthread_mutex_unlock(&u->lock);
	pthread_join(u->thread, NULL);
	for (unsigned i = 0; i < u->count; i++) {
		free(u->q[(u->head + i) % u->qcap].gz);
		u->st.dropped++;
	}
	if (final) {
		*final = u->st;
		final->queued = 0;
	}
	pthread_cond_destroy(&u->cond);
	pthread_mutex_destroy(&u->lock);
	free(u->q);
	free(u->base);
	free(u);
}
