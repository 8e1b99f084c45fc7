/* Method* -> jmethodID and jlocation (see methods.h). */
#include "vmstructs/methods.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vmstructs/symdata.h"
#include "vmstructs/errmsg.h"
#include "vmstructs/safefetch.h"
#include "vmstructs/safemem.h"
#include "vmstructs/vmstructs.h"

#define WORD 8
#define JVM_ACC_NATIVE 0x0100           /* jvm.h (class file access flag), the same on every release */
#define MAX_PROBE 32
#define MAX_METHODS_SCAN 65536          /* u2 idnums: no class has more */

static const char *const result_names[HP_METHOD_RESULTS] = {
	"Method unreadable", "no jmethodID yet", "old version of a redefined method", "bcp outside the method",
};

const char *hp_method_result_name(int result)
{
	return result < 0 && result >= -HP_METHOD_RESULTS ? result_names[-result - 1] : "ok";
}

#define MT(type, field, member) \
	{ type, field, HP_VMS_OFFSET, offsetof(struct hp_methods, member), HP_VMS_REQUIRED, 0, 0 }

/* From a Method* to its class, name and jmethodID, every release. */
static const struct hp_vms_entry methods_table[] = {
	{ "ConstMethod", NULL, HP_VMS_SIZE, offsetof(struct hp_methods, const_method_size), HP_VMS_REQUIRED, 0, 0 },
	MT("Method", "_constMethod", off_const_method),
	MT("Method", "_access_flags", off_access_flags),
	MT("ConstMethod", "_constants", off_constants),
	MT("ConstMethod", "_method_idnum", off_idnum),
	MT("ConstMethod", "_code_size", off_code_size),
	MT("ConstantPool", "_pool_holder", off_pool_holder),
	MT("InstanceKlass", "_methods_jmethod_ids", off_jmethod_ids),
	MT("InstanceKlass", "_methods", off_methods),
	MT("Array<Klass*>", "_data[0]", off_array_data),
};

int hp_methods_init(struct hp_methods *m, const struct hp_vms *v, const struct hp_symdata *d, char *err,
		    size_t errlen)
{
	memset(m, 0, sizeof(*m));
	int rc = hp_vms_bind(v, methods_table, HP_VMS_N(methods_table), m, "method names", err, errlen);
	if (rc)
		return rc;
	const char *kind = d ? hp_symdata_get(d, "code.jmethodid") : NULL;
	if (!kind || (strcmp(kind, "pointer") && strcmp(kind, "table")))
		return hp_fail(err, errlen, -ENOENT, "symbols/ data has no usable code.jmethodid: pointer or table");
	m->jmid_is_pointer = strcmp(kind, "pointer") == 0;
	m->slots = calloc(HP_METHODS_SLOTS, sizeof(*m->slots));
	if (!m->slots)
		return hp_fail(err, errlen, -ENOMEM, "no memory for the method table");
	hp_prefault_write(m->slots, HP_METHODS_SLOTS * sizeof(*m->slots));      /* read before written */
	pthread_mutex_init(&m->lock, NULL);
	return 0;
}

void hp_methods_free(struct hp_methods *m)
{
	if (m->slots)
		pthread_mutex_destroy(&m->lock);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static inline bool aligned(uintptr_t p)
{
	return p && !(p & (WORD - 1));
}

/* First sight: every pointer read through a safe read (safefetch.h). */
static int validate(const struct hp_methods *m, uintptr_t method, struct hp_method_entry *e)
{
	uintptr_t cm, cp, holder, ids, len, jmid, resolved;
	uint16_t flags, idnum, code_size;
	if (hp_safefetch_read(m->fetch, &cm, (uintptr_t)(method + m->off_const_method), WORD) || !aligned(cm) ||
	    hp_safefetch_read(m->fetch, &flags, (uintptr_t)(method + m->off_access_flags), 2) ||
	    hp_safefetch_read(m->fetch, &cp, (uintptr_t)(cm + m->off_constants), WORD) || !aligned(cp) ||
	    hp_safefetch_read(m->fetch, &idnum, (uintptr_t)(cm + m->off_idnum), 2) ||
	    hp_safefetch_read(m->fetch, &code_size, (uintptr_t)(cm + m->off_code_size), 2) ||
	    hp_safefetch_read(m->fetch, &holder, (uintptr_t)(cp + m->off_pool_holder), WORD) || !aligned(holder) ||
	    hp_safefetch_read(m->fetch, &ids, (uintptr_t)(holder + m->off_jmethod_ids), WORD))
		return HP_METHOD_UNREADABLE;
	if (!ids)
		return HP_METHOD_NO_ID;
	uintptr_t slot = ids + ((uintptr_t)idnum + 1) * WORD;
	if (!aligned(ids) || hp_safefetch_read(m->fetch, &len, (uintptr_t)ids, WORD))
		return HP_METHOD_UNREADABLE;
	if ((uintptr_t)idnum + 1 > len)
		return HP_METHOD_NO_ID;
	if (hp_safefetch_read(m->fetch, &jmid, (uintptr_t)slot, WORD))
		return HP_METHOD_UNREADABLE;
	if (!jmid)
		return HP_METHOD_NO_ID;
	if (m->jmid_is_pointer) {
		/* The jmethodID names this Method, not a newer version. */
		if (!aligned(jmid) || hp_safefetch_read(m->fetch, &resolved, (uintptr_t)jmid, WORD))
			return HP_METHOD_UNREADABLE;
		if (resolved != method)
			return HP_METHOD_OLD;
	} else {
		/* A current method of its holder: in InstanceKlass::_methods. */
		uintptr_t arr;
		int32_t n;
		if (hp_safefetch_read(m->fetch, &arr, (uintptr_t)(holder + m->off_methods), WORD) || !aligned(arr) ||
		    hp_safefetch_read(m->fetch, &n, (uintptr_t)arr, 4) || n < 0 || n > MAX_METHODS_SCAN)
			return HP_METHOD_UNREADABLE;
		uintptr_t *all = malloc((size_t)(n ? n : 1) * WORD);
		if (!all || hp_safefetch_read(m->fetch, all, (uintptr_t)(arr + (uintptr_t)m->off_array_data), (size_t)n * WORD)) {
			free(all);
			return HP_METHOD_UNREADABLE;
		}
		int32_t i = 0;
		while (i < n && all[i] != method)
			i++;
		free(all);
		if (i == n)
			return HP_METHOD_OLD;
	}
	e->const_method = cm;
	e->jmid = jmid;
	e->jmid_slot = slot;
	e->code_size = code_size;
	e->native = (flags & JVM_ACC_NATIVE) != 0;
	return HP_METHOD_OK;
}

/* A kept entry still describes the Method at its address (see methods.h):
 * plain loads, the Method being alive on the caller's stack. */
static inline bool still_valid(const struct hp_methods *m, const struct hp_method_entry *e, uintptr_t method)
{
	if (*(const volatile uintptr_t *)(method + m->off_const_method) != e->const_method)
		return false;
	/* pointer kind: the JNIMethodBlock slot is never freed and says which
	 * Method the jmethodID names; table kind: the holder's cache slot (an
	 * array freed with its class or reallocated at its redefinition: the
	 * epoch, which counts both there, retires such entries first) */
	if (m->jmid_is_pointer)
		return *(const volatile uintptr_t *)e->jmid == method;
	return *(const volatile uintptr_t *)e->jmid_slot == e->jmid;
}

/* The kept entry for `method` copied out (seqlock read), or false. */
static bool lookup(struct hp_methods *m, uintptr_t method, uint64_t epoch, struct hp_method_entry *out)
{
	uint32_t i = hp_methods_slot(method);
	for (int probe = 0; probe < MAX_PROBE; probe++, i = (i + 1) & (HP_METHODS_SLOTS - 1)) {
		struct hp_method_entry *e = &m->slots[i];
		uintptr_t at = atomic_load_explicit(&e->method, memory_order_acquire);
		if (!at)
			return false;
		if (at != method)
			continue;
		uint32_t s0 = atomic_load_explicit(&e->seq, memory_order_acquire);
		if (s0 & 1)
			return false;
		out->const_method = e->const_method;
		out->jmid = e->jmid;
		out->jmid_slot = e->jmid_slot;
		out->epoch = e->epoch;
		out->code_size = e->code_size;
		out->native = e->native;
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&e->seq, memory_order_relaxed) != s0)
			return false;
		return out->epoch == epoch;
	}
	return false;
}

static void keep(struct hp_methods *m, uintptr_t method, const struct hp_method_entry *v, uint64_t epoch)
{
	pthread_mutex_lock(&m->lock);
	uint32_t i = hp_methods_slot(method);
	struct hp_method_entry *e = NULL;
	for (int probe = 0; probe < MAX_PROBE; probe++, i = (i + 1) & (HP_METHODS_SLOTS - 1)) {
		uintptr_t at = atomic_load_explicit(&m->slots[i].method, memory_order_relaxed);
		if (!at || at == method) {
			e = &m->slots[i];
			break;
		}
	}
	if (!e || (!atomic_load_explicit(&e->method, memory_order_relaxed) &&
		   atomic_load_explicit(&m->count, memory_order_relaxed) >= HP_METHODS_SLOTS / 2)) {
		atomic_fetch_add_explicit(&m->full, 1, memory_order_relaxed);
		pthread_mutex_unlock(&m->lock);
		return;
	}
	uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);
	atomic_store_explicit(&e->seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	e->const_method = v->const_method;
	e->jmid = v->jmid;
	e->jmid_slot = v->jmid_slot;
	e->epoch = epoch;
	e->code_size = v->code_size;
	e->native = v->native;
	atomic_store_explicit(&e->seq, s + 2, memory_order_release);
	if (!atomic_exchange_explicit(&e->method, method, memory_order_release))
		atomic_fetch_add_explicit(&m->count, 1, memory_order_relaxed);
	pthread_mutex_unlock(&m->lock);
}

int hp_methods_check_id(const struct hp_methods *m, uintptr_t jmid)
{
	if (!m->jmid_is_pointer)
		return -ENOTSUP;
	uintptr_t method;
	struct hp_method_entry e;
	if (!aligned(jmid) || hp_safefetch_read(m->fetch, &method, (uintptr_t)jmid, WORD) || !aligned(method))
		return HP_METHOD_UNREADABLE;
	int rc = validate(m, method, &e);
	if (rc == HP_METHOD_OLD)
		return HP_METHOD_NO_ID;
	if (rc)
		return rc;
	return e.jmid == jmid ? 0 : HP_METHOD_NO_ID;
}

int hp_methods_frame(struct hp_methods *m, uintptr_t method, bool interpreted, uintptr_t bcp, int32_t bci,
		     uint64_t epoch, uintptr_t *jmid, int64_t *location)
{
	struct hp_method_entry e;
	if (!aligned(method))
		return HP_METHOD_UNREADABLE;
	if (!lookup(m, method, epoch, &e) || !still_valid(m, &e, method)) {
		int rc = validate(m, method, &e);
		if (rc) {
			atomic_fetch_add_explicit(&m->failed[-rc - 1], 1, memory_order_relaxed);
			return rc;
		}
		atomic_fetch_add_explicit(&m->validated, 1, memory_order_relaxed);
		keep(m, method, &e, epoch);
	}
	*jmid = e.jmid;
	if (e.native) {
		*location = -1;
	} else if (interpreted) {
		/* Method::bci_from: the bytecodes follow the ConstMethod. */
		uintptr_t codes = e.const_method + m->const_method_size;
		if (bcp < codes || bcp >= codes + e.code_size) {
			atomic_fetch_add_explicit(&m->failed[-HP_METHOD_BAD_BCP - 1], 1, memory_order_relaxed);
			return HP_METHOD_BAD_BCP;
		}
		*location = (int64_t)(bcp - codes);
	} else {
		*location = bci < 0 ? 0 : bci;
	}
	return HP_METHOD_OK;
}
