/* The in-memory profile the agent hands to its writers (pprof, collapsed
 * stacks, HTML). Writers never see JVM objects: frames are already named. */
#ifndef HP_PROFILE_H
#define HP_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hp_frame {
	const char *function;       /* "java.util.ArrayList.grow" (pkg.Class.method) */
	const char *file;           /* "ArrayList.java", "" if unknown */
	int line;                   /* source line, 0 if unknown */
	const char *descriptor;     /* "(I)V", NULL if unknown (JFR names methods with it) */
};

struct hp_prof_sample {
	/* Leaf first: indices into hp_profile.frames, or into its frame_map
	 * when it has one. Read them with hp_prof_frame(). */
	const uint32_t *frames;
	size_t nframes;
	/* Estimated totals for this stack (already unbiased / scaled). */
	int64_t alloc_objects, alloc_bytes;
	int64_t inuse_objects, inuse_bytes;
	/* 95% confidence interval of inuse_bytes; equal to inuse_bytes when
	 * no estimate of the error exists. */
	int64_t inuse_bytes_lo, inuse_bytes_hi;
	const char *class_name;     /* allocated class of the samples, "" if mixed */
	/* Samples still referenced that no marking has seen yet (allocated
	 * after the last marking began): maybe alive, maybe garbage not yet
	 * found. Reported apart, never in inuse (estimate.c). */
	int64_t recent_objects, recent_bytes;
};

/* One sample as it was taken, for formats that keep samples (JFR). */
enum hp_event_kind {
	HP_EVENT_ALLOC,             /* an allocation sample; weight = the bytes it stands for */
	HP_EVENT_LIVE,              /* a live sample a marking verified; weight = its share of inuse_bytes */
	HP_EVENT_RECENT,            /* a live sample no marking has seen yet; weight = its share of recent_bytes */
};
#define HP_PROF_NO_THREAD UINT32_MAX

struct hp_prof_event {
	uint32_t sample;            /* index into hp_profile.samples: its stack and class */
	uint32_t thread;            /* index into hp_profile.threads, or HP_PROF_NO_THREAD */
	int64_t time_nanos;         /* CLOCK_REALTIME when sampled; 0 = unknown */
	int64_t size;               /* the object's size; 0 for a per-site remainder */
	int64_t weight;             /* bytes; per sample and kind they sum to the sample's totals */
	int32_t markings;           /* live samples: markings that found it alive; 0 otherwise */
	uint8_t kind;               /* enum hp_event_kind */
};

struct hp_prof_thread {
	int64_t os_tid;
	const char *name;           /* Java name, "" if unknown */
};

/* The heap figure beside the profile (JFR's jdk.GCHeapSummary). */
struct hp_prof_heap {
	int64_t time_nanos;         /* CLOCK_REALTIME of the reading */
	uint64_t used, committed;   /* after the last collection */
	uint32_t gc_id;             /* collections seen */
	const char *kind;           /* "after-young-gc", "after-full-gc", ... */
	const char *source;         /* the heapusage mode that read it */
	uint64_t marked_live;       /* live bytes the last marking found, 0 = none */
	const char *marked_source;
};

/* Live bytes over time (history.h), for the formats that show it (HTML's
 * timeline, text). Points are the records of the two rings by time. */
enum hp_prof_point_kind { HP_POINT_MARKING = 0, HP_POINT_YOUNG = 1 };

struct hp_prof_point {
	int64_t time_nanos;         /* CLOCK_REALTIME */
	uint8_t kind;               /* enum hp_prof_point_kind */
	uint32_t collections;       /* pauses since the previous point */
	uint64_t heap_used;         /* post-GC heap figure then, 0 = none */
	double live, recent, freed; /* all sites: verified bytes, recent bytes, freed since the previous point */
};

/* A leak suspect (history.c: the test). */
struct hp_prof_suspect {
	uint32_t sample;            /* index into hp_profile.samples: stack and class */
	double live;                /* verified bytes at the last marking */
	double per_min;             /* growth, bytes per minute (least squares over the window) */
	double z, z_recent;         /* growth over the window and over its second half, in standard errors */
	uint32_t window;            /* markings in the window */
	double span_s;              /* seconds it covers */
	double age_bytes[4];        /* its verified bytes by markings survived: 1, 2-3, 4-7, 8+ */
	/* Sampling began with much of the heap already in use (a late attach)
	 * and the site's live bytes are still below those bytes: its growth
	 * may be objects older than the sampling being replaced by sampled
	 * ones, which no sampled data can tell from a leak yet. */
	bool may_be_replacement;
	uint64_t baseline_bytes;    /* the bytes in use when sampling began */
};

struct hp_prof_history {
	const struct hp_prof_point *points;
	size_t npoints;
	/* The largest sites' verified live bytes at each point: series[s *
	 * npoints + i] for series_samples[s] (0 where the record has none). */
	const uint32_t *series_samples;
	size_t nseries;
	const double *series;
	const struct hp_prof_suspect *suspects;     /* confident ones, most growth per minute first */
	size_t nsuspects;
	uint32_t markings;          /* marking records in the history */
	uint64_t bytes;             /* memory the history holds */
};

struct hp_profile {
	const struct hp_frame *frames;
	size_t nframes;
	/* Optional (NULL: samples index frames directly): what samples' frame
	 * indices stand for, frame_map[i] indexing frames. The agent's
	 * samples point at the frame ids their sites hold (one table for
	 * every profile) instead of a copy per profile. */
	const uint32_t *frame_map;
	size_t nframe_map;
	const struct hp_prof_sample *samples;
	size_t nsamples;
	int64_t period;             /* sampling interval R in bytes */
	int64_t time_nanos;         /* wall clock at collection start (CLOCK_REALTIME) */
	int64_t duration_nanos;
	const char *const *comments;    /* e.g. "live heap scaled to 21.3 MiB from last-gc-fields after GC #12" */
	size_t ncomments;
	/* The live view in one clause for people ("live 190.3 MiB [95% ...],
	 * 24% verified alive by a marking 0.3 s before, ..."); NULL: none. The
	 * HTML page opens with it and folds the comments away. */
	const char *summary;
	/* Optional, for formats that keep samples (JFR); the others read only
	 * the per-stack totals above. Without events, a writer that needs
	 * them makes one per stack and kind from the totals. */
	const struct hp_prof_event *events;
	size_t nevents;
	const struct hp_prof_thread *threads;
	size_t nthreads;
	const struct hp_prof_heap *heap;    /* NULL: none */
	const struct hp_prof_history *history;      /* NULL: none (live tracking off) */
};

/* Frame j of sample s, an index into p->frames. */
static inline uint32_t hp_prof_frame(const struct hp_profile *p, const struct hp_prof_sample *s, size_t j)
{
	uint32_t f = s->frames[j];
	return p->frame_map ? p->frame_map[f] : f;
}

/* pprof sample types: alloc_objects, alloc_space, inuse_objects, inuse_space
 * (Go's heap profile order), then recent_objects, recent_space. */
#define HP_PPROF_TYPES 6

enum hp_profile_view { HP_VIEW_ALLOC, HP_VIEW_INUSE };

/* Each writer writes to `path` through a temporary file in the same
 * directory and renames it into place, so a failure (unwritable directory,
 * full disk) leaves any previous profile at `path` intact. 0, or a negative
 * errno with a one-line reason in err. */
int hp_write_pprof(const struct hp_profile *p, const char *path, char *err, size_t errlen);
/* "frame;frame;...;leaf value\n", root first, value in bytes (flamegraph.pl,
 * speedscope). */
int hp_write_collapsed(const struct hp_profile *p, enum hp_profile_view view, const char *path, char *err,
		       size_t errlen);
/* One self-contained HTML page (no network) with alloc and live flame graphs
 * and a table of sites with their live estimate and confidence interval. */
int hp_write_html(const struct hp_profile *p, const char *path, char *err, size_t errlen);
/* A plain-text report for terminals and CI logs: the heap figure, the top
 * live sites with their stacks, and, last, a section that starts with the
 * line "leak suspects:" and lists one suspect per line ("1. pkg.Class.method
 * ..."), nothing after the header when there is none. */
int hp_write_text(const struct hp_profile *p, const char *path, char *err, size_t errlen);
/* A JDK Flight Recorder file (one chunk, the format `jfr` and JDK Mission
 * Control read): jdk.ObjectAllocationSample per allocation sample,
 * heapprobe.LiveObject per live sample, jdk.GCHeapSummary and
 * heapprobe.HeapUsage for the heap figure, heapprobe.ProfileNote per
 * comment. jfr.c has the layout. */
int hp_write_jfr(const struct hp_profile *p, const char *path, char *err, size_t errlen);
/* The profile as a gzip'd pprof in memory with Go's four heap sample
 * types only (alloc_objects, alloc_space, inuse_objects, inuse_space), as
 * continuous-profiling servers expect; *out is malloc'd. 0 or -errno. */
int hp_encode_pprof_go_heap(const struct hp_profile *p, unsigned char **out, size_t *len);

#endif
