/* Mode "jmx-native": how MemoryImpl.getMemoryUsage0 was found. */
#ifndef HP_JMX_H
#define HP_JMX_H

struct hp_probe;

/* One line for the info report: how the native's address was captured,
 *   "NativeMethodBind (0x7f.. in libmanagement.so)", or
 *   "dlsym Java_sun_management_MemoryImpl_getMemoryUsage0, NativeMethodBind
 *    not seen (0x7f.. in libmanagement.so)",
 * or why it was not. Owned by the probe. */
const char *hp_jmx_capture_note(struct hp_probe *p);

#endif
