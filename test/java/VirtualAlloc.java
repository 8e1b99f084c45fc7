import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

/**
 * Virtual threads (JDK 21+, reached by reflection so that this compiles for
 * release 11): 200 of them allocate through a 7-deep call chain and sleep
 * every 50 iterations, so they are unmounted and mounted again (their lower
 * frames then wait in heap stack chunks). Prints "no virtual threads" on
 * older JDKs; with the argument "probe", only whether there are any.
 */
public class VirtualAlloc {
    static volatile Object sink;

    public static void main(String[] a) throws Throwable {
        Object builder;
        try {
            builder = Thread.class.getMethod("ofVirtual").invoke(null);
        } catch (NoSuchMethodException e) {
            System.out.println("no virtual threads");
            return;
        }
        if (a.length > 0 && a[0].equals("probe")) {
            System.out.println("virtual threads");
            return;
        }
        Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < 200; i++)
            ts.add((Thread) start.invoke(builder, (Runnable) VirtualAlloc::work));
        for (Thread t : ts) t.join();
        System.out.println("done");
    }

    static void work() {
        for (int i = 0; i < 3000; i++) {
            sink = deep(6);
            if (i % 50 == 0) {
                try { Thread.sleep(1); } catch (InterruptedException e) { return; }
            }
        }
    }

    static Object deep(int d) { return d == 0 ? new byte[1000] : deep(d - 1); }
}
