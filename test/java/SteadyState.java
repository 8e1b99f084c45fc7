import java.io.File;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A service in steady state, for the live-heap tests: a live set that
 * turns over, garbage that lives long enough to reach the old generation
 * and then dies, and no System.gc() anywhere.
 *
 *   keep:    the live set, ~LIVE MiB of long[] of random lengths in a table
 *            of slots; a slot is replaced at random every -Dturnover=K
 *            steps (16), so the replaced arrays (most of them old) become
 *            old garbage, slowly enough that G1 can go the whole run on
 *            young pauses while it builds up
 *   midlife: byte[] held in a ring of ~MID MiB, each dropped when the ring
 *            comes round: dies after surviving a few young collections
 *   garbage: byte[] dropped at once
 *   huge:    with -Dhuge=N, N byte[] of 1.1-1.9 MiB (humongous in 2 MiB G1
 *            regions), one replaced every 1000 steps
 *
 * Arguments: LIVE_MIB SECONDS STOPFILE [MID_MIB] [ATTACH_FILE].
 * After SECONDS of churn it empties the ring (midlife and garbage then hold
 * nothing live) and prints the truth by construction, then "ready", and
 * waits, idle, until STOPFILE exists ("-": it exits at once, and profiles
 * written at exit are the ones compared). With ATTACH_FILE it first builds the
 * live set, prints "attach", and starts churning only once ATTACH_FILE
 * exists (the test attaches the agent meanwhile): the live set built before
 * then is never sampled (truth.before_attach). With -DminFresh=F as well,
 * the churn goes on past SECONDS until at least F of the live set's bytes
 * were allocated since the attach point, for at most 4 x SECONDS: a slow
 * machine churns longer instead of replacing too little to judge.
 */
public class SteadyState {
    static long[][] slots;
    static byte[][] ring;
    static byte[][] huge;
    static long hugeBytes;
    static volatile Object escape;
    static long keptBytes;           // sum over slots, by construction
    static long keptSinceAttach;     // of which allocated after the attach point
    static long keepAllocated;       // every array keep() allocated while sampled

    static long arrayBytes(long elems, int elemSize) {
        long b = 16 + elems * elemSize;  // 64-bit HotSpot, compressed class pointers: 16-byte array header
        return (b + 7) & ~7L;
    }

    static boolean[] fresh;

    static void keep(int i, int len, boolean sampled) {
        if (slots[i] != null) {
            keptBytes -= arrayBytes(slots[i].length, 8);
            if (fresh[i]) keptSinceAttach -= arrayBytes(slots[i].length, 8);
        }
        slots[i] = new long[len];
        keptBytes += arrayBytes(len, 8);
        if (sampled) keepAllocated += arrayBytes(len, 8);
        fresh[i] = sampled;
        if (sampled) keptSinceAttach += arrayBytes(len, 8);
    }

    static void midlife(int i, int len) { ring[i] = new byte[len]; }

    static void garbage(int len) { escape = new byte[len]; }

    static void keepHuge(int i, int len) {
        if (huge[i] != null) hugeBytes -= arrayBytes(huge[i].length, 1);
        huge[i] = new byte[len];
        hugeBytes += arrayBytes(len, 1);
    }

    public static void main(String[] args) throws Exception {
        long live = Long.parseLong(args[0]) << 20;
        long seconds = Long.parseLong(args[1]);
        File stop = new File(args[2]);
        long mid = (args.length > 3 ? Long.parseLong(args[3]) : 32) << 20;
        File attach = args.length > 4 ? new File(args[4]) : null;
        SplittableRandom rnd = new SplittableRandom(42);
        int avgLen = 128;                                   // ~1 KiB per array on average
        int n = (int) (live / arrayBytes(avgLen, 8));
        slots = new long[n][];
        fresh = new boolean[n];
        int ringLen = (int) (mid / arrayBytes(512, 1));
        ring = new byte[ringLen][];
        boolean sampled = attach == null;
        huge = new byte[Integer.getInteger("huge", 0)][];
        for (int i = 0; i < huge.length; i++) keepHuge(i, (11 << 17) + rnd.nextInt(8 << 17));
        for (int i = 0; i < n; i++) keep(i, 16 + rnd.nextInt(2 * avgLen - 32), sampled);
        if (attach != null) {
            System.out.println("attach");
            System.out.flush();
            while (!attach.exists()) Thread.sleep(50);
            sampled = true;
        }
        int turnover = Integer.getInteger("turnover", 16);
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        int r = 0;
        long step = 0;
        double minFresh = attach != null ? Double.parseDouble(System.getProperty("minFresh", "0")) : 0;
        long latest = System.nanoTime() + 4 * seconds * 1_000_000_000L;
        while (System.nanoTime() < end || (keptSinceAttach < minFresh * keptBytes && System.nanoTime() < latest)) {
            for (int k = 0; k < 1000; k++, step++) {
                if (step % turnover == 0) keep(rnd.nextInt(n), 16 + rnd.nextInt(2 * avgLen - 32), sampled);
                midlife(r, 256 + rnd.nextInt(512));
                r = r + 1 == ringLen ? 0 : r + 1;
                garbage(64 + rnd.nextInt(4096));
                garbage(64 + rnd.nextInt(4096));
            }
            if (huge.length > 0) keepHuge(rnd.nextInt(huge.length), (11 << 17) + rnd.nextInt(8 << 17));
        }
        Arrays.fill(ring, null);
        escape = null;
        System.out.println("truth.keep: " + keptBytes);
        System.out.println("truth.keep_since_attach: " + keptSinceAttach);
        System.out.println("truth.huge: " + hugeBytes);
        System.out.println("truth.keep_alloc: " + keepAllocated);
        System.out.println("truth.slots: " + n);
        System.out.println("truth.steps: " + step);
        System.out.println("ready");
        System.out.flush();
        while (!args[2].equals("-") && !stop.exists()) Thread.sleep(50);
    }
}
