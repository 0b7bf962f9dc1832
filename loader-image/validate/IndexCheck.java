import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Random;

import org.apache.jena.atlas.lib.tuple.Tuple;
import org.apache.jena.dboe.base.record.Record;
import org.apache.jena.dboe.index.RangeIndex;
import org.apache.jena.graph.Node;
import org.apache.jena.sparql.core.DatasetGraph;
import org.apache.jena.system.Txn;
import org.apache.jena.tdb2.DatabaseMgr;
import org.apache.jena.tdb2.lib.TupleLib;
import org.apache.jena.tdb2.store.DatasetGraphTDB;
import org.apache.jena.tdb2.store.NodeId;
import org.apache.jena.tdb2.store.nodetable.NodeTable;
import org.apache.jena.tdb2.store.nodetupletable.NodeTupleTable;
import org.apache.jena.tdb2.store.tupletable.TupleIndex;
import org.apache.jena.tdb2.store.tupletable.TupleIndexRecord;
import org.apache.jena.tdb2.sys.TDBInternal;

/**
 * The validate step's index check: Jena opens the database and follows a sample of its records
 * through every index and both directions of the node table. Its cost is
 * O(samples x indexes x log n) lookups whatever the database's size, where counting the
 * statements is a full scan (hours at 10^10).
 *
 * <p>From each index (SPO, POS, OSP; GSPO, ... for quads) it takes the first and the last record
 * and {@code --samples} records at seeded random keys between them, and requires of each: every
 * other index of the table holds the same statement (an exact lookup through that index), every
 * NodeId decodes to a term (nodes.dat) that the node index maps back to the same NodeId, and the
 * statement, as terms, is found through Jena's graph API. A table is empty in all its indexes or
 * in none.
 *
 * <p>Usage: IndexCheck --loc DIR [--samples N] [--seed S]. Prints one JSON object on stdout.
 * Exit 0 consistent, 2 usage, 3 inconsistent (what differs on stderr); Jena's own failures are
 * exceptions, which rdf-bulkload-validate classifies.
 */
public final class IndexCheck {
  private static final int EXIT_USAGE = 2;
  private static final int EXIT_INVALID = 3;

  /** A record that breaks the database's invariants. */
  static final class Inconsistent extends RuntimeException {
    Inconsistent(String message) {
      super(message);
    }
  }

  /** What one table's check saw. */
  record TableResult(String[] indexes, boolean empty, int sampled, int lookups, int nodes) {}

  public static void main(String[] args) {
    String loc = null;
    int samples = 64;
    long seed = 1;
    try {
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--loc" -> loc = args[++i];
          case "--samples" -> samples = Integer.parseInt(args[++i]);
          case "--seed" -> seed = Long.parseLong(args[++i]);
          default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
        }
      }
      if (loc == null || samples < 0) {
        throw new IllegalArgumentException("--loc DIR is required and --samples is not negative");
      }
    } catch (RuntimeException e) {
      System.err.println("IndexCheck: " + e.getMessage()
          + " (usage: IndexCheck --loc DIR [--samples N] [--seed S])");
      System.exit(EXIT_USAGE);
    }
    DatasetGraph dsg = DatabaseMgr.connectDatasetGraph(loc);
    DatasetGraphTDB db = TDBInternal.getDatasetGraphTDB(dsg);
    final int n = samples;
    final Random random = new Random(seed);
    try {
      TableResult[] results = Txn.calculateRead(dsg, () -> new TableResult[] {
          check(dsg, db.getTripleTable().getNodeTupleTable(), n, random),
          check(dsg, db.getQuadTable().getNodeTupleTable(), n, random)});
      System.out.println(json(results[0], results[1]));
    } catch (Inconsistent e) {
      System.err.println("IndexCheck: " + e.getMessage());
      System.exit(EXIT_INVALID);
    }
  }

  private static TableResult check(DatasetGraph dsg, NodeTupleTable table, int samples, Random random) {
    TupleIndex[] indexes = table.getTupleTable().getIndexes();
    NodeTable nodes = table.getNodeTable();
    String[] names = Arrays.stream(indexes).map(TupleIndex::getName).toArray(String[]::new);
    List<Tuple<NodeId>> sampled = new ArrayList<>();
    int empties = 0;
    for (TupleIndex index : indexes) {
      List<Tuple<NodeId>> fromIndex = sample(index, samples, random);
      if (fromIndex.isEmpty()) {
        empties++;
      }
      sampled.addAll(fromIndex);
    }
    if (empties != 0 && empties != indexes.length) {
      throw new Inconsistent(String.join(",", names) + ": " + empties + " of " + indexes.length
          + " indexes are empty (a table is empty in all its indexes or in none)");
    }
    int lookups = 0;
    int nodeChecks = 0;
    for (Tuple<NodeId> tuple : sampled) {
      for (TupleIndex index : indexes) {
        TupleIndexRecord base = (TupleIndexRecord) index.baseTupleIndex();
        RangeIndex range = base.getRangeIndex();
        if (!range.contains(TupleLib.record(range.getRecordFactory(), tuple, base.getMapping()))) {
          throw new Inconsistent("index " + index.getName() + " lacks the statement " + tuple
              + " that another index of " + String.join(",", names) + " holds");
        }
        lookups++;
      }
      for (NodeId id : tuple) {
        checkNode(nodes, id, tuple);
        nodeChecks++;
      }
      boolean contains = tuple.len() == 3
          ? dsg.getDefaultGraph().contains(TupleLib.triple(nodes, tuple))
          : dsg.contains(TupleLib.quad(nodes, tuple));
      if (!contains) {
        throw new Inconsistent("Jena's graph API does not find the statement " + tuple);
      }
      lookups++;
    }
    return new TableResult(names, empties == indexes.length, sampled.size(), lookups, nodeChecks);
  }

  /**
   * The NodeId decodes to a term that maps back to it: an inline value by Jena's encoding, a
   * stored term through the node table's own files (below its caches, which would answer the
   * reverse lookup from the decode just made).
   */
  private static void checkNode(NodeTable nodes, NodeId id, Tuple<NodeId> tuple) {
    NodeTable stored = nodes.baseNodeTable();
    Node node = id.isInline() ? nodes.getNodeForNodeId(id) : stored.getNodeForNodeId(id);
    if (node == null) {
      throw new Inconsistent("NodeId " + id + " of " + tuple + " has no term in the node table");
    }
    NodeId back = id.isInline() ? NodeId.inline(node) : stored.getNodeIdForNode(node);
    if (!id.equals(back)) {
      throw new Inconsistent("the term " + node + " of NodeId " + id + " is indexed as " + back);
    }
  }

  /** The first and the last record of the index and samples more at random keys between them. */
  private static List<Tuple<NodeId>> sample(TupleIndex index, int samples, Random random) {
    TupleIndexRecord base = (TupleIndexRecord) index.baseTupleIndex();
    RangeIndex range = base.getRangeIndex();
    List<Tuple<NodeId>> tuples = new ArrayList<>();
    if (range.isEmpty()) {
      return tuples;
    }
    Record min = range.minKey();
    Record max = range.maxKey();
    tuples.add(TupleLib.tuple(min, base.getMapping()));
    tuples.add(TupleLib.tuple(max, base.getMapping()));
    BigInteger low = new BigInteger(1, min.getKey());
    BigInteger span = new BigInteger(1, max.getKey()).subtract(low).add(BigInteger.ONE);
    int keyLength = min.getKey().length;
    for (int i = 0; i < samples; i++) {
      BigInteger key = low.add(new BigInteger(span.bitLength() + 8, random).mod(span));
      Iterator<Record> from = range.iterator(range.getRecordFactory().create(bytes(key, keyLength)), null);
      if (!from.hasNext()) {
        throw new Inconsistent("index " + index.getName() + " has no record from a key below its maximum");
      }
      tuples.add(TupleLib.tuple(from.next(), base.getMapping()));
    }
    return tuples;
  }

  /** key as an unsigned big-endian number of exactly length bytes. */
  private static byte[] bytes(BigInteger key, int length) {
    byte[] raw = key.toByteArray();
    byte[] out = new byte[length];
    int copy = Math.min(raw.length, length);
    System.arraycopy(raw, raw.length - copy, out, length - copy, copy);
    return out;
  }

  private static String json(TableResult triples, TableResult quads) {
    return "{\"triple_indexes\":" + names(triples) + ",\"quad_indexes\":" + names(quads)
        + ",\"triples_empty\":" + triples.empty() + ",\"quads_empty\":" + quads.empty()
        + ",\"sampled\":" + (triples.sampled() + quads.sampled())
        + ",\"index_lookups\":" + (triples.lookups() + quads.lookups())
        + ",\"node_lookups\":" + (triples.nodes() + quads.nodes()) + "}";
  }

  private static String names(TableResult table) {
    return Arrays.stream(table.indexes()).map(n -> "\"" + n + "\"")
        .collect(java.util.stream.Collectors.joining(",", "[", "]"));
  }
}
