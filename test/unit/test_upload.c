/* Uploads (src/agent/upload.c) without a JVM: the real libcurl against a
 * small HTTP server in this file (a thread on a loopback socket that
 * records each request and answers with the status the test scripts).
 * test_outputs sends to a real Pyroscope server; here are the cases a
 * server cannot be made to show on demand: the URL it is given, a refused
 * connection, an error answer then a retry, a full queue, a server that
 * never answers when the JVM exits. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/upload.h"

#define MAXREQ 16

static struct server {
	int fd, port;
	pthread_t thread;
	int status[MAXREQ];         /* answer to request k; 0 = 200 */
	bool silent;                /* read the request, never answer */
	pthread_mutex_t lock;
	int n;                      /* requests received */
	char line[MAXREQ][1024];    /* request line */
	char type[MAXREQ][128];     /* Content-Type */
	size_t body_len[MAXREQ];
	unsigned char body0[MAXREQ];
} srv;

static void *serve(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(srv.fd, NULL, NULL);
		if (c < 0)
			return NULL;
		char buf[65536];
		size_t got = 0;
		char *end = NULL;
		while (!end && got < sizeof(buf) - 1) {
			ssize_t r = read(c, buf + got, sizeof(buf) - 1 - got);
			if (r <= 0)
				break;
			got += (size_t)r;
			buf[got] = 0;
			end = strstr(buf, "\r\n\r\n");
		}
		if (!end) {
			close(c);
			continue;
		}
		size_t clen = 0;
		const char *cl = strcasestr(buf, "\r\nContent-Length:");
		if (cl)
			clen = strtoul(cl + 17, NULL, 10);
		size_t have = got - (size_t)(end + 4 - buf);
		unsigned char first = have ? (unsigned char)end[4] : 0;
		char line[1024], type[128];
		const char *nl = strstr(buf, "\r\n");
		snprintf(line, sizeof(line), "%.*s", nl ? (int)(nl - buf) : 0, buf);
		const char *ct = strcasestr(buf, "\r\nContent-Type: ");
		snprintf(type, sizeof(type), "%.*s", ct ? (int)strcspn(ct + 16, "\r") : 0, ct ? ct + 16 : "");
		while (have < clen) {
			ssize_t r = read(c, buf, sizeof(buf));
			if (r <= 0)
				break;
			if (!have)
				first = (unsigned char)buf[0];
			have += (size_t)r;
		}
		pthread_mutex_lock(&srv.lock);
		int k = srv.n < MAXREQ ? srv.n : MAXREQ - 1;
		snprintf(srv.line[k], sizeof(srv.line[k]), "%s", line);
		snprintf(srv.type[k], sizeof(srv.type[k]), "%s", type);
		srv.body_len[k] = have;
		srv.body0[k] = first;
		srv.n++;
		int status = srv.status[k] ? srv.status[k] : 200;
		bool silent = srv.silent;
		pthread_mutex_unlock(&srv.lock);
		if (silent) {
			/* hold the connection open without an answer */
			char sink[256];
			while (read(c, sink, sizeof(sink)) > 0)
				;
			close(c);
			continue;
		}
		char ans[128];
		int len = snprintf(ans, sizeof(ans), "HTTP/1.1 %d X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
				   status);
		ssize_t w = write(c, ans, (size_t)len);
		(void)w;
		close(c);
	}
}

static void server_start(void)
{
	memset(&srv, 0, sizeof(srv));
	pthread_mutex_init(&srv.lock, NULL);
	srv.fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_geq(srv.fd, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	cr_assert_eq(bind(srv.fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(srv.fd, 16), 0);
	socklen_t al = sizeof(a);
	getsockname(srv.fd, (struct sockaddr *)&a, &al);
	srv.port = ntohs(a.sin_port);
	cr_assert_eq(pthread_create(&srv.thread, NULL, serve, NULL), 0);
}

static void server_stop(void)
{
	shutdown(srv.fd, SHUT_RDWR);
	close(srv.fd);
	pthread_join(srv.thread, NULL);
}

/* A port nothing listens on: bound, then closed. */
static int closed_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	bind(fd, (struct sockaddr *)&a, sizeof(a));
	socklen_t al = sizeof(a);
	getsockname(fd, (struct sockaddr *)&a, &al);
	close(fd);
	return ntohs(a.sin_port);
}

static unsigned char *body(unsigned char first, size_t len)
{
	unsigned char *b = malloc(len);
	memset(b, 0x5a, len);
	b[0] = first;
	return b;
}

static struct hp_upload *start(int port, const char *app, const char *labels, unsigned queue)
{
	char url[64], err[256] = "";
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	struct hp_upload *u;
	int rc = hp_upload_start(&u, url, app, labels, queue, err, sizeof(err));
	cr_assert_eq(rc, 0, "start: %d %s", rc, err);
	return u;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

Test(upload, a_url_without_a_scheme_is_refused_by_name)
{
	struct hp_upload *u = (void *)1;
	char err[256] = "";
	int rc = hp_upload_start(&u, "localhost:4040", "app", "", 0, err, sizeof(err));
	cr_assert_eq(rc, -EINVAL);
	cr_assert_null(u);
	cr_assert(strstr(err, "upload=localhost:4040") && strstr(err, "http://"), "%s", err);
}

/* Each period is one POST to /ingest, in order, its name app{labels} (the
 * labels' ';' become ',', URL-escaped), its period and the pprof body. */
Test(upload, periods_arrive_in_order_with_name_period_and_body)
{
	server_start();
	struct hp_upload *u = start(srv.port, "shop", "env=prod;region=eu", 0);
	hp_upload_push(u, body(1, 3000), 3000, 100, 110);
	hp_upload_push(u, body(2, 10), 10, 110, 120);
	hp_upload_push(u, body(3, 70000), 70000, 120, 130);
	struct hp_upload_stats st;
	hp_upload_stop(u, 10000, &st);
	server_stop();
	cr_assert_eq(st.delivered, 3, "delivered %llu, last error %s", (unsigned long long)st.delivered, st.last_error);
	cr_assert_eq(st.dropped, 0);
	cr_assert_eq(st.attempts_failed, 0);
	cr_assert_eq(srv.n, 3);
	const char *want = "POST /ingest?name=shop%7Benv%3Dprod%2Cregion%3Deu%7D&spyName=heapprobe&format=pprof"
			   "&from=100&until=110 HTTP/1.1";
	cr_assert_str_eq(srv.line[0], want);
	cr_assert(strstr(srv.line[2], "&from=120&until=130 "), "%s", srv.line[2]);
	cr_assert_str_eq(srv.type[0], "application/octet-stream");
	size_t lens[3] = { 3000, 10, 70000 };
	for (int k = 0; k < 3; k++) {
		cr_assert_eq(srv.body_len[k], lens[k], "request %d: %zu bytes", k, srv.body_len[k]);
		cr_assert_eq(srv.body0[k], k + 1, "request %d out of order", k);
	}
}

/* An error answer is retried after the backoff (1 s), the reason kept. */
Test(upload, an_error_answer_is_retried_and_named)
{
	server_start();
	srv.status[0] = 503;
	struct hp_upload *u = start(srv.port, "", "", 0);
	hp_upload_push(u, body(7, 100), 100, 1, 2);
	struct hp_upload_stats st;
	hp_upload_stop(u, 10000, &st);
	server_stop();
	cr_assert_eq(st.delivered, 1);
	cr_assert_eq(st.attempts_failed, 1);
	cr_assert_eq(st.dropped, 0);
	cr_assert_str_eq(st.last_error, "server answered HTTP 503");
	cr_assert_eq(srv.n, 2);
	cr_assert(strstr(srv.line[1], "name=heapprobe%7B%7D&"), "no app: heapprobe{}: %s", srv.line[1]);
}

/* Nobody listening: every period is counted dropped at the end, none
 * lost silently, the reason is curl's. */
Test(upload, a_refused_connection_drops_and_counts)
{
	struct hp_upload *u = start(closed_port(), "a", "", 0);
	hp_upload_push(u, body(1, 100), 100, 1, 2);
	hp_upload_push(u, body(2, 100), 100, 2, 3);
	struct hp_upload_stats st;
	hp_upload_stop(u, 1500, &st);
	cr_assert_eq(st.delivered, 0);
	cr_assert_eq(st.dropped, 2);
	cr_assert_geq(st.attempts_failed, 1);
	cr_assert(strstr(st.last_error, "onnect") || strstr(st.last_error, "refused"), "%s", st.last_error);
}

/* While the server is down the queue holds at most `queue` periods: the
 * oldest goes when a new one comes; delivered + dropped + queued is all
 * that was pushed. */
Test(upload, a_full_queue_drops_the_oldest)
{
	struct hp_upload *u = start(closed_port(), "a", "", 2);
	for (int i = 0; i < 6; i++)
		hp_upload_push(u, body((unsigned char)i, 50), 50, i, i + 1);
	struct hp_upload_stats mid;
	hp_upload_stats(u, &mid);
	cr_assert_leq(mid.queued, 2);
	/* 6 pushed: at most 2 queued and at most 1 on the wire */
	cr_assert_geq(mid.dropped, 3, "dropped %llu", (unsigned long long)mid.dropped);
	struct hp_upload_stats st;
	hp_upload_stop(u, 200, &st);
	cr_assert_eq(st.delivered + st.dropped, 6, "delivered %llu dropped %llu", (unsigned long long)st.delivered,
		     (unsigned long long)st.dropped);
}

/* The JVM's exit waits for the upload thread: a server that takes the
 * request and never answers holds it no longer than the wait given
 * (plus libcurl's 100 ms floor), and the period is counted dropped. */
Test(upload, a_silent_server_does_not_hold_the_exit)
{
	server_start();
	srv.silent = true;
	struct hp_upload *u = start(srv.port, "a", "", 0);
	hp_upload_push(u, body(1, 100), 100, 1, 2);
	while (srv.n == 0)      /* until the request is on the wire */
		usleep(1000);
	double t0 = now_s();
	struct hp_upload_stats st;
	hp_upload_stop(u, 500, &st);
	double took = now_s() - t0;
	server_stop();
	cr_assert_lt(took, 5.0, "stop took %.2f s (10 s is the per-request timeout it must not wait for)", took);
	cr_assert_eq(st.delivered, 0);
	cr_assert_eq(st.dropped, 1);
	cr_assert(strstr(st.last_error, "no answer by the deadline the exit gives uploads"), "%s", st.last_error);
}
