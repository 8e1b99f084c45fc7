/* TEMPORARY: weak stand-ins until jmm.c, jmx.c and perfdata.c land. */
#include <errno.h>
#include <stdio.h>
#include "heapusage/probe.h"
static int stub_init(struct hp_probe *p, char *reason, size_t len) { snprintf(reason, len, "not built"); return -ENOSYS; }
static int stub_read(struct hp_probe *p, JNIEnv *env, struct hp_mode_reading *r) { return -ENOSYS; }
__attribute__((weak)) const struct hp_mode_ops hp_mode_jmm = { HP_MODE_JMM, true, stub_init, stub_read, NULL };
__attribute__((weak)) const struct hp_mode_ops hp_mode_jmx_native = { HP_MODE_JMX_NATIVE, true, stub_init, stub_read, NULL };
__attribute__((weak)) const struct hp_mode_ops hp_mode_exported_totals = { HP_MODE_EXPORTED_TOTALS, true, stub_init, stub_read, NULL };
__attribute__((weak)) const struct hp_mode_ops hp_mode_perfdata = { HP_MODE_PERFDATA, false, stub_init, stub_read, NULL };
__attribute__((weak)) void hp_jmx_native_method_bind(struct hp_probe *p, JNIEnv *jni, jthread thread, jmethodID method, void *address, void **new_address_ptr) {}
__attribute__((weak)) void hp_jmx_vm_live(struct hp_probe *p, JNIEnv *jni) {}
