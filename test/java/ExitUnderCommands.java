import com.sun.tools.attach.VirtualMachine;

/**
 * A JVM that exits while commands keep arriving through the attach
 * listener, as `heapprobe top` sends one after every collection: a thread
 * attaches to this JVM and asks the agent (args[0], the library's path,
 * already loaded with -agentpath) for its top sites again and again;
 * main allocates for args[1] ms, then returns. The JVM must exit 0.
 */
public class ExitUnderCommands {
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        String lib = args[0];
        long ms = Long.parseLong(args[1]);
        String pid = Long.toString(ProcessHandle.current().pid());
        Thread asker = new Thread(() -> {
            while (true) {
                try {
                    VirtualMachine vm = VirtualMachine.attach(pid);
                    try { vm.loadAgentPath(lib, "top=5"); } catch (Exception e) { }
                    vm.detach();
                } catch (Exception e) { }
            }
        }, "asker");
        asker.setDaemon(true);
        asker.start();
        long end = System.currentTimeMillis() + ms;
        while (System.currentTimeMillis() < end)
            for (int i = 0; i < 1000; i++) sink = new byte[1024];
        System.out.println("exiting");
    }
}
