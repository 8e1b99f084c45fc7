/* Setting up the stack walker, the frame decoder, the virtual-thread chunk
 * reader and SafeFetch at VM init or attach, and the profile's account of
 * where stacks came from. */
#include "agent/prof.h"

/* ---- stack walker set-up --------------------------------------------------- */

/* A virtual thread's stack, as GetStackTrace gives it, ends above the
 * continuation's entry, Continuation.enterSpecial (JDK 21+): its
 * jmethodID, made here, tells the decoder where to stop. 0 before JDK 21. */
static uintptr_t enter_special_id(jvmtiEnv *jvmti, JNIEnv *jni)
{
	uintptr_t id = 0;
	jclass c = (*jni)->FindClass(jni, "jdk/internal/vm/Continuation");
	if (!c) {
		(*jni)->ExceptionClear(jni);
		return 0;
	}
	jint count = 0;
	jmethodID *methods = NULL;
	if ((*jvmti)->GetClassMethods(jvmti, c, &count, &methods) == JVMTI_ERROR_NONE) {
		for (jint i = 0; i < count && !id; i++) {
			char *name = NULL;
			if ((*jvmti)->GetMethodName(jvmti, methods[i], &name, NULL, NULL) == JVMTI_ERROR_NONE && name &&
			    strcmp(name, "enterSpecial") == 0)
				id = (uintptr_t)methods[i];
			(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
		}
		(*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
	}
	(*jni)->DeleteLocalRef(jni, c);
	return id;
}

/* The decoder names a Method by the jmethodID its class keeps, which
 * exists only once JVMTI or JNI asked for one: GetClassMethods makes them
 * for every method of a class, once, when the class is prepared (and for
 * the classes already loaded when decoding starts), as async-profiler
 * does. Without it, each stack with a method never named before would go
 * to GetStackTrace. Costs a JVMTI call per class and 8 bytes per method. */
static void make_method_ids(jvmtiEnv *jvmti, jclass klass)
{
	jint count = 0;
	jmethodID *methods = NULL;
	if ((*jvmti)->GetClassMethods(jvmti, klass, &count, &methods) == JVMTI_ERROR_NONE)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
}

void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	(void)jni, (void)thread;
	if (atomic_load_explicit(&prof.decode_ready, memory_order_acquire))
		make_method_ids(jvmti, klass);
}

static void make_loaded_method_ids(jvmtiEnv *jvmti, JNIEnv *jni)
{
	jint count = 0;
	jclass *classes = NULL;
	if ((*jvmti)->GetLoadedClasses(jvmti, &count, &classes) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < count; i++) {
		make_method_ids(jvmti, classes[i]);
		(*jni)->DeleteLocalRef(jni, classes[i]);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
}

/* The address of the libjvm symbol symbols/ names under `key` (a
 * static.* entry), or 0. */
static uintptr_t libjvm_symbol(const char *key)
{
	return hp_probe_static(prof.probe, key, 0);
}

/* The address of a libjvm static that symbols/ names under `key`
 * (static.Type._field), checked to lie in libjvm's data segments for `n`
 * bytes (.bss is in a writable segment, not a file-backed one), or NULL. */
static const volatile void *libjvm_static(const char *key, size_t n)
{
	return (const volatile void *)hp_probe_static(prof.probe, key, n);
}

/* Where the JVM counts class redefinitions (symbols/ static.JvmtiExport.*). */
static void find_redefinition_count(void)
{
	const struct hp_symdata *data = hp_probe_symdata(prof.probe);
	const char *count = hp_symdata_get(data, "static.JvmtiExport._redefinition_count");
	const char *flag = hp_symdata_get(data, "static.JvmtiExport._has_redefined_a_class");
	prof.redefinitions = libjvm_static("static.JvmtiExport._redefinition_count", 8);
	prof.has_redefined = prof.redefinitions ? NULL : libjvm_static("static.JvmtiExport._has_redefined_a_class", 1);
	if (!prof.redefinitions && !prof.has_redefined)
		logf_("no class-redefinition count in libjvm (%s): cached stacks are not retired when classes are "
		      "redefined (the periodic check against GetStackTrace turns the cache off if one goes wrong)",
		      count ? count : flag ? flag : "no symbols/ entry");
}

/* The decoder answers cache misses; without it they go to GetStackTrace.
 * With stacks=jvmti (`decoding` false) only its Method layout is set up,
 * for check_jmid. */
static void setup_decoder(jvmtiEnv *jvmti, JNIEnv *jni, bool decoding)
{
	char err[256] = "";
	int rc = hp_framedecode_init(&prof.decode, hp_probe_vmstructs(prof.probe), hp_probe_symdata(prof.probe), err,
				     sizeof(err));
	if (rc) {
		hp_framedecode_free(&prof.decode);
		snprintf(prof.decode_reason, sizeof(prof.decode_reason), "frame decoder unavailable: %s",
			 err[0] ? err : strerror(-rc));
		logf_("%s; new stacks come from GetStackTrace", prof.decode_reason);
		return;
	}
	prof.enter_special = decoding ? enter_special_id(jvmti, jni) : 0;
	prof.decode.walk = &prof.walk;
	prof.decode.methods.fetch = prof.safefetch.fetch ? &prof.safefetch : NULL;
	/* decoded return pcs are dated by the redefinition count */
	prof.decode.redefinitions = prof.redefinitions;
	prof.decode.has_redefined = prof.has_redefined;
	atomic_store_explicit(&prof.decode_ready, 1, memory_order_release);
	pthread_mutex_lock(&prof.sites.lock);
	prof.sites.check_id = check_jmid;
	prof.sites.version = method_version;
	pthread_mutex_unlock(&prof.sites.lock);
	if (!decoding)
		return;
	/* Prepared from now on, then the ones before: none is missed. */
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE, NULL);
	make_loaded_method_ids(jvmti, jni);
}

static const void *chunk_static(void *ctx, const char *key)
{
	(void)ctx;
	char full[128];
	snprintf(full, sizeof(full), "static.%s", key);
	return (const void *)libjvm_static(full, 4);
}

/* Frames past the continuation return barrier, in heap stack chunks: read
 * as the collector stores references (stackchunk.h). */
static void setup_chunks(void)
{
	static const struct hp_heap_info unknown = { .kind = HP_GC_UNKNOWN, .generational = -1 };
	const struct hp_heap_info *h = hp_probe_heap(prof.probe);
	if (!h)
		h = &unknown;
	bool compressed = false, x_colored = false;
	enum hp_heap_oops oops = HP_OOPS_WIDE;
	if (h->kind == HP_GC_Z) {
		oops = h->generational == 1 ? HP_OOPS_ZPOINTER : HP_OOPS_WIDE;
		x_colored = h->generational == 0;
	} else if (!hp_probe_flag_bool(prof.probe, "UseCompressedOops", &compressed) && compressed) {
		oops = HP_OOPS_NARROW;
	}
	char err[256] = "";
	int rc = h->kind == HP_GC_Z && h->generational < 0 ? -ENOENT : 0;
	if (rc)
		snprintf(err, sizeof(err), "which ZGC runs (generational or not) is unknown");
	else
		rc = hp_stackchunk_init(&prof.chunks, hp_probe_vmstructs(prof.probe), hp_probe_symdata(prof.probe), chunk_static, NULL, oops,
					x_colored, err, sizeof(err));
	if (rc) {
		snprintf(prof.chunk_reason, sizeof(prof.chunk_reason), "heap stack chunks not read: %s",
			 err[0] ? err : strerror(-rc));
		logf_("%s; virtual thread stacks past a return barrier come from GetStackTrace", prof.chunk_reason);
		return;
	}
	/* heap words by SafeFetchN where it checked out */
	prof.chunks.fetch = prof.safefetch.fetch ? &prof.safefetch : NULL;
	prof.walk.chunks = &prof.chunks;
}

/* HotSpot's SafeFetchN for the fast path's reads of memory that may be
 * gone (a Method's first sight, heap stack chunks): checked once, else
 * those reads are process_vm_readv system calls (safefetch.h). */
static void setup_safefetch(void)
{
	char err[256] = "";
	/* hp_safefetch_init checks that they lie in libjvm's code */
	int rc = hp_safefetch_init(&prof.safefetch, hp_probe_libjvm(prof.probe), libjvm_symbol("static.SafeFetchN_impl"),
				   libjvm_symbol("static._SafeFetchN_fault"),
				   libjvm_symbol("static._SafeFetchN_continuation"), err, sizeof(err));
	if (rc)
		logf_("safe reads are process_vm_readv system calls, not HotSpot's SafeFetchN: %s",
		      err[0] ? err : strerror(-rc));
}

/* The sampler's real interval (samplerate.h) needs each thread's
 * allocated bytes, read through the JNIEnv's offset in JavaThread that
 * the walker learnt. */
static void setup_rate(void)
{
	char err[256] = "";
	int rc = hp_allocated_init(&prof.allocated, hp_probe_vmstructs(prof.probe), err, sizeof(err));
	if (rc) {
		snprintf(prof.rate_reason, sizeof(prof.rate_reason), "not measured: %s", err[0] ? err : strerror(-rc));
		logf_("the sampler's interval is %s; weights use the interval asked", prof.rate_reason);
		return;
	}
	const char *after_gc = hp_symdata_get(hp_probe_symdata(prof.probe), "sampler.after_gc_tlab");
	prof.after_gc_aside = after_gc && !strcmp(after_gc, "extra") && prof.allocated.off_refills >= 0;
	if (after_gc && !prof.after_gc_aside)
		logf_("the sampler takes the first object after a collection ahead of its turn, but %s: those samples "
		      "weigh as the others", prof.allocated.off_refills < 0
						     ? "VMStructs has no usable ThreadLocalAllocBuffer::_number_of_refills"
						     : "the data's sampler.after_gc_tlab is not 'extra'");
	atomic_store_explicit(&prof.rate_ready, 1, memory_order_release);
}

/* The frame walker needs the code cache and the interpreter, which exist
 * from VM init on, and one JavaThread* to learn where JNIEnv sits in it:
 * java.lang.Thread.eetop of the calling thread. */
void setup_walker(jvmtiEnv *jvmti, JNIEnv *jni)
{
	char err[256] = "";
	setup_safefetch();
	/* java.lang.Class.classRedefinedCount, for method_version (sample.c) */
	jclass cc = (*jni)->FindClass(jni, "java/lang/Class");
	prof.class_redefined_count = cc ? (*jni)->GetFieldID(jni, cc, "classRedefinedCount", "I") : NULL;
	(*jni)->ExceptionClear(jni);
	if (cc)
		(*jni)->DeleteLocalRef(jni, cc);
	if (prof.o.stacks == HP_STACKS_JVMTI) {
		snprintf(prof.walk_reason, sizeof(prof.walk_reason), "stacks=jvmti");
		snprintf(prof.rate_reason, sizeof(prof.rate_reason), "not measured (stacks=jvmti: no JavaThread offset)");
		find_redefinition_count();
		setup_decoder(jvmti, jni, false);   /* jmethodID checks only */
		return;
	}
	int rc = hp_framewalk_init(&prof.walk, hp_probe_vmstructs(prof.probe), hp_probe_symdata(prof.probe), hp_probe_libjvm(prof.probe), err,
				   sizeof(err));
	jthread self = NULL;
	if (!rc) {
		jlong eetop = 0;
		jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
		jfieldID f = tc ? (*jni)->GetFieldID(jni, tc, "eetop", "J") : NULL;
		if (f && (*jvmti)->GetCurrentThread(jvmti, &self) == JVMTI_ERROR_NONE && self)
			eetop = (*jni)->GetLongField(jni, self, f);
		(*jni)->ExceptionClear(jni);
		if (tc)
			(*jni)->DeleteLocalRef(jni, tc);
		if (self)
			(*jni)->DeleteLocalRef(jni, self);
		rc = eetop ? hp_framewalk_set_thread(&prof.walk, jni, (uintptr_t)eetop, err, sizeof(err))
			   : (snprintf(err, sizeof(err), "java.lang.Thread.eetop is unreadable"), -ENOENT);
	}
	if (!rc)
		rc = hp_stackcache_init(&prof.stack_cache, STACK_CACHE_SLOTS, STACK_CACHE_BYTES);
	if (rc) {
		snprintf(prof.walk_reason, sizeof(prof.walk_reason), "frame walker unavailable: %s",
			 err[0] ? err : strerror(-rc));
		snprintf(prof.rate_reason, sizeof(prof.rate_reason), "not measured (no JavaThread offset: the frame "
			 "walker is off)");
		logf_("%s; stacks come from GetStackTrace", prof.walk_reason);
		find_redefinition_count();      /* frames named per method version all the same */
		return;
	}
	find_redefinition_count();
	setup_decoder(jvmti, jni, true);
	setup_rate();
	atomic_store(&prof.classes_unloaded, hp_perfdata_classes_unloaded(prof.probe));
	/* the continuation return barrier's address, where symbols/ names it */
	const volatile uintptr_t *rb = libjvm_static("static.StubRoutines._cont_returnBarrier", 8);
	if (rb) {
		prof.walk.cont_return_barrier = *rb;
		setup_chunks();
	}
	const struct hp_heap_info *heap = hp_probe_heap(prof.probe);
	enum hp_gc_kind gc = heap ? heap->kind : HP_GC_UNKNOWN;
	prof.unloads_in_pauses = gc == HP_GC_SERIAL || gc == HP_GC_PARALLEL || gc == HP_GC_G1 || gc == HP_GC_EPSILON;
	atomic_store_explicit(&prof.walk_ready, 1, memory_order_release);
}

/* One line on where stacks came from, for the profile and the log. */
void describe_stacks(char *out, size_t cap)
{
	struct hp_stackcache *c = &prof.stack_cache;
	if (!atomic_load(&prof.walk_ready)) {
		snprintf(out, cap, "stacks: GetStackTrace for every sample (%s)",
			 prof.walk_reason[0] ? prof.walk_reason : "walker not set up yet");
		return;
	}
	uint64_t failed = 0, top = 0;
	int top_reason = 0;
	for (int i = 0; i < HP_FW_RESULTS; i++) {
		uint64_t f = atomic_load(&prof.walk_failed[i]);
		failed += f;
		if (f > top)
			top = f, top_reason = i;
	}
	/* Why misses were not decoded: the decoder's reasons, then the
	 * method table's (for "method without a jmethodID"). */
	uint64_t undecoded = 0, dtop = 0, mtop = 0;
	int dtop_result = 0;
	for (int i = 0; i < HP_FD_RESULTS; i++) {
		uint64_t f = atomic_load(&prof.decode_failed[i]);
		undecoded += f;
		if (f > dtop)
			dtop = f, dtop_result = -i - 1;
	}
	const char *dreason = dtop ? hp_framedecode_result_name(dtop_result) : "none";
	for (int i = 0; i < HP_METHOD_RESULTS && dtop_result == HP_FD_METHOD; i++) {
		uint64_t f = atomic_load(&prof.method_failed[i]);
		if (f > mtop)
			mtop = f, dreason = hp_method_result_name(-i - 1);
	}
	if (!atomic_load(&prof.decode_ready))
		dreason = prof.decode_reason[0] ? prof.decode_reason : "decoder not set up";
	uint64_t asked = atomic_load(&prof.asked);
	int len = snprintf(out, cap, "stacks: %llu cached, %llu decoded, %llu asked GetStackTrace (%llu not walkable "
			   "(most: %s), %llu walked, not decoded (most: %s)), %llu cached and %llu decoded checked "
			   "against GetStackTrace, %llu mismatches, %llu stale, cache %zu bytes%s, %u methods, "
			   "%llu not cacheable (interpreted frames, no class-unload epoch; or JDK 11 after a class "
			   "redefinition), %llu GetStackTrace answers "
			   "with an invalid jmethodID, %llu checks overtaken by a class redefinition, frame table: %u "
			   "distinct frames, %zu bytes with the sites' frame ids, return pcs (%s): %llu compiled "
			   "frames named from kept ones (%llu after a class redefinition), %llu entries written, "
			   "%llu chains more than %d deep decoded each time",
			   (unsigned long long)hp_striped_sum(&prof.cache_hits, memory_order_relaxed),
			   (unsigned long long)atomic_load(&prof.decoded), (unsigned long long)asked,
			   (unsigned long long)failed,
			   !top ? "none" : hp_framewalk_result_name(-top_reason - 1),
			   (unsigned long long)undecoded, dreason, (unsigned long long)atomic_load(&c->verified),
			   (unsigned long long)atomic_load(&prof.decode_checked),
			   (unsigned long long)atomic_load(&c->mismatches), (unsigned long long)atomic_load(&c->stale),
			   atomic_load(&c->bytes), atomic_load(&c->full) ? ", full" : "",
			   atomic_load(&prof.decode_ready) ? atomic_load(&prof.decode.methods.count) : 0u,
			   (unsigned long long)atomic_load(&prof.walk_failed[-WALK_NO_EPOCH - 1]),
			   (unsigned long long)(atomic_load(&prof.asked_invalid) + atomic_load(&prof.sites.invalid_ids)),
			   (unsigned long long)atomic_load(&prof.checks_overtaken), atomic_load(&prof.sites.nframes),
			   hp_sites_frame_bytes(&prof.sites),
			   !prof.decode.pcs ? "not kept: no table"
			   : prof.decode.redefinitions ? "dated by the class redefinition count"
			   : prof.decode.has_redefined ? "JDK 11's redefinition flag: none kept once set"
						       : "not kept: no class redefinition count",
			   (unsigned long long)atomic_load(&prof.decode.pc_hits),
			   (unsigned long long)atomic_load(&prof.decode.pc_hits_redefined),
			   (unsigned long long)atomic_load(&prof.decode.pc_kept),
			   (unsigned long long)atomic_load(&prof.decode.pc_deep), HP_FD_PC_CHAIN);
	if (len > 0 && (size_t)len < cap && prof.walk.cont_return_barrier) {
		/* virtual threads: the frames past a return barrier */
		struct hp_stackchunk *k = &prof.chunks;
		uint64_t kfailed = 0, ktop = 0;
		int ktop_reason = 0;
		for (int i = 0; i < HP_SC_RESULTS; i++) {
			uint64_t f = atomic_load(&k->failed[i]);
			kfailed += f;
			if (f > ktop)
				ktop = f, ktop_reason = -i - 1;
		}
		if (prof.walk.chunks)
			len += snprintf(out + len, cap - (size_t)len, ", heap stack chunks: %llu stacks read past a "
					"return barrier (%llu frames), %llu not read (most: %s), heap read by %s",
					(unsigned long long)atomic_load(&k->walked), (unsigned long long)atomic_load(&k->frames),
					(unsigned long long)kfailed, ktop ? hp_stackchunk_result_name(ktop_reason) : "none",
					k->fetch ? "SafeFetchN" : "process_vm_readv");
		else
			len += snprintf(out + len, cap - (size_t)len, ", %s", prof.chunk_reason);
	}
	if (atomic_load(&c->disabled) == 1 && len > 0 && (size_t)len < cap)
		snprintf(out + len, cap - (size_t)len, "; cache and decoder OFF: %s", c->reason);
}
