import java.io.File;
import java.util.List;
import java.util.Map;
import org.openjdk.jmc.common.IDescribable;
import org.openjdk.jmc.common.IMCFrame;
import org.openjdk.jmc.common.IMCStackTrace;
import org.openjdk.jmc.common.item.IAccessorKey;
import org.openjdk.jmc.common.item.IItem;
import org.openjdk.jmc.common.item.IItemCollection;
import org.openjdk.jmc.common.item.IItemIterable;
import org.openjdk.jmc.common.item.IMemberAccessor;
import org.openjdk.jmc.common.item.IType;
import org.openjdk.jmc.common.unit.IQuantity;
import org.openjdk.jmc.flightrecorder.JfrLoaderToolkit;

/**
 * Dumps the events of the given types from a JFR file, one line each:
 *   type <TAB> field=value|field=value... <TAB> root;...;leaf
 * Uses JDK Mission Control's parser (org.openjdk.jmc:flightrecorder from
 * Maven Central) because the JDK's own `jfr` tool rejects the recordings the
 * Datadog profiler writes ("Pool jdk.types.Package must contain at least one
 * element"). Used by bench/peers/run.sh for ddprof and JFR's OldObjectSample.
 *   java -cp <jmc jars>:. JfrDump FILE TYPE[,TYPE...]
 */
public class JfrDump {
    public static void main(String[] args) throws Exception {
        List<String> want = List.of(args[1].split(","));
        IItemCollection items = JfrLoaderToolkit.loadEvents(new File(args[0]));
        StringBuilder out = new StringBuilder();
        for (IItemIterable iter : items) {
            IType<IItem> type = iter.getType();
            if (!want.contains(type.getIdentifier())) continue;
            Map<IAccessorKey<?>, ? extends IDescribable> keys = type.getAccessorKeys();
            for (IItem item : iter) {
                StringBuilder f = new StringBuilder();
                String stack = "";
                for (IAccessorKey<?> k : keys.keySet()) {
                    IMemberAccessor<?, IItem> acc = type.getAccessor(k);
                    if (acc == null) continue;
                    Object v = acc.getMember(item);
                    if (v instanceof IMCStackTrace) { stack = stack((IMCStackTrace) v); continue; }
                    String s;
                    if (v instanceof IQuantity) {
                        IQuantity q = (IQuantity) v;
                        s = q.getUnit().getContentType().getIdentifier().equals("memory")
                                ? Long.toString(q.clampedLongValueIn(org.openjdk.jmc.common.unit.UnitLookup.BYTE))
                                : q.persistableString();
                    } else s = String.valueOf(v);
                    f.append(f.length() > 0 ? "|" : "").append(k.getIdentifier()).append('=')
                            .append(s.replace('|', '/').replace('\t', ' ').replace('\n', ' '));
                }
                out.append(type.getIdentifier()).append('\t').append(f).append('\t').append(stack).append('\n');
            }
        }
        System.out.print(out);
    }

    static String stack(IMCStackTrace st) {
        List<? extends IMCFrame> fr = st.getFrames();
        StringBuilder b = new StringBuilder();
        for (int i = fr.size() - 1; i >= 0; i--) {            // JFR stores leaf first; print root first
            IMCFrame f = fr.get(i);
            String cls = f.getMethod() == null || f.getMethod().getType() == null ? "?" : f.getMethod().getType().getFullName();
            String m = f.getMethod() == null ? "?" : f.getMethod().getMethodName();
            if (b.length() > 0) b.append(';');
            b.append(cls).append('.').append(m);
        }
        return b.toString();
    }
}
