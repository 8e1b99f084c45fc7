/* Reader of HotSpot's self-description tables.
 *
 * HotSpot exports four arrays that describe its own internals for the
 * Serviceability Agent (src/hotspot/share/runtime/vmStructs.cpp):
 *   gHotSpotVMStructs        VMStructEntry {typeName, fieldName, typeString,
 *                            isStatic, offset, address}
 *   gHotSpotVMTypes          VMTypeEntry {typeName, superclassName, isOopType,
 *                            isIntegerType, isUnsigned, size}
 *   gHotSpotVMIntConstants   VMIntConstantEntry {name, int32 value}
 *   gHotSpotVMLongConstants  VMLongConstantEntry {name, uint64 value}
 * together with exported globals giving each member's offset and the array
 * stride (gHotSpotVMStructEntryTypeNameOffset, ..., gHotSpotVMStructEntry-
 * ArrayStride). Each array ends with an entry whose first name is NULL.
 *
 * The reader copies everything it needs into its own memory through safe
 * reads (a malformed table gives an error, never a fault) and indexes it for
 * O(1) lookups. It takes the table descriptors from the live libjvm
 * (libjvm.c) or from a caller-built image (tests, fuzzing).
 */
#ifndef HP_VMSTRUCTS_H
#define HP_VMSTRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hard limits that make a table "malformed" rather than large. JDK 17 has
 * about 2,700 struct entries, 1,100 types and 1,400 constants. */
#define HP_VMS_MAX_ENTRIES  100000
#define HP_VMS_MAX_STRIDE   256
#define HP_VMS_MAX_NAME     512

/* Where one table lives and how to read its entries. */
struct hp_vms_struct_layout {
	const void *array;
	uint64_t stride, type_name, field_name, type_string, is_static, offset, address;
};
struct hp_vms_type_layout {
	const void *array;
	uint64_t stride, type_name, superclass_name, is_oop, is_integer, is_unsigned, size;
};
struct hp_vms_const_layout {
	const void *array;
	uint64_t stride, name, value;
};
#define HP_VMS_MAX_READABLE 8

struct hp_vms_tables {
	struct hp_vms_struct_layout structs;
	struct hp_vms_type_layout types;
	struct hp_vms_const_layout int_constants;
	struct hp_vms_const_layout long_constants;
	/* Optional: ranges known to stay mapped and readable (libjvm's own
	 * segments, where the tables and their names live). Reads inside
	 * them are plain loads; anything else goes through hp_safe_read. About
	 * 10k system calls fewer at start-up. */
	unsigned nreadable;
	struct { uintptr_t start, end; } readable[HP_VMS_MAX_READABLE];
};

struct hp_vms_field {
	const char *type_name;
	const char *field_name;
	const char *type_string;    /* may be "" where HotSpot gives NULL */
	bool is_static;
	uint64_t offset;            /* instance fields */
	const void *address;        /* static fields */
};

struct hp_vms_type {
	const char *name;
	const char *superclass;     /* NULL for roots */
	bool is_oop, is_integer, is_unsigned;
	uint64_t size;
};

struct hp_vms;

/* Reads and indexes the tables. On error returns a negative errno and puts a
 * one-line reason into err:
 *   -EINVAL  absurd layout (stride 0 or > HP_VMS_MAX_STRIDE, a member offset
 *            beyond the stride)
 *   -EFAULT  an entry or a name is in unreadable memory
 *   -E2BIG   no terminator within HP_VMS_MAX_ENTRIES entries
 *   -ENAMETOOLONG  a name without NUL within HP_VMS_MAX_NAME bytes
 *   -EBADMSG a NULL name inside an entry that is not the terminator
 *   -ENOMEM */
int hp_vms_load(const struct hp_vms_tables *tables, struct hp_vms **out, char *err, size_t errlen);
void hp_vms_free(struct hp_vms *v);

/* O(1) lookups; NULL when absent. */
const struct hp_vms_field *hp_vms_field(const struct hp_vms *v, const char *type, const char *field);
const struct hp_vms_type *hp_vms_type(const struct hp_vms *v, const char *type);
/* 0 and *out set, or -ENOENT. */
int hp_vms_int_constant(const struct hp_vms *v, const char *name, int32_t *out);
int hp_vms_long_constant(const struct hp_vms *v, const char *name, uint64_t *out);

/* Convenience: instance-field offset, or -1 when absent or static. */
int64_t hp_vms_offset(const struct hp_vms *v, const char *type, const char *field);
/* Convenience: static-field address, or NULL when absent or not static. */
const void *hp_vms_address(const struct hp_vms *v, const char *type, const char *field);
/* true if `type` is `ancestor` or derives from it. */
bool hp_vms_is_subtype(const struct hp_vms *v, const char *type, const char *ancestor);

/* Declarative lookups: each consumer lists what it reads from VMStructs in
 * one table, and hp_vms_bind fills its struct and names exactly what is
 * missing. An entry is a field's offset, a static field's address or a
 * type's size. */
enum hp_vms_what {
	HP_VMS_OFFSET,          /* int64_t at dest: the instance field's offset, -1 absent */
	HP_VMS_ADDRESS,         /* const void * at dest: the static field's address, NULL absent */
	HP_VMS_SIZE,            /* int64_t at dest: sizeof(type), -1 absent (field unused) */
};
#define HP_VMS_REQUIRED 0       /* .need: the consumer cannot work without it */
#define HP_VMS_OPTIONAL (-1)    /* .need: used when present */
/* .need > 0: one of the entries sharing that number is required ("either
 * CodeBlob::_code_begin or CodeBlob::_code_offset"). */
struct hp_vms_entry {
	const char *type;       /* "A|B": the first of these types that has it (a class renamed between releases) */
	const char *field;      /* NULL for HP_VMS_SIZE */
	enum hp_vms_what what;
	size_t dest;            /* offsetof(the consumer's struct, its member) */
	int need;
	/* The feature releases it has been seen in (0: open-ended), for the
	 * message that names it missing: a release a table has not met yet
	 * (22-24, the next one) says which of its layouts it lacks. Never
	 * relaxes .need: a layout is chosen by what VMStructs has, not by the
	 * release number. */
	int since, until;
};
/* Reads every entry into `base` (absent ones: -1 / NULL). 0, or -ENOENT
 * with err "WHO: VMStructs lacks A::x (JDK 25+), B::y, neither C::z nor
 * D::w": every required entry and group missing, as the table names them. */
int hp_vms_bind(const struct hp_vms *v, const struct hp_vms_entry *t, size_t n, void *base, const char *who,
		char *err, size_t errlen);
#define HP_VMS_N(table) (sizeof(table) / sizeof((table)[0]))

size_t hp_vms_field_count(const struct hp_vms *v);
size_t hp_vms_type_count(const struct hp_vms *v);
size_t hp_vms_int_constant_count(const struct hp_vms *v);
size_t hp_vms_long_constant_count(const struct hp_vms *v);

/* Iteration (stable order = table order). */
const struct hp_vms_field *hp_vms_field_at(const struct hp_vms *v, size_t i);
const struct hp_vms_type *hp_vms_type_at(const struct hp_vms *v, size_t i);

#endif
