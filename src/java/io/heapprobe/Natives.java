package io.heapprobe;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;

/**
 * The native files this jar carries (native/linux-x64, native/linux-arm64:
 * libheapprobe.so and the heapprobe command), extracted once per content
 * hash into a private directory and used from there.
 *
 * Where: -Dheapprobe.dir=DIR if given, else java.io.tmpdir, else
 * ~/.cache; each as DIR/heapprobe-uidUID/PLATFORM-SHA256-PREFIX (0700,
 * owned by our uid, which /proc/self's owner says). A
 * directory that cannot be written is passed over for the next; when none
 * can, the exception says why each was refused.
 */
final class Natives {
    private Natives() {}

    /** The jar's name for this platform, or an exception naming what is unsupported. */
    static String platform() throws UnsupportedOperationException {
        String os = System.getProperty("os.name", "?"), arch = System.getProperty("os.arch", "?");
        if (!os.equals("Linux")) {
            throw new UnsupportedOperationException("heapprobe: " + os + " is not supported (Linux x64 and arm64 only)");
        }
        String a;
        switch (arch) {
            case "amd64": case "x86_64": a = "x64"; break;
            case "aarch64": case "arm64": a = "arm64"; break;
            default:
                throw new UnsupportedOperationException("heapprobe: Linux on " + arch
                        + " is not supported (x64 and arm64 only; 32-bit JVMs neither)");
        }
        if (!"64".equals(System.getProperty("sun.arch.data.model", "64"))) {
            throw new UnsupportedOperationException("heapprobe: a 32-bit JVM is not supported");
        }
        // The libraries are built for glibc; a musl system (Alpine) has its
        // loader at /lib/ld-musl-*.so.1 and no glibc loader.
        boolean musl = false, glibc = false;
        try (var dir = Files.newDirectoryStream(Paths.get("/lib"), "ld-*")) {
            for (Path p : dir) {
                String n = p.getFileName().toString();
                musl |= n.startsWith("ld-musl-");
                glibc |= n.startsWith("ld-linux");
            }
        } catch (IOException e) {
            // no /lib to look at: assume glibc, the load says otherwise
            glibc = true;
        }
        if (musl && !glibc) {
            throw new UnsupportedOperationException("heapprobe: this Linux uses the musl C library; the jar's natives "
                    + "are built for glibc (2.17 or newer)");
        }
        return "linux-" + a;
    }

    /** The extracted path of native/PLATFORM/NAME; both files of the platform are extracted together. */
    static Path extract(String name) throws IOException {
        String plat = platform();
        // native/PLATFORM/SHA256SUMS: "sha256 size name" per file, written by scripts/jar.sh.
        String sums;
        try (InputStream in = Natives.class.getResourceAsStream("/native/" + plat + "/SHA256SUMS")) {
            if (in == null) {
                throw new IOException("heapprobe: this jar has no natives for " + plat);
            }
            sums = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
        }
        List<String[]> files = new ArrayList<>();
        for (String line : sums.split("\n")) {
            String[] f = line.trim().split(" ");
            if (f.length == 3) files.add(f);
        }
        if (files.isEmpty()) throw new IOException("heapprobe: native/" + plat + "/SHA256SUMS is empty");
        MessageDigest sha = sha256();
        for (String[] f : files) sha.update((f[0] + f[2]).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        String hash = hex(sha.digest()).substring(0, 16);
        int uid = myUid();
        String user = uid >= 0 ? "uid" + uid : System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9._-]", "_");
        List<Path> roots = new ArrayList<>();
        String given = System.getProperty("heapprobe.dir");
        if (given != null && !given.isEmpty()) roots.add(Paths.get(given));
        roots.add(Paths.get(System.getProperty("java.io.tmpdir", "/tmp")));
        String home = System.getProperty("user.home");
        if (home != null) roots.add(Paths.get(home, ".cache"));
        StringBuilder refused = new StringBuilder();
        for (Path root : roots) {
            Path dir = root.resolve("heapprobe-" + user).resolve(plat + "-" + hash);
            try {
                place(dir, plat, files);
                return dir.resolve(name);
            } catch (IOException | UnsupportedOperationException e) {
                refused.append("\n  ").append(dir).append(": ").append(e.getMessage());
            }
        }
        throw new IOException("heapprobe: nowhere to extract the natives (set -Dheapprobe.dir=DIR):" + refused);
    }

    private static MessageDigest sha256() throws IOException {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IOException("heapprobe: no SHA-256 in this JVM", e);
        }
    }

    private static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) s.append(String.format("%02x", x));
        return s.toString();
    }

    /** This process's uid: the owner of /proc/self; -1 without /proc. */
    static int myUid() {
        try {
            return (Integer) Files.getAttribute(Paths.get("/proc/self"), "unix:uid");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException e) {
            return -1;
        }
    }

    /** Whether `d` belongs to us: by uid where /proc says ours, else by user name. */
    private static boolean ours(Path d) throws IOException {
        int me = myUid();
        if (me >= 0) {
            try {
                return (Integer) Files.getAttribute(d, "unix:uid", LinkOption.NOFOLLOW_LINKS) == me;
            } catch (UnsupportedOperationException | IllegalArgumentException e) {
                // no unix: view: by name below
            }
        }
        return Files.getOwner(d, LinkOption.NOFOLLOW_LINKS).getName().equals(System.getProperty("user.name"));
    }

    private static void place(Path dir, String plat, List<String[]> files) throws IOException {
        Path parent = dir.getParent();
        for (Path d : new Path[] { parent, dir }) {
            if (!Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(d, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            // ours and private: nobody else may put a library where we load one from
            if (!ours(d)) {
                throw new IOException("owned by " + Files.getOwner(d, LinkOption.NOFOLLOW_LINKS).getName() + ", not by us");
            }
            if (!PosixFilePermissions.toString(Files.getPosixFilePermissions(d, LinkOption.NOFOLLOW_LINKS)).endsWith("------")) {
                throw new IOException("open to other users (" +
                        PosixFilePermissions.toString(Files.getPosixFilePermissions(d, LinkOption.NOFOLLOW_LINKS)) + ")");
            }
        }
        if (!Files.isWritable(dir)) throw new IOException("not writable");
        for (String[] f : files) {
            Path target = dir.resolve(f[2]);
            // Extracted before: in our private directory, at its size. Written
            // only by us, so the hash checked then still holds.
            if (Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS) && Files.size(target) == Long.parseLong(f[1])) {
                continue;
            }
            byte[] data;
            try (InputStream in = Natives.class.getResourceAsStream("/native/" + plat + "/" + f[2])) {
                if (in == null) throw new IOException("heapprobe: this jar has no native/" + plat + "/" + f[2]);
                data = in.readAllBytes();
            }
            if (!hex(sha256().digest(data)).equals(f[0])) {
                throw new IOException("heapprobe: native/" + plat + "/" + f[2] + " does not match its SHA-256 in the jar");
            }
            Path tmp = Files.createTempFile(dir, f[2], ".part");
            Files.write(tmp, data);
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwx------"));
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

}
