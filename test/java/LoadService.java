import java.io.File;
import java.util.SplittableRandom;

/**
 * A service at full load, for the live view while it works: THREADS worker
 * threads, each holding a cache of ~CACHE_MIB/THREADS MiB of byte[] entries
 * (cacheEntry), every entry replaced at random so the whole cache turns
 * over about TURNOVER times a second (-Dturnover=, 4), plus short-lived
 * garbage (garbage), GARBAGE arrays per replacement (-Dgarbage=; by
 * default 16 / TURNOVER, which keeps the garbage's rate: 4 at the default
 * turnover, 160 at turnover=0.1, a cache whose entries live ~10 s, the
 * allocation ~10% less in all as the cache's own share falls). No
 * System.gc() anywhere.
 *
 * With -Dgrow=MIB_PER_S a third site (grow) adds arrays to a list at that
 * rate and -Dshrink=S drops the list every S seconds: a live set that grows
 * and shrinks at a known rate. With -Dleak=MIB a fourth site (leak) grows by
 * that much over the run and is kept.
 *
 * Arguments: CACHE_MIB SECONDS [TRUTH_FILE]. Every 100 ms the main thread
 * appends "epoch_ms cache_bytes grow_bytes leak_bytes replaced_bytes" to
 * TRUTH_FILE: the bytes held, by construction (each worker keeps its own
 * exact sum; reads are racy by at most the entries being replaced that
 * instant), and the bytes the cache's replacements allocated so far (its
 * allocation estimate's truth, as of the worker's last batch). After
 * SECONDS the workers end, their caches die with them, and the JVM exits
 * (after -Didle=S seconds idle, if given).
 */
public class LoadService {
    static final int THREADS = Integer.getInteger("threads", 2);
    static final double TURNOVER = Double.parseDouble(System.getProperty("turnover", "4"));
    // Garbage arrays per replacement: by default as many as keep the
    // garbage's rate at the default turnover's (4 at 4, 160 at 0.1).
    static final int GARBAGE = Integer.getInteger("garbage", (int) Math.min(100_000, Math.max(1, Math.round(16 / Math.max(TURNOVER, 1e-4)))));
    static volatile boolean stop;
    static volatile Object escape;
    static final long[] cacheBytes = new long[THREADS * 16];    // one cache line apart
    static final long[] replacedBytes = new long[THREADS * 16]; // allocated by replacements, all told
    static volatile long growBytes, leakBytes;
    // A leak stays reachable, as real ones do (a static list): held by a
    // local of main it died when main's loop ended, before the exit
    // profile's marking, which then rightly counted none of it.
    static final java.util.ArrayList<byte[]> leaked = new java.util.ArrayList<>();

    static long arrayBytes(long len) { return (16 + len + 7) & ~7L; }

    static byte[] cacheEntry(int len) { return new byte[len]; }
    static byte[] garbage(int len) { return new byte[len]; }
    static byte[] grow(int len) { return new byte[len]; }
    static byte[] leak(int len) { return new byte[len]; }

    static void work(int id, long cacheTarget) {
        SplittableRandom rnd = new SplittableRandom(42 + id);
        int avg = 1024;
        int n = (int) (cacheTarget / arrayBytes(avg));
        byte[][] cache = new byte[n][];
        long bytes = 0;
        for (int i = 0; i < n; i++) {
            cache[i] = cacheEntry(64 + rnd.nextInt(2 * avg - 128));
            bytes += arrayBytes(cache[i].length);
        }
        cacheBytes[id * 16] = bytes;
        // Replacements per second per thread: n * TURNOVER, paced in
        // batches of 1000 against the clock.
        long replaced = 0;
        long perBatchNs = (long) (1000 * 1e9 / (n * TURNOVER));
        long next = System.nanoTime();
        while (!stop) {
            for (int k = 0; k < 1000; k++) {
                int i = rnd.nextInt(n);
                bytes -= arrayBytes(cache[i].length);
                cache[i] = cacheEntry(64 + rnd.nextInt(2 * avg - 128));
                bytes += arrayBytes(cache[i].length);
                replaced += arrayBytes(cache[i].length);
                for (int g = 0; g < GARBAGE; g++)
                    escape = garbage(64 + rnd.nextInt(4096));
            }
            cacheBytes[id * 16] = bytes;
            replacedBytes[id * 16] = replaced;
            next += perBatchNs;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                try { Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000)); } catch (InterruptedException e) { return; }
            } else if (wait < -1_000_000_000L) {
                next = System.nanoTime();   // fell behind: full load, do not catch up
            }
        }
        cacheBytes[id * 16] = 0;            // the cache dies with the thread
    }

    public static void main(String[] args) throws Exception {
        long cache = Long.parseLong(args[0]) << 20;
        long seconds = Long.parseLong(args[1]);
        java.io.PrintStream truth = args.length > 2 ? new java.io.PrintStream(new java.io.FileOutputStream(args[2]), true) : null;
        double growRate = Double.parseDouble(System.getProperty("grow", "0")) * (1 << 20);
        double shrinkS = Double.parseDouble(System.getProperty("shrink", "0"));
        long leakTotal = Long.getLong("leak", 0L) << 20;
        Thread[] workers = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int id = t;
            workers[t] = new Thread(() -> work(id, cache / THREADS), "worker-" + t);
            workers[t].start();
        }
        java.util.ArrayList<byte[]> grown = new java.util.ArrayList<>();
        long t0 = System.nanoTime(), lastShrink = t0;
        long end = t0 + seconds * 1_000_000_000L;
        double growOwed = 0;
        while (System.nanoTime() < end) {
            Thread.sleep(100);
            long now = System.nanoTime();
            if (growRate > 0) {
                if (shrinkS > 0 && now - lastShrink >= shrinkS * 1e9) {
                    grown.clear();
                    growBytes = 0;
                    lastShrink = now;
                }
                growOwed += growRate * 0.1;
                while (growOwed >= 4096) {
                    grown.add(grow(4096 - 16));
                    growBytes += 4096;
                    growOwed -= 4096;
                }
            }
            if (leakTotal > 0 && leakBytes < leakTotal * (now - t0) / (seconds * 1e9)) {
                for (int i = 0; i < 64; i++) { leaked.add(leak(2048 - 16)); leakBytes += 2048; }
            }
            long c = 0, r = 0;
            for (int t = 0; t < THREADS; t++) { c += cacheBytes[t * 16]; r += replacedBytes[t * 16]; }
            if (truth != null)
                truth.println(System.currentTimeMillis() + " " + c + " " + growBytes + " " + leakBytes + " " + r);
        }
        stop = true;
        for (Thread w : workers) w.join();
        if (truth != null)
            truth.println(System.currentTimeMillis() + " 0 " + growBytes + " " + leakBytes + " end");
        // -Didle=S: stay S seconds idle after the caches died (a profile
        // asked for meanwhile must not show them).
        long idle = Long.getLong("idle", 0L);
        if (idle > 0) {
            System.out.println("idle");
            System.out.flush();
            Thread.sleep(idle * 1000);
        }
        escape = grown.size() + leaked.size();
    }
}
