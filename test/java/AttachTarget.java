import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;

/**
 * A JVM to attach to: threads come and go, classes are loaded and unloaded
 * (one class loader per batch, dropped), and some objects are kept. Runs
 * until the file named by args[0] exists, then exits; prints "ready" once.
 */
public class AttachTarget {
    static final List<Object> kept = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        java.io.File stop = new java.io.File(args[0]);
        URL self = AttachTarget.class.getProtectionDomain().getCodeSource().getLocation();
        System.out.println("ready");
        System.out.flush();
        long deadline = System.currentTimeMillis() + 120_000;
        int round = 0;
        while (!stop.exists() && System.currentTimeMillis() < deadline) {
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                Thread th = new Thread(() -> {
                    Object o = null;
                    for (int i = 0; i < 20_000; i++) o = new byte[256];
                    synchronized (kept) { if (kept.size() < 20_000) kept.add(o); }
                });
                th.start();
                ts.add(th);
            }
            for (Thread th : ts) th.join();
            // A class loaded by a throw-away loader: unloaded at a later GC.
            try (URLClassLoader l = new URLClassLoader(new URL[] {self}, null)) {
                Class<?> c = l.loadClass("AttachTarget$Payload");
                Object p = c.getDeclaredConstructor().newInstance();
                kept.add(p.toString());
            }
            if (++round % 20 == 0) System.gc();
            Thread.sleep(10);
        }
    }

    public static class Payload {
        final long[] data = new long[64];
        @Override public String toString() { return "payload" + data.length; }
    }
}
