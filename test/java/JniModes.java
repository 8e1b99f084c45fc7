import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;

/**
 * Test program for the JNI-based heap modes (jmm, jmx-native,
 * exported-totals) and the JMM collection usage. Run with the test agent
 * (jni_modes_agent), which provides {@link #probe()}.
 *
 * After System.gc() it brackets one probe() call between two readings of
 * what Java itself sees (MemoryMXBean heap usage, Runtime totals, the sum of
 * the heap pools' collection usage) and prints all of them as "key: value"
 * lines. A bracket counts only if no collection ran inside it and nothing
 * but "used" moved; otherwise it is taken again.
 */
public class JniModes {
    /**
     * Implemented by the test agent: for jmm, jmx-native, exported-totals
     * {rc, used, committed, max}, then for the collection usage
     * {rc, used, committed, 0}.
     */
    static native long[] probe();

    static long gcCount() {
        long n = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans())
            n += Math.max(0, gc.getCollectionCount());
        return n;
    }

    static long[] collectionUsage() {
        long used = 0, committed = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() != MemoryType.HEAP)
                continue;
            MemoryUsage u = pool.getCollectionUsage();
            if (u == null)
                continue;
            used += u.getUsed();
            committed += u.getCommitted();
        }
        return new long[] { used, committed };
    }

    static String usage(MemoryUsage u) {
        return "used=" + u.getUsed() + " committed=" + u.getCommitted() + " max=" + u.getMax();
    }

    static String runtime(long total, long free, long max) {
        return "used=" + (total - free) + " total=" + total + " max=" + max;
    }

    /**
     * "stress": threads call probe() in a loop while allocating enough to
     * keep the collector busy; every reading must succeed and be sane.
     * exported-totals may decline (-EAGAIN, rc -11) when the heap resizes
     * under it every time it tries.
     */
    static void stress(int threads, long millis) throws InterruptedException {
        final java.util.concurrent.atomic.AtomicLong calls = new java.util.concurrent.atomic.AtomicLong();
        final java.util.concurrent.atomic.AtomicLong declined = new java.util.concurrent.atomic.AtomicLong();
        final java.util.concurrent.atomic.AtomicLong threw = new java.util.concurrent.atomic.AtomicLong();
        final java.util.concurrent.atomic.AtomicReference<String> failure =
                new java.util.concurrent.atomic.AtomicReference<>();
        final long end = System.nanoTime() + millis * 1_000_000L;
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                Object[] keep = new Object[64];
                int k = 0;
                while (System.nanoTime() < end) {
                    for (int i = 0; i < 64; i++)
                        keep[k++ & 63] = new byte[1024 + (i & 7) * 512];
                    long[] p = probe();
                    calls.incrementAndGet();
                    for (int m = 0; m < p.length / 4; m++) {
                        long rc = p[4 * m], used = p[4 * m + 1], committed = p[4 * m + 2], max = p[4 * m + 3];
                        if (m == 2 && rc == -11) {
                            declined.incrementAndGet();
                            continue;
                        }
                        // A JNI mode whose call threw (-EIO): the agent
                        // prints which exception (agent.threw.*) and the
                        // test decides; a later bad reading still counts.
                        if (m < 2 && rc == -5) {
                            threw.incrementAndGet();
                            continue;
                        }
                        // The modes without JNI (from index 4) need not all
                        // work on every JDK and collector (their status at
                        // start and end is checked by the test): a reading
                        // they give must be sane.
                        if (m >= 4 && rc != 0)
                            continue;
                        boolean ok = rc == 0 && committed > 0 && used <= committed && (max == 0 || committed <= max);
                        if (!ok)
                            failure.compareAndSet(null, "mode " + m + ": rc=" + rc + " used=" + used
                                    + " committed=" + committed + " max=" + max);
                    }
                }
            });
            ts[t].start();
        }
        for (Thread t : ts)
            t.join();
        System.out.println("stress.calls: " + calls.get());
        System.out.println("stress.gc_count: " + gcCount());
        System.out.println("stress.totals_declined: " + declined.get());
        System.out.println("stress.threw: " + threw.get());
        System.out.println("stress.failure: " + (failure.get() == null ? "none" : failure.get()));
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length > 0 && args[0].equals("stress")) {
            System.gc();        // so that the collection usage exists
            stress(4, 3000);
            System.out.println("JniModes done");
            return;
        }
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        Runtime rt = Runtime.getRuntime();
        Object keep = null;
        for (int i = 0; i < 20_000; i++)
            keep = new byte[256];       // something for the collection to find
        System.gc();

        for (int attempt = 1; attempt <= 20; attempt++) {
            long gc0 = gcCount();
            long[] c0 = collectionUsage();
            MemoryUsage m0 = mem.getHeapMemoryUsage();
            long t0 = rt.totalMemory(), f0 = rt.freeMemory(), x0 = rt.maxMemory();

            long[] p = probe();

            MemoryUsage m1 = mem.getHeapMemoryUsage();
            long t1 = rt.totalMemory(), f1 = rt.freeMemory(), x1 = rt.maxMemory();
            long[] c1 = collectionUsage();
            long gc1 = gcCount();

            boolean quiet = gc0 == gc1 && m0.getCommitted() == m1.getCommitted() && m0.getMax() == m1.getMax()
                    && t0 == t1 && x0 == x1 && c0[0] == c1[0] && c0[1] == c1[1];
            if (!quiet && attempt < 20) {
                System.gc();
                continue;
            }
            System.out.println("java.version: " + System.getProperty("java.version"));
            System.out.println("java.quiet: " + (quiet ? "yes" : "no") + " attempts=" + attempt);
            System.out.println("java.gc_count: " + gc1);
            System.out.println("java.heap.before: " + usage(m0));
            System.out.println("java.heap.after: " + usage(m1));
            System.out.println("java.runtime.before: " + runtime(t0, f0, x0));
            System.out.println("java.runtime.after: " + runtime(t1, f1, x1));
            System.out.println("java.collection: used=" + c0[0] + " committed=" + c0[1]);
            String[] names = { "jmm", "jmx-native", "exported-totals" };
            for (int i = 0; i < 3; i++)
                System.out.println("probe." + names[i] + ": rc=" + p[4 * i] + " used=" + p[4 * i + 1]
                        + " committed=" + p[4 * i + 2] + " max=" + p[4 * i + 3]);
            System.out.println("probe.collection: rc=" + p[12] + " used=" + p[13] + " committed=" + p[14]);
            break;
        }
        System.out.println("JniModes done " + (keep != null));
    }
}
