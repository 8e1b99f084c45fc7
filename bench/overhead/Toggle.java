import com.sun.tools.attach.VirtualMachine;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;

/**
 * Paired, in-process overhead measurement (bench/overhead/run.sh).
 *
 * Separate JVM runs differ by far more than 1% from one another on a shared
 * machine (JIT decisions, heap layout, neighbours), so a 1% effect drowns in
 * them. Here one JVM runs the same fixed amount of AllocBench work in many
 * short phases and loads the agent under test into itself (dynamic attach)
 * for some phases and not for others, in a shuffled order per round. Each
 * phase reports the process CPU time (all threads: mutators, GC, JIT, agent
 * thread) and wall time it took; run.sh compares phases of the same round.
 *
 * args: rounds threads iters config...   where a config is
 *   none                    nothing attached
 *   NAME=LIB:ON_OPTS:OFF_OPTS  attach LIB with ON_OPTS before the phase and
 *                           with OFF_OPTS after it (heapprobe: "interval=512k,file=..."
 *                           then "stop"; the toggle sampler: "524288" then "off")
 * Output: "phase <round> <config> <cpu_ns> <wall_ns> <samples>" lines
 * (samples: read back from heapprobe's profile, -1 for other configs).
 * Needs -Djdk.attach.allowAttachSelf=true.
 */
public class Toggle {
    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]), threads = Integer.parseInt(args[1]);
        int iters = Integer.parseInt(args[2]);
        List<String> configs = new ArrayList<>();
        for (int i = 3; i < args.length; i++) configs.add(args[i]);
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        String pid = Long.toString(ProcessHandle.current().pid());
        VirtualMachine self = VirtualMachine.attach(pid);
        Random shuffle = new Random(42);
        phase(threads, iters);                          // warm-up: JIT, heap sizing
        phase(threads, iters);
        for (int r = 1; r <= rounds; r++) {
            List<String> order = new ArrayList<>(configs);
            Collections.shuffle(order, shuffle);
            for (String c : order) {
                String[] spec = c.equals("none") ? null : c.substring(c.indexOf('=') + 1).split(":", 3);
                if (spec != null) self.loadAgentPath(spec[0], spec[1]);
                System.gc();                             // every phase starts from the same heap
                long cpu0 = os.getProcessCpuTime(), t0 = System.nanoTime();
                phase(threads, iters);
                long cpu = os.getProcessCpuTime() - cpu0, wall = System.nanoTime() - t0;
                if (spec != null) self.loadAgentPath(spec[0], spec[2]);
                String name = c.equals("none") ? "none" : c.substring(0, c.indexOf('='));
                System.out.println("phase " + r + " " + name + " " + cpu + " " + wall + " " + samples(spec));
            }
        }
        self.detach();
    }

    /** Samples the heapprobe phase took, from its profile's comment ("N samples at interval"); -1 if none. */
    static long samples(String[] spec) throws java.io.IOException {
        java.util.regex.Matcher file = spec == null ? null : Pattern.compile("file=([^,]+\\.pb\\.gz)").matcher(spec[1]);
        if (file == null || !file.find()) return -1;
        try (java.io.InputStream in = new java.util.zip.GZIPInputStream(new java.io.FileInputStream(file.group(1)))) {
            String text = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1);
            java.util.regex.Matcher m = Pattern.compile("(\\d+) samples at interval").matcher(text);
            java.util.regex.Matcher st = Pattern.compile("stacks: [^\\x00-\\x1f]*?frame ids"
                    + "(, return pcs [^\\x00-\\x1f]*?decoded each time)?"
                    + "(, heap stack chunks: [^\\x00-\\x1f]*?heap read by [A-Za-z_]+|, heap stack chunks not read: [^\\x00-\\x1f;]*)?"
                    + "(; cache and decoder OFF: [^\\x00-\\x1f]*?\\)(?=[^ -~]))?")
                    .matcher(text);
            if (st.find())
                System.out.println("stackline " + st.group());   // where this phase's stacks came from
            return m.find() ? Long.parseLong(m.group(1)) : -1;
        }
    }

    /**
     * The work of one phase, by -Dworkload=:
     *   alloc     AllocBench on `threads` threads, `iters` each (default);
     *   javac     javac in-process (javax.tools) compiling the sources listed
     *             in -Dsources=FILE into a scratch directory, `iters` times:
     *             deep, ever-changing stacks (few cache hits);
     *   vthreads  a virtual-thread-per-request server (JDK 21+): `iters`
     *             requests, each on its own virtual thread, parsed, routed
     *             through a few layers and answered, parking (unmount and
     *             remount) between steps; `threads` carriers at most.
     */
    static void phase(int threads, int iters) throws Exception {
        switch (System.getProperty("workload", "alloc")) {
            case "javac": javac(iters); return;
            case "vthreads": VThreadServer.run(threads, iters); return;
            default: alloc(threads, iters);
        }
    }

    static void javac(int times) throws Exception {
        javax.tools.JavaCompiler c = javax.tools.ToolProvider.getSystemJavaCompiler();
        List<String> args = new ArrayList<>(java.nio.file.Files.readAllLines(
                java.nio.file.Paths.get(System.getProperty("sources"))));
        java.nio.file.Path out = java.nio.file.Files.createTempDirectory("toggle-javac");
        args.addAll(0, List.of("-nowarn", "-Xlint:none", "-XDsuppressNotes", "-d", out.toString()));
        for (int i = 0; i < times; i++)
            if (c.run(null, null, null, args.toArray(new String[0])) != 0)
                throw new IllegalStateException("javac failed");
    }

    static void alloc(int threads, int iters) throws InterruptedException {
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final long seed = 0x9E3779B97F4A7C15L * (t + 1);
            ts[t] = new Thread(() -> AllocBench.work(iters, seed), "alloc-" + t);
            ts[t].start();
        }
        for (Thread t : ts) t.join();
    }
}
