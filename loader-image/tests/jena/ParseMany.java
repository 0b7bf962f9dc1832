// Parses many RDF/XML files with Jena's own parser (RIOT, its default RDF/XML reader) in one
// JVM, each into an N-Triples file: `java -cp "$JENA_HOME/lib/*" ParseMany.java FILE BASE OUT ...`
// (BASE "-": the file's own URL, as Jena's loaders use). A file Jena refuses gets OUT.error
// with the message instead. Used by the RDF/XML suite for Jena's verdict and triples.
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;

import org.apache.jena.riot.Lang;
import org.apache.jena.riot.RDFParser;
import org.apache.jena.riot.system.StreamRDF;
import org.apache.jena.riot.system.StreamRDFWriter;
import org.apache.jena.riot.RDFFormat;

public class ParseMany {
    public static void main(String[] args) throws Exception {
        for (int i = 0; i + 2 < args.length; i += 3) {
            String file = args[i], base = args[i + 1], out = args[i + 2];
            try (OutputStream os = new FileOutputStream(out)) {
                StreamRDF dest = StreamRDFWriter.getWriterStream(os, RDFFormat.NTRIPLES);
                org.apache.jena.riot.RDFParserBuilder b = RDFParser.source(file).lang(Lang.RDFXML);
                if (!base.equals("-"))
                    b = b.base(base);
                dest.start();
                b.parse(dest);
                dest.finish();
            } catch (Exception e) {
                try (PrintStream err = new PrintStream(new FileOutputStream(out + ".error"), true, "UTF-8")) {
                    err.println(e.getClass().getSimpleName() + ": " + e.getMessage());
                }
            }
        }
    }
}
