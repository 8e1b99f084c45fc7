import io.heapprobe.HeapProbe;

import java.util.ArrayList;
import java.util.List;

/**
 * heapprobe's Java API (heapprobe.jar on the class path): start the
 * profiler, read the live heap after the last collection with its source,
 * write a profile to a path, stop. Run:
 *   javac -cp heapprobe.jar HeapProbeApi.java
 *   java -cp heapprobe.jar:. HeapProbeApi /tmp/api.pb.gz
 */
public class HeapProbeApi {
    static final List<byte[]> kept = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        String out = args.length > 0 ? args[0] : "/tmp/heapprobe-api.pb.gz";
        // the profiler's own profiles (periodic, and the last one at stop) go to file=
        System.out.println(HeapProbe.start("interval=64k,file=" + out + ".last.pb.gz"));
        for (int i = 0; i < 20_000; i++) kept.add(new byte[1024]);     // ~20 MiB kept
        System.gc();
        HeapProbe.LiveHeap h = HeapProbe.liveHeapAfterLastGc();
        System.out.println("live after GC: " + h);
        System.out.println("live.bytes: " + h.bytes);
        System.out.println("live.source: " + h.source);
        System.out.println(HeapProbe.dump(out));
        try {
            HeapProbe.start("interval=-1");
        } catch (IllegalArgumentException e) {
            System.out.println("bad option refused: " + e.getMessage());
        }
        System.out.println(HeapProbe.stop());
        System.out.println("kept: " + kept.size());
    }
}
