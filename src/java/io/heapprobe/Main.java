package io.heapprobe;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * java -jar heapprobe.jar PID COMMAND [ARGS]: the heapprobe command of this
 * platform, extracted from the jar and run with the jar's library (its
 * usage, options and exit codes: README).
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        Path cmd;
        try {
            cmd = Natives.extract("heapprobe");
        } catch (UnsupportedOperationException | java.io.IOException e) {
            System.err.println(e.getMessage());
            System.exit(9);
            return;
        }
        List<String> argv = new ArrayList<>();
        argv.add(cmd.toString());
        argv.add("--lib");
        argv.add(cmd.resolveSibling("libheapprobe.so").toString());
        for (String a : args) argv.add(a);
        Process p = new ProcessBuilder(argv).inheritIO().start();
        System.exit(p.waitFor());
    }
}
