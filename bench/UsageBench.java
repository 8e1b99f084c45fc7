import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.Arrays;

/**
 * Read cost of each heapprobe mode (ns/call, timed in C around
 * hp_heap_usage) beside MemoryMXBean.getHeapMemoryUsage() called from Java,
 * in the same JVM, interleaved, repeated; prints medians and spread.
 * Run by bench/usage-bench.sh.
 */
public class UsageBench {
    /** ns per call of hp_heap_usage(flags) over `iters` calls; negative = error. */
    static native double nsPerCall(int flags, int iters);
    /** ns per call of the mode's raw read (no dispatcher), negative if unavailable. */
    static native double rawNsPerCall(int mode, int iters);

    /** ns per call of hp_live_bytes(). */
    static native double liveNsPerCall(int iters);

    static final String[] MODES = {"memory-usage-call", "heap-summary-call", "last-gc-fields", "jmm",
            "jmx-native", "exported-totals", "perfdata"};
    static volatile long sink;

    static double jmxNsPerCall(MemoryMXBean bean, int iters) {
        long t0 = System.nanoTime();
        for (int i = 0; i < iters; i++) sink += bean.getHeapMemoryUsage().getUsed();
        return (System.nanoTime() - t0) / (double) iters;
    }

    public static void main(String[] args) {
        int reps = args.length > 0 ? Integer.parseInt(args[0]) : 9;
        int iters = 200_000;
        MemoryMXBean bean = ManagementFactory.getMemoryMXBean();
        int n = MODES.length;
        double[][] api = new double[n][reps], raw = new double[n][reps];
        double[] jmx = new double[reps], live = new double[reps];
        for (int w = 0; w < 3; w++) {            // warm up JIT and caches
            jmxNsPerCall(bean, iters);
            for (int m = 0; m < n; m++) { nsPerCall((1 << 8) | (m << 9), iters / 10); rawNsPerCall(m, iters / 10); }
        }
        for (int r = 0; r < reps; r++) {         // interleaved repetitions
            jmx[r] = jmxNsPerCall(bean, iters);
            live[r] = liveNsPerCall(iters);
            for (int m = 0; m < n; m++) {
                api[m][r] = nsPerCall((1 << 8) | (m << 9), iters);
                raw[m][r] = rawNsPerCall(m, iters);
            }
        }
        double jmxMed = median(jmx);
        System.out.printf("| MemoryMXBean.getHeapMemoryUsage() (Java) | %s | — | 1x |%n", fmt(jmx));
        System.out.printf("| hp_live_bytes() (post-GC live size) | %s | — | %s |%n", fmt(live),
                versus(jmxMed, median(live)));
        for (int m = 0; m < n; m++) {
            if (median(api[m]) < 0) { System.out.printf("| %s | unavailable | | |%n", MODES[m]); continue; }
            System.out.printf("| %s | %s | %s | %s |%n", MODES[m], fmt(api[m]), fmt(raw[m]),
                    versus(jmxMed, median(api[m])));
        }
    }

    /** "118x cheaper" or, for the modes slower than the JMX call, "3x dearer". */
    static String versus(double jmxNs, double ns) {
        return ns <= jmxNs ? String.format("%.0fx cheaper", jmxNs / ns) : String.format("%.0fx dearer", ns / jmxNs);
    }

    static double median(double[] a) { double[] c = a.clone(); Arrays.sort(c); return c[c.length / 2]; }
    static String fmt(double[] a) {
        double[] c = a.clone(); Arrays.sort(c);
        return String.format("%.1f [%.1f–%.1f]", c[c.length / 2], c[0], c[c.length - 1]);
    }
}
