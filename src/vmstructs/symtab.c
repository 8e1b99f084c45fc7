/* libjvm symbol index: .symtab/.dynsym of an ELF file, looked up by name
 * (hash map) and by address (sorted array).
 *
 * Memory is the constraint that shapes this file: libjvm has ~58k .symtab
 * entries with 2.6 MB of mangled names, and the index lives as long as the
 * agent. So names are never copied (they point into our read-only mapping
 * of the string table), the hash map stores 8-byte slots, the address index
 * is 8 bytes a sized symbol, and the .symtab entries' pages are given back
 * once indexed.
 *
 * Everything read from the file is untrusted: section links, entry sizes
 * and string offsets are checked before use, and a bad debug file is
 * refused (with a note), never trusted.
 *
 * Why one file of ~1,100 lines: the mapping checked once (sections,
 * links, sizes) is what every reader here trusts, the stripped file's
 * .dynsym, its separate debug file (by build-id or .gnu_debuglink)
 * and the xz-compressed .gnu_debugdata (MiniDebugInfo) alike; split, each part
 * would re-check it or take it on trust across a file boundary.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* memrchr */
#endif
#include "vmstructs/symtab.h"
#include "vmstructs/strmap.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmstructs/errmsg.h"
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"
#define BUILD_ID_MAX 64                 /* bytes; SHA-1 ids are 20 */
#define NOTE_MAX 1024
/* MiniDebugInfo holds only .symtab/.strtab (a few MB even for libjvm);
 * the caps keep a hostile .gnu_debugdata from eating memory. */
#define XZ_MEMLIMIT (128u << 20)
#define XZ_OUT_MAX ((size_t)256 << 20)
/* Ids are uint32 and the map needs twice as many slots as keys. */
#define MAX_SYMS (1u << 28)

/* One opened ELF image: the object or its debug file (mapped at `map`), or
 * the MiniDebugInfo image decompressed into `mem`. Kept for the index's
 * lifetime because symbol names point into it. We map the file ourselves
 * (rather than ELF_C_READ_MMAP) so we know which pointers libelf hands out
 * are file pages that can be dropped from RSS after indexing. */
struct elf_file {
	Elf *elf;
	void *map;
	size_t mapsz;
	void *mem;
	dev_t dev;
	ino_t ino;
};

/* Sections of interest found in one ELF. */
struct elf_info {
	Elf_Scn *symtab, *dynsym, *debuglink, *debugdata;
	unsigned char build_id[BUILD_ID_MAX];
	size_t build_id_len;
};

/* A symbol table that passed validation and can be indexed without
 * further structural checks. */
struct sym_source {
	const struct elf_file *file;
	const unsigned char *syms;      /* native-order entries */
	size_t count;
	bool is64;
	const char *str;
	size_t strlim;                  /* offsets below this are NUL-terminated */
	bool dynsym;
};

/* Address index entry. `reach` makes overlap-aware lookup exact: it is
 * max(end of entries 0..i) - start of entry i, so a backward scan can stop
 * as soon as no earlier symbol can still cover the address. UINT32_MAX means
 * "too far to store": keep scanning. */
struct addr_ent {
	uint32_t id;
	uint32_t reach;
};

struct hp_symtab {
	struct hp_sym *syms;
	uint32_t nsyms, nsymtab, ndynsym;
	struct hp_strmap map;
	struct addr_ent *by_addr;
	uint32_t naddr;
	enum hp_symtab_origin origin;
	struct elf_file obj;
	struct elf_file dbg;            /* debug file or MiniDebugInfo, if used */
	char *path;
	char *symbols_path;
	char build_id[2 * BUILD_ID_MAX + 1];
	char note[NOTE_MAX];
};

const char *hp_symtab_origin_name(enum hp_symtab_origin o)
{
	switch (o) {
	case HP_SYMS_FILE_SYMTAB:
		return "file .symtab";
	case HP_SYMS_DEBUG_BUILDID:
		return "debug file by build-id";
	case HP_SYMS_DEBUG_LINK:
		return "debug file by .gnu_debuglink";
	case HP_SYMS_MINIDEBUGINFO:
		return "MiniDebugInfo (.gnu_debugdata)";
	case HP_SYMS_DYNSYM_ONLY:
		return ".dynsym only";
	}
	return "unknown";
}

/* ---- small helpers ---------------------------------------------------- */

/* Appends to the one-line debug note. Paths come from the file system and
 * from the ELF (debuglink), so control characters are masked to keep the
 * note on one line. */
static void note_add(struct hp_symtab *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note_add(struct hp_symtab *t, const char *fmt, ...)
{
	size_t len = strlen(t->note);
	va_list ap;

	if (len && len + 2 < sizeof(t->note)) {
		memcpy(t->note + len, "; ", 3);
		len += 2;
	}
	if (len + 1 >= sizeof(t->note))
		return;
	va_start(ap, fmt);
	vsnprintf(t->note + len, sizeof(t->note) - len, fmt, ap);
	va_end(ap);
	for (char *p = t->note + len; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

static void hex_string(char *dst, const unsigned char *id, size_t len)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		dst[2 * i] = digits[id[i] >> 4];
		dst[2 * i + 1] = digits[id[i] & 15];
	}
	dst[2 * len] = '\0';
}

static void elf_file_close(struct elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->map)
		munmap(f->map, f->mapsz);
	free(f->mem);
	f->elf = NULL;
	f->map = NULL;
	f->mem = NULL;
}

/* Opens `path` as an ELF through a private mapping. Returns 0 or a
 * negative errno with the reason in err: -ENOENT & co. from open(),
 * -ENOEXEC when the magic is wrong, -EINVAL when libelf rejects the
 * headers (truncated or corrupt). */
static int elf_file_open(struct elf_file *f, const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return hp_fail(err, errlen, -e, "cannot open %s: %s", path, strerror(e));
	}
	if (fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		return hp_fail(err, errlen, -e, "cannot stat %s: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return hp_fail(err, errlen, -ENOEXEC, "%s is not an ELF file (not a regular file)", path);
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	/* Check the magic ourselves: libelf calls anything it does not know
	 * ELF_K_NONE, and "not an ELF file" deserves a different answer than
	 * "broken ELF file". */
	if ((uint64_t)st.st_size < SELFMAG || (uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return hp_fail(err, errlen, -ENOEXEC, "%s is not an ELF file", path);
	}
	/* Read-only: libelf only writes to an image when asked to modify
	 * it (gelf_update_*, elf_compress), which we never do, and a
	 * writable private mapping of a large debug file would be charged
	 * in full under strict overcommit. */
	f->mapsz = (size_t)st.st_size;
	f->map = mmap(NULL, f->mapsz, PROT_READ, MAP_PRIVATE, fd, 0);
	e = errno;
	close(fd);
	if (f->map == MAP_FAILED) {
		f->map = NULL;
		return hp_fail(err, errlen, -e, "cannot map %s: %s", path, strerror(e));
	}
	if (memcmp(f->map, ELFMAG, SELFMAG) != 0)
		return hp_fail(err, errlen, -ENOEXEC, "%s is not an ELF file", path);
	if (f->mapsz < EI_NIDENT)
		return hp_fail(err, errlen, -EINVAL, "%s: corrupt ELF: truncated header", path);

	f->elf = elf_memory(f->map, f->mapsz);
	if (!f->elf)
		return hp_fail(err, errlen, -EINVAL, "%s: corrupt ELF: %s", path, elf_errmsg(-1));
	if (elf_kind(f->elf) != ELF_K_ELF)
		return hp_fail(err, errlen, -EINVAL, "%s: corrupt ELF: not an ELF object", path);
	return 0;
}

/* Gives back the RSS of file pages we are done with (the .symtab entries
 * after indexing: 1.4 MB for libjvm). Only whole pages inside our own
 * mapping: data libelf converted into a heap copy is left alone. The pages
 * are clean, so a later access would simply fault them in again. */
static void drop_pages(const struct elf_file *f, const void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + len;
	uintptr_t mlo = (uintptr_t)f->map, mhi = mlo + f->mapsz;
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);

	if (!f->map || lo < mlo || hi > mhi || hi < lo || pg == 0 || (pg & (pg - 1)))
		return;
	lo = (lo + pg - 1) & ~(pg - 1);
	hi &= ~(pg - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* ---- section scan ----------------------------------------------------- */

static void read_build_id(Elf_Scn *scn, struct elf_info *info)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t off = 0, next;
	GElf_Nhdr nh;
	size_t name_off, desc_off;

	if (!data || !data->d_buf)
		return;
	/* gelf_getnote() bounds-checks each note against d_size. */
	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(name, "GNU", 4) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= BUILD_ID_MAX) {
			memcpy(info->build_id, (const char *)data->d_buf + desc_off, nh.n_descsz);
			info->build_id_len = nh.n_descsz;
			return;
		}
		off = next;
	}
}

/* libelf quietly treats a header table that lies past the end of the
 * image as absent (a cut-off libjvm would look like one without symbols),
 * so a truncated file is caught here. */
static int check_tables(Elf *elf, size_t size, char *why, size_t whylen)
{
	GElf_Ehdr eh;
	size_t shnum = 0, phnum = 0;

	if (!gelf_getehdr(elf, &eh))
		return hp_fail(why, whylen, -EINVAL, "bad ELF header: %s", elf_errmsg(-1));
	if (eh.e_shoff) {
		if (elf_getshdrnum(elf, &shnum) != 0)
			return hp_fail(why, whylen, -EINVAL, "bad section count: %s", elf_errmsg(-1));
		if (eh.e_shoff >= size || eh.e_shentsize == 0 ||
		    shnum > (size - eh.e_shoff) / eh.e_shentsize)
			return hp_fail(why, whylen, -EINVAL,
				    "section header table at offset %llu runs past the end of the file (%zu bytes)",
				    (unsigned long long)eh.e_shoff, size);
	}
	if (eh.e_phoff) {
		if (elf_getphdrnum(elf, &phnum) != 0)
			return hp_fail(why, whylen, -EINVAL, "bad program header count: %s", elf_errmsg(-1));
		if (eh.e_phoff >= size || (phnum && eh.e_phentsize == 0) ||
		    (phnum && phnum > (size - eh.e_phoff) / eh.e_phentsize))
			return hp_fail(why, whylen, -EINVAL,
				    "program header table at offset %llu runs past the end of the file (%zu bytes)",
				    (unsigned long long)eh.e_phoff, size);
	}
	return 0;
}

/* Finds the sections we use. Unreadable section headers mean a corrupt
 * file; unnamed sections are merely not recognised by name. */
static int scan_sections(Elf *elf, size_t size, struct elf_info *info, char *why, size_t whylen)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int rc;

	memset(info, 0, sizeof(*info));
	rc = check_tables(elf, size, why, whylen);
	if (rc)
		return rc;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return hp_fail(why, whylen, -EINVAL, "bad section header string index: %s", elf_errmsg(-1));

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return hp_fail(why, whylen, -EINVAL, "bad section header: %s", elf_errmsg(-1));
		switch (sh.sh_type) {
		case SHT_SYMTAB:
			if (!info->symtab)
				info->symtab = scn;
			continue;
		case SHT_DYNSYM:
			if (!info->dynsym)
				info->dynsym = scn;
			continue;
		case SHT_NOTE:
			if (!info->build_id_len)
				read_build_id(scn, info);
			continue;
		case SHT_PROGBITS:
			break;
		default:
			continue;
		}
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!info->debuglink && strcmp(name, ".gnu_debuglink") == 0)
			info->debuglink = scn;
		else if (!info->debugdata && strcmp(name, ".gnu_debugdata") == 0)
			info->debugdata = scn;
	}
	return 0;
}

/* Checks a SHT_SYMTAB/SHT_DYNSYM section well enough that indexing it needs
 * no further structural checks: entry size, linked string table, data
 * within the file. */
static int prepare_source(const struct elf_file *f, Elf_Scn *scn, bool dynsym,
			  struct sym_source *src, char *why, size_t whylen)
{
	Elf *elf = f->elf;
	const char *what = dynsym ? ".dynsym" : ".symtab";
	size_t shnum, entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	GElf_Shdr sh, strsh;
	Elf_Scn *strscn;
	Elf_Data *data, *strdata;

	if (!gelf_getshdr(scn, &sh))
		return hp_fail(why, whylen, -EINVAL, "%s: bad section header", what);
	if (entsize == 0 || sh.sh_entsize != entsize)
		return hp_fail(why, whylen, -EINVAL, "%s: sh_entsize %llu, expected %zu", what,
			    (unsigned long long)sh.sh_entsize, entsize);
	if (elf_getshdrnum(elf, &shnum) != 0 || sh.sh_link == 0 || sh.sh_link >= shnum ||
	    sh.sh_link == elf_ndxscn(scn))
		return hp_fail(why, whylen, -EINVAL, "%s: bad sh_link %u", what, (unsigned)sh.sh_link);
	strscn = elf_getscn(elf, sh.sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
		return hp_fail(why, whylen, -EINVAL, "%s: sh_link %u is not a string table", what,
			    (unsigned)sh.sh_link);
	if ((sh.sh_flags | strsh.sh_flags) & SHF_COMPRESSED)
		return hp_fail(why, whylen, -EINVAL, "%s: compressed symbol tables are not supported", what);
	/* libelf refuses sections that extend past the end of the file. */
	strdata = elf_getdata(strscn, NULL);
	if (!strdata || (strdata->d_size && !strdata->d_buf))
		return hp_fail(why, whylen, -EINVAL, "%s: string table unreadable: %s", what, elf_errmsg(-1));
	data = elf_getdata(scn, NULL);
	if (!data || data->d_type != ELF_T_SYM || (data->d_size && !data->d_buf))
		return hp_fail(why, whylen, -EINVAL, "%s: unreadable: %s", what, elf_errmsg(-1));

	src->file = f;
	src->syms = data->d_buf;
	src->count = data->d_size / entsize;
	src->is64 = gelf_getclass(elf) == ELFCLASS64;
	src->dynsym = dynsym;
	/* The check elf_strptr() makes (offset inside the section, a NUL
	 * after it), done once for the whole table: any offset below the
	 * last NUL is a terminated string. elf_strptr() per symbol costs
	 * ~1 ms for libjvm in locking and section lookup. */
	src->str = strdata->d_buf;
	src->strlim = 0;
	if (strdata->d_size) {
		const char *nul = memrchr(src->str, '\0', strdata->d_size);
		src->strlim = nul ? (size_t)(nul - src->str) + 1 : 0;
	}
	return 0;
}

/* ---- indexing --------------------------------------------------------- */

static const char *key_of(const void *ctx, uint32_t id)
{
	const struct hp_symtab *t = ctx;
	return t->syms[id].name;
}

/* Reads entry i of a table libelf has already converted to host byte
 * order. Reading it directly instead of through gelf_getsym() saves a call
 * and a class switch per symbol; memcpy keeps it free of alignment
 * assumptions and compiles to plain loads. */
static void read_sym(const struct sym_source *src, size_t i, GElf_Sym *sym)
{
	if (src->is64) {
		memcpy(sym, src->syms + i * sizeof(Elf64_Sym), sizeof(Elf64_Sym));
	} else {
		Elf32_Sym s32;

		memcpy(&s32, src->syms + i * sizeof(Elf32_Sym), sizeof(s32));
		sym->st_name = s32.st_name;
		sym->st_info = s32.st_info;
		sym->st_other = s32.st_other;
		sym->st_shndx = s32.st_shndx;
		sym->st_value = s32.st_value;
		sym->st_size = s32.st_size;
	}
}

static int index_source(struct hp_symtab *t, const struct sym_source *src, uint64_t base)
{
	/* Entry 0 is the reserved null symbol. */
	for (size_t i = 1; i < src->count; i++) {
		GElf_Sym sym;
		struct hp_sym *s = &t->syms[t->nsyms];
		unsigned type;
		const char *name;
		int rc;

		read_sym(src, i, &sym);
		type = GELF_ST_TYPE(sym.st_info);
		/* SHN_ABS/SHN_COMMON values are not addresses in the image
		 * (e.g. libjvm's version symbol SUNWprivate_1.1 is ABS 0), so
		 * adding the load base would invent an address. */
		if (sym.st_name == 0 || type == STT_SECTION || type == STT_FILE ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS ||
		    sym.st_shndx == SHN_COMMON)
			continue;
		/* An offset past the last NUL is a corrupt entry: skipped. */
		if (sym.st_name >= src->strlim)
			continue;
		name = src->str + sym.st_name;
		if (!*name)
			continue;

		s->name = name;
		/* A TLS value is an offset in the module's TLS block, not an
		 * address: it is kept unrelocated (see symtab.h). */
		s->addr = type == STT_TLS ? sym.st_value : sym.st_value + base;
		s->size = sym.st_size;
		s->type = type;
		s->bind = GELF_ST_BIND(sym.st_info);
		s->from_dynsym = src->dynsym;

		if (src->dynsym)
			t->ndynsym++;
		else
			t->nsymtab++;
		rc = hp_strmap_insert(&t->map, t->nsyms);
		if (rc < 0)
			return -ENOMEM;  /* map sized for every entry: cannot happen */
		/* A .dynsym name already indexed is the same symbol again;
		 * .symtab duplicates (statics of the same name in different
		 * files) are distinct symbols and stay findable by address. */
		if (rc == 1 && src->dynsym)
			continue;
		t->nsyms++;
	}
	drop_pages(src->file, src->syms, src->count * (src->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym)));
	return 0;
}

static bool addr_indexed(const struct hp_sym *s)
{
	return s->size > 0 && s->type != STT_TLS;
}

#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)

/* Sorts the sized symbols by address with an LSD radix sort over the bits
 * that vary (3 passes of 11 bits for a 20 MB library): no comparator calls,
 * and stable, so equal addresses stay in index order (.symtab first). Keys
 * travel with the ids so each pass reads sequentially instead of chasing
 * ids into the 32-byte records. */
static int build_addr_index(struct hp_symtab *t)
{
	uint32_t n = 0, *ids = NULL, *ids2 = NULL, *pos = NULL;
	uint64_t lo = UINT64_MAX, hi = 0, *keys = NULL, *keys2 = NULL, maxend;
	int rc = -ENOMEM;

	for (uint32_t i = 0; i < t->nsyms; i++) {
		const struct hp_sym *s = &t->syms[i];

		if (!addr_indexed(s))
			continue;
		n++;
		if (s->addr < lo)
			lo = s->addr;
		if (s->addr > hi)
			hi = s->addr;
	}
	t->naddr = n;
	if (n == 0)
		return 0;

	ids = malloc(sizeof(*ids) * n);
	ids2 = malloc(sizeof(*ids2) * n);
	keys = malloc(sizeof(*keys) * n);
	keys2 = malloc(sizeof(*keys2) * n);
	pos = malloc(sizeof(*pos) * RADIX_SIZE);
	t->by_addr = malloc(sizeof(*t->by_addr) * n);
	if (!ids || !ids2 || !keys || !keys2 || !pos || !t->by_addr)
		goto out;
	n = 0;
	for (uint32_t i = 0; i < t->nsyms; i++) {
		if (addr_indexed(&t->syms[i])) {
			ids[n] = i;
			keys[n++] = t->syms[i].addr - lo;
		}
	}

	for (unsigned shift = 0; shift < 64 && ((hi - lo) >> shift) != 0; shift += RADIX_BITS) {
		uint32_t sum = 0, *iswap;
		uint64_t *kswap;

		memset(pos, 0, sizeof(*pos) * RADIX_SIZE);
		for (uint32_t i = 0; i < n; i++)
			pos[(keys[i] >> shift) & (RADIX_SIZE - 1)]++;
		for (unsigned d = 0; d < RADIX_SIZE; d++) {
			uint32_t c = pos[d];
			pos[d] = sum;
			sum += c;
		}
		for (uint32_t i = 0; i < n; i++) {
			uint32_t j = pos[(keys[i] >> shift) & (RADIX_SIZE - 1)]++;
			keys2[j] = keys[i];
			ids2[j] = ids[i];
		}
		kswap = keys, keys = keys2, keys2 = kswap;
		iswap = ids, ids = ids2, ids2 = iswap;
	}

	maxend = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct hp_sym *s = &t->syms[ids[i]];
		uint64_t end = s->size > UINT64_MAX - s->addr ? UINT64_MAX : s->addr + s->size;
		uint64_t reach;

		if (end > maxend)
			maxend = end;
		reach = maxend > s->addr ? maxend - s->addr : 0;
		t->by_addr[i].id = ids[i];
		t->by_addr[i].reach = reach >= UINT32_MAX ? UINT32_MAX : (uint32_t)reach;
	}
	rc = 0;
out:
	free(ids);
	free(ids2);
	free(keys);
	free(keys2);
	free(pos);
	return rc;
}

/* ---- separate debug files --------------------------------------------- */

/* The .gnu_debuglink checksum is zlib's CRC-32 of the whole file. */
static uint32_t file_crc32(const struct elf_file *f)
{
	const unsigned char *p = f->map;
	size_t left = f->mapsz;
	uLong crc = crc32(0L, Z_NULL, 0);

	while (left) {
		uInt n = left > (1u << 30) ? (1u << 30) : (uInt)left;

		crc = crc32(crc, p, n);
		p += n;
		left -= n;
	}
	return (uint32_t)crc;
}

/* A candidate debug image accepted: with a .symtab it moves into
 * `t->dbg`, which `src` then reads; otherwise, or if its .symtab cannot be
 * read, it is closed and the note says why (`what` names it). */
static bool adopt_debug(struct hp_symtab *t, struct elf_file *f, Elf_Scn *symtab, struct sym_source *src,
			const char *what)
{
	char why[256];
	if (!symtab) {
		note_add(t, "%s refused: no .symtab", what);
		elf_file_close(f);
		return false;
	}
	/* From here on the image lives in t->dbg, which `src` points to. */
	t->dbg = *f;
	if (prepare_source(&t->dbg, symtab, false, src, why, sizeof(why)) != 0) {
		note_add(t, "%s refused: %s", what, why);
		elf_file_close(&t->dbg);
		return false;
	}
	return true;
}

/* Tries one candidate debug file. Returns true if it is accepted (then
 * `t->dbg` holds it and `src` its .symtab). A missing file is silently
 * passed over; any other problem is explained in the note. */
static bool try_debug_file(struct hp_symtab *t, const char *path, const struct elf_info *obj,
			   bool have_crc, uint32_t crc, struct sym_source *src)
{
	struct elf_file f = { 0 };
	struct elf_info info;
	struct stat st;
	char why[256], want[2 * BUILD_ID_MAX + 1], got[2 * BUILD_ID_MAX + 1];

	if (stat(path, &st) != 0)
		return false;
	/* A debuglink naming the object itself (same directory, same name). */
	if (st.st_dev == t->obj.dev && st.st_ino == t->obj.ino)
		return false;

	if (elf_file_open(&f, path, why, sizeof(why)) != 0) {
		note_add(t, "debug file unusable: %s", why);
		goto refuse;
	}
	if (scan_sections(f.elf, f.mapsz, &info, why, sizeof(why)) != 0) {
		note_add(t, "debug file %s unusable: %s", path, why);
		goto refuse;
	}
	if (obj->build_id_len) {
		/* Symbols from another build would name the wrong addresses:
		 * the ids must match, as GDB requires. */
		if (info.build_id_len != obj->build_id_len ||
		    memcmp(info.build_id, obj->build_id, obj->build_id_len) != 0) {
			hex_string(want, obj->build_id, obj->build_id_len);
			if (info.build_id_len)
				hex_string(got, info.build_id, info.build_id_len);
			else
				strcpy(got, "none");
			note_add(t, "debug file %s refused: its build-id %s does not match the object's %s",
				 path, got, want);
			goto refuse;
		}
	} else if (have_crc) {
		uint32_t got_crc = file_crc32(&f);

		/* The checksum touched every page of a possibly large file. */
		drop_pages(&f, f.map, f.mapsz);

		if (got_crc != crc) {
			note_add(t, "debug file %s refused: its CRC32 %08x does not match .gnu_debuglink's %08x",
				 path, got_crc, crc);
			goto refuse;
		}
	}
	char what[PATH_MAX + 16];
	snprintf(what, sizeof(what), "debug file %s", path);
	if (!adopt_debug(t, &f, info.symtab, src, what))
		return false;
	t->symbols_path = strdup(path);
	if (!t->symbols_path) {
		note_add(t, "debug file %s: out of memory", path);
		elf_file_close(&t->dbg);
		return false;
	}
	return true;
refuse:
	elf_file_close(&f);
	return false;
}

static bool find_by_build_id(struct hp_symtab *t, const char *root, const struct elf_info *obj,
			     struct sym_source *src)
{
	char hex[2 * BUILD_ID_MAX + 1], path[PATH_MAX];
	int n;

	/* The layout needs a two-digit directory and a non-empty rest. */
	if (obj->build_id_len < 2)
		return false;
	hex_string(hex, obj->build_id, obj->build_id_len);
	n = snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root, hex, hex + 2);
	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	return try_debug_file(t, path, obj, false, 0, src);
}

/* Parses .gnu_debuglink: a file name, NUL, padding to 4, then the CRC32 of
 * the debug file in the object's byte order. */
static bool read_debuglink(Elf *elf, Elf_Scn *scn, const char **name, uint32_t *crc)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const unsigned char *p, *c;
	const char *nul;
	size_t crc_off;
	GElf_Ehdr eh;

	if (!data || !data->d_buf || data->d_size < 2 || !gelf_getehdr(elf, &eh))
		return false;
	p = data->d_buf;
	nul = memchr(p, '\0', data->d_size);
	if (!nul || nul == (const char *)p)
		return false;
	crc_off = ((size_t)(nul - (const char *)p) + 1 + 3) & ~(size_t)3;
	if (crc_off > data->d_size || data->d_size - crc_off < 4)
		return false;
	c = p + crc_off;
	if (eh.e_ident[EI_DATA] == ELFDATA2MSB)
		*crc = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3];
	else
		*crc = (uint32_t)c[3] << 24 | (uint32_t)c[2] << 16 | (uint32_t)c[1] << 8 | c[0];
	*name = (const char *)p;
	return true;
}

/* GDB's order: beside the object, in its .debug/ subdirectory, then under
 * the debug root mirroring the object's directory. */
static bool find_by_debuglink(struct hp_symtab *t, const char *root, const struct elf_info *obj,
			      struct sym_source *src)
{
	char real[PATH_MAX], path[PATH_MAX];
	const char *link, *dir;
	uint32_t crc;
	char *slash;
	int n;

	if (!obj->debuglink)
		return false;
	if (!read_debuglink(t->obj.elf, obj->debuglink, &link, &crc)) {
		note_add(t, ".gnu_debuglink malformed");
		return false;
	}
	/* objcopy stores a base name; a path from the file must not steer
	 * the search out of the three directories. */
	if (strchr(link, '/')) {
		note_add(t, ".gnu_debuglink %s ignored: not a file name", link);
		return false;
	}
	/* The directory of the real file: a symlinked libjvm (e.g. through
	 * /usr/lib/jvm/default-java) has its debug file beside the target. */
	if (!realpath(t->path, real)) {
		if (strlen(t->path) >= sizeof(real))
			return false;
		strcpy(real, t->path);
	}
	slash = strrchr(real, '/');
	if (slash) {
		*slash = '\0';
		dir = real;
	} else {
		dir = ".";
	}

	for (int i = 0; i < 3; i++) {
		if (i == 0)
			n = snprintf(path, sizeof(path), "%s/%s", dir, link);
		else if (i == 1)
			n = snprintf(path, sizeof(path), "%s/.debug/%s", dir, link);
		else
			n = snprintf(path, sizeof(path), "%s%s/%s", root, dir, link);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		if (try_debug_file(t, path, obj, true, crc, src))
			return true;
	}
	return false;
}

/* ---- MiniDebugInfo ---------------------------------------------------- */

static const char *lzma_reason(lzma_ret ret)
{
	switch (ret) {
	case LZMA_MEM_ERROR:
		return "out of memory";
	case LZMA_MEMLIMIT_ERROR:
		return "xz stream needs too much memory to decode";
	case LZMA_FORMAT_ERROR:
		return "not an xz stream";
	case LZMA_OPTIONS_ERROR:
		return "unsupported xz options";
	case LZMA_BUF_ERROR:
		return "xz stream truncated";
	default:
		return "xz data corrupt";
	}
}

/* Decompresses the xz stream of .gnu_debugdata into a malloc'ed buffer. */
static int unxz(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen,
		char *why, size_t whylen)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = inlen < (1u << 14) ? (1u << 16) : inlen * 4;
	unsigned char *buf = NULL, *grown;
	lzma_ret ret;

	if (cap > XZ_OUT_MAX)
		cap = XZ_OUT_MAX;
	ret = lzma_stream_decoder(&strm, XZ_MEMLIMIT, 0);
	if (ret != LZMA_OK)
		return hp_fail(why, whylen, -ENOMEM, "xz decoder init failed (%d)", (int)ret);
	buf = malloc(cap);
	if (!buf) {
		lzma_end(&strm);
		return hp_fail(why, whylen, -ENOMEM, "out of memory");
	}
	strm.next_in = in;
	strm.avail_in = inlen;
	strm.next_out = buf;
	strm.avail_out = cap;
	for (;;) {
		ret = lzma_code(&strm, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK) {
			lzma_end(&strm);
			free(buf);
			return hp_fail(why, whylen, -EINVAL, "%s (lzma error %d)", lzma_reason(ret), (int)ret);
		}
		if (strm.avail_out == 0) {
			if (cap >= XZ_OUT_MAX) {
				lzma_end(&strm);
				free(buf);
				return hp_fail(why, whylen, -EFBIG, "decompresses to more than %zu MB",
					    XZ_OUT_MAX >> 20);
			}
			size_t ncap = cap * 2 > XZ_OUT_MAX ? XZ_OUT_MAX : cap * 2;
			grown = realloc(buf, ncap);
			if (!grown) {
				lzma_end(&strm);
				free(buf);
				return hp_fail(why, whylen, -ENOMEM, "out of memory");
			}
			buf = grown;
			strm.next_out = buf + cap;
			strm.avail_out = ncap - cap;
			cap = ncap;
		} else if (strm.avail_in == 0) {
			/* Input used up, room left, no end of stream. */
			lzma_end(&strm);
			free(buf);
			return hp_fail(why, whylen, -EINVAL, "%s", lzma_reason(LZMA_BUF_ERROR));
		}
	}
	*outlen = (size_t)strm.total_out;
	lzma_end(&strm);
	*out = buf;
	return 0;
}

static bool load_minidebuginfo(struct hp_symtab *t, const struct elf_info *obj,
			       struct sym_source *src)
{
	struct elf_file f = { 0 };
	struct elf_info info;
	Elf_Data *data;
	unsigned char *img = NULL;
	size_t imglen = 0;
	char why[200];

	if (!obj->debugdata)
		return false;
	data = elf_getdata(obj->debugdata, NULL);
	if (!data || !data->d_buf || data->d_size == 0) {
		note_add(t, "MiniDebugInfo unreadable");
		return false;
	}
	if (unxz(data->d_buf, data->d_size, &img, &imglen, why, sizeof(why)) != 0) {
		note_add(t, "MiniDebugInfo refused: %s", why);
		return false;
	}
	f.mem = img;
	f.elf = elf_memory((char *)img, imglen);
	if (!f.elf || elf_kind(f.elf) != ELF_K_ELF) {
		note_add(t, "MiniDebugInfo refused: not an ELF image");
		goto refuse;
	}
	if (scan_sections(f.elf, imglen, &info, why, sizeof(why)) != 0) {
		note_add(t, "MiniDebugInfo refused: %s", why);
		goto refuse;
	}
	return adopt_debug(t, &f, info.symtab, src, "MiniDebugInfo");
refuse:
	elf_file_close(&f);
	return false;
}

/* ---- public ----------------------------------------------------------- */

#define OPT(o, field, dflt) \
	((o) && (o)->sz >= offsetof(struct hp_symtab_opts, field) + sizeof((o)->field) ? \
	 (o)->field : (dflt))

int hp_symtab_open(const char *path, const struct hp_symtab_opts *opts,
		   struct hp_symtab **out, char *err, size_t errlen)
{
	struct hp_symtab *t;
	struct elf_info info;
	struct sym_source main_src, dyn_src;
	bool have_main = false, have_dyn = false;
	uint64_t base;
	const char *root;
	size_t total;
	char why[256];
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !out)
		return hp_fail(err, errlen, -EINVAL, "hp_symtab_open: NULL argument");
	*out = NULL;
	if (opts && opts->sz == 0)
		return hp_fail(err, errlen, -EINVAL, "hp_symtab_open: opts->sz not set");
	base = OPT(opts, load_base, 0);
	root = OPT(opts, debug_root, NULL);
	if (!root)
		root = DEFAULT_DEBUG_ROOT;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return hp_fail(err, errlen, -ENOSYS, "libelf: %s", elf_errmsg(-1));
	t = calloc(1, sizeof(*t));
	if (!t)
		return hp_fail(err, errlen, -ENOMEM, "out of memory");
	t->path = strdup(path);
	if (!t->path) {
		rc = hp_fail(err, errlen, -ENOMEM, "out of memory");
		goto out_free;
	}

	rc = elf_file_open(&t->obj, path, err, errlen);
	if (rc)
		goto out_free;
	rc = scan_sections(t->obj.elf, t->obj.mapsz, &info, why, sizeof(why));
	if (rc) {
		hp_fail(err, errlen, rc, "%s: corrupt ELF: %s", path, why);
		goto out_free;
	}
	hex_string(t->build_id, info.build_id, info.build_id_len);

	/* The object's own tables are structural: if they are broken the
	 * file is corrupt, and that is an error rather than a fallback. */
	if (info.symtab) {
		rc = prepare_source(&t->obj, info.symtab, false, &main_src, why, sizeof(why));
		if (rc) {
			hp_fail(err, errlen, rc, "%s: corrupt ELF: %s", path, why);
			goto out_free;
		}
		have_main = true;
		t->origin = HP_SYMS_FILE_SYMTAB;
	}
	if (info.dynsym) {
		rc = prepare_source(&t->obj, info.dynsym, true, &dyn_src, why, sizeof(why));
		if (rc) {
			hp_fail(err, errlen, rc, "%s: corrupt ELF: %s", path, why);
			goto out_free;
		}
		have_dyn = true;
	}

	if (!have_main && !OPT(opts, no_debug_search, 0)) {
		if (find_by_build_id(t, root, &info, &main_src))
			t->origin = HP_SYMS_DEBUG_BUILDID;
		else if (find_by_debuglink(t, root, &info, &main_src))
			t->origin = HP_SYMS_DEBUG_LINK;
		else if (load_minidebuginfo(t, &info, &main_src))
			t->origin = HP_SYMS_MINIDEBUGINFO;
		have_main = t->dbg.elf != NULL;
	}
	if (!have_main)
		t->origin = HP_SYMS_DYNSYM_ONLY;

	total = (have_main ? main_src.count : 0) + (have_dyn ? dyn_src.count : 0);
	if (total >= MAX_SYMS) {
		rc = hp_fail(err, errlen, -EFBIG, "%s: too many symbols (%zu)", path, total);
		goto out_free;
	}
	/* Sized for every entry; the tail that filtering leaves unused is
	 * never touched, so it costs address space, not RSS, and is trimmed
	 * below. */
	t->syms = malloc(sizeof(*t->syms) * (total ? total : 1));
	if (!t->syms || hp_strmap_init(&t->map, (uint32_t)total, key_of, t) != 0) {
		rc = hp_fail(err, errlen, -ENOMEM, "out of memory");
		goto out_free;
	}
	/* .symtab first: on a duplicate name the first entry wins. */
	if ((have_main && index_source(t, &main_src, base) != 0) ||
	    (have_dyn && index_source(t, &dyn_src, base) != 0) ||
	    build_addr_index(t) != 0) {
		rc = hp_fail(err, errlen, -ENOMEM, "out of memory");
		goto out_free;
	}
	if (t->nsyms && t->nsyms < total) {
		struct hp_sym *trimmed = realloc(t->syms, sizeof(*t->syms) * t->nsyms);
		if (trimmed)
			t->syms = trimmed;
	}

	/* A debug file set symbols_path; otherwise the object supplied
	 * them (its .symtab, its MiniDebugInfo or its .dynsym). */
	if (!t->symbols_path) {
		t->symbols_path = strdup(path);
		if (!t->symbols_path) {
			rc = hp_fail(err, errlen, -ENOMEM, "out of memory");
			goto out_free;
		}
	}
	*out = t;
	return 0;

out_free:
	hp_symtab_close(t);
	return rc;
}

void hp_symtab_trim(struct hp_symtab *t)
{
	/* The mapped file's pages (its .symtab and .strtab, ~4 MB for
	 * libjvm, all touched while the index was built) are clean copies of
	 * the file: dropped, they are read back from it if a name is looked
	 * at again. */
	if (!t)
		return;
	if (t->obj.map)
		madvise(t->obj.map, t->obj.mapsz, MADV_DONTNEED);
	if (t->dbg.map)
		madvise(t->dbg.map, t->dbg.mapsz, MADV_DONTNEED);
}

void hp_symtab_close(struct hp_symtab *t)
{
	if (!t)
		return;
	hp_strmap_free(&t->map);
	free(t->syms);
	free(t->by_addr);
	elf_file_close(&t->dbg);
	elf_file_close(&t->obj);
	free(t->path);
	free(t->symbols_path);
	free(t);
}

const struct hp_sym *hp_symtab_find(const struct hp_symtab *t, const char *name)
{
	uint32_t id;

	if (!t || !name)
		return NULL;
	id = hp_strmap_find(&t->map, name);
	return id == HP_STRMAP_NONE ? NULL : &t->syms[id];
}

const struct hp_sym *hp_symtab_containing(const struct hp_symtab *t, uint64_t addr)
{
	const struct hp_sym *best = NULL;
	uint32_t lo = 0, hi;

	if (!t || !t->naddr)
		return NULL;
	/* lo = first entry starting above addr. */
	hi = t->naddr;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->syms[t->by_addr[mid].id].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back over the entries starting at or below addr. The greatest
	 * start that covers addr wins (the innermost of nested symbols);
	 * among equal starts the smallest size, then the earliest entry. */
	for (uint32_t i = lo; i-- > 0;) {
		const struct addr_ent *e = &t->by_addr[i];
		const struct hp_sym *s = &t->syms[e->id];
		uint64_t off = addr - s->addr;

		if (best && s->addr < best->addr)
			break;
		if (e->reach != UINT32_MAX && off >= e->reach)
			break;  /* nothing at or before i reaches addr */
		if (off < s->size && (!best || s->size <= best->size))
			best = s;
	}
	return best;
}

enum hp_symtab_origin hp_symtab_origin(const struct hp_symtab *t)
{
	return t ? t->origin : HP_SYMS_DYNSYM_ONLY;
}

size_t hp_symtab_count(const struct hp_symtab *t)
{
	return t ? t->nsyms : 0;
}

size_t hp_symtab_count_symtab(const struct hp_symtab *t)
{
	return t ? t->nsymtab : 0;
}

size_t hp_symtab_count_dynsym(const struct hp_symtab *t)
{
	return t ? t->ndynsym : 0;
}

const char *hp_symtab_symbols_path(const struct hp_symtab *t)
{
	return t && t->symbols_path ? t->symbols_path : "";
}

const char *hp_symtab_build_id(const struct hp_symtab *t)
{
	return t ? t->build_id : "";
}

const char *hp_symtab_debug_note(const struct hp_symtab *t)
{
	return t ? t->note : "";
}
