import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;

/**
 * Test program for the heap usage modes: builds a known retained set, forces
 * a collection, then prints at that quiet point what Java's MemoryMXBean and
 * MemoryPoolMXBean.getCollectionUsage() say next to every heapprobe mode's
 * reading (through the test agent's native probe()). The C test compares.
 */
public class HeapUsageCheck {
    /** {rc, mode, kind, used, committed, max, live, liveKind, gcCount} */
    static native long[] probe(int flags);
    static native long callbacks();
    static native long liveBytes();

    static final String[] MODES = {"memory-usage-call", "heap-summary-call", "last-gc-fields", "jmm",
            "jmx-native", "exported-totals", "perfdata"};
    static final String[] KINDS = {"current", "after-young-gc", "after-full-gc", "marked-live", "after-concurrent-cycle"};
    static final int ONLY_MODE = 1 << 8;
    static final int POST_GC = 1 << 1;
    static final List<byte[]> retained = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 16 * 1024; i++) retained.add(new byte[1024]);     // 16 MB kept
        for (int i = 0; i < 200_000; i++) { byte[] garbage = new byte[512]; } // some garbage
        System.gc();
        Thread.sleep(200);   // concurrent collectors finish their cycle's bookkeeping
        System.gc();
        Thread.sleep(200);
        report();
        System.out.println("callbacks: " + callbacks());
        System.out.println("retained: " + retained.size());
    }

    static void report() {
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        long collUsed = 0, collCommitted = 0;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            if (p.getType() != MemoryType.HEAP || p.getCollectionUsage() == null) continue;
            collUsed += p.getCollectionUsage().getUsed();
            collCommitted += p.getCollectionUsage().getCommitted();
        }
        System.out.println("jmx: used=" + heap.getUsed() + " committed=" + heap.getCommitted() + " max=" + heap.getMax());
        System.out.println("jmx.collection: used=" + collUsed + " committed=" + collCommitted);
        for (int m = 0; m < MODES.length; m++) print("mode." + MODES[m], probe(ONLY_MODE | (m << 9)));
        print("best", probe(0));
        print("post_gc", probe(POST_GC));
        System.out.println("live_bytes: " + liveBytes());
        MemoryUsage again = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        System.out.println("jmx.after: used=" + again.getUsed() + " committed=" + again.getCommitted());
    }

    static void print(String name, long[] r) {
        if (r[0] != 0) { System.out.println(name + ": rc=" + r[0]); return; }
        System.out.println(name + ": rc=0 mode=" + MODES[(int) r[1]] + " kind=" + KINDS[(int) r[2]]
                + " used=" + r[3] + " committed=" + r[4] + " max=" + r[5] + " live=" + r[6]
                + " gc=" + r[8]);
    }
}
