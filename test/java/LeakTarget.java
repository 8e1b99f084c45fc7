import java.util.ArrayList;
import java.util.List;

/**
 * Leak programs for the history and leak-suspect tests, no System.gc():
 *   LeakTarget MODE SECONDS [LEAK_KIB_PER_S]
 * Every mode keeps a steady live set turning over at LeakTarget.steady
 * (32 MiB of byte[2048], one chunk replaced per allocation burst) and makes
 * garbage at LeakTarget.garbage. On top:
 *   none     nothing else: no site grows
 *   leak     LeakTarget.leak adds LEAK_KIB_PER_S KiB/s to a list never cleared
 *   stops    as leak for the first half of the run, then no more
 *   plateau  LeakTarget.cacheFill grows a cache at that rate for the first
 *            third of the run, then the cache keeps its size (its entries
 *            replaced at LeakTarget.cacheFill, a constant live set)
 * Prints "ready" when the steady set is built, "phase2" when a leak stops
 * or a cache levels off.
 */
public class LeakTarget {
    static final List<byte[]> steadySet = new ArrayList<>();
    static final List<byte[]> leaked = new ArrayList<>();
    static final List<byte[]> cache = new ArrayList<>();
    static volatile Object sink;

    static byte[] steady() { return new byte[2048]; }

    // Filling and turning over the steady set from one call site: one
    // allocation site whose live bytes stay constant.
    static void keepSteady(int i, int chunks) {
        byte[] b = steady();
        if (steadySet.size() < chunks) steadySet.add(b); else steadySet.set(i % chunks, b);
    }
    static Object garbage() { return new int[32]; }
    static byte[] leak() { return new byte[1024]; }
    static byte[] cacheFill() { return new byte[1024]; }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        long seconds = Long.parseLong(args[1]);
        int kibPerSecond = args.length > 2 ? Integer.parseInt(args[2]) : 2048;
        int steadyChunks = 16 * 1024;
        long start = 0, end = Long.MAX_VALUE, phase2 = 0;
        boolean announced = false;
        int i = 0, c = 0;
        long grown = 0;     // KiB leaked or cached so far
        while (System.nanoTime() < end) {
            // One line fills the steady set, then turns it over: one site
            // (a site is the whole stack, caller lines included).
            keepSteady(i++, steadyChunks);
            if (i < steadyChunks) continue;
            if (i == steadyChunks) {
                System.out.println("ready");
                System.out.flush();
                start = System.nanoTime();
                end = start + seconds * 1_000_000_000L;
                phase2 = start + (mode.equals("plateau") ? seconds / 3 : seconds / 2) * 1_000_000_000L;
            }
            for (int k = 0; k < 2000; k++) sink = garbage();
            long now = System.nanoTime();
            boolean growing = mode.equals("leak") || now < phase2;
            if (!growing && !announced && !mode.equals("none")) {
                System.out.println("phase2");
                System.out.flush();
                announced = true;
            }
            long due = (now - start) / 1_000_000L * kibPerSecond / 1000;   // KiB by now
            if (mode.equals("leak") || mode.equals("stops")) {
                while (growing && grown < due) { leaked.add(leak()); grown++; }
            } else if (mode.equals("plateau")) {
                // One call site for growth and replacement, as a cache has.
                long n = growing ? due - grown : (cache.isEmpty() ? 0 : 1);
                for (long k = 0; k < n; k++) {
                    byte[] entry = cacheFill();
                    if (growing) { cache.add(entry); grown++; }
                    else cache.set(c++ % cache.size(), entry);
                }
            }
            Thread.sleep(1);
        }
        System.out.println("done " + leaked.size() + " " + cache.size() + " " + steadySet.size());
    }
}
