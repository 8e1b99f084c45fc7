import java.util.ArrayList;
import java.util.List;

/**
 * A JVM for the heapprobe command's tests: a steady live set allocated at
 * one site (CliTarget.keep) turning over slowly, garbage at another
 * (CliTarget.churn), no System.gc(). java.base only, so it runs on a
 * jlink'd runtime. Runs until the file named by args[0] exists, or for
 * args[2] seconds (default 10 minutes); prints "ready" once. Then, if
 * args[3] names a number of seconds, lingers that long without touching
 * the kept set before it exits (so that an agent's markings can verify a
 * set that no longer changes; test_embedding).
 */
public class CliTarget {
    static final List<byte[]> kept = new ArrayList<>();
    static volatile Object sink;

    static byte[] keep() { return new byte[4096]; }

    static Object churn() { return new long[64]; }

    public static void main(String[] args) throws Exception {
        java.io.File stop = new java.io.File(args[0]);
        int liveChunks = args.length > 1 ? Integer.parseInt(args[1]) : 16 * 1024;   // 64 MiB
        for (int i = 0; i < liveChunks; i++) kept.add(keep());
        System.out.println("ready");
        System.out.flush();
        long deadline = System.currentTimeMillis() + (args.length > 2 ? Long.parseLong(args[2]) * 1000 : 600_000);
        int i = 0;
        while (!stop.exists() && System.currentTimeMillis() < deadline) {
            for (int k = 0; k < 20_000; k++) sink = churn();
            kept.set(i++ % liveChunks, keep());
            Thread.sleep(1);
        }
        if (args.length > 3) Thread.sleep(Long.parseLong(args[3]) * 1000);
    }
}
