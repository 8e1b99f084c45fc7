import java.io.File;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.openjdk.jmc.common.IMCFrame;
import org.openjdk.jmc.common.IMCStackTrace;
import org.openjdk.jmc.common.IMCType;
import org.openjdk.jmc.common.item.IAttribute;
import org.openjdk.jmc.common.item.IItem;
import org.openjdk.jmc.common.item.IItemCollection;
import org.openjdk.jmc.common.item.IItemIterable;
import org.openjdk.jmc.common.item.IMemberAccessor;
import org.openjdk.jmc.common.item.IType;
import org.openjdk.jmc.common.unit.IQuantity;
import org.openjdk.jmc.common.unit.UnitLookup;
import org.openjdk.jmc.flightrecorder.JfrAttributes;
import org.openjdk.jmc.flightrecorder.JfrLoaderToolkit;
import org.openjdk.jmc.flightrecorder.jdk.JdkAttributes;

/**
 * Reads a heapprobe JFR file with JDK Mission Control's parser
 * (org.openjdk.jmc:flightrecorder) and prints the same per-stack sums as
 * test/java/JfrCheck.java (alloc/inuse/recent, key "root;...;leaf;Class_[i]"),
 * then "warnings N": log records of level WARNING or above the parser
 * emitted while loading (each also printed as "warning: ...").
 *   java -cp <jmc jars>:. JmcCheck FILE
 */
public class JmcCheck {
    public static void main(String[] args) throws Exception {
        StringBuilder warnings = new StringBuilder();
        int[] nwarn = { 0 };
        Logger root = Logger.getLogger("");
        for (Handler h : root.getHandlers()) root.removeHandler(h);
        root.addHandler(new Handler() {
            @Override public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                    nwarn[0]++;
                    warnings.append("warning: ").append(r.getLoggerName()).append(": ").append(r.getMessage()).append('\n');
                }
            }
            @Override public void flush() { }
            @Override public void close() { }
        });
        IItemCollection items = JfrLoaderToolkit.loadEvents(new File(args[0]));
        Map<String, Long> alloc = new TreeMap<>(), inuse = new TreeMap<>(), recent = new TreeMap<>();
        for (IItemIterable iter : items) {
            IType<IItem> type = iter.getType();
            String id = type.getIdentifier();
            boolean isAlloc = id.equals("jdk.ObjectAllocationSample"), isLive = id.equals("heapprobe.LiveObject");
            if (!isAlloc && !isLive) continue;
            IMemberAccessor<IMCStackTrace, IItem> st = JfrAttributes.EVENT_STACKTRACE.getAccessor(type);
            IMemberAccessor<IMCType, IItem> cls = JdkAttributes.OBJECT_CLASS.getAccessor(type);
            IMemberAccessor<IQuantity, IItem> weight =
                    (IMemberAccessor<IQuantity, IItem>) (IMemberAccessor<?, IItem>) type.getAccessor(
                            type.getAccessorKeys().keySet().stream().filter(k -> k.getIdentifier().equals("weight")).findFirst().get());
            IMemberAccessor<?, IItem> verified = isLive ? type.getAccessor(
                    type.getAccessorKeys().keySet().stream().filter(k -> k.getIdentifier().equals("verified")).findFirst().get()) : null;
            for (IItem item : iter) {
                String key = key(st.getMember(item), cls.getMember(item));
                long w = weight.getMember(item).clampedLongValueIn(UnitLookup.BYTE);
                Map<String, Long> m = isAlloc ? alloc : Boolean.TRUE.equals(verified.getMember(item)) ? inuse : recent;
                m.merge(key, w, Long::sum);
            }
        }
        StringBuilder out = new StringBuilder();
        alloc.forEach((k, v) -> out.append("alloc\t").append(k).append('\t').append(v).append('\n'));
        inuse.forEach((k, v) -> out.append("inuse\t").append(k).append('\t').append(v).append('\n'));
        recent.forEach((k, v) -> out.append("recent\t").append(k).append('\t').append(v).append('\n'));
        out.append(warnings).append("warnings ").append(nwarn[0]).append('\n');
        System.out.print(out);
    }

    static String key(IMCStackTrace st, IMCType cls) {
        StringBuilder b = new StringBuilder();
        List<? extends IMCFrame> fr = st.getFrames();
        for (int i = fr.size() - 1; i >= 0; i--) {
            IMCFrame f = fr.get(i);
            String c = f.getMethod().getType() == null ? "" : f.getMethod().getType().getFullName();
            if (b.length() > 0) b.append(';');
            b.append(c == null || c.isEmpty() ? f.getMethod().getMethodName() : c + "." + f.getMethod().getMethodName());
        }
        return b.append(';').append(cls == null ? "" : cls.getFullName()).append("_[i]").toString();
    }
}
