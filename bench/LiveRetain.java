import java.util.ArrayList;
import java.util.List;

/**
 * Memory benchmark workload: retains `mib` MiB in byte[1008] objects (1 KiB
 * each with header) from a handful of sites, collects, and reports the
 * process's peak RSS (VmHWM) and current RSS (VmRSS) from /proc/self/status.
 * With the agent at interval=1k about one sample per retained object is
 * tracked: 160 MiB gives ~100k tracked live samples (p = 1 - e^-1 = 0.63 per object).
 */
public class LiveRetain {
    static final List<byte[]> kept = new ArrayList<>();

    static void siteA(int n) { for (int i = 0; i < n; i++) kept.add(new byte[1008]); }
    static void siteB(int n) { for (int i = 0; i < n; i++) kept.add(new byte[1008]); }

    public static void main(String[] args) throws Exception {
        int mib = Integer.parseInt(args[0]);
        int n = mib * 1024;
        for (int r = 0; r < 10; r++) { siteA(n / 20); siteB(n / 20); }
        System.gc();
        Thread.sleep(500);          // the agent thread sweeps after the GC
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/status")))
            if (line.startsWith("VmHWM") || line.startsWith("VmRSS")) System.out.println(line.replaceAll("\\s+", " "));
        System.out.println("kept " + kept.size());
    }
}
