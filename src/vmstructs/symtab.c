/* libjvm symbol index: .symtab/.dynsym of an ELF file, looked up by name
 * (hash map) and by address (sorted array).
 *
 * Memory is the constraint that shapes this file: libjvm has ~58k .symtab
 * entries with 2.6 MB of mangled names, and the index lives as long as the
 * agent. So names are never copied (they point into libelf's mapping of the
 * string table), the hash map stores 8-byte slots, and the address index is
 * 8 bytes a sized symbol.
 *
 * Everything read from the file is untrusted: section links, entry sizes
 * and string offsets are checked before use, and a bad debug file is
 * refused (with a note), never trusted.
 */
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"
#define BUILD_ID_MAX 64                 /* bytes; SHA-1 ids are 20 */
#define NOTE_MAX 512
/* MiniDebugInfo holds only .symtab/.strtab (a few MB even for libjvm);
 * the caps keep a hostile .gnu_debugdata from eating memory. */
#define XZ_MEMLIMIT (128u << 20)
#define XZ_OUT_MAX ((size_t)256 << 20)
/* Ids are uint32 and the map needs twice as many slots as keys. */
#define MAX_SYMS (1u << 28)

/* One opened ELF image: the object, its debug file, or the MiniDebugInfo
 * image decompressed into `mem`. Kept open for the index's lifetime because
 * symbol names point into it. */
struct elf_file {
	int fd;
	Elf *elf;
	void *mem;
	size_t memsz;
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
	Elf *elf;
	Elf_Data *data;
	size_t strndx;
	size_t count;
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

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

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
	if (f->fd >= 0)
		close(f->fd);
	free(f->mem);
	f->elf = NULL;
	f->fd = -1;
	f->mem = NULL;
}

/* Opens `path` as an ELF through a read-only mapping. Returns 0 or a
 * negative errno with the reason in err: -ENOENT & co. from open(),
 * -ENOEXEC when the magic is wrong, -EINVAL when libelf rejects the
 * headers (truncated or corrupt). */
static int elf_file_open(struct elf_file *f, const char *path, char *err, size_t errlen)
{
	unsigned char ident[EI_NIDENT];
	ssize_t n;

	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		int e = errno;
		return fail(err, errlen, -e, "cannot open %s: %s", path, strerror(e));
	}
	/* Check the magic ourselves: libelf calls anything it does not know
	 * ELF_K_NONE, and "not an ELF file" deserves a different answer than
	 * "broken ELF file". */
	n = pread(f->fd, ident, sizeof(ident), 0);
	if (n < 0) {
		int e = errno;
		return fail(err, errlen, -e, "cannot read %s: %s", path, strerror(e));
	}
	if (n < SELFMAG || memcmp(ident, ELFMAG, SELFMAG) != 0)
		return fail(err, errlen, -ENOEXEC, "%s is not an ELF file", path);
	if ((size_t)n < sizeof(ident))
		return fail(err, errlen, -EINVAL, "%s: truncated ELF header", path);

	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf)
		return fail(err, errlen, -EINVAL, "%s: corrupt ELF: %s", path, elf_errmsg(-1));
	if (elf_kind(f->elf) != ELF_K_ELF)
		return fail(err, errlen, -EINVAL, "%s: corrupt ELF: not an ELF object", path);
	return 0;
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

/* Finds the sections we use. Unreadable section headers mean a corrupt
 * file; unnamed sections are merely not recognised by name. */
static int scan_sections(Elf *elf, struct elf_info *info, char *why, size_t whylen)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	memset(info, 0, sizeof(*info));
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return fail(why, whylen, -EINVAL, "bad section header string index: %s", elf_errmsg(-1));

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return fail(why, whylen, -EINVAL, "bad section header: %s", elf_errmsg(-1));
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
static int prepare_source(Elf *elf, Elf_Scn *scn, bool dynsym, struct sym_source *src,
			  char *why, size_t whylen)
{
	const char *what = dynsym ? ".dynsym" : ".symtab";
	size_t shnum, entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	GElf_Shdr sh, strsh;
	Elf_Scn *strscn;
	Elf_Data *data, *strdata;

	if (!gelf_getshdr(scn, &sh))
		return fail(why, whylen, -EINVAL, "%s: bad section header", what);
	if (entsize == 0 || sh.sh_entsize != entsize)
		return fail(why, whylen, -EINVAL, "%s: sh_entsize %llu, expected %zu", what,
			    (unsigned long long)sh.sh_entsize, entsize);
	if (elf_getshdrnum(elf, &shnum) != 0 || sh.sh_link == 0 || sh.sh_link >= shnum ||
	    sh.sh_link == elf_ndxscn(scn))
		return fail(why, whylen, -EINVAL, "%s: bad sh_link %u", what, (unsigned)sh.sh_link);
	strscn = elf_getscn(elf, sh.sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
		return fail(why, whylen, -EINVAL, "%s: sh_link %u is not a string table", what,
			    (unsigned)sh.sh_link);
	/* libelf refuses sections that extend past the end of the file. */
	strdata = elf_getdata(strscn, NULL);
	if (!strdata || (strsh.sh_size && !strdata->d_buf))
		return fail(why, whylen, -EINVAL, "%s: string table unreadable: %s", what, elf_errmsg(-1));
	data = elf_getdata(scn, NULL);
	if (!data || data->d_type != ELF_T_SYM || (data->d_size && !data->d_buf))
		return fail(why, whylen, -EINVAL, "%s: unreadable: %s", what, elf_errmsg(-1));

	src->elf = elf;
	src->data = data;
	src->strndx = sh.sh_link;
	src->count = data->d_size / entsize;
	src->dynsym = dynsym;
	return 0;
}

/* ---- indexing --------------------------------------------------------- */

static const char *key_of(const void *ctx, uint32_t id)
{
	const struct hp_symtab *t = ctx;
	return t->syms[id].name;
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

		if (!gelf_getsym(src->data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		/* SHN_ABS/SHN_COMMON values are not addresses in the image
		 * (e.g. libjvm's version symbol SUNWprivate_1.1 is ABS 0), so
		 * adding the load base would invent an address. */
		if (sym.st_name == 0 || type == STT_SECTION || type == STT_FILE ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS ||
		    sym.st_shndx == SHN_COMMON)
			continue;
		/* elf_strptr() checks the offset against the section and that
		 * a NUL follows; NULL means a corrupt entry, which we skip. */
		name = elf_strptr(src->elf, src->strndx, sym.st_name);
		if (!name || !*name)
			continue;

		s->name = name;
		/* A TLS value is an offset in the module's TLS block, not an
		 * address: it is kept unrelocated (see symtab.h). */
		s->addr = type == STT_TLS ? sym.st_value : sym.st_value + base;
		s->size = sym.st_size;
		s->type = type;
		s->bind = GELF_ST_BIND(sym.st_info);
		s->from_dynsym = src->dynsym;

		rc = hp_strmap_insert(&t->map, t->nsyms);
		if (rc < 0)
			return -ENOMEM;  /* map sized for every entry: cannot happen */
		/* A .dynsym name already indexed is the same symbol again;
		 * .symtab duplicates (statics of the same name in different
		 * files) are distinct symbols and stay findable by address. */
		if (rc == 1 && src->dynsym)
			continue;
		t->nsyms++;
		if (src->dynsym)
			t->ndynsym++;
		else
			t->nsymtab++;
	}
	return 0;
}

static bool addr_indexed(const struct hp_sym *s)
{
	return s->size > 0 && s->type != STT_TLS;
}

/* Sorts the sized symbols by address with an LSD radix sort over the bytes
 * that vary (3-4 passes for a 20 MB library): no comparator calls, and
 * stable, so equal addresses stay in index order (.symtab first). */
static int build_addr_index(struct hp_symtab *t)
{
	uint32_t n = 0, *ids, *tmp;
	uint64_t lo = UINT64_MAX, hi = 0, span, maxend;

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
	tmp = malloc(sizeof(*tmp) * n);
	t->by_addr = malloc(sizeof(*t->by_addr) * n);
	if (!ids || !tmp || !t->by_addr) {
		free(ids);
		free(tmp);
		return -ENOMEM;
	}
	n = 0;
	for (uint32_t i = 0; i < t->nsyms; i++)
		if (addr_indexed(&t->syms[i]))
			ids[n++] = i;

	span = hi - lo;
	for (unsigned shift = 0; shift < 64 && (span >> shift) != 0; shift += 8) {
		uint32_t pos[256] = { 0 }, sum = 0, *swap;

		for (uint32_t i = 0; i < n; i++)
			pos[((t->syms[ids[i]].addr - lo) >> shift) & 0xff]++;
		for (unsigned d = 0; d < 256; d++) {
			uint32_t c = pos[d];
			pos[d] = sum;
			sum += c;
		}
		for (uint32_t i = 0; i < n; i++)
			tmp[pos[((t->syms[ids[i]].addr - lo) >> shift) & 0xff]++] = ids[i];
		swap = ids;
		ids = tmp;
		tmp = swap;
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
	free(ids);
	free(tmp);
	return 0;
}

/* ---- separate debug files --------------------------------------------- */

static uint32_t file_crc32(int fd, bool *ok)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	*ok = n == 0;
	return (uint32_t)crc;
}

/* Tries one candidate debug file. Returns true if it is accepted (then
 * `t->dbg` holds it and `src` its .symtab). A missing file is silently
 * passed over; any other problem is explained in the note. */
static bool try_debug_file(struct hp_symtab *t, const char *path, const struct elf_info *obj,
			   bool have_crc, uint32_t crc, struct sym_source *src)
{
	struct elf_file f = { .fd = -1 };
	struct elf_info info;
	struct stat st_obj, st_dbg;
	char why[256], want[2 * BUILD_ID_MAX + 1], got[2 * BUILD_ID_MAX + 1];

	if (stat(path, &st_dbg) != 0)
		return false;
	/* A debuglink naming the object itself (same directory, same name). */
	if (fstat(t->obj.fd, &st_obj) == 0 && st_obj.st_dev == st_dbg.st_dev &&
	    st_obj.st_ino == st_dbg.st_ino)
		return false;

	if (elf_file_open(&f, path, why, sizeof(why)) != 0) {
		note_add(t, "debug file unusable: %s", why);
		goto refuse;
	}
	if (scan_sections(f.elf, &info, why, sizeof(why)) != 0) {
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
			note_add(t, "debug file %s refused: build-id %s != %s", path, got, want);
			goto refuse;
		}
	} else if (have_crc) {
		bool ok;
		uint32_t got_crc = file_crc32(f.fd, &ok);

		if (!ok || got_crc != crc) {
			note_add(t, "debug file %s refused: CRC32 %08x != %08x (.gnu_debuglink)",
				 path, got_crc, crc);
			goto refuse;
		}
	}
	if (!info.symtab) {
		note_add(t, "debug file %s refused: no .symtab", path);
		goto refuse;
	}
	if (prepare_source(f.elf, info.symtab, false, src, why, sizeof(why)) != 0) {
		note_add(t, "debug file %s refused: %s", path, why);
		goto refuse;
	}
	t->symbols_path = strdup(path);
	if (!t->symbols_path) {
		note_add(t, "debug file %s: out of memory", path);
		goto refuse;
	}
	t->dbg = f;
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

	if (!obj->debuglink || !read_debuglink(t->obj.elf, obj->debuglink, &link, &crc))
		return false;
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

	const char *const fmts[] = { "%s%s/%s", "%s%s/.debug/%s", "%s%s/%s" };
	for (int i = 0; i < 3; i++) {
		/* Only the third form is prefixed with the debug root. */
		const char *prefix = i == 2 ? root : "";

		n = snprintf(path, sizeof(path), fmts[i], prefix, dir, link);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		if (try_debug_file(t, path, obj, true, crc, src))
			return true;
	}
	return false;
}

/* ---- MiniDebugInfo ---------------------------------------------------- */

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
		return fail(why, whylen, -ENOMEM, "xz decoder init failed (%d)", (int)ret);
	buf = malloc(cap);
	if (!buf) {
		lzma_end(&strm);
		return fail(why, whylen, -ENOMEM, "out of memory");
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
			return fail(why, whylen, -EINVAL, "xz data corrupt (lzma error %d)", (int)ret);
		}
		if (strm.avail_out == 0) {
			if (cap >= XZ_OUT_MAX) {
				lzma_end(&strm);
				free(buf);
				return fail(why, whylen, -EFBIG, "decompresses to more than %zu MB",
					    XZ_OUT_MAX >> 20);
			}
			size_t ncap = cap * 2 > XZ_OUT_MAX ? XZ_OUT_MAX : cap * 2;
			grown = realloc(buf, ncap);
			if (!grown) {
				lzma_end(&strm);
				free(buf);
				return fail(why, whylen, -ENOMEM, "out of memory");
			}
			buf = grown;
			strm.next_out = buf + cap;
			strm.avail_out = ncap - cap;
			cap = ncap;
		} else if (strm.avail_in == 0) {
			/* LZMA_FINISH with input exhausted and room left
			 * but no end: a truncated stream. */
			lzma_end(&strm);
			free(buf);
			return fail(why, whylen, -EINVAL, "xz data truncated");
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
	struct elf_file f = { .fd = -1 };
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
	f.memsz = imglen;
	f.elf = elf_memory((char *)img, imglen);
	if (!f.elf || elf_kind(f.elf) != ELF_K_ELF) {
		note_add(t, "MiniDebugInfo refused: not an ELF image");
		goto refuse;
	}
	if (scan_sections(f.elf, &info, why, sizeof(why)) != 0 || !info.symtab) {
		note_add(t, "MiniDebugInfo refused: %s", info.symtab ? why : "no .symtab");
		goto refuse;
	}
	if (prepare_source(f.elf, info.symtab, false, src, why, sizeof(why)) != 0) {
		note_add(t, "MiniDebugInfo refused: %s", why);
		goto refuse;
	}
	t->dbg = f;
	return true;
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
		return fail(err, errlen, -EINVAL, "hp_symtab_open: NULL argument");
	*out = NULL;
	if (opts && opts->sz == 0)
		return fail(err, errlen, -EINVAL, "hp_symtab_open: opts->sz not set");
	base = OPT(opts, load_base, 0);
	root = OPT(opts, debug_root, NULL);
	if (!root)
		root = DEFAULT_DEBUG_ROOT;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(err, errlen, -ENOSYS, "libelf: %s", elf_errmsg(-1));
	t = calloc(1, sizeof(*t));
	if (!t)
		return fail(err, errlen, -ENOMEM, "out of memory");
	t->obj.fd = t->dbg.fd = -1;
	t->path = strdup(path);
	if (!t->path) {
		rc = fail(err, errlen, -ENOMEM, "out of memory");
		goto out_free;
	}

	rc = elf_file_open(&t->obj, path, err, errlen);
	if (rc)
		goto out_free;
	rc = scan_sections(t->obj.elf, &info, why, sizeof(why));
	if (rc) {
		fail(err, errlen, rc, "%s: corrupt ELF: %s", path, why);
		goto out_free;
	}
	hex_string(t->build_id, info.build_id, info.build_id_len);

	/* The object's own tables are structural: if they are broken the
	 * file is corrupt, and that is an error rather than a fallback. */
	if (info.symtab) {
		rc = prepare_source(t->obj.elf, info.symtab, false, &main_src, why, sizeof(why));
		if (rc) {
			fail(err, errlen, rc, "%s: corrupt ELF: %s", path, why);
			goto out_free;
		}
		have_main = true;
		t->origin = HP_SYMS_FILE_SYMTAB;
	}
	if (info.dynsym) {
		rc = prepare_source(t->obj.elf, info.dynsym, true, &dyn_src, why, sizeof(why));
		if (rc) {
			fail(err, errlen, rc, "%s: corrupt ELF: %s", path, why);
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
		rc = fail(err, errlen, -EFBIG, "%s: too many symbols (%zu)", path, total);
		goto out_free;
	}
	/* Sized for every entry; the tail that filtering leaves unused is
	 * never touched, so it costs address space, not RSS, and is trimmed
	 * below. */
	t->syms = malloc(sizeof(*t->syms) * (total ? total : 1));
	if (!t->syms || hp_strmap_init(&t->map, (uint32_t)total, key_of, t) != 0) {
		rc = fail(err, errlen, -ENOMEM, "out of memory");
		goto out_free;
	}
	/* .symtab first: on a duplicate name the first entry wins. */
	if ((have_main && index_source(t, &main_src, base) != 0) ||
	    (have_dyn && index_source(t, &dyn_src, base) != 0) ||
	    build_addr_index(t) != 0) {
		rc = fail(err, errlen, -ENOMEM, "out of memory");
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
			rc = fail(err, errlen, -ENOMEM, "out of memory");
			goto out_free;
		}
	}
	*out = t;
	return 0;

out_free:
	hp_symtab_close(t);
	return rc;
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
