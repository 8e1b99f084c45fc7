/* The heap stack chunk reader (src/vmstructs/stackchunk.c) on synthetic
 * objects: a "JavaThread" whose continuation entry points at a
 * Continuation, whose tail is a StackChunk, with references stored each
 * way a collector stores them; then every check that must refuse one.
 * The real thing (JDK 21 and 25, every collector) is test_profiler's
 * stacks::virtual_threads_* suite. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "vmstructs/safefetch.h"
#include "vmstructs/stackchunk.h"

#define W 8

/* Layout of the fakes (bytes). */
enum {
	T_CONT_ENTRY = 40,      /* JavaThread::_cont_entry */
	E_CONT = 16, E_FLAGS = 32, E_ARGSIZE = 36,
	C_TAIL = 24,            /* Continuation.tail */
	K_PARENT = 8, K_SIZE = 16, K_SP = 20, K_BOTTOM = 24, K_FLAGS = 28, K_CONT = 32, K_STACK = 48,
};

static struct hp_stackchunk layout(enum hp_heap_oops oops)
{
	struct hp_stackchunk c = {
		.off_cont_entry = T_CONT_ENTRY, .entry_cont = E_CONT, .entry_flags = E_FLAGS,
		.entry_argsize = E_ARGSIZE, .cont_tail = C_TAIL, .chunk_parent = K_PARENT, .chunk_size = K_SIZE,
		.chunk_sp = K_SP, .chunk_bottom = K_BOTTOM, .chunk_argsize = -1, .chunk_flags = K_FLAGS,
		.chunk_cont = K_CONT, .offset_of_stack = K_STACK, .interp_locals_slot = -7,
		.interp_last_sp_slot = -2, .oops = oops,
	};
	return c;
}

/* The world: a thread, its stack (holding the entry), a Continuation and
 * two chunks, all in one aligned block. */
static _Alignas(16) unsigned char thread[128];
static _Alignas(16) unsigned char stack[256];
static _Alignas(16) unsigned char cont[64];
static _Alignas(16) unsigned char chunk[K_STACK + 64 * W];
static _Alignas(16) unsigned char parent[K_STACK + 64 * W];

static struct hp_chunk_window win;

static uintptr_t entry_at(void)
{
	return (uintptr_t)stack + 64;
}

static void put32(unsigned char *p, int off, int32_t v)
{
	memcpy(p + off, &v, 4);
}

static void put64(unsigned char *p, int off, uint64_t v)
{
	memcpy(p + off, &v, 8);
}

/* A reference to `to` stored as `oops` says, at p + off. */
static void put_ref(const struct hp_stackchunk *c, unsigned char *p, int off, const void *to)
{
	uintptr_t a = (uintptr_t)to;
	if (c->oops == HP_OOPS_NARROW)
		put32(p, off, a ? (int32_t)((a - c->narrow_base) >> c->narrow_shift) : 0);
	else if (c->oops == HP_OOPS_ZPOINTER)
		/* remapped bit 2 (of 12-15): the address sits above bit 15 */
		put64(p, off, a ? ((uint64_t)a << 15) | (1u << 14) | 0x50 : 0);
	else
		put64(p, off, a);
}

static void make_chunk(const struct hp_stackchunk *c, unsigned char *k, int size, int sp, int bottom, const void *par)
{
	memset(k, 0, K_STACK);
	put32(k, K_SIZE, size);
	put32(k, K_SP, sp);
	put32(k, K_BOTTOM, bottom);
	put_ref(c, k, K_CONT, cont);
	put_ref(c, k, K_PARENT, par);
}

/* A world where chunk has 10 words of frames from sp 4 to bottom 14. */
static void world(struct hp_stackchunk *c)
{
	memset(thread, 0, sizeof(thread));
	memset(stack, 0, sizeof(stack));
	memset(cont, 0, sizeof(cont));
	put64(thread, T_CONT_ENTRY, entry_at());
	put64((unsigned char *)entry_at(), E_CONT, (uintptr_t)cont);
	put32((unsigned char *)entry_at(), E_FLAGS, 1);
	put32((unsigned char *)entry_at(), E_ARGSIZE, 0);
	put_ref(c, cont, C_TAIL, chunk);
	make_chunk(c, chunk, 16, 4, 14, NULL);
}

static int first(const struct hp_stackchunk *c, struct hp_chunk_frames *f)
{
	return hp_stackchunk_first(c, (uintptr_t)thread, entry_at(), (uintptr_t)stack, (uintptr_t)stack + sizeof(stack),
				   f, &win);
}

static void expect_frames(const struct hp_chunk_frames *f, const unsigned char *k, int sp, int bottom, int size)
{
	uintptr_t start = (uintptr_t)k + K_STACK;
	cr_expect_eq(f->chunk, (uintptr_t)k);
	cr_expect_eq(f->start, start);
	cr_expect_eq(f->sp, start + (uintptr_t)sp * W);
	cr_expect_eq(f->end, start + (uintptr_t)bottom * W);
	cr_expect_eq(f->limit, start + (uintptr_t)size * W);
}

Test(stackchunk, wide_references_find_the_tail_chunk)
{
	struct hp_stackchunk c = layout(HP_OOPS_WIDE);
	struct hp_chunk_frames f;
	world(&c);
	chunk[K_FLAGS] = 1;     /* FLAG_HAS_INTERPRETED_FRAMES */
	cr_assert_eq(first(&c, &f), 0);
	expect_frames(&f, chunk, 4, 14, 16);
	cr_expect(f.mixed);
	cr_expect_eq(f.parent, 0);
	cr_expect_eq(hp_stackchunk_next(&c, &f, &win), 0, "no parent: the last chunk");
	/* the frames came with the fields: read from the window, inside
	 * the chunk's stack only */
	uintptr_t v;
	put64(chunk, K_STACK + 5 * W, 0xabcdef);
	cr_assert_eq(first(&c, &f), 0);
	put64(chunk, K_STACK + 5 * W, 0);       /* not read again */
	cr_expect(hp_chunk_word(&win, f.start + 5 * W, &v) && v == 0xabcdef);
	cr_expect(!hp_chunk_word(&win, f.start - W, &v), "the fields are not frame words");
	cr_expect(!hp_chunk_word(&win, f.limit, &v), "past the chunk");
}

Test(stackchunk, narrow_references_decode_with_base_and_shift)
{
	struct hp_stackchunk c = layout(HP_OOPS_NARROW);
	c.narrow_base = ((uintptr_t)cont < (uintptr_t)chunk ? (uintptr_t)cont : (uintptr_t)chunk) & ~(uintptr_t)0xfff;
	if ((uintptr_t)parent < c.narrow_base)
		c.narrow_base = (uintptr_t)parent & ~(uintptr_t)0xfff;
	c.narrow_shift = 3;
	struct hp_chunk_frames f;
	world(&c);
	make_chunk(&c, chunk, 16, 4, 14, parent);
	make_chunk(&c, parent, 8, 2, 8, NULL);
	cr_assert_eq(first(&c, &f), 0);
	expect_frames(&f, chunk, 4, 14, 16);
	cr_expect(!f.mixed);
	cr_assert_eq(hp_stackchunk_next(&c, &f, &win), 1);
	expect_frames(&f, parent, 2, 8, 8);
}

Test(stackchunk, generational_zgc_pointers_are_uncoloured)
{
	struct hp_stackchunk c = layout(HP_OOPS_ZPOINTER);
	struct hp_chunk_frames f;
	world(&c);
	cr_assert_eq(first(&c, &f), 0);
	expect_frames(&f, chunk, 4, 14, 16);
	/* not null, no remapped bit: not a zpointer */
	put64(cont, C_TAIL, 0x1234567800000050ull);
	cr_expect_eq(first(&c, &f), HP_SC_BAD_CHUNK);
}

Test(stackchunk, an_emptied_tail_gives_its_parent)
{
	struct hp_stackchunk c = layout(HP_OOPS_WIDE);
	struct hp_chunk_frames f;
	world(&c);
	make_chunk(&c, chunk, 16, 14, 14, parent);     /* sp == bottom: empty */
	make_chunk(&c, parent, 20, 3, 18, NULL);
	cr_assert_eq(first(&c, &f), 0);
	expect_frames(&f, parent, 3, 18, 20);
	/* an empty tail with nothing behind it is not a stack to read */
	make_chunk(&c, chunk, 16, 14, 14, NULL);
	cr_expect_eq(first(&c, &f), HP_SC_BAD_CHUNK);
	/* and no chunk past the tail may be empty */
	make_chunk(&c, chunk, 16, 14, 14, parent);
	make_chunk(&c, parent, 20, 18, 18, NULL);
	cr_expect_eq(first(&c, &f), HP_SC_BAD_CHUNK);
}

Test(stackchunk, jdk21_ga_counts_argsize_not_bottom)
{
	struct hp_stackchunk c = layout(HP_OOPS_WIDE);
	c.chunk_bottom = -1;
	c.chunk_argsize = K_BOTTOM;
	struct hp_chunk_frames f;
	world(&c);
	put32(chunk, K_BOTTOM, 2);      /* argsize 2: bottom = size - 2 */
	cr_assert_eq(first(&c, &f), 0);
	expect_frames(&f, chunk, 4, 14, 16);
}

Test(stackchunk, the_entry_must_be_a_virtual_threads_on_this_stack_where_the_frames_end)
{
	struct hp_stackchunk c = layout(HP_OOPS_WIDE);
	struct hp_chunk_frames f;
	world(&c);
	put32((unsigned char *)entry_at(), E_FLAGS, 0);
	cr_expect_eq(first(&c, &f), HP_SC_NOT_VIRTUAL);
	world(&c);
	cr_expect_eq(hp_stackchunk_first(&c, (uintptr_t)thread, entry_at() - 16, (uintptr_t)stack,
					 (uintptr_t)stack + sizeof(stack), &f, &win), HP_SC_ENTRY_ELSEWHERE);
	/* stack arguments: the thawed frames end argsize words below, 16-aligned */
	put32((unsigned char *)entry_at(), E_ARGSIZE, 3);
	cr_expect_eq(hp_stackchunk_first(&c, (uintptr_t)thread, (entry_at() - 3 * W) & ~(uintptr_t)15,
					 (uintptr_t)stack, (uintptr_t)stack + sizeof(stack), &f, &win), 0);
	put32((unsigned char *)entry_at(), E_ARGSIZE, -1);
	cr_expect_eq(first(&c, &f), HP_SC_ENTRY_ELSEWHERE);
	world(&c);
	put64(thread, T_CONT_ENTRY, (uintptr_t)cont);   /* not on this stack */
	cr_expect_eq(first(&c, &f), HP_SC_NO_ENTRY);
	put64(thread, T_CONT_ENTRY, 0);
	cr_expect_eq(first(&c, &f), HP_SC_NO_ENTRY);
}

Test(stackchunk, chunks_that_read_as_nonsense_are_refused)
{
	struct hp_stackchunk c = layout(HP_OOPS_WIDE);
	struct hp_chunk_frames f;
	int bad[][3] = { { 16, 15, 14 }, { 16, 4, 17 }, { 0, 0, 0 }, { -1, 0, 0 }, { 16, -2, 14 }, { 1 << 23, 4, 14 } };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		world(&c);
		make_chunk(&c, chunk, bad[i][0], bad[i][1], bad[i][2], NULL);
		cr_expect_eq(first(&c, &f), HP_SC_BAD_CHUNK, "size %d sp %d bottom %d", bad[i][0], bad[i][1],
			     bad[i][2]);
	}
	/* another continuation's chunk */
	world(&c);
	put64(chunk, K_CONT, (uintptr_t)parent);
	cr_expect_eq(first(&c, &f), HP_SC_BAD_CHUNK);
	/* a misaligned or null tail */
	world(&c);
	put64(cont, C_TAIL, (uintptr_t)chunk + 4);
	cr_expect_eq(first(&c, &f), HP_SC_BAD_CHUNK);
	put64(cont, C_TAIL, 0);
	cr_expect_eq(first(&c, &f), HP_SC_BAD_CHUNK);
}

Test(stackchunk, unmapped_memory_is_a_failed_read_not_a_fault)
{
	struct hp_stackchunk c = layout(HP_OOPS_WIDE);
	struct hp_chunk_frames f;
	void *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(gone != MAP_FAILED);
	munmap(gone, 4096);
	world(&c);
	put64(cont, C_TAIL, (uintptr_t)gone);           /* a chunk freed under us */
	cr_expect_eq(first(&c, &f), HP_SC_UNREADABLE);
	world(&c);
	put64((unsigned char *)entry_at(), E_CONT, (uintptr_t)gone);      /* the Continuation itself */
	cr_expect_eq(first(&c, &f), HP_SC_UNREADABLE);
}

Test(stackchunk, the_window_reads_inside_its_bounds_only)
{
	static uintptr_t words[2000];
	for (size_t i = 0; i < 2000; i++)
		words[i] = i * 3;
	struct hp_chunk_window w;
	uintptr_t lo = (uintptr_t)&words[10], hi = (uintptr_t)&words[1990], v;
	hp_chunk_window_reset(&w, lo, hi, NULL);
	for (size_t i = 10; i < 1990; i += 7) {
		cr_assert(hp_chunk_word(&w, (uintptr_t)&words[i], &v), "word %zu", i);
		cr_assert_eq(v, i * 3);
	}
	cr_expect(hp_chunk_word(&w, (uintptr_t)&words[12], &v) && v == 36, "back below the window: read again");
	cr_expect(!hp_chunk_word(&w, (uintptr_t)&words[9], &v), "below the floor");
	cr_expect(!hp_chunk_word(&w, hi, &v), "at the limit");
	cr_expect(!hp_chunk_word(&w, (uintptr_t)&words[20] + 3, &v), "misaligned");
}

Test(stackchunk, every_result_has_a_name)
{
	for (int r = -1; r >= -HP_SC_RESULTS; r--)
		cr_expect_str_neq(hp_stackchunk_result_name(r), "ok");
	cr_expect_str_eq(hp_stackchunk_result_name(0), "ok");
}

/* Heap words by a SafeFetchN stand-in (safefetch.h): the same answers,
 * word by word, a 4-byte narrow reference inside an 8-byte word included,
 * and a fetch that faults is a failed read. */
static uintptr_t no_page;
static intptr_t stand_in_fetch(intptr_t *adr, intptr_t errval)
{
	return (uintptr_t)adr >= no_page && (uintptr_t)adr < no_page + 4096 ? errval : *adr;
}

Test(stackchunk, heap_words_by_safefetch_give_the_same_answers)
{
	struct hp_safefetch sf = { stand_in_fetch };
	void *gone = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(gone != MAP_FAILED);
	no_page = (uintptr_t)gone;
	struct hp_stackchunk c = layout(HP_OOPS_NARROW);
	c.fetch = &sf;
	c.narrow_base = ((uintptr_t)cont < (uintptr_t)chunk ? (uintptr_t)cont : (uintptr_t)chunk) & ~(uintptr_t)0xfff;
	if ((uintptr_t)parent < c.narrow_base)
		c.narrow_base = (uintptr_t)parent & ~(uintptr_t)0xfff;
	c.narrow_shift = 3;
	struct hp_chunk_frames f;
	world(&c);
	make_chunk(&c, chunk, 16, 14, 14, parent);     /* emptied: its parent */
	make_chunk(&c, parent, 20, 3, 18, NULL);
	put64(parent, K_STACK + 3 * W, 0x77);
	cr_assert_eq(first(&c, &f), 0);
	expect_frames(&f, parent, 3, 18, 20);
	uintptr_t v = 0;
	cr_expect(hp_chunk_word(&win, f.start + 3 * W, &v) && v == 0x77, "frame words come by fetch");
	cr_expect(!hp_chunk_word(&win, f.limit, &v));
	c.oops = HP_OOPS_WIDE;
	world(&c);
	put64(cont, C_TAIL, (uintptr_t)gone);
	cr_expect_eq(first(&c, &f), HP_SC_UNREADABLE, "a chunk in an unreadable page");
	munmap(gone, 4096);
}
