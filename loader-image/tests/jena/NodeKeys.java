// Jena recomputes the node-table keys of a database: for every "HEXKEY OFFSET" line on stdin
// (a record of the `nodes` tree, read by tdb2read.py), Jena 5.6.0 decodes the term stored at
// that offset with its own node table (NodeTableTRDF, ThriftConvert) and hashes it with its own
// NodeLib.hash. Prints "BAD HEXKEY OFFSET JENA-KEY TERM" for every record whose key is not
// Jena's, then "checked N". Run: `java -cp "$JENA_HOME/lib/*" NodeKeys.java DB < records`.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import org.apache.jena.atlas.lib.Bytes;
import org.apache.jena.graph.Node;
import org.apache.jena.riot.out.NodeFmtLib;
import org.apache.jena.sparql.core.DatasetGraph;
import org.apache.jena.tdb2.DatabaseMgr;
import org.apache.jena.tdb2.lib.NodeLib;
import org.apache.jena.tdb2.store.DatasetGraphTDB;
import org.apache.jena.tdb2.store.NodeId;
import org.apache.jena.tdb2.store.NodeIdFactory;
import org.apache.jena.tdb2.store.nodetable.NodeTable;
import org.apache.jena.tdb2.sys.TDBInternal;

public class NodeKeys {
    public static void main(String[] args) throws Exception {
        DatasetGraph dsg = DatabaseMgr.connectDatasetGraph(args[0]);
        DatasetGraphTDB tdb = TDBInternal.getDatasetGraphTDB(dsg);
        long n = 0;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder bad = new StringBuilder();
        dsg.begin(org.apache.jena.query.ReadWrite.READ);
        try {
            NodeTable nt = tdb.getTripleTable().getNodeTupleTable().getNodeTable();
            for (String line; (line = in.readLine()) != null; ) {
                String[] f = line.trim().split(" ");
                if (f.length != 2)
                    continue;
                NodeId id = NodeIdFactory.createPtr(Long.parseLong(f[1]));
                Node node = nt.getNodeForNodeId(id);
                String key = Bytes.asHex(NodeLib.hash(node).getBytes()).toLowerCase();
                if (!key.equals(f[0].toLowerCase()))
                    bad.append("BAD ").append(f[0]).append(' ').append(f[1]).append(' ').append(key).append(' ')
                       .append(NodeFmtLib.strNT(node)).append('\n');
                n++;
            }
        } finally {
            dsg.end();
        }
        System.out.print(bad);
        System.out.println("checked " + n);
    }
}
