import java.io.InputStream;
import java.lang.instrument.ClassDefinition;
import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.List;

/**
 * Classes redefined while their methods run and allocate: 3 threads call
 * RedefineTarget's methods (interpreted, then compiled, inlined into each
 * other) while main redefines RedefineTarget every few milliseconds,
 * alternating two versions whose methods differ in one string constant, so
 * that every redefinition makes the running versions obsolete (not EMCP)
 * and frees older ones. Needs -javaagent:redefine.jar (Premain-Class: this
 * class, Can-Redefine-Classes). Args: seconds. Prints "redefinitions: N".
 */
public class RedefineLoop {
    static Instrumentation inst;

    public static void premain(String args, Instrumentation i) {
        inst = i;
    }

    public static void main(String[] a) throws Exception {
        double seconds = a.length > 0 ? Double.parseDouble(a[0]) : 5;
        byte[] v1;
        try (InputStream in = RedefineLoop.class.getResourceAsStream("RedefineTarget.class")) {
            v1 = in.readAllBytes();
        }
        byte[] v2 = v1.clone();
        byte[] from = RedefineTarget.MARK.getBytes("UTF-8"), to = "marker-TWO".getBytes("UTF-8");
        int at = indexOf(v1, from);
        if (at < 0 || from.length != to.length)
            throw new IllegalStateException("marker not found in the class file");
        System.arraycopy(to, 0, v2, at, to.length);

        long until = System.nanoTime() + (long) (seconds * 1e9);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            Thread th = new Thread(() -> {
                while (System.nanoTime() < until)
                    RedefineTarget.round(200);
            });
            th.start();
            ts.add(th);
        }
        int n = 0;
        while (System.nanoTime() < until) {
            inst.redefineClasses(new ClassDefinition(RedefineTarget.class, (n & 1) == 0 ? v2 : v1));
            n++;
            Thread.sleep(3);
        }
        for (Thread t : ts)
            t.join();
        System.out.println("redefinitions: " + n);
    }

    static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++)
                if (hay[i + j] != needle[j])
                    continue outer;
            return i;
        }
        return -1;
    }
}

class RedefineTarget {
    static final String MARK = "marker-one";
    static volatile Object sink;

    static void round(int n) {
        for (int i = 0; i < n; i++)
            sink = outer(i & 7);
    }

    static Object outer(int d) {
        return middle(d) ;
    }

    static Object middle(int d) {
        return d == 0 ? leaf() : middle(d - 1);
    }

    static Object leaf() {
        // the constant differs between the two versions: not EMCP
        return new char[40 + "marker-one".length()];
    }
}
