import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Allocation-heavy multi-threaded microbenchmark for bench/peers/run.sh.
 * A fixed amount of work (args: threads, iterations per thread): every
 * thread allocates a mix of small objects, small/medium arrays and the odd
 * large array, and keeps a rotating window of them alive so that some
 * objects survive young collections (the live-heap trackers have work to do).
 * Prints elapsed ms and the bytes the workers allocated (ThreadMXBean).
 */
public class AllocBench {
    static final class Node { Node next; long a, b; int c; Object payload; }
    static volatile Object sink;

    static long work(int iters, long seed) {
        Object[] window = new Object[4096];              // retained set: ~4096 recent objects per thread
        long x = seed, check = 0;
        for (int i = 0; i < iters; i++) {
            x ^= x << 13; x ^= x >>> 7; x ^= x << 17;    // xorshift: size mix is fixed by the seed
            int r = (int) (x & 1023);
            Object o;
            if (r < 600) {                               // 59%: small objects, 32-48 bytes
                Node n = new Node(); n.a = x; n.next = (Node) (window[r] instanceof Node ? window[r] : null); o = n;
            } else if (r < 900) {                        // 29%: small arrays, 16-272 bytes
                o = new long[(int) ((x >>> 20) & 31)];
            } else if (r < 1015) {                       // 11%: medium arrays, 1-8 KiB
                o = new byte[1024 + (int) ((x >>> 24) & 7167)];
            } else if (r < 1022) {                       // ~0.7%: strings via a builder
                o = new StringBuilder(64).append("k").append(x).append('/').append(i).toString();
            } else {                                     // ~0.2%: large arrays, 64-320 KiB
                o = new int[16384 + (int) ((x >>> 30) & 65535)];
            }
            if ((i & 3) == 0) window[(int) ((x >>> 40) & 4095)] = o; else sink = o;
            check += o.hashCode() & 1;
        }
        return check;
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int iters = args.length > 1 ? Integer.parseInt(args[1]) : 20_000_000;
        com.sun.management.ThreadMXBean tmx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        AtomicLong allocated = new AtomicLong(), check = new AtomicLong();
        Thread[] ts = new Thread[threads];
        long t0 = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            final long seed = 0x9E3779B97F4A7C15L * (t + 1);
            ts[t] = new Thread(() -> {
                long id = Thread.currentThread().getId(), before = tmx.getThreadAllocatedBytes(id);
                check.addAndGet(work(iters, seed));
                allocated.addAndGet(tmx.getThreadAllocatedBytes(id) - before);
            }, "alloc-" + t);
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("elapsed_ms: " + ms);
        System.out.println("allocated_bytes: " + allocated.get());
        System.out.println("check: " + check.get());
    }
}
