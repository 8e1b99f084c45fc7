package io.heapprobe;

/**
 * java -javaagent:heapprobe.jar=OPTIONS: the agent's options, as with
 * -agentpath (README: "Options"); the profiler starts in premain. On a
 * platform the jar has no natives for, or when they cannot be extracted or
 * loaded, one line says why and the application runs on without heapprobe.
 */
public final class Agent {
    private Agent() {}

    public static void premain(String options) {
        run(options);
    }

    /** Loaded into a running JVM (VirtualMachine.loadAgent). */
    public static void agentmain(String options) {
        run(options);
    }

    private static void run(String options) {
        try {
            String msg = HeapProbe.start(options);
            if (!msg.isEmpty()) System.err.println(msg);
        } catch (UnsupportedOperationException | IllegalArgumentException | IllegalStateException | UnsatisfiedLinkError e) {
            System.err.println(e.getMessage() + "; the application runs without heapprobe");
        }
    }
}
