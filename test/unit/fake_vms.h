/* Synthetic VMStructs tables laid out like HotSpot's own (vmStructs.hpp's
 * entry structs), for unit tests of what reads them. */
#ifndef HP_TEST_FAKE_VMS_H
#define HP_TEST_FAKE_VMS_H

#include <stddef.h>
#include <stdint.h>

#include "vmstructs/vmstructs.h"

struct fake_field { const char *typeName, *fieldName, *typeString; int32_t isStatic; uint64_t offset; void *address; };
struct fake_type { const char *typeName, *superclassName; int32_t isOopType, isIntegerType, isUnsigned; uint64_t size; };
struct fake_int { const char *name; int32_t value; };
struct fake_long { const char *name; uint64_t value; };

/* The four tables (each ending with a NULL name) as hp_vms_load reads them. */
static inline struct hp_vms_tables fake_vms_tables(struct fake_field *fields, struct fake_type *types,
						   struct fake_int *ints, struct fake_long *longs)
{
	struct hp_vms_tables t = {
		.structs = { fields, sizeof(struct fake_field), offsetof(struct fake_field, typeName),
			     offsetof(struct fake_field, fieldName), offsetof(struct fake_field, typeString),
			     offsetof(struct fake_field, isStatic), offsetof(struct fake_field, offset),
			     offsetof(struct fake_field, address) },
		.types = { types, sizeof(struct fake_type), offsetof(struct fake_type, typeName),
			   offsetof(struct fake_type, superclassName), offsetof(struct fake_type, isOopType),
			   offsetof(struct fake_type, isIntegerType), offsetof(struct fake_type, isUnsigned),
			   offsetof(struct fake_type, size) },
		.int_constants = { ints, sizeof(struct fake_int), offsetof(struct fake_int, name),
				   offsetof(struct fake_int, value) },
		.long_constants = { longs, sizeof(struct fake_long), offsetof(struct fake_long, name),
				    offsetof(struct fake_long, value) },
	};
	return t;
}

#endif
