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
 * and frees older ones. The second version's line numbers are those of the
 * first plus LINE_SHIFT (its LineNumberTables rewritten), so a profile that
 * keeps naming a redefined method with the first version's line table shows
 * it: RedefineTarget.leaf allocates at line L in one and L + 1000 in the other,
 * each about half the time. Needs -javaagent:redefine.jar (Premain-Class:
 * this class, Can-Redefine-Classes). Args: seconds. Prints
 * "redefinitions: N".
 */
public class RedefineLoop {
    static final int LINE_SHIFT = 1000;
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
        v2 = shiftLines(v2, LINE_SHIFT);

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

    /** The class file with every LineNumberTable entry's line + by (JVMS 4.7.12). */
    static byte[] shiftLines(byte[] c, int by) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(c = c.clone());
        b.position(8);
        int cpCount = b.getShort() & 0xffff;
        String[] utf8 = new String[cpCount];
        for (int i = 1; i < cpCount; i++) {
            int tag = b.get();
            switch (tag) {
                case 1: { int len = b.getShort() & 0xffff; byte[] s = new byte[len]; b.get(s);
                          utf8[i] = new String(s, java.nio.charset.StandardCharsets.UTF_8); break; }
                case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18: b.position(b.position() + 4); break;
                case 5: case 6: b.position(b.position() + 8); i++; break;
                case 7: case 8: case 16: case 19: case 20: b.position(b.position() + 2); break;
                case 15: b.position(b.position() + 3); break;
                default: throw new IllegalStateException("constant pool tag " + tag);
            }
        }
        b.position(b.position() + 6);
        int interfaces = b.getShort() & 0xffff;
        b.position(b.position() + 2 * interfaces);
        for (int group = 0; group < 2; group++) {                         // fields, then methods
            int count = b.getShort() & 0xffff;
            for (int m = 0; m < count; m++) {
                b.position(b.position() + 6);
                int attrs = b.getShort() & 0xffff;
                for (int a = 0; a < attrs; a++) {
                    String name = utf8[b.getShort() & 0xffff];
                    int len = b.getInt(), end = b.position() + len;
                    if (name.equals("Code")) {
                        b.position(b.position() + 4);
                        int code = b.getInt();
                        b.position(b.position() + code);
                        int handlers = b.getShort() & 0xffff;
                        b.position(b.position() + 8 * handlers);
                        int cattrs = b.getShort() & 0xffff;
                        for (int k = 0; k < cattrs; k++) {
                            String cname = utf8[b.getShort() & 0xffff];
                            int clen = b.getInt(), cend = b.position() + clen;
                            if (cname.equals("LineNumberTable")) {
                                int n = b.getShort() & 0xffff;
                                for (int e = 0; e < n; e++) {
                                    b.position(b.position() + 2);
                                    int at = b.position();
                                    b.putShort(at, (short) ((b.getShort(at) & 0xffff) + by));
                                    b.position(at + 2);
                                }
                            }
                            b.position(cend);
                        }
                    }
                    b.position(end);
                }
            }
        }
        return c;
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
