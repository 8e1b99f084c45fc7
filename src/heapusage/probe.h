/* The probe object shared by the heapusage floor's parts (not public; the
 * agent goes through probe_access.h). */
#ifndef HP_PROBE_H
#define HP_PROBE_H

#include <jvmti.h>

#include "heapprobe.h"
#include "heapusage/probe_access.h"
#include "heapusage/gcthread.h"
#include "heapusage/gckind.h"
#include "vmstructs/symdata.h"
#include "vmstructs/libjvm.h"
#include "vmstructs/symtab.h"
#include "vmstructs/vmflags.h"
#include "vmstructs/vmstructs.h"

#define HP_REASON_LEN 256

struct hp_mode_ops;
struct hp_gc_capture;
struct hp_marking_state;

/* Also "hide-symbol=<mangled>" (libjvm symbol lookups miss it) and
 * "disable-mode=<name>" (the mode is disabled before init), repeatable. */
#define HP_MAX_FAULT_NAMES 8

struct hp_probe {
	JavaVM *vm;
	jvmtiEnv *jvmti;
	unsigned faults;
	char hidden_symbols[HP_MAX_FAULT_NAMES][128];
	char disabled_modes[HP_MAX_FAULT_NAMES][32];
	int fault_release;              /* "release=N" */
	char feature_note[80];          /* why feature is not what the JVM says */
	struct hp_open_opts opts;
	char debug_root[256];

	int status[HP_PART_COUNT];
	char reason[HP_PART_COUNT][HP_REASON_LEN];

	struct hp_libjvm jvm;
	struct hp_vms *vms;
	struct hp_symtab *syms;
	struct hp_vmflags flags;
	struct hp_heap_info heap;

	char vm_release[128];
	int feature;

	/* symbols/ data for this release (NULL: see data_reason) */
	struct hp_symdata *data;
	int data_status;
	char data_reason[HP_REASON_LEN];

	/* Heap usage modes: per-mode state owned by the mode's ops. */
	const struct hp_mode_ops *mode_ops[HP_MODE_COUNT];
	void *mode_state[HP_MODE_COUNT];
	int mode_status[HP_MODE_COUNT];
	char mode_reason[HP_MODE_COUNT][HP_REASON_LEN];
	bool modes_pending;             /* some mode said -EAGAIN: retry init */
	bool jni_modes_wanted;          /* HP_OPEN_LAZY_JNI_MODES: a caller needed one */
	uint64_t open_ns, vm_live_ns, jmx_bind_ns;   /* set-up cost, for the info report */

	/* GC capture (events.c); written only by the GC-finish callback. */
	struct hp_gc_capture *capture;
	char events_reason[HP_REASON_LEN];
	/* The host's callback and its context, published as one pointer so a
	 * collection never pairs one with the other's old value. */
	struct hp_cb_slot gc_cb;        /* an hp_gc_callback (gcthread.h) */
	/* Marking counters and requests (marking.c). */
	struct hp_marking_state *marking;
};


/* The live sun.gc.collector.<n>.invocations counter (perfdata mode), or NULL. */
const volatile int64_t *hp_perfdata_invocations(struct hp_probe *p, int n);
/* The cause of the collection under way (perfdata sun.gc.cause) copied into
 * buf, NUL-terminated: 0, or -ENOTSUP without the counter. The VM rewrites
 * those bytes in place: a caller that must not act on a torn string reads
 * twice. */
int hp_perfdata_gc_cause(struct hp_probe *p, char *buf, size_t len);


/* Called from the probe's NativeMethodBind event (events.c) for every native
 * the JVM binds; the JMX mode captures MemoryImpl.getMemoryUsage0 there. */
void hp_jmx_native_method_bind(struct hp_probe *p, JNIEnv *jni, jthread thread, jmethodID method,
			       void *address, void **new_address_ptr);
/* Called once the VM is live (VMInit, or at hp_open in the live phase) on
 * an attached Java thread: lets JNI-based modes finish their set-up (e.g.
 * force the JMX native to bind). */
void hp_jmx_vm_live(struct hp_probe *p, JNIEnv *jni);

/* Parses HEAPPROBE_FAULTS into p->faults, hidden_symbols, disabled_modes. */
void hp_parse_faults(struct hp_probe *p, const char *spec);

/* hp_open's first step (open.c): libjvm, VMStructs, symbols, flags, the
 * release and its symbols/ data, each with its status and reason; and
 * hp_close's last, which frees them and the probe. */
void hp_probe_load(struct hp_probe *p);
void hp_probe_release(struct hp_probe *p);

/* libjvm symbol lookup that honours fault injection (hide-symbol=). */
const struct hp_sym *hp_probe_sym(struct hp_probe *p, const char *name);
/* Whether a symbol is a function in libjvm's mapped text: the check before
 * its code is called (hscall.c) or read (marking.c). */
bool hp_probe_sym_is_text_function(const struct hp_probe *p, const struct hp_sym *s);

#endif
