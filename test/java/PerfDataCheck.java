import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;

/**
 * Test program for the "perfdata" mode (test/integration/perfdata_agent.c):
 * prints the mode's reading next to MemoryMXBean's at start, while
 * allocating, right after System.gc() and once the collector has settled,
 * plus what the agent read inside GarbageCollectionFinish. The C test
 * (test_perfdata_jvm.c) compares.
 */
public class PerfDataCheck {
    /** {rc, used, committed, max} */
    static native long[] read();
    /** {reads, failures, lastRc, used, committed, max} from the GC callback */
    static native long[] lastGc();
    static native int status();

    static final List<byte[]> retained = new ArrayList<>();
    static final int ENODATA = -61;

    public static void main(String[] args) throws Exception {
        MemoryMXBean mx = ManagementFactory.getMemoryMXBean();
        mx.getHeapMemoryUsage();    // load and warm JMX before any comparison
        int st = status();
        System.out.println("perfdata.status: " + st);
        if (st == 0)
            report("start", read(), mx.getHeapMemoryUsage());

        // 16 MiB kept, ~200 MiB of garbage; read the mode now and then while
        // the collector works (every reading must pass the probe's sanity
        // check, or the mode would be disabled: checked at the end).
        int failures = 0, nodata = 0, reads = 0;
        for (int i = 0; i < 16 * 1024; i++) retained.add(new byte[1024]);
        for (int i = 0; i < 400_000; i++) {
            byte[] garbage = new byte[512];
            if (st == 0 && (i & 1023) == 0) {
                reads++;
                long rc = read()[0];
                if (rc == ENODATA) nodata++;     // ZGC before its first pause
                else if (rc != 0) failures++;
            }
        }
        System.out.println("perfdata.churn: reads=" + reads + " failures=" + failures + " nodata=" + nodata);

        System.gc();
        long[] pd = read();
        MemoryUsage mu = mx.getHeapMemoryUsage();
        long[] g = lastGc();
        if (st == 0) {
            report("aftergc", pd, mu);
            System.out.println("perfdata.gccallback: reads=" + g[0] + " failures=" + g[1] + " rc=" + g[2]
                    + " used=" + g[3] + " committed=" + g[4] + " max=" + g[5]
                    + " jmx.used=" + mu.getUsed() + " jmx.committed=" + mu.getCommitted());
            // Concurrent collectors publish some figures a little after the
            // cycle (Shenandoah's 100 ms counter task; ZGC at its next pause).
            Thread.sleep(300);
            report("settled", read(), mx.getHeapMemoryUsage());
        }
        System.out.println("perfdata.final.status: " + status());
        System.out.println("retained: " + retained.size());
    }

    static void report(String when, long[] pd, MemoryUsage mu) {
        System.out.println("perfdata." + when + ": rc=" + pd[0] + " used=" + pd[1] + " committed=" + pd[2]
                + " max=" + pd[3] + " jmx.used=" + mu.getUsed() + " jmx.committed=" + mu.getCommitted()
                + " jmx.max=" + mu.getMax());
    }
}
