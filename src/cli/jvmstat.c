#include "cli/jvmstat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heapusage/perfdata.h"

static int map_file(const char *path, uid_t uid, struct hp_jvmstat *js)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != uid ||
	    st.st_size < (off_t)sizeof(struct hp_pd_prologue) || st.st_size > (off_t)HP_PD_MAX_CAPACITY) {
		close(fd);
		return -EBADMSG;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	const struct hp_pd_prologue *p = m;
	if (p->magic[0] != HP_PD_MAGIC0 || p->magic[1] != HP_PD_MAGIC1 || p->magic[2] != HP_PD_MAGIC2 ||
	    p->magic[3] != HP_PD_MAGIC3 || p->byte_order != HP_PD_LITTLE_ENDIAN || p->major_version != HP_PD_MAJOR) {
		munmap(m, (size_t)st.st_size);
		return -EBADMSG;
	}
	js->map = m;
	js->len = (size_t)st.st_size;
	snprintf(js->path, sizeof(js->path), "%s", path);
	return 0;
}

int hp_jvmstat_open(const struct hp_target *t, struct hp_jvmstat *js)
{
	memset(js, 0, sizeof(*js));
	char tmp[128];
	hp_target_path(t, "/tmp", tmp, sizeof(tmp));
	DIR *d = opendir(tmp);
	if (!d)
		return -errno;
	int rc = -ENOENT;
	struct dirent *e;
	/* The directory is named after the JVM's user as the JVM's own
	 * /etc/passwd spells it (a container's may differ from ours): take
	 * any hsperfdata_* with a file for its PID owned by its uid. */
	while (rc != 0 && (e = readdir(d))) {
		if (strncmp(e->d_name, "hsperfdata_", 11))
			continue;
		char path[400];
		snprintf(path, sizeof(path), "%s/%s/%d", tmp, e->d_name, (int)t->nspid);
		int r = map_file(path, t->uid, js);
		if (r == 0 || rc == -ENOENT)
			rc = r;
	}
	closedir(d);
	return rc;
}

void hp_jvmstat_close(struct hp_jvmstat *js)
{
	if (js->map)
		munmap((void *)js->map, js->len);
	js->map = NULL;
}

/* The entry named `name` of type `type`, through the library's checked
 * walker (hp_perfdata_each): its data and vector length. */
struct find {
	const char *name;
	char type;
	int32_t veclen;
	size_t at;
};

static int find_one(const char *name, char type, int32_t veclen, size_t at, void *vctx)
{
	struct find *f = vctx;
	if (type != f->type || strcmp(name, f->name))
		return 0;
	f->veclen = veclen;
	f->at = at;
	return 1;
}

static const unsigned char *find(const struct hp_jvmstat *js, const char *name, char type, int32_t *veclen)
{
	if (!js->map || js->len < sizeof(struct hp_pd_prologue))
		return NULL;
	struct hp_pd_prologue p;
	memcpy(&p, js->map, sizeof(p));
	if ((size_t)p.used > js->len)
		p.used = (int32_t)js->len;     /* the file is what there is */
	struct find f = { name, type, 0, 0 };
	hp_perfdata_each((const char *)js->map, &p, find_one, &f, NULL, 0);
	if (!f.at)
		return NULL;    /* not there, or a malformed entry before it */
	*veclen = f.veclen;
	return js->map + f.at;
}

const volatile int64_t *hp_jvmstat_long(const struct hp_jvmstat *js, const char *name)
{
	int32_t vl;
	const unsigned char *d = find(js, name, 'J', &vl);
	return d && vl == 0 && ((uintptr_t)d & 7) == 0 ? (const volatile int64_t *)d : NULL;
}

int hp_jvmstat_string(const struct hp_jvmstat *js, const char *name, char *buf, size_t cap)
{
	int32_t vl;
	const unsigned char *d = find(js, name, 'B', &vl);
	if (!d || vl <= 0 || cap == 0)
		return -ENOENT;
	size_t n = strnlen((const char *)d, (size_t)vl);
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, d, n);
	buf[n] = '\0';
	return 0;
}

int64_t hp_jvmstat_collections(const struct hp_jvmstat *js)
{
	int64_t sum = -1;
	for (int i = 0; i < 4; i++) {
		char name[64];
		snprintf(name, sizeof(name), "sun.gc.collector.%d.invocations", i);
		const volatile int64_t *v = hp_jvmstat_long(js, name);
		if (v)
			sum = (sum < 0 ? 0 : sum) + *v;
	}
	return sum;
}
