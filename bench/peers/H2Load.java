import java.sql.*;

/**
 * A real application for bench/peers/run.sh: the H2 database (from Maven
 * Central), in memory, running a fixed SQL workload: bulk inserts, an index
 * build, point and range queries, aggregates, a join, updates, deletes.
 * Args: rows (default 200000), query rounds (default 400). Prints elapsed ms
 * and a checksum so that the work cannot be skipped.
 */
public class H2Load {
    public static void main(String[] args) throws Exception {
        int rows = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 400;
        long t0 = System.nanoTime(), check = 0;
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:bench;DB_CLOSE_DELAY=-1", "sa", "")) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE customer(id INT PRIMARY KEY, name VARCHAR(64), region INT)");
                s.execute("CREATE TABLE orders(id BIGINT PRIMARY KEY, cust INT, amount DECIMAL(12,2), odate INT, note VARCHAR(200))");
            }
            c.setAutoCommit(false);
            try (PreparedStatement p = c.prepareStatement("INSERT INTO customer VALUES(?,?,?)")) {
                for (int i = 0; i < rows / 20; i++) {
                    p.setInt(1, i); p.setString(2, "customer-" + i); p.setInt(3, i % 17); p.addBatch();
                    if (i % 1000 == 999) { p.executeBatch(); c.commit(); }
                }
                p.executeBatch();
            }
            try (PreparedStatement p = c.prepareStatement("INSERT INTO orders VALUES(?,?,?,?,?)")) {
                long x = 42;
                for (int i = 0; i < rows; i++) {
                    x = x * 6364136223846793005L + 1442695040888963407L;
                    p.setLong(1, i); p.setInt(2, (int) ((x >>> 33) % (rows / 20)));
                    p.setBigDecimal(3, java.math.BigDecimal.valueOf((x >>> 40) % 100000, 2));
                    p.setInt(4, (int) ((x >>> 20) % 365));
                    p.setString(5, "order " + i + " note " + Long.toHexString(x));
                    p.addBatch();
                    if (i % 1000 == 999) { p.executeBatch(); c.commit(); }
                }
                p.executeBatch();
            }
            c.commit();
            try (Statement s = c.createStatement()) {
                s.execute("CREATE INDEX orders_cust ON orders(cust)");
                s.execute("CREATE INDEX orders_day ON orders(odate)");
            }
            c.commit();
            try (PreparedStatement point = c.prepareStatement("SELECT amount, note FROM orders WHERE id = ?");
                 PreparedStatement range = c.prepareStatement("SELECT COUNT(*), SUM(amount) FROM orders WHERE odate BETWEEN ? AND ?");
                 PreparedStatement join = c.prepareStatement(
                         "SELECT c.region, COUNT(*), SUM(o.amount) FROM orders o JOIN customer c ON o.cust = c.id "
                         + "WHERE o.cust BETWEEN ? AND ? GROUP BY c.region ORDER BY c.region");
                 PreparedStatement upd = c.prepareStatement("UPDATE orders SET amount = amount + 1, note = CONCAT(note, '+') WHERE cust = ?");
                 Statement agg = c.createStatement()) {
                for (int r = 0; r < rounds; r++) {
                    for (int k = 0; k < 50; k++) {
                        point.setLong(1, (r * 7919L + k * 104729L) % rows);
                        try (ResultSet rs = point.executeQuery()) { if (rs.next()) check += rs.getString(2).length(); }
                    }
                    range.setInt(1, r % 300); range.setInt(2, r % 300 + 10);
                    try (ResultSet rs = range.executeQuery()) { if (rs.next()) check += rs.getLong(1); }
                    join.setInt(1, (r * 31) % (rows / 20)); join.setInt(2, (r * 31) % (rows / 20) + 200);
                    try (ResultSet rs = join.executeQuery()) { while (rs.next()) check += rs.getLong(2); }
                    upd.setInt(1, (r * 13) % (rows / 20));
                    check += upd.executeUpdate();
                    if (r % 100 == 99) {
                        try (ResultSet rs = agg.executeQuery("SELECT odate, COUNT(*), AVG(amount), MAX(note) FROM orders GROUP BY odate")) {
                            while (rs.next()) check += rs.getLong(2);
                        }
                        c.commit();
                    }
                }
                check += agg.executeUpdate("DELETE FROM orders WHERE MOD(id, 10) = 0");
                c.commit();
            }
        }
        System.out.println("elapsed_ms: " + (System.nanoTime() - t0) / 1_000_000);
        System.out.println("check: " + check);
    }
}
