package io.heapprobe;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * heapprobe from Java: the live heap after the last collection with the
 * source it came from, the markings counted, and the allocation profiler
 * (start, dump to a path, stop). The first call extracts and loads the
 * native library of this jar (see Natives); a platform without one throws
 * UnsupportedOperationException.
 *
 * <pre>
 *   HeapProbe.start("interval=256k,file=/tmp/app.pb.gz");
 *   HeapProbe.LiveHeap h = HeapProbe.liveHeapAfterLastGc();
 *   System.out.println(h.bytes + " bytes live after GC #" + h.gcCount + " (" + h.source + ")");
 *   HeapProbe.dump("/tmp/now.pb.gz");
 *   HeapProbe.stop();
 * </pre>
 *
 * Options are the agent's (README: "Options"); a bad one throws
 * IllegalArgumentException with the agent's message, and nothing changes.
 */
public final class HeapProbe {
    private HeapProbe() {}

    private static boolean loaded;

    private static native String command0(String options);

    private static native String info0();

    /** Loads the native library (once). */
    static synchronized void load() throws IOException {
        if (loaded) return;
        System.load(Natives.extract("libheapprobe.so").toString());
        loaded = true;
    }

    /** A command's outcome: the agent's messages; an error throws. */
    static String command(String options) {
        try {
            load();
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        String out = command0(options);
        if (out == null) throw new IllegalStateException("heapprobe: the command '" + options + "' failed in the JVM");
        int nl = out.indexOf('\n');
        int rc = Integer.parseInt(out.substring(3, nl));
        String msg = out.substring(nl + 1).trim();
        if (rc != 0) throw new IllegalArgumentException(msg.isEmpty() ? "heapprobe: '" + options + "' failed" : msg);
        return msg;
    }

    /** Starts the allocation profiler with the agent's options (e.g. "interval=256k,period=60,file=/tmp/p.pb.gz"). */
    public static String start(String options) {
        return command(options == null ? "" : options);
    }

    /** Writes a profile now, to `path` (its format from the extension, as the heapprobe command does:
     *  .pb.gz .pprof .pb pprof, .html .htm, .jfr, .collapsed, .txt text; others pprof). */
    public static String dump(String path) {
        return command(path == null ? "dump" : "dump,file=" + path + ",format=" + formatOf(path));
    }

    static String formatOf(String path) {
        String[][] ext = { { ".pb.gz", "pprof" }, { ".pprof", "pprof" }, { ".pb", "pprof" }, { ".html", "html" },
                { ".htm", "html" }, { ".jfr", "jfr" }, { ".collapsed", "collapsed" }, { ".txt", "text" } };
        for (String[] e : ext) if (path.endsWith(e[0])) return e[1];
        return "pprof";
    }

    /** Stops the profiler, writing its last profile where it writes them. */
    public static String stop() {
        return command("stop");
    }

    /** Whether a profiler runs, its options, samples, sites, where profiles went. */
    public static String status() {
        return command("status");
    }

    /** The whole info report: every heap-usage source and why one is off. */
    public static String info() {
        try {
            load();
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        String out = info0();
        if (out == null) throw new IllegalStateException("heapprobe: no info report");
        return out.substring(out.indexOf('\n') + 1);
    }

    /** The heap's used bytes right after the last collection, and where that figure came from. */
    public static final class LiveHeap {
        /** Used bytes after the last collection (a young collection's leaves dead old objects in). */
        public final long bytes;
        /** Committed heap then. */
        public final long committed;
        /** The collection it follows (the JVM's own count). */
        public final long gcCount;
        /** What the figure is: after-full-gc, after-young-gc, after-concurrent-cycle (under load several times the live heap), marked-live. */
        public final String kind;
        /** The heapprobe source that read it (last-gc-fields, heap-summary-call, jmm, ...). */
        public final String source;
        /** Markings counted so far (full collections and concurrent cycles). */
        public final long markings;

        LiveHeap(long bytes, long committed, long gcCount, String kind, String source, long markings) {
            this.bytes = bytes;
            this.committed = committed;
            this.gcCount = gcCount;
            this.kind = kind;
            this.source = source;
            this.markings = markings;
        }

        @Override
        public String toString() {
            return bytes + " bytes after GC #" + gcCount + " (" + kind + ", from " + source + "; " + markings + " markings)";
        }
    }

    /** The live heap after the last collection, or null before the first one. */
    public static LiveHeap liveHeapAfterLastGc() {
        Map<String, String> info = fields(info());
        String post = info.get("usage.post_gc");
        if (post == null || post.startsWith("none")) return null;
        Map<String, String> kv = pairs(post);
        long markings = 0;
        String m = info.get("marking.count");
        if (m != null) markings = Long.parseLong(m.split(" ")[0]);
        return new LiveHeap(Long.parseLong(kv.get("used")), Long.parseLong(kv.get("committed")),
                Long.parseLong(kv.get("gc")), kv.get("kind"), kv.get("mode"), markings);
    }

    static Map<String, String> fields(String report) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : report.split("\n")) {
            int c = line.indexOf(": ");
            if (c > 0) out.putIfAbsent(line.substring(0, c), line.substring(c + 2));
        }
        return out;
    }

    private static Map<String, String> pairs(String s) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String w : s.split(" ")) {
            int e = w.indexOf('=');
            if (e > 0) out.put(w.substring(0, e), w.substring(e + 1));
        }
        return out;
    }
}
