/* The frame decoder and the Method* -> jmethodID table on synthetic
 * HotSpot structures laid out like JDK 11-21's (an nmethod with its
 * metadata table, scopes data and PcDescs; Methods with their ConstMethod,
 * ConstantPool, holder and jmethodID cache): good frames decode to the
 * expected (jmethodID, location) pairs with both UNSIGNED5 variants, and
 * every kind of bad reference gives its error, never a fault. (Real JVMs:
 * test_profiler's stacks=verify runs.) */
#include <criterion/criterion.h>
#include <sys/mman.h>

#include "../fixtures/framedecode_layout.h"

static void teardown(void)
{
	hp_methods_free(&d.methods);
	free(d.pcs);
	d.pcs = NULL;
}

/* One scope (DebugInformationRecorder's order); returns its offset. */
static uint32_t scope(uint32_t sender, uint32_t meta_index, int bci)
{
	uint32_t at = (uint32_t)scopes_len;
	put_u5(sender);
	put_u5(meta_index);
	put_u5((uint32_t)(bci + 1));    /* bci - InvocationEntryBci */
	put_u5(0);                      /* locals, expressions, monitors */
	put_u5(0);
	put_u5(0);
	return at;
}

static void pcdesc(int pc_offset, uint32_t decode)
{
	uint8_t *p = nm + PCS_AT + 16 * npcs++;
	*(int32_t *)p = pc_offset;
	*(int32_t *)(p + 4) = (int32_t)decode;
	*(int32_t *)(nm + NM_PCS_END) = PCS_AT + 16 * npcs;
}

static int decode_one(uint64_t k0, uint64_t k1, uintptr_t aux, struct hp_java_frame *out, int max, int *mr)
{
	uint64_t key[2] = { k0, k1 };
	uintptr_t a[1] = { aux };
	return hp_framedecode(&d, key, a, 2, 7, 0, out, max, mr);
}

TestSuite(framedecode, .init = setup, .fini = teardown);

static void inlined_chain(int x)
{
	d.unsigned5_x = x;
	/* method 0 (the nmethod's) at bci 300 calls method 2 at bci 5 calls
	 * method 1 at bci 70000 (3-byte ints) */
	uint32_t outer = scope(0, 1, 300);
	uint32_t mid = scope(outer, 3, 5);
	uint32_t leaf = scope(mid, 2, 70000);
	pcdesc(0x10, scope(0, 1, 1));
	pcdesc(0x40, leaf);
	pcdesc(0x80, outer);
	struct hp_java_frame f[8];
	int mr;
	int n = decode_one((uintptr_t)nm + CODE_AT + 0x40, 77, (uintptr_t)nm, f, 8, &mr);
	cr_assert_eq(n, 3, "x=%d: %d (%d)", x, n, mr);
	cr_expect_eq(f[0].jmid, (uintptr_t)&jmid_slots[1]);
	cr_expect_eq(f[0].location, 70000);
	cr_expect_eq(f[1].jmid, (uintptr_t)&jmid_slots[2]);
	cr_expect_eq(f[1].location, 5);
	cr_expect_eq(f[2].jmid, (uintptr_t)&jmid_slots[0]);
	cr_expect_eq(f[2].location, 300);
	/* depth cut */
	cr_expect_eq(decode_one((uintptr_t)nm + CODE_AT + 0x40, 77, (uintptr_t)nm, f, 2, &mr), 2);
}

Test(framedecode, inlined_scopes_unsigned5_with_an_excluded_byte)
{
	inlined_chain(1);
}

Test(framedecode, inlined_scopes_compressed_stream_of_jdk11)
{
	inlined_chain(0);
}

Test(framedecode, synchronization_entry_bci_reads_as_0)
{
	pcdesc(0x20, scope(0, 1, -1));
	struct hp_java_frame f[2];
	int mr;
	cr_assert_eq(decode_one((uintptr_t)nm + CODE_AT + 0x20, 1, (uintptr_t)nm, f, 2, &mr), 1);
	cr_expect_eq(f[0].location, 0);
}

Test(framedecode, interpreted_and_native_frames)
{
	struct hp_java_frame f[2];
	int mr;
	uintptr_t bcp = (uintptr_t)consts[3] + CM_SIZE + 17;
	cr_assert_eq(decode_one(M(3) | 1, bcp, HP_FW_AUX_INTERPRETED, f, 2, &mr), 1);
	cr_expect_eq(f[0].jmid, (uintptr_t)&jmid_slots[3]);
	cr_expect_eq(f[0].location, 17);
	/* a bcp past the code */
	cr_expect_eq(decode_one(M(3) | 1, bcp + 40, HP_FW_AUX_INTERPRETED, f, 2, &mr), HP_FD_METHOD);
	cr_expect_eq(mr, HP_METHOD_BAD_BCP);
	/* a native method: location -1, interpreted (bcp 0) or compiled (no PcDesc) */
	*(uint16_t *)(methods[2] + M_FLAGS) = 0x0100;
	cr_assert_eq(decode_one(M(2) | 1, 0, HP_FW_AUX_INTERPRETED, f, 2, &mr), 1);
	cr_expect_eq(f[0].location, -1);
	*(uintptr_t *)(nm + NM_METHOD) = M(2);
	cr_assert_eq(decode_one((uintptr_t)nm + CODE_AT + 0x99, 1, (uintptr_t)nm, f, 2, &mr), 1);
	cr_expect_eq(f[0].jmid, (uintptr_t)&jmid_slots[2]);
	cr_expect_eq(f[0].location, -1);
}

Test(framedecode, frames_without_java_code_are_skipped_and_stop_ends_the_stack)
{
	pcdesc(0x40, scope(scope(0, 1, 9), 2, 3));
	uint64_t key[6] = { 0x1234, 0, (uintptr_t)nm + CODE_AT + 0x40, 5, M(3) | 1, (uintptr_t)consts[3] + CM_SIZE };
	uintptr_t aux[3] = { 0, (uintptr_t)nm, HP_FW_AUX_INTERPRETED };
	struct hp_java_frame f[8];
	int mr;
	cr_assert_eq(hp_framedecode(&d, key, aux, 6, 7, 0, f, 8, &mr), 3);
	cr_expect_eq(f[2].jmid, (uintptr_t)&jmid_slots[3]);
	/* a virtual thread's stack ends before Continuation.enterSpecial */
	cr_expect_eq(hp_framedecode(&d, key, aux, 6, 7, (uintptr_t)&jmid_slots[0], f, 8, &mr), 1);
}

Test(framedecode, bad_scopes_fail_without_a_fault)
{
	struct hp_java_frame f[4];
	int mr;
	uintptr_t pc = (uintptr_t)nm + CODE_AT + 0x40;
	/* no PcDesc at the pc (not a native method) */
	pcdesc(0x30, scope(0, 1, 0));
	cr_expect_eq(decode_one(pc, 1, (uintptr_t)nm, f, 4, &mr), HP_FD_NO_PCDESC);
	/* the outermost scope must be the nmethod's own method */
	setup();
	pcdesc(0x40, scope(0, 2, 0));
	cr_expect_eq(decode_one(pc, 1, (uintptr_t)nm, f, 4, &mr), HP_FD_BAD_SCOPE);
	/* metadata index 0 (null) and past the table */
	setup();
	pcdesc(0x40, scope(0, 0, 0));
	cr_expect_eq(decode_one(pc, 1, (uintptr_t)nm, f, 4, &mr), HP_FD_BAD_SCOPE);
	setup();
	pcdesc(0x40, scope(0, 33, 0));
	cr_expect_eq(decode_one(pc, 1, (uintptr_t)nm, f, 4, &mr), HP_FD_BAD_SCOPE);
	/* a decode offset past the scopes, a sender loop */
	setup();
	pcdesc(0x40, 300);
	cr_expect_eq(decode_one(pc, 1, (uintptr_t)nm, f, 4, &mr), HP_FD_BAD_SCOPE);
	setup();
	uint32_t self = (uint32_t)scopes_len;
	scope(self, 2, 1);
	pcdesc(0x40, self);
	cr_expect_eq(decode_one(pc, 1, (uintptr_t)nm, f, 4, &mr), HP_FD_BAD_SCOPE, "a sender is written before its callee");
	/* sections out of the blob */
	setup();
	*(int32_t *)(nm + NM_PCS_END) = BLOB + 64;
	cr_expect_eq(decode_one(pc, 1, (uintptr_t)nm, f, 4, &mr), HP_FD_BAD_NMETHOD);
	/* a stream running off the scopes: a continuation byte at the end */
	setup();
	pcdesc(0x40, PCS_AT - SCOPES_AT - 1);
	nm[PCS_AT - 1] = 0xff;
	cr_expect_eq(decode_one(pc, 1, (uintptr_t)nm, f, 4, &mr), HP_FD_BAD_SCOPE);
}

Test(framedecode, methods_without_ids_old_versions_and_bad_pointers)
{
	struct hp_java_frame f[2];
	int mr;
	uintptr_t bcp = (uintptr_t)consts[1] + CM_SIZE;
	/* no jmethodID made yet */
	ids[2] = 0;
	cr_expect_eq(decode_one(M(1) | 1, bcp, HP_FW_AUX_INTERPRETED, f, 2, &mr), HP_FD_METHOD);
	cr_expect_eq(mr, HP_METHOD_NO_ID);
	ids[2] = (uintptr_t)&jmid_slots[1];
	cr_assert_eq(decode_one(M(1) | 1, bcp, HP_FW_AUX_INTERPRETED, f, 2, &mr), 1);
	/* redefined: the jmethodID now names another Method; the kept entry
	 * is checked at this use and the Method found old */
	jmid_slots[1] = M(3);
	cr_expect_eq(decode_one(M(1) | 1, bcp, HP_FW_AUX_INTERPRETED, f, 2, &mr), HP_FD_METHOD);
	cr_expect_eq(mr, HP_METHOD_OLD);
	jmid_slots[1] = M(1);
	/* an idnum past the cache */
	*(uint16_t *)(consts[2] + CM_IDNUM) = 100;
	cr_expect_eq(decode_one(M(2) | 1, (uintptr_t)consts[2] + CM_SIZE, HP_FW_AUX_INTERPRETED, f, 2, &mr),
		     HP_FD_METHOD);
	cr_expect_eq(mr, HP_METHOD_NO_ID);
	/* unmapped memory on the way: a Method* into a PROT_NONE page */
	void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(page, MAP_FAILED);
	cr_expect_eq(decode_one((uintptr_t)page | 1, 0, HP_FW_AUX_INTERPRETED, f, 2, &mr), HP_FD_METHOD);
	cr_expect_eq(mr, HP_METHOD_UNREADABLE);
	*(uintptr_t *)(methods[3] + M_CONST) = (uintptr_t)page;
	cr_expect_eq(decode_one(M(3) | 1, 0, HP_FW_AUX_INTERPRETED, f, 2, &mr), HP_FD_METHOD);
	cr_expect_eq(mr, HP_METHOD_UNREADABLE);
	munmap(page, 4096);
	/* jmethodID checks before JVMTI sees one */
	cr_expect_eq(hp_methods_check_id(&d.methods, (uintptr_t)&jmid_slots[0]), 0);
	cr_expect_neq(hp_methods_check_id(&d.methods, 0xad1188e8ef41d105ull), 0);
	cr_expect_neq(hp_methods_check_id(&d.methods, (uintptr_t)&ids[0]), 0);
}

/* Decoded return pcs are kept by (pc, compile id), dated by the class
 * redefinition count: a second decode of the same pair answers from the
 * table (shown by changing the nmethod under it, which a kept answer does
 * not see), a new count or another compile id decodes afresh, JDK 11's
 * flag keeps nothing once set, a chain of up to HP_FD_PC_CHAIN is kept
 * in an entry and its buddy, and a deeper one is never kept. */
Test(framedecode, return_pcs_kept_by_compile_id_and_redefinition_count)
{
	uint64_t redefs = 0;
	d.pcs = calloc(HP_FD_PC_SLOTS, sizeof(*d.pcs));
	cr_assert(d.pcs);
	d.redefinitions = &redefs;
	pcdesc(0x40, scope(scope(0, 1, 9), 2, 3));
	uintptr_t pc = (uintptr_t)nm + CODE_AT + 0x40;
	struct hp_java_frame f[8];
	int mr;
	cr_assert_eq(decode_one(pc, 77, (uintptr_t)nm, f, 8, &mr), 2);
	cr_expect_eq(atomic_load(&d.pc_kept), 1);
	cr_expect_eq(atomic_load(&d.pc_hits), 0);
	/* method 2 of the metadata becomes method 3: the kept answer stands */
	*(uintptr_t *)(nm + META_AT + 8 * 1) = M(3);
	cr_assert_eq(decode_one(pc, 77, (uintptr_t)nm, f, 8, &mr), 2);
	cr_expect_eq(atomic_load(&d.pc_hits), 1);
	cr_expect_eq(f[0].jmid, (uintptr_t)&jmid_slots[1]);
	cr_expect_eq(f[0].location, 3);
	cr_expect_eq(f[1].jmid, (uintptr_t)&jmid_slots[0]);
	cr_expect_eq(f[1].location, 9);
	/* cut by max: the kept frames, as many as asked */
	cr_expect_eq(decode_one(pc, 77, (uintptr_t)nm, f, 1, &mr), 1);
	cr_expect_eq(atomic_load(&d.pc_hits), 2);
	cr_expect_eq(f[0].jmid, (uintptr_t)&jmid_slots[1]);
	/* a stop method in the kept chain ends the stack before it, as a
	 * decode does */
	uint64_t key[2] = { pc, 77 };
	uintptr_t a[1] = { (uintptr_t)nm };
	cr_expect_eq(hp_framedecode(&d, key, a, 2, 7, (uintptr_t)&jmid_slots[0], f, 8, &mr), 1);
	cr_expect_eq(atomic_load(&d.pc_hits), 3);
	cr_expect_eq(atomic_load(&d.pc_hits_redefined), 0);
	/* another nmethod at the same pc (a new compile id): decoded */
	cr_assert_eq(decode_one(pc, 78, (uintptr_t)nm, f, 8, &mr), 2);
	cr_expect_eq(f[0].jmid, (uintptr_t)&jmid_slots[3]);
	/* a class redefined since: decoded */
	*(uintptr_t *)(nm + META_AT + 8 * 1) = M(1);
	redefs = 1;
	uint64_t hits = atomic_load(&d.pc_hits);
	cr_assert_eq(decode_one(pc, 77, (uintptr_t)nm, f, 8, &mr), 2);
	cr_expect_eq(f[0].jmid, (uintptr_t)&jmid_slots[1]);
	cr_expect_eq(atomic_load(&d.pc_hits), hits);
	cr_assert_eq(decode_one(pc, 77, (uintptr_t)nm, f, 8, &mr), 2);
	cr_expect_eq(atomic_load(&d.pc_hits), hits + 1);
	cr_expect_eq(atomic_load(&d.pc_hits_redefined), 1);
	/* JDK 11: only a flag, and once it is set nothing is kept or used */
	uint8_t flag = 1;
	d.redefinitions = NULL;
	d.has_redefined = &flag;
	uint64_t kept = atomic_load(&d.pc_kept);
	hits = atomic_load(&d.pc_hits);
	cr_assert_eq(decode_one(pc, 77, (uintptr_t)nm, f, 8, &mr), 2);
	cr_assert_eq(decode_one(pc, 79, (uintptr_t)nm, f, 8, &mr), 2);
	cr_expect_eq(atomic_load(&d.pc_kept), kept);
	cr_expect_eq(atomic_load(&d.pc_hits), hits);
	/* a chain of 5 inlined frames: kept in an entry and its buddy */
	flag = 0;
	uintptr_t pc5 = (uintptr_t)nm + CODE_AT + 0x80, pc7 = (uintptr_t)nm + CODE_AT + 0xc0;
	pcdesc(0x80, scope(scope(scope(scope(scope(0, 1, 1), 2, 2), 3, 3), 2, 4), 4, 5));
	cr_assert_eq(decode_one(pc5, 77, (uintptr_t)nm, f, 8, &mr), 5);
	hits = atomic_load(&d.pc_hits);
	struct hp_java_frame g[8];
	cr_assert_eq(decode_one(pc5, 77, (uintptr_t)nm, g, 8, &mr), 5);
	cr_expect_eq(atomic_load(&d.pc_hits), hits + 1);
	cr_expect_arr_eq(f, g, 5 * sizeof(f[0]));
	cr_expect_eq(g[0].jmid, (uintptr_t)&jmid_slots[3]);
	cr_expect_eq(g[0].location, 5);
	cr_expect_eq(g[4].location, 1);
	/* its buddy taken by another chain's head: decoded again, not
	 * answered by half a chain */
	struct hp_fd_pc_entry *buddy = NULL;
	for (uint32_t i = 0; i < HP_FD_PC_SLOTS && !buddy; i++)
		if (d.pcs[i].pc == pc5 && (d.pcs[i].n & 0x200))
			buddy = &d.pcs[i];
	cr_assert(buddy);
	buddy->pc = 0x1234;
	buddy->n = 1;
	hits = atomic_load(&d.pc_hits);
	cr_assert_eq(decode_one(pc5, 77, (uintptr_t)nm, g, 8, &mr), 5);
	cr_expect_eq(atomic_load(&d.pc_hits), hits);
	cr_expect_arr_eq(f, g, 5 * sizeof(f[0]));
	/* 7: more than HP_FD_PC_CHAIN, decoded each time, counted */
	pcdesc(0xc0, scope(scope(scope(scope(scope(scope(scope(0, 1, 1), 2, 2), 3, 3), 2, 4), 4, 5), 2, 6), 3, 7));
	kept = atomic_load(&d.pc_kept);
	hits = atomic_load(&d.pc_hits);
	cr_assert_eq(decode_one(pc7, 77, (uintptr_t)nm, f, 8, &mr), 7);
	cr_assert_eq(decode_one(pc7, 77, (uintptr_t)nm, g, 8, &mr), 7);
	cr_expect_arr_eq(f, g, 7 * sizeof(f[0]));
	cr_expect_eq(atomic_load(&d.pc_deep), 2);
	cr_expect_eq(atomic_load(&d.pc_kept), kept);
	cr_expect_eq(atomic_load(&d.pc_hits), hits);
	/* no redefinition count nor flag known: nothing kept */
	d.has_redefined = NULL;
	kept = atomic_load(&d.pc_kept);
	cr_assert_eq(decode_one(pc, 80, (uintptr_t)nm, f, 8, &mr), 2);
	cr_expect_eq(atomic_load(&d.pc_kept), kept);
}
