/* libjvm symbol index, read from the file with libelf.
 *
 * HotSpot's C++ methods and statics (e.g. _ZN13CollectedHeap12memory_usageEv,
 * _ZN8Universe14_collectedHeapE) are LOCAL symbols that live only in .symtab;
 * dlsym() cannot see them. This index reads .symtab and .dynsym of the file
 * (or of its separate debug file, or of its MiniDebugInfo) and adds the load
 * base, so a caller gets the runtime address of any named symbol in O(1), and
 * the symbol containing any address in O(log n) (to name a vtable).
 */
#ifndef HP_SYMTAB_H
#define HP_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct hp_symtab;

struct hp_sym {
	const char *name;       /* mangled, as in the ELF string table */
	uint64_t addr;          /* runtime address: st_value + load base
				 * (STT_TLS: st_value, the TLS-block offset) */
	uint64_t size;          /* st_size */
	unsigned char type;     /* STT_FUNC, STT_OBJECT, ... */
	unsigned char bind;     /* STB_LOCAL, STB_GLOBAL, STB_WEAK */
	unsigned char from_dynsym;  /* 1 if the entry came from .dynsym */
};

/* Where the .symtab came from. */
enum hp_symtab_origin {
	HP_SYMS_FILE_SYMTAB = 0,    /* the file itself has .symtab */
	HP_SYMS_DEBUG_BUILDID,      /* separate debug file found by build-id */
	HP_SYMS_DEBUG_LINK,         /* separate debug file found by .gnu_debuglink */
	HP_SYMS_MINIDEBUGINFO,      /* .gnu_debugdata (xz-compressed ELF) */
	HP_SYMS_DYNSYM_ONLY,        /* no .symtab anywhere: exported symbols only */
};

const char *hp_symtab_origin_name(enum hp_symtab_origin o);

struct hp_symtab_opts {
	size_t sz;                  /* sizeof(struct hp_symtab_opts) */
	uint64_t load_base;         /* added to st_value (dlpi_addr for ET_DYN) */
	/* Root of the debug-file tree; NULL means "/usr/lib/debug". Tests
	 * point it at a fixture directory. */
	const char *debug_root;
	/* Do not look for separate debug files or MiniDebugInfo. */
	int no_debug_search;
};

/* Opens `path` and builds the index. Returns 0, or a negative errno with a
 * one-line reason in err (e.g. -ENOENT "cannot open ...", -ENOEXEC "not an
 * ELF file", -EINVAL "corrupt ELF: ..." for truncated or malformed headers
 * or symbol tables). A debug file whose build-id differs from the file's is
 * refused (and the reason kept: see hp_symtab_debug_note). opts may be
 * NULL; if given, opts->sz must be set. */
int hp_symtab_open(const char *path, const struct hp_symtab_opts *opts,
		   struct hp_symtab **out, char *err, size_t errlen);
void hp_symtab_close(struct hp_symtab *t);

/* Gives back the resident pages of the mapped ELF file(s) the index points
 * into (names stay valid: they are read from the file again when used).
 * For once the lookups of set-up are done: peak RSS is what users see. */
void hp_symtab_trim(struct hp_symtab *t);

/* Exact mangled name, O(1). .symtab entries win over .dynsym duplicates.
 * NULL if absent. */
const struct hp_sym *hp_symtab_find(const struct hp_symtab *t, const char *name);

/* The sized symbol whose [addr, addr+size) contains `addr`, or NULL. */
const struct hp_sym *hp_symtab_containing(const struct hp_symtab *t, uint64_t addr);

enum hp_symtab_origin hp_symtab_origin(const struct hp_symtab *t);
/* count: symbols in the index, i.e. the .symtab ones plus the .dynsym ones
 * whose name .symtab lacks. count_symtab: usable .symtab entries (of the
 * file, debug file or MiniDebugInfo). count_dynsym: usable .dynsym entries
 * read, including those .symtab also has. */
size_t hp_symtab_count(const struct hp_symtab *t);          /* all indexed */
size_t hp_symtab_count_symtab(const struct hp_symtab *t);   /* from .symtab */
size_t hp_symtab_count_dynsym(const struct hp_symtab *t);   /* from .dynsym */
/* The file that supplied .symtab (the object itself or its debug file). */
const char *hp_symtab_symbols_path(const struct hp_symtab *t);
/* Lower-case hex build-id of the object, "" if it has none. */
const char *hp_symtab_build_id(const struct hp_symtab *t);
/* What the debug-file search found or refused, "" if nothing to say
 * (e.g. "debug file /x/y.debug refused: build-id 12.. != 34.."). */
const char *hp_symtab_debug_note(const struct hp_symtab *t);

#endif
