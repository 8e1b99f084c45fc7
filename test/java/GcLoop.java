/** Test program: allocates garbage and forces N full collections. */
public class GcLoop {
    public static void main(String[] args) throws Exception {
        int gcs = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        Object keep = null;
        for (int i = 0; i < gcs; i++) {
            for (int j = 0; j < 10_000; j++) keep = new byte[512];
            System.gc();
        }
        System.out.println("GcLoop done " + (keep != null));
    }
}
