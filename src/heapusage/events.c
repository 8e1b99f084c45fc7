/* The probe's own jvmtiEnv: a post-GC reading at every collection, and the
 * events the JMX mode needs.
 *
 * GarbageCollectionFinish runs with the world stopped, on the VM thread or a
 * GC thread; JNI is forbidden there and so is any JVMTI function but raw
 * monitors, memory management and env-local storage. The capture uses only
 * modes that need no JNI (a libffi call into the heap, plain loads) and
 * publishes the result through a seqlock: readers on other threads never
 * block and never see a torn reading.
 */
#include "heapusage/events.h"
#include "heapusage/gcthread.h"
#include "heapusage/modes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jvmti.h>

#include "heapusage/lastgc.h"
#include "heapusage/layout.h"
#include "heapusage/marking.h"
#include "heapusage/probe.h"


/* Capture modes in order of preference: the heap's used() through
 * create_heap_summary (no lock; G1's memory_usage override takes
 * MonitoringSupport_lock), then memory_usage(), then perfdata, which the
 * collectors refresh at the end of a pause too. */
static const enum hp_mode capture_order[] = {
	HP_MODE_HEAP_SUMMARY_CALL, HP_MODE_MEMORY_USAGE_CALL, HP_MODE_PERFDATA,
};

/* Tolerance for "agree": the last-GC fields are set from the same used()
 * the call returns, at the end of the same pause, so they must match to the
 * byte; we allow one region/TLAB's worth (1 MiB) for collectors that retire
 * allocation buffers after recording it. */
#define AGREE_BYTES (1u << 20)

struct hp_gc_capture {
	uint32_t seq;                           /* odd while being written */
	struct hp_heap_usage last;
	bool have;
	const volatile unsigned *total_collections;
	const volatile unsigned *total_full_collections;
	unsigned full_at_start;
	bool located;
	uint64_t live_bytes;                    /* last published post-GC used */
	bool pauses;                            /* events are pauses of concurrent cycles */
	uint64_t finish_events, full_gcs, failures, checks, disagreements, pause_events;
	uint64_t used_at_start;                 /* UINT64_MAX: unknown */
	char note[160];
};

static struct hp_probe *probe_of(jvmtiEnv *jvmti)
{
	void *p = NULL;
	(*jvmti)->GetEnvironmentLocalStorage(jvmti, &p);
	return p;
}

/* Finds the counters once the heap exists (not from a GC callback). */
static void capture_locate(struct hp_probe *p)
{
	struct hp_gc_capture *c = p->capture;
	const struct hp_heap_info *heap = hp_probe_heap(p);
	if (!c || !heap || c->located)
		return;
	c->located = true;
	int64_t off;
	char how[160];
	const char *events = hp_symdata_getf(p->data, "events.%s", hp_gc_data_key(heap));
	if (events && strcmp(events, "pause") == 0) {
		/* A pause's end is not a collection's end: what it reads is the
		 * current usage, garbage and all. */
		c->pauses = true;
		snprintf(c->note, sizeof(c->note), "GarbageCollectionFinish ends a pause of a concurrent %s cycle: "
			 "post-GC figure from the last-GC fields or JMX", hp_gc_kind_name(heap->kind));
	} else if (!events) {
		snprintf(c->note, sizeof(c->note), "GarbageCollectionFinish (no events.%s in the data: assumed "
			 "to end a collection)", hp_gc_data_key(heap));
	}
	if (hp_layout_member(p, "CollectedHeap", "_total_full_collections", &off, how, sizeof(how)) == 0)
		c->total_full_collections = (const volatile unsigned *)((const char *)heap->heap + off);
	if (hp_layout_member(p, "CollectedHeap", "_total_collections", &off, how, sizeof(how)) == 0)
		c->total_collections = (const volatile unsigned *)((const char *)heap->heap + off);
}

static int capture_read(struct hp_probe *p, struct hp_mode_reading *r, enum hp_mode *mode)
{
	for (size_t i = 0; i < sizeof(capture_order) / sizeof(capture_order[0]); i++)
		if (hp_mode_read(p, capture_order[i], NULL, r) == 0) {
			*mode = capture_order[i];
			return 0;
		}
	return -ENODATA;
}

static void JNICALL on_gc_start(jvmtiEnv *jvmti)
{
	struct hp_probe *p = probe_of(jvmti);
	if (!p || !p->capture)
		return;
	struct hp_gc_capture *c = p->capture;
	hp_gc_callback_enter();
	if (c->total_full_collections)
		c->full_at_start = *c->total_full_collections;
	/* G1's Remark and Cleanup pauses post these events too, and free
	 * nothing (or little): the usage at start tells them apart. */
	struct hp_mode_reading r;
	enum hp_mode m;
	c->used_at_start = capture_read(p, &r, &m) == 0 ? r.used : UINT64_MAX;
	hp_gc_callback_leave();
}

static void publish(struct hp_gc_capture *c, const struct hp_heap_usage *u)
{
	__atomic_store_n(&c->seq, c->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	c->last = *u;
	c->have = true;
	__atomic_store_n(&c->seq, c->seq + 1, __ATOMIC_RELEASE);
}

/* At a quiet point (the world is stopped) the last-GC fields, when this
 * collection refreshed them, must equal the heap's used() now. */
static void cross_check(struct hp_probe *p, struct hp_gc_capture *c, const struct hp_heap_usage *u, bool full)
{
	struct hp_mode_reading f;
	if (u->mode == HP_MODE_PERFDATA || !hp_lastgc_refreshed_by(p, full) ||
	    hp_mode_read(p, HP_MODE_LAST_GC_FIELDS, NULL, &f) != 0)
		return;
	c->checks++;
	uint64_t diff = f.used > u->used ? f.used - u->used : u->used - f.used;
	if (diff > AGREE_BYTES) {
		c->disagreements++;
		if (c->disagreements >= 3)
			hp_mode_disable(p, HP_MODE_LAST_GC_FIELDS, -EBADMSG,
					"disagreed with %s after 3 collections (fields %llu, call %llu bytes)",
					hp_mode_name(u->mode), (unsigned long long)f.used,
					(unsigned long long)u->used);
	}
}

static void JNICALL on_gc_finish(jvmtiEnv *jvmti)
{
	struct hp_probe *p = probe_of(jvmti);
	if (!p || !p->capture)
		return;
	struct hp_gc_capture *c = p->capture;
	hp_gc_callback_enter();
	c->finish_events++;
	struct hp_heap_usage u = { .sz = sizeof(u) };
	bool full = false;
	const struct hp_heap_info *heap = &p->heap;
	if (c->total_full_collections)
		full = *c->total_full_collections != c->full_at_start;
	if (heap->generational == 0)
		full = true;    /* single-generation collectors collect the whole heap */
	if (full)
		c->full_gcs++;
	u.gc_count = c->total_collections ? *c->total_collections : c->finish_events;
	u.kind = full ? HP_USAGE_AFTER_FULL_GC : HP_USAGE_AFTER_YOUNG_GC;
	struct hp_mode_reading r;
	int rc = capture_read(p, &r, &u.mode);
	if (rc == 0) {
		u.used = r.used;
		u.committed = r.committed;
		u.max = r.max;
	}
	/* A pause that is not a collection (G1 Remark) left used as it was,
	 * or larger: its end is no post-GC point. */
	bool collected = full || (c->used_at_start != UINT64_MAX && u.used < c->used_at_start);
	if (rc == 0 && (c->pauses || !collected)) {
		c->pause_events++;
	} else if (rc == 0) {
		u.timestamp_ns = hp_now_ns();
		u.live = u.used;
		u.live_mode = u.mode;
		u.live_kind = u.kind;
		u.live_gc_count = u.gc_count;
		u.live_timestamp_ns = u.timestamp_ns;
		publish(c, &u);
		__atomic_store_n(&c->live_bytes, u.used, __ATOMIC_RELEASE);
		cross_check(p, c, &u, full);
		const struct hp_cb_pair *pair = hp_cb_slot_begin(&p->gc_cb);
		if (pair)
			((hp_gc_callback)pair->fn)(&u, pair->ctx);
		hp_cb_slot_end(&p->gc_cb);
	} else {
		c->failures++;
	}
	/* Every pause, a collection or not (G1's Remark and Cleanup end the
	 * concurrent cycles their counter counts). */
	hp_marking_observe(p, u.gc_count, false);
	hp_gc_callback_leave();
}

static void JNICALL on_native_bind(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method,
				   void *address, void **new_address_ptr)
{
	struct hp_probe *p = probe_of(jvmti);
	if (p)
		hp_jmx_native_method_bind(p, jni, thread, method, address, new_address_ptr);
}

static void vm_live(struct hp_probe *p, JNIEnv *jni)
{
	uint64_t t0 = hp_now_ns();
	hp_modes_init(p, true);
	capture_locate(p);
	hp_marking_locate(p);
	uint64_t t1 = hp_now_ns();
	if (jni && !(p->opts.flags & HP_OPEN_LAZY_JNI_MODES))
		hp_jmx_vm_live(p, jni);
	uint64_t t2 = hp_now_ns();
	hp_modes_init(p, true);
	hp_marking_locate(p);       /* perfdata may have come up just now */
	p->vm_live_ns = hp_now_ns() - t0;
	p->jmx_bind_ns = t2 - t1;
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	struct hp_probe *p = probe_of(jvmti);
	if (p)
		vm_live(p, jni);
}

int hp_events_start(struct hp_probe *p, bool live, char *reason, size_t len)
{
	jvmtiEnv *j = p->jvmti;
	reason[0] = '\0';
	if (!j) {
		snprintf(reason, len, "no JavaVM given: no post-GC capture");
		return -ENOENT;
	}
	p->capture = calloc(1, sizeof(*p->capture));
	if (!p->capture)
		return -ENOMEM;
	(*j)->SetEnvironmentLocalStorage(j, p);

	jvmtiCapabilities want, have;
	memset(&want, 0, sizeof(want));
	want.can_generate_garbage_collection_events = 1;
	want.can_generate_native_method_bind_events = 1;
	memset(&have, 0, sizeof(have));
	(*j)->GetPotentialCapabilities(j, &have);
	want.can_generate_garbage_collection_events &= have.can_generate_garbage_collection_events;
	want.can_generate_native_method_bind_events &= have.can_generate_native_method_bind_events;
	(*j)->AddCapabilities(j, &want);
	memset(&have, 0, sizeof(have));
	(*j)->GetCapabilities(j, &have);

	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.GarbageCollectionStart = on_gc_start;
	cb.GarbageCollectionFinish = on_gc_finish;
	cb.NativeMethodBind = on_native_bind;
	cb.VMInit = on_vm_init;
	(*j)->SetEventCallbacks(j, &cb, sizeof(cb));
	if (have.can_generate_garbage_collection_events) {
		(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_START, NULL);
		(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
		snprintf(p->capture->note, sizeof(p->capture->note), "GarbageCollectionFinish");
	} else {
		snprintf(reason, len, "JVMTI refused can_generate_garbage_collection_events: no post-GC capture");
		snprintf(p->capture->note, sizeof(p->capture->note), "%s", reason);
	}
	if (have.can_generate_native_method_bind_events)
		(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_NATIVE_METHOD_BIND, NULL);
	if (!live) {
		(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
	} else {
		JNIEnv *jni = hp_jni_env(p->vm);
		vm_live(p, jni);
	}
	return reason[0] ? -ENOTSUP : 0;
}

void hp_events_stop(struct hp_probe *p)
{
	jvmtiEnv *j = p->jvmti;
	if (j) {
		(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_GARBAGE_COLLECTION_START, NULL);
		(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
		(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_NATIVE_METHOD_BIND, NULL);
		(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_VM_INIT, NULL);
	}
}

int hp_events_last_gc(struct hp_probe *p, struct hp_heap_usage *out)
{
	struct hp_gc_capture *c = p->capture;
	if (!c)
		return -ENODATA;
	for (int tries = 0; tries < 64; tries++) {
		uint32_t s1 = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1)
			continue;
		bool have = c->have;
		*out = c->last;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&c->seq, __ATOMIC_RELAXED) == s1)
			return have ? 0 : -ENODATA;
	}
	return -EAGAIN;
}

uint64_t hp_events_gc_count(struct hp_probe *p)
{
	struct hp_gc_capture *c = p->capture;
	if (!c)
		return 0;
	/* Shenandoah leaves _total_collections at 0: count its GC events. */
	if (c->total_collections && *c->total_collections)
		return *c->total_collections;
	return c->finish_events;
}

uint64_t hp_gc_count(struct hp_probe *p)
{
	return p ? hp_events_gc_count(p) : 0;
}

void hp_events_stats(struct hp_probe *p, struct hp_events_stats *out)
{
	memset(out, 0, sizeof(*out));
	struct hp_gc_capture *c = p->capture;
	if (!c) {
		out->capture_note = "no JVMTI environment";
		return;
	}
	out->gc_finish_events = c->finish_events;
	out->full_gcs = c->full_gcs;
	out->capture_failures = c->failures;
	out->pause_events = c->pause_events;
	out->cross_checks = c->checks;
	out->disagreements = c->disagreements;
	out->capture_note = c->note;
}

void hp_events_free(struct hp_probe *p)
{
	free(p->capture);
	p->capture = NULL;
}

uint64_t hp_events_live_bytes(struct hp_probe *p)
{
	return p->capture ? __atomic_load_n(&p->capture->live_bytes, __ATOMIC_ACQUIRE) : 0;
}
