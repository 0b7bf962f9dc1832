//! Helpers shared by the loader's integration tests.

use std::io::Write;
use std::path::{Path, PathBuf};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_rdf-bulkload")
}

/// A synthetic dump with the term kinds that matter: IRIs, blank nodes, language tags,
/// inline and non-inline literals, typed literals, named graphs, default-graph quads.
#[allow(dead_code)]
pub fn write_dump(dir: &Path, parts: usize, lines: usize) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for part in 0..parts {
        let p = dir.join(format!("part-{part}.nq.gz"));
        let f = std::fs::File::create(&p).unwrap();
        let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        for i in (part * lines)..((part + 1) * lines) {
            let s = format!("<http://example.org/item/{}>", i / 2);
            let g = if i % 5 == 0 { format!(" <http://example.org/graph/{}>", i % 3) } else { String::new() };
            let o = match i % 6 {
                0 => format!("\"{}\"^^<http://www.w3.org/2001/XMLSchema#integer>", i as i64 - 5000),
                1 => format!("\"label {i} {}\"@EN-gb", "dolor sit amet ".repeat(20)),
                2 => format!("_:b{}", i % 131),
                3 => format!("\"{}.5\"^^<http://www.w3.org/2001/XMLSchema#decimal>", i),
                4 => format!("<http://example.org/class/{}>", i % 17),
                _ => format!(
                    "\"text {i} with ümlaut, long enough to fill a dictionary quickly: {}\"",
                    "lorem ipsum ".repeat(20)
                ),
            };
            let subj = if i % 11 == 0 { format!("_:s{}", i % 13) } else { s };
            writeln!(gz, "{subj} <http://example.org/p{}> {o}{g} .", i % 9).unwrap();
        }
        gz.finish().unwrap();
        files.push(p);
    }
    files
}

/// The files of a database's `Data-0001`, by name, with their bytes.
pub fn data_files(db: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(db.join("Data-0001"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// A Turtle and a TriG file with what makes splitting them hard: blank nodes (labelled,
/// `[]`, collections, anonymous graphs `[] {`), prefixes redefined, graph blocks of every
/// form. `n` subjects in the Turtle file, half as many blocks in the TriG file.
#[allow(dead_code)]
pub fn write_terse(dir: &Path, n: usize) -> Vec<PathBuf> {
    use std::io::Write;
    let ttl = dir.join("big.ttl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&ttl).unwrap());
    for i in 0..n {
        if i % 1000 == 0 {
            writeln!(f, "@prefix ex: <http://example.org/v{}/> .", i / 1000).unwrap();
        }
        writeln!(f, "ex:t{i} a ex:C ; ex:knows [ ex:name \"anon {i}\" ] ; ex:list ( {i} _:shared [] ) .").unwrap();
    }
    let trig = dir.join("big.trig");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&trig).unwrap());
    writeln!(f, "PREFIX ex: <http://example.org/>").unwrap();
    for i in 0..n / 2 {
        let opener = ["ex:g# {", "[] {", "_:g# {", "{"][i % 4].replace('#', &i.to_string());
        writeln!(f, "{opener}\n  ex:s{i} ex:p [ ex:q {i} ] .\n  ex:s{i} ex:r _:b{} .\n}}", i % 10).unwrap();
    }
    vec![ttl, trig]
}
