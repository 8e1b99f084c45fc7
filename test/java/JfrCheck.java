import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordingFile;

/**
 * Reads a heapprobe JFR file with the JDK's own parser (jdk.jfr.consumer)
 * and prints, per stack in the collapsed format's key
 * ("root;...;leaf;Class_[i]"), the sums of the weights:
 *   alloc <TAB> key <TAB> bytes     (jdk.ObjectAllocationSample)
 *   inuse <TAB> key <TAB> bytes     (heapprobe.LiveObject, verified)
 *   recent <TAB> key <TAB> bytes    (heapprobe.LiveObject, not verified)
 * then "events <type> <count>" lines and "heap <heapUsed> <source>".
 * test_outputs.c compares the sums to the collapsed files of the same run.
 *   java JfrCheck FILE
 */
public class JfrCheck {
    public static void main(String[] args) throws Exception {
        Map<String, Long> alloc = new TreeMap<>(), inuse = new TreeMap<>(), recent = new TreeMap<>();
        Map<String, Integer> counts = new TreeMap<>();
        StringBuilder heap = new StringBuilder();
        List<RecordedEvent> events = RecordingFile.readAllEvents(Path.of(args[0]));
        for (RecordedEvent e : events) {
            String type = e.getEventType().getName();
            counts.merge(type, 1, Integer::sum);
            switch (type) {
            case "jdk.ObjectAllocationSample":
                alloc.merge(key(e), e.getLong("weight"), Long::sum);
                break;
            case "heapprobe.LiveObject":
                (e.getBoolean("verified") ? inuse : recent).merge(key(e), e.getLong("weight"), Long::sum);
                break;
            case "heapprobe.HeapUsage":
                heap.append("heap ").append(e.getLong("used")).append(' ').append(e.getString("source")).append('\n');
                break;
            default:
                break;
            }
        }
        StringBuilder out = new StringBuilder();
        alloc.forEach((k, v) -> out.append("alloc\t").append(k).append('\t').append(v).append('\n'));
        inuse.forEach((k, v) -> out.append("inuse\t").append(k).append('\t').append(v).append('\n'));
        recent.forEach((k, v) -> out.append("recent\t").append(k).append('\t').append(v).append('\n'));
        counts.forEach((k, v) -> out.append("events ").append(k).append(' ').append(v).append('\n'));
        out.append(heap);
        System.out.print(out);
    }

    static String key(RecordedEvent e) {
        StringBuilder b = new StringBuilder();
        List<RecordedFrame> frames = e.getStackTrace().getFrames();
        for (int i = frames.size() - 1; i >= 0; i--) {     // JFR: leaf first
            RecordedMethod m = frames.get(i).getMethod();
            String cls = m.getType() == null ? "" : m.getType().getName();
            if (b.length() > 0) b.append(';');
            b.append(cls.isEmpty() ? m.getName() : cls + "." + m.getName());
        }
        return b.append(';').append(e.getClass("objectClass").getName()).append("_[i]").toString();
    }
}
