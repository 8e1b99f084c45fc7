import java.lang.reflect.Method;
import java.nio.file.Path;
import java.text.SimpleDateFormat;
import java.util.Date;
import java.util.TimeZone;

/**
 * Datadog's java-profiler (com.datadoghq:ddprof) beside heapprobe under
 * load (bench/load/run.sh): its library writes a recording only when asked
 * (JavaProfiler.dump; dd-trace-java asks every 60 s), so this starts it
 * through its Java API, dumps every PERIOD seconds to DIR/p-yyyyMMdd-HHmmss.jfr
 * (UTC, as heapprobe's %t) while LoadService runs in this JVM, and once
 * more after LoadService.main returns (the exit profile). Reflection: the
 * ddprof jar is on the class path only at run time.
 *
 *   java -cp ddprof.jar:CLASSES DdprofDriver LIB OPTIONS DIR PERIOD LoadService-args...
 */
public class DdprofDriver {
    public static void main(String[] a) throws Exception {
        String lib = a[0], options = a[1], dir = a[2];
        long periodMs = (long) (Double.parseDouble(a[3]) * 1000);
        String[] rest = java.util.Arrays.copyOfRange(a, 4, a.length);
        Class<?> c = Class.forName("com.datadoghq.profiler.JavaProfiler");
        Object p = c.getMethod("getInstance", String.class, String.class).invoke(null, lib, dir);
        c.getMethod("execute", String.class).invoke(p, "start," + options + ",file=" + dir + "/unused.jfr");
        Method dump = c.getMethod("dump", Path.class);
        SimpleDateFormat f = new SimpleDateFormat("yyyyMMdd-HHmmss");
        f.setTimeZone(TimeZone.getTimeZone("UTC"));
        Thread t = new Thread(() -> {
            try {
                while (true) {
                    Thread.sleep(periodMs);
                    synchronized (DdprofDriver.class) {
                        dump.invoke(p, Path.of(dir, "p-" + f.format(new Date()) + ".jfr"));
                    }
                }
            } catch (InterruptedException e) {
                // the run ended
            } catch (Exception e) {
                e.printStackTrace();
            }
        }, "ddprof-dumper");
        t.setDaemon(true);
        t.start();
        LoadService.main(rest);
        t.interrupt();
        t.join();
        synchronized (DdprofDriver.class) {
            dump.invoke(p, Path.of(dir, "p-" + f.format(new Date()) + ".jfr"));
        }
    }
}
