/* libFuzzer target for the ELF symbol index.
 *
 * The input is an ELF file (seeds: small objects and libraries built by
 * test/fuzz/CMakeLists.txt). It is written to a file in a private, empty
 * directory and indexed twice:
 *  - with no_debug_search, as the brief for this target asks: headers,
 *    section links, symbol and string tables;
 *  - if that found no .symtab, with the debug search on and the debug root
 *    pointing nowhere, which reaches the .gnu_debuglink parser (the search
 *    stays inside the empty directory: symtab.c refuses link names with a
 *    '/') and the MiniDebugInfo decoder (xz + a nested ELF).
 * Then a few lookups, which must stay in bounds whatever the file said.
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmstructs/symtab.h"

static char dir[] = "/tmp/hp_fuzz_symtab_XXXXXX";
static char path[PATH_MAX];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	snprintf(path, sizeof(path), "%s/in.so", dir);
	atexit(cleanup);
	return 0;
}

static void write_input(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		abort();
	while (size) {
		ssize_t n = write(fd, data, size);

		if (n <= 0)
			abort();
		data += n;
		size -= (size_t)n;
	}
	close(fd);
}

static void exercise(const struct hp_symtab *t, const uint8_t *data, size_t size)
{
	static const char *const names[] = {
		"main", "_start", "_init", "_ZTV15G1CollectedHeap",
		"_ZN13CollectedHeap12memory_usageEv", "",
	};
	volatile size_t sink = 0;
	uint64_t addr = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct hp_sym *s = hp_symtab_find(t, names[i]);

		if (s) {
			sink += strlen(s->name);
			/* A sized symbol is found at its own start (TLS values
			 * are offsets, not addresses, and are not indexed). */
			if (s->size && s->type != STT_TLS && !hp_symtab_containing(t, s->addr))
				abort();
		}
	}
	/* Addresses picked by the input itself, and the edges. */
	memcpy(&addr, data, size < sizeof(addr) ? size : sizeof(addr));
	const uint64_t probes[] = { 0, 1, addr, addr + 0x1000, UINT64_MAX, UINT64_MAX / 2 };
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		const struct hp_sym *s = hp_symtab_containing(t, probes[i]);

		if (s) {
			if (probes[i] < s->addr || probes[i] - s->addr >= s->size)
				abort();  /* containing() returned a non-container */
			sink += strlen(s->name);
		}
	}
	sink += strlen(hp_symtab_build_id(t)) + strlen(hp_symtab_debug_note(t)) +
		strlen(hp_symtab_symbols_path(t)) + hp_symtab_count(t) +
		hp_symtab_count_symtab(t) + hp_symtab_count_dynsym(t);
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hp_symtab_opts o = {
		.sz = sizeof(o), .load_base = 0x7f0000000000ull, .no_debug_search = 1,
	};
	struct hp_symtab *t = NULL;
	char err[256];

	write_input(data, size);
	if (hp_symtab_open(path, &o, &t, err, sizeof(err)) != 0) {
		if (t || !memchr(err, '\0', sizeof(err)) || !err[0])
			abort();  /* errors come with a reason and no table */
		return 0;
	}
	exercise(t, data, size);
	if (hp_symtab_origin(t) == HP_SYMS_DYNSYM_ONLY) {
		hp_symtab_close(t);
		t = NULL;
		o.no_debug_search = 0;
		o.debug_root = "/nonexistent/hp-fuzz-debug-root";
		if (hp_symtab_open(path, &o, &t, err, sizeof(err)) == 0)
			exercise(t, data, size);
	}
	hp_symtab_close(t);
	return 0;
}
