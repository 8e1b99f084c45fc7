import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * Test program for the live-heap profiler: three allocation sites whose
 * retained sets are known by construction.
 *   keepBytes:   40 MiB of byte[1024]   (each 1040 bytes with header)
 *   keepLongs:   24 MiB of long[126]    (each 1024 bytes with header)
 *   makeGarbage: 1 GiB of byte[4096] kept by nobody
 * Prints the exact retained bytes per site and the bytes this thread
 * allocated (com.sun.management.ThreadMXBean), then collects and exits;
 * the agent writes its profile at exit.
 */
public class RetainedSet {
    static final ArrayList<Object> bytes = new ArrayList<>();
    static final ArrayList<Object> longs = new ArrayList<>();
    static volatile Object escape;   // defeats escape analysis: every array is really allocated

    static void keepBytes(int n) { for (int i = 0; i < n; i++) bytes.add(new byte[1024]); }
    static void keepLongs(int n) { for (int i = 0; i < n; i++) longs.add(new long[126]); }
    static void makeGarbage(long total) {
        for (long done = 0; done < total; done += 4112) { escape = new byte[4096]; }
    }

    public static void main(String[] args) throws Exception {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(tid);
        int nBytes = 40 * 1024 * 1024 / 1040, nLongs = 24 * 1024 * 1024 / 1024;
        bytes.ensureCapacity(nBytes);
        longs.ensureCapacity(nLongs);
        for (int round = 0; round < 8; round++) {       // interleave so no site is all-young or all-old
            keepBytes(nBytes / 8);
            keepLongs(nLongs / 8);
            makeGarbage(128L << 20);
        }
        long allocated = threads.getThreadAllocatedBytes(tid) - before;
        escape = null;
        System.gc();
        Thread.sleep(300);
        System.gc();
        Thread.sleep(300);
        System.out.println("truth.keepBytes: " + (long) bytes.size() * 1040);
        System.out.println("truth.keepLongs: " + (long) longs.size() * 1024);
        System.out.println("truth.makeGarbage.alloc: " + 8L * (((128L << 20) + 4111) / 4112) * 4112);
        System.out.println("truth.allocated: " + allocated);
    }
}
