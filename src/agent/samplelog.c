#include "agent/samplelog.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>


static __thread uint32_t my_index;          /* thread index + 1; 0 = not registered */
static __thread unsigned my_generation;

int hp_samplelog_init(struct hp_samplelog *l, int keep_allocs)
{
	static _Atomic unsigned generations;
	memset(l, 0, sizeof(*l));
	pthread_mutex_init(&l->lock, NULL);
	l->generation = atomic_fetch_add(&generations, 1) + 1;
	l->threads = calloc(HP_SAMPLELOG_MAX_THREADS, sizeof(*l->threads));
	if (!l->threads)
		return -ENOMEM;
	for (int i = 0; i < HP_SAMPLELOG_STRIPES; i++) {
		pthread_mutex_init(&l->stripes[i].lock, NULL);
		l->stripes[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
		if (keep_allocs && !(l->stripes[i].recs = malloc(sizeof(struct hp_alloc_rec) * HP_SAMPLELOG_KEEP))) {
			hp_samplelog_free(l);
			return -ENOMEM;
		}
	}
	l->on = 1;
	return 0;
}

void hp_samplelog_free(struct hp_samplelog *l)
{
	for (int i = 0; i < HP_SAMPLELOG_STRIPES; i++) {
		free(l->stripes[i].recs);
		l->stripes[i].recs = NULL;
		l->stripes[i].n = 0;
	}
	free(l->threads);
	l->threads = NULL;
	l->nthreads = 0;
	l->on = 0;
}

uint32_t hp_samplelog_thread(struct hp_samplelog *l, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	if (my_index && my_generation == l->generation)
		return my_index - 1;
	if (!l->threads)
		return HP_SAMPLELOG_NO_THREAD;
	char name[64] = "";
	jvmtiThreadInfo info;
	memset(&info, 0, sizeof(info));
	if ((*jvmti)->GetThreadInfo(jvmti, thread, &info) == JVMTI_ERROR_NONE) {
		if (info.name) {
			strncpy(name, info.name, sizeof(name) - 1);
			(*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
		}
		if (info.thread_group)
			(*jni)->DeleteLocalRef(jni, info.thread_group);
		if (info.context_class_loader)
			(*jni)->DeleteLocalRef(jni, info.context_class_loader);
	}
	uint32_t idx = HP_SAMPLELOG_NO_THREAD;
	pthread_mutex_lock(&l->lock);
	if (l->nthreads < HP_SAMPLELOG_MAX_THREADS) {
		idx = l->nthreads++;
		l->threads[idx].tid = (int64_t)syscall(SYS_gettid);
		memcpy(l->threads[idx].name, name, sizeof(name));
	}
	pthread_mutex_unlock(&l->lock);
	my_index = idx == HP_SAMPLELOG_NO_THREAD ? 0 : idx + 1;
	my_generation = l->generation;
	return idx;
}

void hp_samplelog_alloc(struct hp_samplelog *l, const struct hp_alloc_rec *r)
{
	if (!l->on || !l->stripes[0].recs)
		return;
	/* A random stripe per sample, not the thread's: each stripe then
	 * sees a random share of all samples and their reservoirs together are
	 * a uniform sample, however few threads allocate. */
	static __thread uint64_t pick;
	if (!pick)
		pick = (uint64_t)(uintptr_t)&pick | 1;
	pick ^= pick << 13;
	pick ^= pick >> 7;
	pick ^= pick << 17;
	__typeof__(l->stripes[0]) *s = &l->stripes[pick % HP_SAMPLELOG_STRIPES];
	pthread_mutex_lock(&s->lock);
	uint64_t seen = ++s->seen;
	if (s->n < HP_SAMPLELOG_KEEP) {
		s->recs[s->n++] = *r;
	} else {
		/* xorshift64*: a slot in [0, seen); kept if it falls in the reservoir. */
		s->rng ^= s->rng >> 12;
		s->rng ^= s->rng << 25;
		s->rng ^= s->rng >> 27;
		uint64_t j = (s->rng * 0x2545f4914f6cdd1dull) % seen;
		if (j < HP_SAMPLELOG_KEEP)
			s->recs[j] = *r;
	}
	pthread_mutex_unlock(&s->lock);
}

void hp_samplelog_each(struct hp_samplelog *l, void (*fn)(const struct hp_alloc_rec *r, void *ctx), void *ctx)
{
	for (int i = 0; i < HP_SAMPLELOG_STRIPES; i++) {
		__typeof__(l->stripes[0]) *s = &l->stripes[i];
		pthread_mutex_lock(&s->lock);
		for (uint32_t k = 0; s->recs && k < s->n; k++)
			fn(&s->recs[k], ctx);
		pthread_mutex_unlock(&s->lock);
	}
}
