import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Threads that live briefly, as a thread-per-task service has them: THREADS
 * threads, CONCURRENT at a time, each allocating KIB KiB of byte[1000] at
 * one site (keep) into its own list; one thread in KEEP_EVERY hands its
 * list to a global list before it ends, kept to the end, the others' die
 * with them. No System.gc().
 * Prints truth.alloc (every array's bytes, from each thread's own
 * allocated bytes around keep: com.sun.management.ThreadMXBean),
 * truth.keep (those of the kept lists) and truth.arrays (their count),
 * then returns; the agent writes its profile at exit.
 * Args: THREADS KIB CONCURRENT KEEP_EVERY (defaults 4000 80 2 1).
 */
public class ShortThreads {
    static final List<Object> kept = Collections.synchronizedList(new ArrayList<>());
    static final AtomicLong allocated = new AtomicLong(), held = new AtomicLong(), arrays = new AtomicLong();
    static int keepEvery = 1;

    static void keep(ArrayList<Object> mine, int n) {
        for (int i = 0; i < n; i++) mine.add(new byte[1000]);
    }

    static void task(int n, int index) {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        ArrayList<Object> mine = new ArrayList<>(n);
        long before = threads.getThreadAllocatedBytes(id);
        keep(mine, n);
        long after = threads.getThreadAllocatedBytes(id);
        allocated.addAndGet(after - before);
        if (index >= 0 && index % keepEvery == 0) {
            held.addAndGet(after - before);
            arrays.addAndGet(n);
            kept.add(mine);
        }
    }

    public static void main(String[] args) throws Exception {
        int nThreads = args.length > 0 ? Integer.parseInt(args[0]) : 4000;
        int kib = args.length > 1 ? Integer.parseInt(args[1]) : 80;
        int concurrent = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        keepEvery = args.length > 3 ? Integer.parseInt(args[3]) : 1;
        int n = (int) (kib * 1024L / 1016);
        task(1, -1);                              // the MXBean's classes loaded before the count
        allocated.set(0);
        for (int done = 0; done < nThreads; done += concurrent) {
            Thread[] batch = new Thread[Math.min(concurrent, nThreads - done)];
            for (int i = 0; i < batch.length; i++) {
                int index = done + i;
                batch[i] = new Thread(() -> task(n, index), "short-" + index);
                batch[i].start();
            }
            for (Thread t : batch) t.join();
        }
        System.out.println("truth.alloc: " + allocated.get());
        System.out.println("truth.keep: " + held.get());
        System.out.println("truth.arrays: " + arrays.get());
        System.out.println("kept lists: " + kept.size());
    }
}
