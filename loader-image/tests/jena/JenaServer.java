// Runs Jena 5.6.0's own command classes (unmodified, from the distribution's lib/) for many
// requests in one long-lived JVM, so that the fidelity suite's Jena references do not pay a JVM
// start and a cold JIT per step:
//   java -Dlog4j.configurationFile=file:$JENA_HOME/log4j2.properties -cp "$JENA_HOME/lib/*" JenaServer.java
// One request per line on stdin, a JSON object with an "id" and a "cmd"; one reply per line on
// stdout, in order:
//   {"id": ID, "exit": N, "seconds": S, "stderr": "..."}
// where N is the exit status the command-line tool would have had (0: done) and stderr is what
// the command wrote to System.err (and Jena's log, which goes there) during the request.
// Requests:
//   {"cmd": "xloader", "loc": DIR, "tmpdir": DIR, "threads": "2", "files": [FILE, ...]}
//       what bin/tdb2.xloader does, step for step: CmdxBuildNodeTable, CmdxIngestData, then
//       CmdxBuildIndex for SPO POS OSP and GSPO GPOS GOSP SPOG POSG OSPG with the script's
//       arguments, a group skipped when $TMPDIR/load.json counts 0 triples (quads).
//   {"cmd": "run", "class": CLASS, "args": [ARG, ...], "out": FILE}
//       the command class a bin/ script runs (tdb2.tdbdump, tdb2.tdbquery, tdb2.tdbloader,
//       tdb2.tdbstats, riotcmd.riot, ...) with ARGs, System.out going to FILE (`script ARG... > FILE`;
//       the commands take System.out when they write, or, riot, when they are made).
// System.in is empty for the commands (the requests come on the real stdin).
// Each command object is made and run as its main() would, but through CmdMain.mainMethod(), not
// mainRun(): mainRun calls System.exit on a TerminationException (and on any failure when main
// uses it), which would end the server; here a failure becomes the exit status main() would have
// given (TerminationException: its code; IllegalArgumentException and CmdException: 1; any other
// exception: 2; an Error: 1, as the JVM gives for an uncaught one). After every request (and every
// xloader step, each a JVM of its own in the script) every database is released from Jena's
// connection caches (TDBInternal.reset: files closed, tdb.lock released), so another JVM can open
// it and its files are final. The server ends at the end of stdin, or when its parent process
// ends. Jena code that calls System.exit itself (xloader when sort(1) fails) ends it; the caller
// reports that.
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

public class JenaServer {
    /** System.err during a request: the real stderr and a copy for the reply. */
    static final class Tee extends OutputStream {
        final OutputStream real;
        ByteArrayOutputStream copy = new ByteArrayOutputStream();
        Tee(OutputStream real) { this.real = real; }
        @Override public synchronized void write(int b) throws java.io.IOException { real.write(b); copy.write(b); }
        @Override public synchronized void write(byte[] b, int off, int len) throws java.io.IOException {
            real.write(b, off, len);
            copy.write(b, off, len);
        }
        @Override public synchronized void flush() throws java.io.IOException { real.flush(); }
        synchronized String take() {
            String s = copy.toString(StandardCharsets.UTF_8);
            copy = new ByteArrayOutputStream();
            return s;
        }
    }

    static Tee tee;
    static PrintStream err;

    public static void main(String[] args) throws Exception {
        // The replies go to the real stdout; everything else that writes to System.out (a command,
        // a log appender made later) goes to stderr, unless a request points System.out at a file.
        PrintStream replies = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        tee = new Tee(new FileOutputStream(FileDescriptor.err));
        err = new PrintStream(tee, true, "UTF-8");
        System.setErr(err);
        System.setOut(err);
        java.io.InputStream requests = System.in;
        System.setIn(new java.io.ByteArrayInputStream(new byte[0]));
        // Jena and its logging set up now, with System.out and System.err as above.
        // (CmdTDB.init: JenaSystem.init and LogCtl.setLogging, what the tdb2.* mains call first.)
        tdb2.cmdline.CmdTDB.init();
        org.slf4j.LoggerFactory.getLogger(JenaServer.class).debug("started");
        tee.take();
        replies.println("{\"ready\": true}");

        // A request can outlive its caller (xloader waits forever for sort(1) when its parser
        // thread fails on bad input, as the script does): the server ends when its parent does.
        long parent = ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L);
        Thread watchdog = new Thread(() -> {
            while (true) {
                try { Thread.sleep(2000); } catch (InterruptedException e) { return; }
                long now = ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L);
                if (now != parent) {
                    ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
                    Runtime.getRuntime().halt(3);
                }
            }
        }, "parent-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();

        BufferedReader in = new BufferedReader(new InputStreamReader(requests, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isBlank())
                continue;
            long t0 = System.nanoTime();
            String id = null;
            int exit;
            try {
                org.apache.jena.atlas.json.JsonObject req = org.apache.jena.atlas.json.JSON.parse(line);
                id = str(req, "id");
                exit = handle(req);
            } catch (Throwable t) {
                t.printStackTrace(err);
                exit = 70;
            } finally {
                System.setOut(err);
                release();
            }
            err.flush();
            org.apache.jena.atlas.json.JsonObject reply = new org.apache.jena.atlas.json.JsonObject();
            reply.put("id", id == null ? "" : id);
            reply.put("exit", exit);
            reply.put("seconds", org.apache.jena.atlas.json.JsonNumber.value(Math.round((System.nanoTime() - t0) / 1e6) / 1e3));
            reply.put("stderr", tee.take());
            replies.println(org.apache.jena.atlas.json.JSON.toStringFlat(reply));
        }
        System.exit(0);
    }

    static String str(org.apache.jena.atlas.json.JsonObject req, String key) {
        org.apache.jena.atlas.json.JsonValue v = req.get(key);
        return v == null || v.isNull() ? null : v.getAsString().value();
    }

    static List<String> strs(org.apache.jena.atlas.json.JsonObject req, String key) {
        List<String> out = new ArrayList<>();
        for (org.apache.jena.atlas.json.JsonValue v : req.get(key).getAsArray())
            out.add(v.getAsString().value());
        return out;
    }

    static int handle(org.apache.jena.atlas.json.JsonObject req) throws Exception {
        String cmd = str(req, "cmd");
        switch (cmd) {
            case "xloader":
                return xloader(str(req, "loc"), str(req, "tmpdir"), str(req, "threads"), strs(req, "files"));
            case "run":
                return toFile(str(req, "out"), str(req, "class"), strs(req, "args"));
            default:
                err.println("JenaServer: unknown request " + cmd);
                return 2;
        }
    }

    /** The command with System.out going to the file `out` (as `cmd > out` in a shell). */
    static int toFile(String out, String className, List<String> args) throws Exception {
        if (out == null)
            return run(className, args);
        // The JVM's System.out to a pipe or file encodes with the default charset; so does this.
        try (PrintStream ps = new PrintStream(new BufferedOutputStream(new FileOutputStream(out), 1 << 16), false,
                                              java.nio.charset.Charset.defaultCharset())) {
            System.setOut(ps);
            try {
                return run(className, args);
            } finally {
                System.out.flush();
                System.setOut(err);
            }
        }
    }

    /**
     * new CLASS(args) then CmdMain.mainMethod() (process + exec) as CmdMain.mainRun does, with
     * mainRun's handling of failures except that none calls System.exit: the exit status instead.
     */
    static int run(String className, List<String> args) throws Exception {
        Class<?> cls = Class.forName(className);
        Constructor<?> ctor = cls.getDeclaredConstructor(String[].class);
        ctor.setAccessible(true);
        Method mainMethod = org.apache.jena.cmd.CmdMain.class.getDeclaredMethod("mainMethod");
        mainMethod.setAccessible(true);
        try {
            Object command = ctor.newInstance((Object) args.toArray(new String[0]));
            mainMethod.invoke(command);
            return 0;
        } catch (InvocationTargetException ite) {
            Throwable ex = ite.getCause();
            if (ex instanceof org.apache.jena.cmd.TerminationException te)
                return te.getCode();
            if (ex instanceof IllegalArgumentException) {
                ex.printStackTrace(System.err);
                return 1;
            }
            if (ex instanceof org.apache.jena.cmd.CmdException) {
                if (ex.getMessage() != null && ex.getMessage().length() > 0)
                    System.err.println(ex.getMessage());
                if (ex.getCause() != null)
                    ex.getCause().printStackTrace(System.err);
                return 1;
            }
            if (ex instanceof Exception) {
                ex.printStackTrace(System.err);
                return 2;
            }
            // An Error: the JVM's uncaught-exception handler prints it and the JVM exits 1.
            StringWriter sw = new StringWriter();
            ex.printStackTrace(new PrintWriter(sw));
            System.err.print("Exception in thread \"main\" " + sw);
            return 1;
        }
    }

    /** Every database out of Jena's caches (as at the end of a JVM), files closed, locks released. */
    static void release() {
        try {
            org.apache.jena.tdb2.sys.TDBInternal.reset();
        } catch (Throwable t) {
            t.printStackTrace(err);
        }
    }

    /** bin/tdb2.xloader (Jena 5.6.0) with each `exec_java` run here instead of in a JVM of its own. */
    static int xloader(String loc, String tmpdir, String threads, List<String> files) throws Exception {
        if (threads == null)
            threads = "2";                                   // SORT_THREADS="2"
        if (!threads.equals("-1") && !threads.matches("[-+]?[0-9]+"))
            return abort(1, "Bad value for --threads : " + threads);
        if (files.isEmpty())
            return abort(1, "No files to load");
        if (loc == null || loc.isEmpty())
            return abort(1, "No directory name for the database");
        if (new File(loc).exists())
            return abort(3, "Directory " + loc + " already exists");
        if (tmpdir == null || tmpdir.isEmpty())
            tmpdir = loc;
        File tmp = new File(tmpdir);
        if (!tmp.exists())
            tmp.mkdirs();
        if (!tmp.isDirectory())
            return abort(2, "TMPDIR " + tmpdir + " is not a directory");
        if (!tmp.canWrite())
            return abort(2, "TMPDIR " + tmpdir + " is not writable");

        List<String> a = new ArrayList<>(List.of("--loc", loc, "--tmpdir", tmpdir, "--threads", threads));
        a.addAll(files);
        if (step("tdb2.xloader.CmdxBuildNodeTable", a) != 0)
            return 1;

        a = new ArrayList<>(List.of("--loc", loc, "--tmpdir", tmpdir, "--triples", tmpdir + "/triples.tmp",
                                    "--quads", tmpdir + "/quads.tmp"));
        a.addAll(files);
        if (step("tdb2.xloader.CmdxIngestData", a) != 0)
            return 1;

        List<String> indexes = new ArrayList<>();
        File info = new File(tmpdir, "load.json");
        boolean triples = true, quads = true;
        if (info.exists()) {                                 // skip a phase with no items to index
            org.apache.jena.atlas.json.JsonObject obj = org.apache.jena.atlas.json.JSON.read(info.getPath());
            triples = count(obj, "triples") != 0;
            quads = count(obj, "quads") != 0;
        }
        if (triples)
            indexes.addAll(List.of("SPO", "POS", "OSP"));
        if (quads)
            indexes.addAll(List.of("GSPO", "GPOS", "GOSP", "SPOG", "POSG", "OSPG"));
        for (String idx : indexes) {
            a = List.of("--loc", loc, "--tmpdir", tmpdir, "--threads", threads, "--index", idx,
                        tmpdir + "/triples.tmp", tmpdir + "/quads.tmp");
            if (step("tdb2.xloader.CmdxBuildIndex", a) != 0)
                return 1;
        }
        return 0;
    }

    /** `jq .KEY < load.json` as the script's `[[ $X -eq 0 ]]` reads it (absent: null, which is 0). */
    static long count(org.apache.jena.atlas.json.JsonObject obj, String key) {
        org.apache.jena.atlas.json.JsonValue v = obj.get(key);
        return (v == null || !v.isNumber()) ? 0 : v.getAsNumber().value().longValue();
    }

    /** One exec_java of the script: the command, then the JVM's end (databases released). */
    static int step(String className, List<String> args) throws Exception {
        int rc;
        try {
            rc = run(className, args);
        } finally {
            release();
        }
        if (rc != 0)
            System.err.println("ERROR Java process returned " + rc + " (" + className + " " + String.join(" ", args) + ")");
        return rc;
    }

    static int abort(int code, String msg) {
        System.err.println("ERROR " + msg);
        return code;
    }
}
