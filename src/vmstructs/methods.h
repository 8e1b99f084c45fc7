/* Method* -> what JVMTI GetStackTrace would say of it: its jmethodID,
 * whether it is native, where its bytecodes begin. For stacks decoded
 * without GetStackTrace (framedecode.h).
 *
 * The jmethodID of a Method is the one cached in its holder:
 *   Method::_constMethod -> ConstMethod::_constants -> ConstantPool::_pool_holder
 *   -> InstanceKlass::_methods_jmethod_ids[ConstMethod::_method_idnum + 1]
 * (slot 0 holds the length), which is what InstanceKlass::get_jmethod_id
 * hands JVMTI. An empty slot (no jmethodID made yet: no JVMTI or JNI call
 * has named the method) is not filled here: the caller asks GetStackTrace
 * once, which makes it.
 *
 * What a jmethodID is differs by release (symbols/ code.jmethodid):
 *   pointer (JDK 11-24): a Method** into a JNIMethodBlock, never freed. A
 *     jmethodID names this Method only while *jmid == Method*: after a
 *     redefinition an old (EMCP or obsolete) method's slot names the new
 *     version, after class unloading the slot holds _free_method (55).
 *   table (JDK 26): a 64-bit integer, never reused, looked up in
 *     JmethodIDTable. A Method is first checked to be in its holder's
 *     InstanceKlass::_methods (a current, not an old, version).
 *
 * Cost. The first sight of a Method* is checked with safe reads (about 8
 * system calls, ~5 us), the result kept in a lock-free table keyed by the
 * address. A kept entry is re-checked at every use with plain loads, which
 * are safe because the Method is on the calling thread's own stack (so it is
 * alive) and was validated at this address before: Method::_constMethod
 * must be the one kept and the holder's jmethodID slot must still hold the
 * kept jmethodID (and, pointer kind, *jmid the Method). An entry is also
 * tied to the caller's epoch (the classes-unloaded count): a Method* seen
 * again after classes were unloaded is validated again.
 */
#ifndef HP_METHODS_H
#define HP_METHODS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hp_vms;
struct hp_symdata;
struct hp_safefetch;

#define HP_METHODS_SLOTS 16384

/* Why a Method* got no jmethodID. */
enum hp_method_result {
	HP_METHOD_OK = 0,
	HP_METHOD_UNREADABLE = -1,      /* a pointer on the way is unreadable or misaligned */
	HP_METHOD_NO_ID = -2,           /* no jmethodID made yet (GetStackTrace makes it) */
	HP_METHOD_OLD = -3,             /* a redefined class's old version */
	HP_METHOD_BAD_BCP = -4,         /* an interpreted frame's bcp outside the method's code */
	HP_METHOD_RESULTS = 4
};
const char *hp_method_result_name(int result);

struct hp_method_entry {
	_Atomic uint32_t seq;           /* odd while being written */
	_Atomic uintptr_t method;       /* 0 = free */
	uintptr_t const_method, jmid, jmid_slot;
	uint64_t epoch;
	uint16_t code_size;
	bool native;
};

struct hp_methods {
	/* layout (VMStructs) */
	int64_t off_const_method, off_access_flags, off_constants, off_idnum, off_code_size;
	int64_t off_pool_holder, off_jmethod_ids, off_methods, off_array_data;
	int64_t const_method_size;
	bool jmid_is_pointer;
	/* how first sights are read: HotSpot's SafeFetchN when set (no
	 * system call), else process_vm_readv; the caller sets it */
	const struct hp_safefetch *fetch;
	/* the table */
	struct hp_method_entry *slots;
	pthread_mutex_t lock;           /* writers only */
	_Atomic uint32_t count;
	_Atomic uint64_t validated, failed[HP_METHOD_RESULTS], full;
};

/* Reads the layout and makes the table. 0, or -ENOENT (a VMStructs entry or
 * the symbols/ fact code.jmethodid missing: named), -ENOMEM. */
int hp_methods_init(struct hp_methods *m, const struct hp_vms *vms, const struct hp_symdata *data, char *err,
		    size_t errlen);
void hp_methods_free(struct hp_methods *m);

/* What GetStackTrace says of a frame of `method` on the calling thread's
 * own stack: its jmethodID in *jmid and its jlocation in *location: -1 for
 * a native method, else the bci, which an interpreted frame gives as `bcp`
 * (interpreted true) and a compiled one as `bci` (SynchronizationEntryBCI,
 * -1, reads as 0, as compiledVFrame::bci() says). `epoch` dates kept
 * entries (see above). 0 or an hp_method_result. */
int hp_methods_frame(struct hp_methods *m, uintptr_t method, bool interpreted, uintptr_t bcp, int32_t bci,
		     uint64_t epoch, uintptr_t *jmid, int64_t *location);

/* The table slot where a Method*'s probe starts. */
static inline uint32_t hp_methods_slot(uintptr_t method)
{
	uint64_t h = (uint64_t)method * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 40) & (HP_METHODS_SLOTS - 1);
}

/* Asks the cache for what hp_methods_frame(method) will read first (its
 * table slot and the Method's first words), so that a stack's Methods
 * arrive together rather than one cache miss after another. A hint: any
 * address will do (a prefetch does not fault). */
static inline void hp_methods_prefetch(const struct hp_methods *m, uintptr_t method)
{
	__builtin_prefetch(&m->slots[hp_methods_slot(method)]);
	__builtin_prefetch((const void *)(method + (uintptr_t)m->off_const_method));
}

/* Whether `jmid` is a jmethodID naming a live Method whose class keeps it
 * in its jmethodID cache (pointer kind only; table kind: -ENOTSUP). Every
 * read is a safe one (~10 system calls): for a jmethodID that came from
 * outside, before it is handed to JVMTI. Under heavy class redefinition
 * HotSpot's own GetStackTrace can return a jmethodID read from a cache
 * array that was freed meanwhile (seen on 17.0.21: garbage values, and
 * GetMethodName on them faults in Method::checked_resolve_jmethod_id).
 * 0, HP_METHOD_UNREADABLE or HP_METHOD_NO_ID. */
int hp_methods_check_id(const struct hp_methods *m, uintptr_t jmid);

#endif
