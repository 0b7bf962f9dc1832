// Runs Jena's own `tdb2.tdbdump` command (unmodified, from the distribution's lib/) on many
// databases in one JVM, each dump into its own file: `java -cp "$JENA_HOME/lib/*" DumpMany.java
// DB1 OUT1 DB2 OUT2 ...`. Used by the W3C evaluation suite to avoid ~300 JVM start-ups.
// Exit status 0 only if every dump finished; a failing dump stops the run (tdbdump exits).
import java.io.FileOutputStream;
import java.io.PrintStream;

public class DumpMany {
    public static void main(String[] args) throws Exception {
        PrintStream stdout = System.out;
        for (int i = 0; i + 1 < args.length; i += 2) {
            try (PrintStream out = new PrintStream(new FileOutputStream(args[i + 1]), true, "UTF-8")) {
                System.setOut(out);
                tdb2.tdbdump.main("--loc", args[i]);   // Jena's command, as the script runs it
                System.out.flush();
            } finally {
                System.setOut(stdout);
            }
            org.apache.jena.tdb2.sys.TDBInternal.expel(
                org.apache.jena.tdb2.DatabaseMgr.connectDatasetGraph(args[i]));
        }
    }
}
