// Runs Jena's own `tdb2.tdbquery` command (unmodified, from the distribution's lib/) for many
// queries in one JVM, each answer into its own file:
//   java -cp "$JENA_HOME/lib/*" QueryMany.java DB FORMAT QUERY_FILE OUT_FILE [FORMAT QUERY_FILE OUT_FILE ...]
// FORMAT is a --results value (tsv, json, ...). Used by the SPARQL suite to avoid a JVM start
// per query; a failing query stops the run (tdbquery exits non-zero).
import java.io.FileOutputStream;
import java.io.PrintStream;

public class QueryMany {
    public static void main(String[] args) throws Exception {
        PrintStream stdout = System.out;
        String db = args[0];
        for (int i = 1; i + 2 < args.length; i += 3) {
            try (PrintStream out = new PrintStream(new FileOutputStream(args[i + 2]), true, "UTF-8")) {
                System.setOut(out);
                tdb2.tdbquery.main("--loc", db, "--results=" + args[i], "--query", args[i + 1]);
                System.out.flush();
            } finally {
                System.setOut(stdout);
            }
        }
    }
}
