// Differential oracle for the tdb2-nodeid crate: asks unmodified Jena (5.6.0) how TDB2 inlines
// a typed literal. Compiled and run by tests/jena_differential.rs against the Jena distribution
// jars ($JENA_HOME/lib/*); not part of the loader.
//
// Input (stdin, UTF-8): one case per line, "LEXICAL<TAB>DATATYPE-IRI". Inside LEXICAL the
// characters TAB, LF, CR and backslash are written as \t \n \r \\ (and any char as \\uXXXX).
//
// Output (stdout, one line per input line):
//   HEX16<TAB>LEX<TAB>DT   inlined: the 8 NodeId bytes as written to disk (NodeIdFactory.set),
//                          then what Jena decodes it back to (NodeIdInline.extract), escaped as input
//   -                      not inlined (stored in the node table)
//   !                      building the literal itself threw (Jena's parser would abort the load)
//
// The Node is built exactly as RIOT's N-Triples parser does for "lex"^^<dt>
// (ParserProfileStd -> FactoryRDFStd.createTypedLiteral -> NodeFactory.createLiteralDT with
// NodeFactory.getType(iri)); TDB2 (tdbloader, xloader, query constants) then calls
// NodeIdInline.inline(Node).
import java.io.*;
import java.nio.charset.StandardCharsets;

import org.apache.jena.datatypes.RDFDatatype;
import org.apache.jena.graph.Node;
import org.apache.jena.graph.NodeFactory;
import org.apache.jena.tdb2.store.NodeId;
import org.apache.jena.tdb2.store.NodeIdFactory;
import org.apache.jena.tdb2.store.NodeIdInline;

public class InlineOracle {
    static String unescape(String s) {
        if (s.indexOf('\\') < 0) return s;
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\' || i + 1 >= s.length()) { sb.append(c); continue; }
            char n = s.charAt(++i);
            switch (n) {
                case 't': sb.append('\t'); break;
                case 'n': sb.append('\n'); break;
                case 'r': sb.append('\r'); break;
                case '\\': sb.append('\\'); break;
                case 'u': sb.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16)); i += 4; break;
                default: sb.append('\\').append(n);
            }
        }
        return sb.toString();
    }

    static String escape(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\t': sb.append("\\t"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\\': sb.append("\\\\"); break;
                default: sb.append(c);
            }
        }
        return sb.toString();
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16));
        byte[] buf = new byte[8];
        String line;
        while ((line = in.readLine()) != null) {
            int tab = line.lastIndexOf('\t');
            String lex = unescape(line.substring(0, tab));
            String dt = line.substring(tab + 1);
            Node node;
            try {
                RDFDatatype rdt = NodeFactory.getType(dt);
                node = NodeFactory.createLiteralDT(lex, rdt);
            } catch (Throwable th) {
                out.println("!");
                continue;
            }
            NodeId id = NodeIdInline.inline(node);
            if (id == null) {
                out.println("-");
                continue;
            }
            NodeIdFactory.set(id, buf, 0);
            StringBuilder sb = new StringBuilder(64);
            for (byte b : buf) sb.append(String.format("%02x", b & 0xff));
            Node back = NodeIdInline.extract(id);
            sb.append('\t').append(escape(back.getLiteralLexicalForm()))
              .append('\t').append(back.getLiteralDatatypeURI());
            out.println(sb);
        }
        out.flush();
    }
}
