// Jena's verdict on each line of a file, parsed alone by its own parser (RIOT, the settings
// its loaders use): `java -cp "$JENA_HOME/lib/*" ParseLines.java LANG IN OUT` (LANG: a name
// such as N-Triples or Turtle). OUT gets one line per input line, tab-separated:
//   ok <TAB> warning|warning... <TAB> the statements as Jena's N-Triples writer prints them
//      (the terms as Jena holds them: what tdbdump prints of its database)
//   error <TAB> message
// Warnings are Jena's messages; an error (or fatal) stops the line, as it stops a load.
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.apache.jena.riot.Lang;
import org.apache.jena.riot.RDFFormat;
import org.apache.jena.riot.RDFLanguages;
import org.apache.jena.riot.RDFParser;
import org.apache.jena.riot.RiotException;
import org.apache.jena.riot.system.ErrorHandler;
import org.apache.jena.riot.system.StreamRDF;
import org.apache.jena.riot.system.StreamRDFWriter;

public class ParseLines {
    public static void main(String[] args) throws Exception {
        Lang lang = RDFLanguages.nameToLang(args[0]);
        List<String> lines = Files.readAllLines(Path.of(args[1]), StandardCharsets.UTF_8);
        try (PrintStream out = new PrintStream(Files.newOutputStream(Path.of(args[2])), true, "UTF-8")) {
            for (String line : lines) {
                List<String> warnings = new ArrayList<>();
                ErrorHandler handler = new ErrorHandler() {
                    public void warning(String message, long l, long c) { warnings.add(message.replace('\t', ' ').replace('|', '/')); }
                    public void error(String message, long l, long c) { throw new RiotException(message); }
                    public void fatal(String message, long l, long c) { throw new RiotException(message); }
                };
                ByteArrayOutputStream buf = new ByteArrayOutputStream();
                try {
                    StreamRDF dest = StreamRDFWriter.getWriterStream(buf, RDFFormat.NTRIPLES);
                    dest.start();
                    RDFParser.fromString(line, lang).errorHandler(handler).parse(dest);
                    dest.finish();
                    String nt = buf.toString(StandardCharsets.UTF_8).strip().replace('\n', ' ');
                    out.println("ok\t" + String.join("|", warnings) + "\t" + nt);
                } catch (Exception e) {
                    out.println("error\t" + String.valueOf(e.getMessage()).replace('\n', ' ').replace('\t', ' '));
                }
            }
        }
    }
}
