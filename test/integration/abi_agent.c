/* ABI growth of the sz-prefixed structs, in a real JVM: a caller built
 * against an older (smaller) or newer (larger) struct than the library's
 * gets the fields it knows, and nothing is written past its sz. Prints
 * "abi.<check>: ok" or "abi.<check>: FAIL <why>" per check at VMInit. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <jvmti.h>

#include "heapprobe.h"

static struct hp_probe *probe;

#define CANARY 0xA5

/* A struct of `sz` bytes followed by canary bytes. */
union buf {
	unsigned char bytes[1024];
	size_t sz;
};

static int canary_ok(const union buf *b, size_t sz)
{
	for (size_t i = sz; i < sz + 64; i++)
		if (b->bytes[i] != CANARY)
			return 0;
	return 1;
}

static void fill(union buf *b, size_t sz)
{
	memset(b->bytes, CANARY, sizeof(b->bytes));
	memset(b->bytes, 0, sz);
	b->sz = sz;
}

static void check(const char *name, int ok, const char *why)
{
	printf("abi.%s: %s%s%s\n", name, ok ? "ok" : "FAIL", ok ? "" : " ", ok ? "" : why);
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	union buf b;
	char why[200];
	/* hp_heap_usage: an old caller that knew only up to gc_count */
	size_t old_usage = offsetof(struct hp_heap_usage, timestamp_ns);
	fill(&b, old_usage);
	int rc = hp_heap_usage(probe, 0, (struct hp_heap_usage *)b.bytes);
	const struct hp_heap_usage *u = (const void *)b.bytes;
	snprintf(why, sizeof(why), "rc %d, used %llu, sz %zu, canary %d", rc, (unsigned long long)u->used, u->sz,
		 canary_ok(&b, old_usage));
	check("heap_usage_old_size", rc == 0 && u->used > 0 && u->sz == old_usage && canary_ok(&b, old_usage), why);
	/* ... and a newer caller with 64 more bytes the library does not know */
	size_t new_usage = sizeof(struct hp_heap_usage) + 64;
	fill(&b, new_usage);
	rc = hp_heap_usage(probe, 0, (struct hp_heap_usage *)b.bytes);
	snprintf(why, sizeof(why), "rc %d, used %llu, canary %d", rc, (unsigned long long)u->used,
		 canary_ok(&b, new_usage));
	check("heap_usage_new_size", rc == 0 && u->used > 0 && canary_ok(&b, new_usage), why);

	/* hp_marking: 0.1's struct ended at live_source; the first ones at
	 * source; 0.5's at explicit_cycle; 0.6's at starts_source (0.7
	 * appended read) */
	size_t sizes[] = { offsetof(struct hp_marking, source) + sizeof(const char *),
			   offsetof(struct hp_marking, live_source) + sizeof(const char *),
			   offsetof(struct hp_marking, explicit_cycle) + sizeof(int),
			   offsetof(struct hp_marking, starts_source) + sizeof(const char *),
			   sizeof(struct hp_marking), sizeof(struct hp_marking) + 64 };
	const char *names[] = { "marking_oldest_size", "marking_0_1_size", "marking_0_5_size", "marking_0_6_size",
				"marking_size", "marking_new_size" };
	for (int i = 0; i < 6; i++) {
		fill(&b, sizes[i]);
		rc = hp_marking(probe, (struct hp_marking *)b.bytes);
		const struct hp_marking *m = (const void *)b.bytes;
		snprintf(why, sizeof(why), "rc %d, source %s, canary %d", rc, m->source ? m->source : "NULL",
			 canary_ok(&b, sizes[i]));
		check(names[i], rc == 0 && m->source && canary_ok(&b, sizes[i]), why);
	}
	/* too small to hold the count: refused, nothing written past sz */
	fill(&b, sizeof(size_t) + 4);
	rc = hp_marking(probe, (struct hp_marking *)b.bytes);
	snprintf(why, sizeof(why), "rc %d", rc);
	check("marking_too_small_refused", rc == -EINVAL && canary_ok(&b, sizeof(size_t) + 4), why);
	fflush(stdout);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	/* hp_open_opts as 0.1 callers built it: no symbols_dir */
	union buf b;
	size_t old_open = offsetof(struct hp_open_opts, symbols_dir);
	fill(&b, old_open);
	int rc = hp_open(vm, (const struct hp_open_opts *)b.bytes, &probe);
	check("open_opts_old_size", rc == 0 && canary_ok(&b, old_open), "hp_open failed");
	if (rc)
		return JNI_ERR;
	jvmtiEnv *jvmti;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
		return JNI_ERR;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.VMInit = on_vm_init;
	(*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb));
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
	return JNI_OK;
}
