//! The B+Tree packer against a model: any set of records (see rdf_bulkload_fuzz::tree_model
//! for how the input's bytes choose geometry, count and keys), sorted and deduplicated by
//! a BTreeMap, written with PackedTreeWriter and read back by descending from the root.
//! The tree must hold exactly the model's records in order, pass tdb2's structural checker
//! (block types, fill, separators, ordering, `.bpt` limits), have exactly the block counts
//! a packed tree of that size has, and use every block of both files exactly once.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rdf_bulkload_fuzz::tree_model::{check_every_block_used_once, TreeCase};
use tdb2::{read::read_tree, PackedTreeWriter};

/// One scratch directory per fuzzing process; each run overwrites the same three files.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("rdf-bulkload-fuzz-bptree-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let case = TreeCase::decode(data);
    let p = case.params;
    let dir = scratch();
    let mut w = PackedTreeWriter::create(dir, "T", p).expect("create");
    for rec in case.model.values() {
        w.push(rec).expect("ascending records are accepted");
    }
    if case.reject_check {
        // Every record whose key is not above the last one: the last record itself, a
        // duplicate key of an unsorted input, any earlier key. Refused, and harmless.
        for rec in &case.raw {
            if case.model.keys().next_back().is_some_and(|last| rec[..p.key_len] <= last[..]) {
                assert!(w.push(rec).is_err(), "a non-ascending record was accepted");
            }
        }
    }
    let summary = w.finish().expect("finish");

    let want: Vec<Vec<u8>> = case.model.values().cloned().collect();
    let got = read_tree(dir, "T", p).unwrap_or_else(|e| panic!("structural check failed: {e}"));
    assert!(got == want, "read back {} records, the model has {}", got.len(), want.len());

    let (leaves, branches) = case.expected_blocks();
    assert_eq!(summary.records, want.len() as u64);
    assert_eq!(summary.root, 0, "the root is node block 0");
    assert_eq!((u64::from(summary.leaf_blocks), u64::from(summary.branch_blocks)), (leaves, branches), "block counts");
    let idn = std::fs::read(dir.join("T.idn")).expect("idn");
    let dat = std::fs::read(dir.join("T.dat")).expect("dat");
    let bpt = std::fs::read(dir.join("T.bpt")).expect("bpt");
    assert_eq!(idn.len() as u64, branches * p.block_size as u64, ".idn size");
    assert_eq!(dat.len() as u64, leaves * p.block_size as u64, ".dat size");
    let state: Vec<u8> = [0, branches as i64, leaves as i64].iter().flat_map(|v: &i64| v.to_be_bytes()).collect();
    assert_eq!(bpt, state, ".bpt: root 0, node and record block limits");
    check_every_block_used_once(&p, &idn, &dat).unwrap_or_else(|e| panic!("{e}"));
});
