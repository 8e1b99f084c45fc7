import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Accuracy workload for live heap per class (bench/peers/run.sh, section 3).
 *
 * Two threads each run build(): in 8 rounds they add a slice of a retained
 * set that spans several classes of different sizes, and between slices they
 * allocate ~640 MiB of garbage of the same classes and of others (int[],
 * java.util.ArrayList, StringBuilder), parked for a while in a ring so some
 * of it is promoted before it dies. Retained, per thread (fixed seeds, so
 * every run builds the same set):
 *   byte[]            6,000 arrays of 16..4095 bytes (keepBytes) and the values of the strings
 *   long[]            4,000 arrays of 2..511 longs (keepLongs)
 *   java.lang.String  100,000 latin-1 strings of 8..47 chars (keepStrings)
 *   java.util.HashMap 10,000 maps of 6 entries (keepMaps): HashMap, HashMap$Node[16],
 *                     6 HashMap$Node, 6 java.lang.Integer keys (>= 1000: not the cache's),
 *                     6 ClassMix$Point values
 *   ClassMix$Point    100,000 more (keepPoints), 8 per Object[8]
 *   Object[]          the groups of 8, the Object[1024] chunks holding everything, a spine
 *
 * Ground truth is a heap walk: the class histogram of the DiagnosticCommand
 * MBean (what `jcmd PID GC.class_histogram` prints; it forces a full GC and
 * walks the live heap). One is taken at start (after System.gc()) and one at
 * the end (retained set built, garbage dropped); the per-class difference is
 * printed as `truthclass.<java name>: <bytes>` and `truthcount.<java name>:
 * <instances>`, and the instances built per class as `construct.<java name>:
 * <instances>` to check the walk against the construction. Per allocation
 * site (the method build() calls) the retained bytes are known by
 * construction, `truthsite.<site>: <bytes>`: arrays sized as HotSpot lays
 * them out (16-byte header, 8-byte aligned), plain objects at the size the
 * end walk gives their class (bytes / instances). Only allocations
 * under ClassMix.build (on the two worker threads) belong to the workload;
 * the harness scores the agents' stacks through that frame. The retained set
 * stays reachable (static fields) until exit, when the agents write their
 * profiles.
 *   java ClassMix
 */
public class ClassMix {
    static final int THREADS = 2, ROUNDS = 8;
    static final int N_BYTES = 6_000, N_LONGS = 4_000, N_STRINGS = 100_000, N_MAPS = 10_000, N_POINTS = 100_000;
    static final long GARBAGE_PER_ROUND = 80L << 20;   // per thread: 8 x 80 MiB x 2 threads = 1.25 GiB

    static final Object[][] spines = new Object[THREADS][];   // spine -> Object[1024] chunks -> objects
    static final long[][] built = new long[THREADS][];        // per thread: instances built, by class (see CLS)
    static volatile Object escape;                            // defeats escape analysis

    static final String[] CLS = {"byte[]", "long[]", "java.lang.String", "java.util.HashMap",
            "java.util.HashMap$Node[]", "java.util.HashMap$Node", "java.lang.Integer", "ClassMix$Point",
            "java.lang.Object[]"};
    static final int C_BYTES = 0, C_LONGS = 1, C_STRING = 2, C_MAP = 3, C_TABLE = 4, C_NODE = 5, C_INT = 6,
            C_POINT = 7, C_OBJS = 8;
    /** Allocation sites: the method called by build() (or build itself) that allocates the object. */
    static final String[] SITES = {"build", "keepBytes", "keepLongs", "keepStrings", "keepMaps", "keepPoints"};
    static final int S_BUILD = 0, S_BYTES = 1, S_LONGS = 2, S_STRINGS = 3, S_MAPS = 4, S_POINTS = 5;
    static final long[][] siteArrays = new long[THREADS][];   // per thread and site: bytes of retained arrays
    static final long[][][] siteObjects = new long[THREADS][][]; // per thread, site, class: retained plain objects
    static int refSize = 4;                                   // 8 without compressed oops

    static final class Point {
        int x, y;
        Object next;
        Point(int x, int y) { this.x = x; this.y = y; }
    }

    /** Per-thread state: where retained objects go, a garbage ring, a random stream. */
    static final class Sink {
        final Object[] spine;
        final long[] count;
        final long[] arrays = new long[SITES.length];
        final long[][] objects = new long[SITES.length][CLS.length];
        int site;
        Object[] chunk;
        int spineAt, chunkAt = 1024;
        final Object[] ring = new Object[8192];
        int ringAt;
        long seed;
        final byte[] chars = new byte[64];
        Sink(Object[] spine, long[] count, long seed) { this.spine = spine; this.count = count; this.seed = seed; }

        int next(int bound) {                                  // xorshift64*, no allocation
            seed ^= seed >>> 12; seed ^= seed << 25; seed ^= seed >>> 27;
            return (int) (((seed * 0x2545F4914F6CDD1DL) >>> 33) % bound);
        }
        void keep(Object o) {
            if (chunkAt == 1024) {
                chunk = new Object[1024];
                count[C_OBJS]++;
                arrays[site] += objArray(1024);
                spine[spineAt++] = chunk;
                chunkAt = 0;
            }
            chunk[chunkAt++] = o;
        }
        void drop(Object o) { ring[ringAt++ & (ring.length - 1)] = o; }
        String string(int len) {
            for (int i = 0; i < len; i++) chars[i] = (byte) ('a' + next(26));
            return new String(chars, 0, len, StandardCharsets.ISO_8859_1);   // a String and its byte[len]
        }
    }

    // Array sizes in the heap (HotSpot, 64-bit, compressed class pointers): 16-byte header, 8-byte aligned.
    static long align(long n) { return (n + 7) & ~7L; }
    static long objArray(int n) { return align(16 + (long) refSize * n); }

    static void keepBytes(Sink s, int n) {
        s.site = S_BYTES;
        for (int i = 0; i < n; i++) {
            int len = 16 + s.next(4080);
            s.keep(new byte[len]);
            s.arrays[S_BYTES] += align(16 + len);
        }
        s.count[C_BYTES] += n;
    }

    static void keepLongs(Sink s, int n) {
        s.site = S_LONGS;
        for (int i = 0; i < n; i++) {
            int len = 2 + s.next(510);
            s.keep(new long[len]);
            s.arrays[S_LONGS] += 16 + 8L * len;
        }
        s.count[C_LONGS] += n;
    }

    static void keepStrings(Sink s, int n) {
        s.site = S_STRINGS;
        for (int i = 0; i < n; i++) {
            int len = 8 + s.next(40);
            s.keep(s.string(len));
            s.arrays[S_STRINGS] += align(16 + len);           // the String's latin-1 byte[] value
        }
        s.count[C_STRING] += n;
        s.count[C_BYTES] += n;
        s.objects[S_STRINGS][C_STRING] += n;
    }

    static void keepMaps(Sink s, int n) {
        s.site = S_MAPS;
        for (int i = 0; i < n; i++) {
            HashMap<Integer, Point> m = new HashMap<>();
            for (int k = 0; k < 6; k++) m.put(1000 + s.next(1 << 20) * 8 + k, new Point(k, i));
            s.keep(m);
            s.arrays[S_MAPS] += objArray(16);                 // the table: default capacity, 6 < 12 entries
        }
        s.count[C_MAP] += n;
        s.count[C_TABLE] += n;
        s.count[C_NODE] += 6L * n;
        s.count[C_INT] += 6L * n;
        s.count[C_POINT] += 6L * n;
        long[] o = s.objects[S_MAPS];
        o[C_MAP] += n; o[C_NODE] += 6L * n; o[C_INT] += 6L * n; o[C_POINT] += 6L * n;
    }

    static void keepPoints(Sink s, int n) {
        s.site = S_POINTS;
        for (int i = 0; i < n; i += 8) {
            Object[] g = new Object[8];
            for (int k = 0; k < 8; k++) g[k] = new Point(i, k);
            s.keep(g);
            s.count[C_POINT] += 8;
            s.count[C_OBJS]++;
            s.objects[S_POINTS][C_POINT] += 8;
            s.arrays[S_POINTS] += objArray(8);
        }
    }

    static void makeGarbage(Sink s, long bytes) {
        java.util.ArrayList<Object> list = null;
        for (long done = 0; done < bytes; ) {
            switch (s.next(9)) {
                case 0: { int n = 16 + s.next(4080); s.drop(new byte[n]); done += n + 16; break; }
                case 1: { int n = 2 + s.next(510); s.drop(new long[n]); done += 8L * n + 16; break; }
                case 2: { s.drop(s.string(8 + s.next(40))); done += 80; break; }
                case 3: {
                    HashMap<Integer, Object> m = new HashMap<>();
                    for (int k = 0; k < 4; k++) m.put(1000 + s.next(1 << 20) * 8 + k, new Point(k, k));
                    s.drop(m); done += 400; break;
                }
                case 4: { for (int k = 0; k < 16; k++) s.drop(new Point(k, k)); done += 16 * 24; break; }
                case 5: { int n = 4 + s.next(60); s.drop(new Object[n]); done += 4L * n + 16; break; }
                case 6: { int n = 4 + s.next(1000); s.drop(new int[n]); done += 4L * n + 16; break; }
                case 7: {
                    if (list == null || list.size() > 200) { list = new java.util.ArrayList<>(); s.drop(list); }
                    list.add(new Point(1, 2)); done += 40; break;
                }
                default: {
                    StringBuilder b = new StringBuilder();
                    for (int k = 0; k < 8; k++) b.append(s.next(100000)).append(',');
                    s.drop(b.toString()); done += 200; break;
                }
            }
        }
        escape = list;
    }

    /** One worker: the retained slices interleaved with garbage. */
    static void build(int t) {
        long[] count = new long[CLS.length];
        Object[] spine = new Object[2048];
        count[C_LONGS]++;                      // count itself stays reachable (built[t])
        count[C_OBJS]++;
        Sink s = new Sink(spine, count, 0x9E3779B97F4A7C15L * (t + 1));
        s.arrays[S_BUILD] += objArray(2048) + 16 + 8L * CLS.length;   // spine, count
        for (int r = 0; r < ROUNDS; r++) {
            keepBytes(s, N_BYTES / ROUNDS);
            makeGarbage(s, GARBAGE_PER_ROUND / 4);
            keepLongs(s, N_LONGS / ROUNDS);
            keepStrings(s, N_STRINGS / ROUNDS);
            makeGarbage(s, GARBAGE_PER_ROUND / 4);
            keepMaps(s, N_MAPS / ROUNDS);
            makeGarbage(s, GARBAGE_PER_ROUND / 4);
            keepPoints(s, N_POINTS / ROUNDS);
            makeGarbage(s, GARBAGE_PER_ROUND / 4);
        }
        spines[t] = spine;
        built[t] = count;
        siteArrays[t] = s.arrays;
        siteObjects[t] = s.objects;
    }

    // ---- heap walk
    static final class Histo {
        final Map<String, long[]> byClass = new HashMap<>();   // java name -> {instances, bytes}
    }

    /** The histogram as `jcmd PID GC.class_histogram` prints it (a full GC, then a walk of the live heap). */
    static String walk(MBeanServer server) throws Exception {
        return (String) server.invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"),
                "gcClassHistogram", new Object[]{new String[0]}, new String[]{String[].class.getName()});
    }

    static Histo parse(String text) {
        Histo h = new Histo();
        for (String line : text.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 4 || !f[0].endsWith(":")) continue;   // " num: #instances #bytes class (module)"
            long[] v = h.byClass.computeIfAbsent(javaName(f[3]), k -> new long[2]);
            v[0] += Long.parseLong(f[1]);
            v[1] += Long.parseLong(f[2]);
        }
        return h;
    }

    /** "[B" -> "byte[]", "[[Ljava.lang.Object;" -> "java.lang.Object[][]"; others as they are. */
    static String javaName(String n) {
        int dims = 0;
        while (dims < n.length() && n.charAt(dims) == '[') dims++;
        if (dims == 0) return n;
        String e = n.substring(dims);
        switch (e) {
            case "B": e = "byte"; break;
            case "C": e = "char"; break;
            case "S": e = "short"; break;
            case "I": e = "int"; break;
            case "J": e = "long"; break;
            case "F": e = "float"; break;
            case "D": e = "double"; break;
            case "Z": e = "boolean"; break;
            default: if (e.startsWith("L") && e.endsWith(";")) e = e.substring(1, e.length() - 1);
        }
        return e + "[]".repeat(dims);
    }

    public static void main(String[] args) throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        if ("false".equals(ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
                .getVMOption("UseCompressedOops").getValue())) refSize = 8;
        boolean compact = !"false".equals(ManagementFactory.getPlatformMXBean(
                com.sun.management.HotSpotDiagnosticMXBean.class).getVMOption("CompactStrings").getValue());
        parse(walk(server));                   // warm-up: loads and links what the walk and the parse need
        System.gc();
        // The start walk stays unparsed until the end: its text (one String, one byte[]) is then the only
        // object of the harness's own that is live at the end walk and not there at the start one, and
        // is subtracted below.
        String startText = walk(server);
        long t0 = System.nanoTime();
        Thread[] ts = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int id = t;
            ts[t] = new Thread(() -> build(id), "classmix-" + t);
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        escape = null;
        System.gc();
        Thread.sleep(200);
        String endText = walk(server);
        Thread.sleep(200);
        System.gc();
        Histo start = parse(startText), end = parse(endText);
        long[] str = end.byClass.get("java.lang.String"), arr = end.byClass.get("byte[]");
        str[0] -= 1;                                                   // startText
        str[1] -= str[1] / (str[0] + 1);
        arr[0] -= 1;                                                   // its value: latin-1 (or UTF-16)
        arr[1] -= align(16 + (long) startText.length() * (compact ? 1 : 2));

        Map<String, long[]> delta = new TreeMap<>();
        for (Map.Entry<String, long[]> e : end.byClass.entrySet()) {
            long[] a = start.byClass.getOrDefault(e.getKey(), new long[2]);
            delta.put(e.getKey(), new long[]{e.getValue()[0] - a[0], e.getValue()[1] - a[1]});
        }
        for (Map.Entry<String, long[]> e : start.byClass.entrySet())
            if (!end.byClass.containsKey(e.getKey())) delta.put(e.getKey(), new long[]{-e.getValue()[0], -e.getValue()[1]});
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, long[]> e : delta.entrySet()) {
            if (e.getValue()[1] == 0) continue;
            out.append("truthclass.").append(e.getKey()).append(": ").append(e.getValue()[1]).append('\n');
            out.append("truthcount.").append(e.getKey()).append(": ").append(e.getValue()[0]).append('\n');
        }
        for (int c = 0; c < CLS.length; c++) {
            long n = 0;
            for (long[] b : built) n += b[c];
            out.append("construct.").append(CLS[c]).append(": ").append(n).append('\n');
        }
        // per site: arrays as counted, plain objects x their size in the end walk (bytes / instances)
        for (int site = 0; site < SITES.length; site++) {
            long b = 0;
            for (int t = 0; t < THREADS; t++) {
                b += siteArrays[t][site];
                for (int c = 0; c < CLS.length; c++) {
                    long n = siteObjects[t][site][c];
                    if (n == 0) continue;
                    long[] v = end.byClass.get(CLS[c]);
                    b += n * (v[1] / v[0]);
                }
            }
            out.append("truthsite.").append(SITES[site]).append(": ").append(b).append('\n');
        }
        out.append("truthsite.makeGarbage: 0\n");
        out.append("elapsed_ms: ").append(ms).append('\n');
        System.out.print(out);
    }
}
