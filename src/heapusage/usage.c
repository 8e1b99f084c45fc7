/* hp_heap_usage(): the dispatcher that picks, at the moment of the call,
 * the most accurate mode that is validated and legal where it is called.
 *
 * Legal: modes that need JNI run only on a thread attached to the VM and
 * never with HP_USAGE_NO_JNI (the caller's promise that it is inside a GC
 * callback or similar). GC-callback threads (the VM thread, GC workers) are
 * not JavaThreads: JavaVM::GetEnv says JNI_EDETACHED there, so they are
 * recognised even when the caller forgets the flag.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "heapusage/events.h"
#include "heapusage/gcthread.h"
#include "heapusage/jmm.h"
#include "heapusage/marking.h"
#include "heapusage/modes.h"
#include "heapusage/probe.h"

/* The order of preference for the current usage: the heap's own used()
 * first (create_heap_summary returns exactly that on every collector),
 * then memory_usage() (the same on most heaps, but G1's override returns
 * its monitoring figures, which lag until the first collection: used=0 at
 * start-up), then what JMX would say, then the counters that lag.
 * HP_MODE_LAST_GC_FIELDS answers only post-GC questions. */
static const enum hp_mode current_order[] = {
	HP_MODE_HEAP_SUMMARY_CALL, HP_MODE_MEMORY_USAGE_CALL, HP_MODE_JMM,
	HP_MODE_JMX_NATIVE,        HP_MODE_EXPORTED_TOTALS,   HP_MODE_PERFDATA,
};

struct lazy_env {
	struct hp_probe *p;
	bool forbidden, asked;
	JNIEnv *env;
};

static JNIEnv *lazy_env_get(struct lazy_env *l)
{
	if (!l->asked && !l->forbidden)
		l->env = hp_jni_env(l->p->vm);
	l->asked = true;
	return l->env;
}

static int read_lazy(struct hp_probe *p, enum hp_mode m, struct lazy_env *l, struct hp_mode_reading *r)
{
	const struct hp_mode_ops *ops = p->mode_ops[m];
	JNIEnv *env = ops && ops->needs_jni ? lazy_env_get(l) : NULL;
	return hp_mode_read(p, m, env, r);
}

/* A reading of mode m, taken now, into the public record. */
static void fill(struct hp_heap_usage *u, enum hp_mode m, const struct hp_mode_reading *r)
{
	u->mode = m;
	u->kind = r->kind;
	u->used = r->used;
	u->committed = r->committed;
	u->max = r->max;
	u->timestamp_ns = hp_now_coarse_ns();
}

/* The live figure, best first, for hp_live_bytes and hp_heap_usage's
 * `live` alike (one order, so the two agree, as the header promises):
 * a marking's own live bytes (ZGC; no garbage in them); the post-GC
 * figure the GC events captured (`fast`: the figure alone, one load,
 * hp_live_bytes's path; else the whole record `captured`, NULL when
 * there is none or a pause is publishing it: then not this source, so
 * that no figure goes out without its kind); the heap's last-GC fields
 * where every collection or cycle refreshes them (Shenandoah's and ZGC's
 * at each cycle's end: their GC events end pauses, not cycles, and
 * publish no capture; G1's at each pause, for a probe that has not seen
 * one yet), named by the kind the data gives them. Not Serial's and
 * Parallel's (after-full-gc): refreshed by full collections only, they
 * may be a figure from long ago, and the collection count beside it
 * would be today's. fields/fields_rc: that reading, kept so that a
 * POST_GC question does not read it again (fields_rc 1: not read).
 * Plain loads; no JNI. */
struct live_figure {
	uint64_t bytes, gc_count, timestamp_ns;
	enum hp_usage_kind kind;
	enum hp_mode mode;
	struct hp_mode_reading fields;
	int fields_rc;
};

static void live_figure(struct hp_probe *p, bool fast, const struct hp_heap_usage *captured, struct live_figure *f)
{
	memset(f, 0, sizeof(*f));
	f->fields_rc = 1;
	uint64_t marked;
	if (hp_marking_heap_live(p, &marked) == 0) {
		f->bytes = marked;
		f->kind = HP_USAGE_MARKED_LIVE;
		f->mode = HP_MODE_LAST_GC_FIELDS;       /* meaningless for MARKED_LIVE (header) */
		f->gc_count = hp_events_gc_count(p);
		return;
	}
	if (captured && captured->used) {
		f->bytes = captured->used;
		f->kind = captured->kind;
		f->mode = captured->mode;
		f->gc_count = captured->gc_count;
		f->timestamp_ns = captured->timestamp_ns;
		return;
	}
	if (fast && (f->bytes = hp_events_live_bytes(p)))
		return;
	f->fields_rc = hp_mode_read(p, HP_MODE_LAST_GC_FIELDS, NULL, &f->fields);
	if (f->fields_rc == 0 && f->fields.used &&
	    (f->fields.kind == HP_USAGE_AFTER_CONCURRENT_CYCLE || f->fields.kind == HP_USAGE_AFTER_YOUNG_GC)) {
		f->bytes = f->fields.used;
		f->kind = f->fields.kind;
		f->mode = HP_MODE_LAST_GC_FIELDS;
		f->gc_count = hp_events_gc_count(p);
	}
}

uint64_t hp_live_bytes(struct hp_probe *p)
{
	if (!p)
		return 0;
	struct live_figure f;
	live_figure(p, true, NULL, &f);
	return f.bytes;
}

int hp_heap_usage(struct hp_probe *p, unsigned flags, struct hp_heap_usage *out)
{
	if (!p || !out || out->sz < sizeof(size_t))
		return -EINVAL;
	size_t caller_sz = out->sz;
	struct hp_heap_usage u = { .sz = sizeof(u) };
	/* Modes waiting for the heap or the live phase get another try, but
	 * only on an attached Java thread that allows JNI: set-up allocates
	 * and calls JVMTI, and a host's own GC callback (NO_JNI, or a VM/GC
	 * thread GetEnv does not know) must never get near it. */
	if (__atomic_load_n(&p->modes_pending, __ATOMIC_ACQUIRE) && !(flags & HP_USAGE_NO_JNI) &&
	    !hp_in_gc_callback() && hp_jni_env(p->vm))
		hp_modes_init(p, true);
	/* GetEnv costs ~30 ns: only ask when a JNI mode is about to be tried. */
	struct lazy_env env = { p, (flags & HP_USAGE_NO_JNI) != 0, false, NULL };

	/* What the probe knows about the last collection. */
	struct hp_heap_usage last;
	bool have_live = hp_events_last_gc(p, &last) == 0;
	struct live_figure fig;
	live_figure(p, false, have_live ? &last : NULL, &fig);
	u.live = fig.bytes;
	u.live_kind = fig.kind;
	u.live_mode = fig.mode;
	u.live_gc_count = fig.gc_count;
	u.live_timestamp_ns = fig.timestamp_ns;

	int rc = -ENODATA;
	if (flags & HP_USAGE_POST_GC) {
		if (have_live) {
			u.mode = last.mode;
			u.kind = last.kind;
			u.used = last.used;
			u.committed = last.committed;
			u.max = last.max;
			u.gc_count = last.gc_count;
			u.timestamp_ns = last.timestamp_ns;
			rc = 0;
		} else {
			/* No collection seen by the probe: the heap's own last-GC
			 * fields may still know one (e.g. the probe came late). */
			struct hp_mode_reading r = fig.fields;
			rc = fig.fields_rc == 1 ? read_lazy(p, HP_MODE_LAST_GC_FIELDS, &env, &r) : fig.fields_rc;
			uint64_t used, committed;
			JNIEnv *jni;
			if (rc == 0) {
				fill(&u, HP_MODE_LAST_GC_FIELDS, &r);
			} else if (p->mode_status[HP_MODE_JMM] == 0 && (jni = lazy_env_get(&env)) &&
				   hp_jmm_collection_usage(p, jni, &used, &committed) == 0 && used) {
				/* Last resort: what MemoryPoolMXBean.getCollectionUsage
				 * sums to (each pool after its last collection). */
				/* Pools record it after their own collections, young
				 * ones included: promise no more than that. */
				struct hp_mode_reading j = { used, committed, 0, HP_USAGE_AFTER_YOUNG_GC };
				fill(&u, HP_MODE_JMM, &j);
				rc = 0;
			} else {
				rc = -ENODATA;
			}
		}
	} else if (flags & (1u << 8)) {
		enum hp_mode m = (enum hp_mode)((flags >> 9) & 0xff);
		struct hp_mode_reading r;
		if (m >= HP_MODE_COUNT)
			return -EINVAL;
		if (p->mode_status[m] == -EAGAIN && p->mode_ops[m] && p->mode_ops[m]->needs_jni && !p->jni_modes_wanted &&
		    !(flags & HP_USAGE_NO_JNI) && !hp_in_gc_callback() && hp_jni_env(p->vm)) {
			p->jni_modes_wanted = true;
			hp_modes_init(p, true);
		}
		rc = read_lazy(p, m, &env, &r);
		if (rc == 0)
			fill(&u, m, &r);
	} else {
		for (size_t i = 0; i < sizeof(current_order) / sizeof(current_order[0]); i++) {
			struct hp_mode_reading r;
			if (read_lazy(p, current_order[i], &env, &r) != 0)
				continue;
			fill(&u, current_order[i], &r);
			rc = 0;
			break;
		}
	}
	if (rc == -ENODATA && !(flags & (HP_USAGE_POST_GC | (1u << 8))) && !p->jni_modes_wanted &&
	    (p->opts.flags & HP_OPEN_LAZY_JNI_MODES) && !(flags & HP_USAGE_NO_JNI) && !hp_in_gc_callback() &&
	    hp_jni_env(p->vm)) {
		/* Nothing without JNI answered: the deferred modes are needed. */
		p->jni_modes_wanted = true;
		hp_modes_init(p, true);
		return hp_heap_usage(p, flags, out);
	}
	if (rc == 0 && !u.gc_count)
		u.gc_count = hp_events_gc_count(p);
	size_t n = caller_sz < sizeof(u) ? caller_sz : sizeof(u);
	memcpy(out, &u, n);
	out->sz = caller_sz;
	return rc;
}
