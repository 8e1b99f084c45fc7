/* The last decoded stack per thread (see stackmemo.h). */
#include "agent/stackmemo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct hp_stackmemo {
	unsigned generation;
	int depth;                      /* Java frames at most; physical frames at most depth + 8 */
	bool valid;                     /* key..frames are a stack decoded whole */
	bool ids_ok;                    /* ids are its site's */
	bool recent;                    /* the thread's last sample was decoded */
	uint64_t epoch, redefs;
	int nkey, nj;
	uint64_t *key;                  /* 2 words a physical frame */
	uintptr_t *aux;                 /* 1 word a physical frame */
	int *ends;                      /* a physical frame's Java frames end (hp_framedecode_ends) */
	struct hp_java_frame *frames;   /* nj */
	uint32_t *ids;                  /* nj, when ids_ok */
};

static pthread_key_t memo_key;
static pthread_once_t memo_once = PTHREAD_ONCE_INIT;
static bool memo_key_ok;

static void memo_free(void *p)
{
	struct hp_stackmemo *m = p;
	if (!m)
		return;
	free(m->key);
	free(m->aux);
	free(m->ends);
	free(m->frames);
	free(m->ids);
	free(m);
}

static void memo_key_make(void)
{
	memo_key_ok = pthread_key_create(&memo_key, memo_free) == 0;
}

static int phys_cap(int depth)
{
	/* the walker's key buffer: 2 * depth + 16 words (sampler.c) */
	return depth + 8;
}

struct hp_stackmemo *hp_stackmemo_get(unsigned generation, int depth)
{
	pthread_once(&memo_once, memo_key_make);
	if (!memo_key_ok || depth <= 0)
		return NULL;
	struct hp_stackmemo *m = pthread_getspecific(memo_key);
	if (m && m->depth == depth) {
		if (m->generation != generation) {
			m->generation = generation;
			m->valid = m->ids_ok = false;
		}
		return m;
	}
	memo_free(m);
	pthread_setspecific(memo_key, NULL);
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	int np = phys_cap(depth);
	m->key = malloc(sizeof(*m->key) * 2 * (size_t)np);
	m->aux = malloc(sizeof(*m->aux) * (size_t)np);
	m->ends = malloc(sizeof(*m->ends) * (size_t)np);
	m->frames = malloc(sizeof(*m->frames) * (size_t)depth);
	m->ids = malloc(sizeof(*m->ids) * (size_t)depth);
	if (!m->key || !m->aux || !m->ends || !m->frames || !m->ids || pthread_setspecific(memo_key, m)) {
		memo_free(m);
		return NULL;
	}
	m->generation = generation;
	m->depth = depth;
	return m;
}

/* Physical frames at the bottom of key that are the memo's bottom ones. */
static int common_bottom(const struct hp_stackmemo *m, const uint64_t *key, const uintptr_t *aux, int np)
{
	int pp = m->nkey / 2, c = 0;
	while (c < np && c < pp) {
		int a = np - 1 - c, b = pp - 1 - c;
		if (key[2 * a] != m->key[2 * b] || key[2 * a + 1] != m->key[2 * b + 1] || aux[a] != m->aux[b])
			break;
		c++;
	}
	return c;
}

int hp_stackmemo_decode(struct hp_stackmemo *m, struct hp_framedecode *d, const uint64_t *key, const uintptr_t *aux,
			int nkey, uint64_t epoch, uint64_t redefs, uintptr_t stop_jmid, struct hp_java_frame *out,
			int max, int *method_result, struct hp_stackmemo_use *use)
{
	*use = (struct hp_stackmemo_use){ 0 };
	int np = nkey / 2;
	if (max != m->depth || np > phys_cap(m->depth) || nkey != 2 * np) {
		m->valid = m->ids_ok = false;
		return hp_framedecode(d, key, aux, nkey, epoch, stop_jmid, out, max, method_result);
	}
	/* c: physical frames at the bottom as in the memo; from (the memo's
	 * physical frame) s on, whose Java frames start at its frame b */
	int c = 0, s = 0, b = 0;
	if (m->valid && m->epoch == epoch && m->redefs == redefs) {
		c = common_bottom(m, key, aux, np);
		s = m->nkey / 2 - c;
		b = s ? m->ends[s - 1] : 0;
		if (b < 0)
			c = 0;          /* the memo's stack ended above them */
	}
	int p = np - c, ends[np ? np : 1];
	int n = hp_framedecode_ends(d, key, aux, 2 * p, epoch, stop_jmid, out, max, method_result, ends);
	if (n < 0) {
		m->valid = m->ids_ok = false;
		return n;
	}
	if (c > 0 && n < max && (p == 0 || ends[p - 1] >= 0)) {
		/* the frames above were out whole: the rest is the memo's */
		int take = m->nj - b;
		if (take > max - n)
			take = max - n;
		memcpy(&out[n], &m->frames[b], sizeof(*out) * (size_t)take);
		for (int k = 0; k < c; k++)
			ends[p + k] = m->ends[s + k] < 0 || m->ends[s + k] - b > take ? -1 : m->ends[s + k] - b + n;
		if (m->ids_ok) {
			use->known = &m->ids[b];
			use->nknown = take;
		}
		use->reused = take;
		n += take;
	} else {
		for (int k = p; k < np; k++)
			ends[k] = -1;
	}
	/* The memo's ids stay until hp_stackmemo_keep_ids: `known` points
	 * into them. */
	m->ids_ok = false;
	m->recent = true;
	m->valid = n < max;
	if (m->valid) {
		memcpy(m->key, key, sizeof(*key) * (size_t)nkey);
		memcpy(m->aux, aux, sizeof(*aux) * (size_t)np);
		memcpy(m->ends, ends, sizeof(*ends) * (size_t)np);
		memcpy(m->frames, out, sizeof(*out) * (size_t)n);
		m->nkey = nkey;
		m->nj = n;
		m->epoch = epoch;
		m->redefs = redefs;
	}
	return n;
}

void hp_stackmemo_keep_ids(struct hp_stackmemo *m, const uint32_t *ids, int n, bool invalid)
{
	if (!m->valid || invalid || n != m->nj)
		return;
	memmove(m->ids, ids, sizeof(*ids) * (size_t)n);
	m->ids_ok = true;
}

void hp_stackmemo_forget(struct hp_stackmemo *m)
{
	m->valid = m->ids_ok = false;
}

bool hp_stackmemo_recent(const struct hp_stackmemo *m, const uint64_t **key, const uintptr_t **aux, int *nkey)
{
	if (!m->valid || !m->recent)
		return false;
	*key = m->key;
	*aux = m->aux;
	*nkey = m->nkey;
	return true;
}

void hp_stackmemo_hit(struct hp_stackmemo *m)
{
	m->recent = false;
}
