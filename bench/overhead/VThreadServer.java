import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A request-per-virtual-thread server in miniature, for the paired overhead
 * harness (Toggle -Dworkload=vthreads): each request runs on a virtual
 * thread of its own (Executors.newVirtualThreadPerTaskExecutor, reached by
 * reflection so that this compiles for release 17), parses a request line
 * and headers, routes it through a handler, a service and a repository
 * layer that build maps, lists and strings, renders a response, and parks
 * between the steps as a handler waiting on I/O would, so virtual threads
 * unmount and mount again (their lower frames then wait in heap stack
 * chunks). The carriers are limited by jdk.virtualThreadScheduler.parallelism.
 */
public class VThreadServer {
    static volatile Object sink;
    static final String[] PATHS = { "/users/42", "/orders/7/items", "/search?q=heap", "/health", "/users/9/friends" };

    public static void run(int carriers, int requests) throws Exception {
        System.setProperty("jdk.virtualThreadScheduler.parallelism", Integer.toString(carriers));
        Method m = java.util.concurrent.Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
        ExecutorService ex = (ExecutorService) m.invoke(null);
        for (int i = 0; i < requests; i++) {
            final int id = i;
            ex.submit(() -> { sink = handle(id); });
        }
        ex.shutdown();
        ex.awaitTermination(1, TimeUnit.HOURS);
    }

    static String handle(int id) {
        Map<String, String> req = parse("GET " + PATHS[id % PATHS.length] + " HTTP/1.1\r\nHost: x\r\nX-Id: " + id
                + "\r\nAccept: */*\r\n");
        io();
        Object body = route(req, id);
        io();
        return render(body);
    }

    static Map<String, String> parse(String raw) {
        Map<String, String> h = new HashMap<>();
        String[] lines = raw.split("\r\n");
        String[] first = lines[0].split(" ");
        h.put(":method", first[0]);
        h.put(":path", first[1]);
        for (int i = 1; i < lines.length; i++) {
            int c = lines[i].indexOf(':');
            h.put(lines[i].substring(0, c).toLowerCase(), lines[i].substring(c + 1).trim());
        }
        return h;
    }

    static Object route(Map<String, String> req, int id) {
        String path = req.get(":path");
        if (path.startsWith("/users")) return Service.user(id, path.endsWith("friends"));
        if (path.startsWith("/orders")) return Service.order(id);
        if (path.startsWith("/search")) return Service.search(path.substring(path.indexOf('=') + 1), id);
        return List.of("ok");
    }

    static String render(Object body) {
        StringBuilder sb = new StringBuilder(256).append("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n");
        return sb.append(body).toString();
    }

    static void io() {
        LockSupport.parkNanos(1000);
    }

    static class Service {
        static Object user(int id, boolean friends) {
            Map<String, Object> u = Repository.load("user", id);
            if (friends) {
                List<Object> fs = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    fs.add(Repository.load("user", id * 31 + i));
                    if (i == 3) io();
                }
                u.put("friends", fs);
            }
            return u;
        }

        static Object order(int id) {
            List<Map<String, Object>> items = new ArrayList<>();
            for (int i = 0; i < 5; i++) items.add(Repository.load("item", id + i));
            io();
            return items;
        }

        static Object search(String q, int id) {
            List<String> hits = new ArrayList<>();
            for (int i = 0; i < 20; i++) hits.add(q + "-" + (id ^ i));
            return hits;
        }
    }

    static class Repository {
        static Map<String, Object> load(String kind, int id) {
            Map<String, Object> row = new HashMap<>();
            row.put("kind", kind);
            row.put("id", id);
            row.put("name", kind + "#" + Integer.toHexString(id * 2654435761L > 0 ? id : -id));
            row.put("tags", new ArrayList<>(List.of("a" + (id & 7), "b" + (id & 3))));
            row.put("payload", new byte[64 + (id & 255)]);
            return row;
        }
    }
}
