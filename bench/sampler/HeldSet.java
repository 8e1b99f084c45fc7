import java.util.SplittableRandom;

/**
 * A held set of known bytes for the JVM's own sampler (bench/sampler/run.sh):
 * N byte[] entries of 64..1983 bytes (cacheEntry), replaced at random
 * ROUNDS times with 4 byte[] of 64..4159 bytes of garbage per replacement
 * (LoadService's mix, single-threaded, no pacing), then held (a static
 * field) while the agent's exit profile asks for a marking. Prints the
 * held bytes, every byte allocated, and the samples a sampler at mean
 * interval R should take, by construction: each object is sampled with
 * probability 1 - e^{-size/R} (JEP 331's Poisson process over the bytes;
 * for these sizes 1-2% below size / R at 64k).
 *
 * Arguments: N ROUNDS R.
 */
public class HeldSet {
    static volatile Object escape;
    static byte[][] cache;

    static long arrayBytes(long len) { return (16 + len + 7) & ~7L; }
    static byte[] cacheEntry(int len) { return new byte[len]; }
    static byte[] garbage(int len) { return new byte[len]; }
    static double pSampled(byte[] x, double r) { return -Math.expm1(-arrayBytes(x.length) / r); }

    public static void main(String[] a) {
        int n = Integer.parseInt(a[0]);
        long rounds = Long.parseLong(a[1]);
        double r = Double.parseDouble(a[2]);
        SplittableRandom rnd = new SplittableRandom(7);
        cache = new byte[n][];
        long held = 0, entries = 0, junk = 0;
        double expected = 0;
        for (int i = 0; i < n; i++) {
            cache[i] = cacheEntry(64 + rnd.nextInt(1920));
            held += arrayBytes(cache[i].length);
            expected += pSampled(cache[i], r);
        }
        entries = held;
        for (long k = 0; k < rounds; k++) {
            int i = rnd.nextInt(n);
            held -= arrayBytes(cache[i].length);
            cache[i] = cacheEntry(64 + rnd.nextInt(1920));
            held += arrayBytes(cache[i].length);
            entries += arrayBytes(cache[i].length);
            expected += pSampled(cache[i], r);
            for (int g = 0; g < 4; g++) {
                byte[] x = garbage(64 + rnd.nextInt(4096));
                junk += arrayBytes(x.length);
                expected += pSampled(x, r);
                escape = x;
            }
        }
        System.out.println("held " + held + " entries " + entries + " garbage " + junk + " expected " + (long) expected);
    }
}
