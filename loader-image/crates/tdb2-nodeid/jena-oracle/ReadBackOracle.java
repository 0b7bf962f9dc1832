// Differential oracle for tdb2_nodeid::jena_readable: asks unmodified Jena (5.6.0) whether a
// typed literal, once stored in a TDB2 database, can be read back and used by a query.
// Compiled and run by tests/jena_readable.rs against the Jena distribution jars
// ($JENA_HOME/lib/*); not part of the loader.
//
// Input (stdin, UTF-8): one case per line, "LEXICAL<TAB>DATATYPE-IRI", escaped as for
// InlineOracle (\t \n \r \\ and \\uXXXX).
//
// Output (stdout, one line per input line):
//   ok                      Jena reads the term back and every query step below succeeds
//   STAGE<TAB>EXCEPTION     the first step that threw, and what it threw:
//     parse    building the literal as RIOT does (NodeFactory.createLiteralDT): Jena's own
//              loaders (tdbloader, xloader) abort the whole load on it
//     inline   NodeIdInline.inline (tdbloader, xloader, query constants)
//     read     reading the record back: the Thrift term a node table holds, decoded as
//              NodeTableTRDF does (or NodeIdInline.extract for an inlined id)
//     value    what a query does with the term: NodeValue.makeNode (FILTER, ORDER BY, BIND,
//              every function), its value, STR, equality and ordering against itself and
//              against a reference value of the same datatype (durations: not compared)
//
// An ExprEvalException (a SPARQL evaluation error: the expression is unbound, the row stays)
// is how SPARQL reports "not comparable" and does not count as a failure; any other exception
// escapes the query (an empty value with an exception logged, or HTTP 500 from Fuseki).
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

import org.apache.jena.datatypes.RDFDatatype;
import org.apache.jena.graph.Node;
import org.apache.jena.graph.NodeFactory;
import org.apache.jena.riot.thrift.ThriftConvert;
import org.apache.jena.riot.thrift.wire.RDF_Term;
import org.apache.jena.sparql.expr.ExprEvalException;
import org.apache.jena.sparql.expr.NodeValue;
import org.apache.jena.tdb2.store.NodeId;
import org.apache.jena.tdb2.store.NodeIdInline;

public class ReadBackOracle {
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

    static String describe(Throwable t) {
        String m = t.getMessage();
        if (m == null) m = "";
        m = m.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
        if (m.length() > 200) m = m.substring(0, 200) + "...";
        return t.getClass().getName() + ": " + m;
    }

    // A reference value per datatype IRI, built once (null when none).
    static final Map<String, NodeValue> refs = new HashMap<>();
    static final Map<String, String> refLex = Map.ofEntries(
        Map.entry("dateTime", "2000-01-01T00:00:00Z"),
        Map.entry("dateTimeStamp", "2000-01-01T00:00:00Z"),
        Map.entry("date", "2000-01-01"),
        Map.entry("time", "12:00:00"),
        Map.entry("gYear", "2000"),
        Map.entry("gYearMonth", "2000-01"),
        Map.entry("gMonth", "--01"),
        Map.entry("gMonthDay", "--01-01"),
        Map.entry("gDay", "---01"),
        Map.entry("duration", "P1DT1H"),
        Map.entry("dayTimeDuration", "PT1H"),
        Map.entry("yearMonthDuration", "P1Y"),
        Map.entry("decimal", "1.5"),
        Map.entry("integer", "1"),
        Map.entry("double", "1.5e0"),
        Map.entry("float", "1.5"));

    static NodeValue reference(String dt) {
        return refs.computeIfAbsent(dt, k -> {
            String local = k.startsWith("http://www.w3.org/2001/XMLSchema#") ? k.substring(33) : null;
            String lex = local == null ? null : refLex.get(local);
            if (lex == null) return null;
            return NodeValue.makeNode(NodeFactory.createLiteralDT(lex, NodeFactory.getType(k)));
        });
    }

    /** What a query does with a term; exceptions other than SPARQL evaluation errors escape. */
    static void touch(Node n, String dt) {
        NodeValue nv = NodeValue.makeNode(n);
        if (n.getLiteral().isWellFormed()) {
            // An ill-formed literal has no value (getLiteralValue throws by design); SPARQL
            // treats it as an unknown term (NodeValue.makeNode checks isWellFormed first).
            n.getLiteralValue();
            n.sameValueAs(n);
        }
        nv.asNode();
        nv.toString();
        nv.hashCode();
        org.apache.jena.sparql.util.NodeCmp.compareRDFTerms(n, n);
        try { nv.asString(); } catch (ExprEvalException e) { }
        try { org.apache.jena.sparql.expr.nodevalue.NodeFunctions.str(nv); } catch (ExprEvalException e) { }
        try { org.apache.jena.sparql.expr.nodevalue.XSDFuncOp.strlen(nv); } catch (ExprEvalException e) { }
        if (nv.isDuration())
            // Not compared: Jena's duration comparison (DurationImpl.compare, via
            // XMLGregorianCalendarImpl.add) takes time that grows with the components' size
            // (minutes for a few large ones) - a cost, not a failure to read back.
            return;
        try { NodeValue.sameValueAs(nv, nv); } catch (ExprEvalException e) { }
        try { NodeValue.notSameValueAs(nv, nv); } catch (ExprEvalException e) { }
        try { NodeValue.compare(nv, nv); } catch (ExprEvalException e) { }
        NodeValue.compareAlways(nv, nv);
        NodeValue ref = reference(dt);
        if (ref != null) {
            try { NodeValue.sameValueAs(nv, ref); } catch (ExprEvalException e) { }
            try { NodeValue.compare(nv, ref); } catch (ExprEvalException e) { }
            try { NodeValue.compare(ref, nv); } catch (ExprEvalException e) { }
            NodeValue.compareAlways(nv, ref);
            NodeValue.compareAlways(ref, nv);
        }
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16));
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
                out.println("parse\t" + describe(th));
                continue;
            }
            NodeId id;
            try {
                id = NodeIdInline.inline(node);
            } catch (Throwable th) {
                out.println("inline\t" + describe(th));
                continue;
            }
            Node back;
            try {
                if (id != null) {
                    back = NodeIdInline.extract(id);
                } else {
                    RDF_Term term = ThriftConvert.convert(node, false);
                    back = ThriftConvert.convert(ThriftConvert.termFromBytes(ThriftConvert.termToBytes(term)));
                }
            } catch (Throwable th) {
                out.println("read\t" + describe(th));
                continue;
            }
            try {
                touch(back, dt);
            } catch (Throwable th) {
                out.println("value\t" + describe(th));
                continue;
            }
            out.println("ok");
        }
        out.flush();
    }
}
