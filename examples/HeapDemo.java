import java.util.ArrayList;
import java.util.List;

/** The bundled example: keeps some objects, throws many away, collects. */
public class HeapDemo {
    static final List<byte[]> retained = new ArrayList<>();

    public static void main(String[] args) {
        long garbage = 0;
        for (int i = 0; i < 200_000; i++) {
            byte[] b = new byte[1024];
            if (i % 10 == 0) retained.add(b); else garbage += b.length;
        }
        System.gc();
        Runtime rt = Runtime.getRuntime();
        System.out.printf("HeapDemo: retained %d arrays (~%d MB), discarded ~%d MB, heap used %d MB%n",
            retained.size(), retained.size() / 1024, garbage >> 20,
            (rt.totalMemory() - rt.freeMemory()) >> 20);
    }
}
