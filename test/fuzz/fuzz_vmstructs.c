/* libFuzzer target for the VMStructs reader.
 *
 * The input is a 26-byte header (stride and member offsets for the four
 * tables) followed by the table memory. Every aligned 8-byte word of that
 * memory whose value is smaller than the input is turned into a pointer into
 * the input, so the fuzzer can build real name strings and terminators;
 * other words stay as they are and usually point nowhere, which the reader
 * must survive.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmstructs/vmstructs.h"

#define HEADER 26

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEADER + 8)
		return 0;
	size_t n = size - HEADER;
	/* 8-byte aligned copy, with a NUL tail so most strings end in bounds. */
	uint64_t *mem = calloc(n / 8 + 2, 8);
	if (!mem)
		return 0;
	memcpy(mem, data + HEADER, n);
	for (size_t i = 0; i < n / 8; i++)
		if (mem[i] < n)
			mem[i] = (uint64_t)(uintptr_t)((char *)mem + mem[i]);

	const uint8_t *h = data;
	struct hp_vms_tables t = {
		.structs = { mem, h[0], h[1], h[2], h[3], h[4], h[5], h[6] },
		.types = { (char *)mem + h[7], h[8], h[9], h[10], h[11], h[12], h[13], h[14] },
		.int_constants = { (char *)mem + h[15], h[16], h[17], h[18] },
		.long_constants = { (char *)mem + h[19], h[20], h[21], h[22] },
	};
	struct hp_vms *v = NULL;
	char err[256];
	if (hp_vms_load(&t, &v, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < hp_vms_field_count(v); i++) {
			const struct hp_vms_field *f = hp_vms_field_at(v, i);
			if (hp_vms_field(v, f->type_name, f->field_name) == NULL)
				abort();        /* every field must be found by its own name */
		}
		for (size_t i = 0; i < hp_vms_type_count(v); i++) {
			const struct hp_vms_type *ty = hp_vms_type_at(v, i);
			hp_vms_is_subtype(v, ty->name, "CollectedHeap");
		}
		int32_t x;
		hp_vms_int_constant(v, "oopSize", &x);
		hp_vms_free(v);
	}
	free(mem);
	return 0;
}
