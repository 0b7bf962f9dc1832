//! The loader's exit codes against the one table of docs/exit-codes.md: every code the
//! loader defines (`ExitCode::ALL`) is a `loader = yes` row with the same name, and every
//! such row is a code of the loader; then the binary is made to exit with each code it
//! can be driven to from outside.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use bulkload_pipeline::ExitCode;

/// One row of the table.
#[derive(Debug)]
struct Row {
    name: String,
    loader: bool,
}

/// The rows after the `exit-code-table` marker, by code.
fn table() -> BTreeMap<u8, Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../docs/exit-codes.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let after = text.split_once("exit-code-table").expect("the exit-code-table marker").1;
    let mut lines = after.lines().skip(1).skip_while(|l| l.trim().is_empty());
    let header: Vec<String> = cells(lines.next().expect("a header row"));
    let column = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
    let (code, name, loader) = (column("code"), column("name"), column("loader"));
    let mut rows = BTreeMap::new();
    for line in lines.skip(1).take_while(|l| l.trim_start().starts_with('|')) {
        let c = cells(line);
        let n: u8 = c[code].parse().unwrap_or_else(|e| panic!("code {:?}: {e}", c[code]));
        let loader = match c[loader].as_str() {
            "yes" => true,
            "-" => false,
            other => panic!("loader column of code {n}: {other:?}"),
        };
        assert!(rows.insert(n, Row { name: c[name].clone(), loader }).is_none(), "code {n} twice");
    }
    assert!(!rows.is_empty(), "no rows after the marker");
    rows
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_rdf-bulkload")
}

/// A valid N-Triples file of `n` statements.
fn good_input(dir: &Path, n: usize) -> Vec<PathBuf> {
    let path = dir.join(format!("good-{n}.nt"));
    let text: String = (0..n)
        .map(|i| format!("<http://example.org/s{i}> <http://example.org/p{}> \"object {i}\" .\n", i % 7))
        .collect();
    std::fs::write(&path, text).unwrap();
    vec![path]
}

fn cells(line: &str) -> Vec<String> {
    line.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect()
}

#[test]
fn the_loaders_codes_are_the_tables_loader_rows() {
    let table = table();
    for code in ExitCode::ALL {
        let row = table.get(&code.code()).unwrap_or_else(|| panic!("{code:?} ({}) is not in the table", code.code()));
        assert!(row.loader, "{code:?} ({}): the table says the loader never exits with it", code.code());
        assert_eq!(row.name, code.name(), "name of code {}", code.code());
    }
    for (n, row) in table.iter().filter(|(_, r)| r.loader) {
        assert!(
            ExitCode::ALL.iter().any(|c| c.code() == *n),
            "the table says the loader exits with {n} ({}), the loader has no such code",
            row.name
        );
    }
}

fn load(dir: &Path, args: &[&str], files: &[PathBuf]) -> Output {
    Command::new(bin())
        .arg("load")
        .arg("--loc")
        .arg(dir.join("db"))
        .args(args)
        .args(files)
        .env_remove("FAILPOINTS")
        .output()
        .unwrap()
}

fn assert_exit(out: &Output, code: ExitCode, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code.code() as i32), "{what}: {err}");
    if code != ExitCode::Ok {
        assert!(err.contains("rdf-bulkload: error:") || err.contains("error:"), "{what}: says why: {err}");
    }
}

#[test]
fn the_binary_exits_with_each_code() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let good = good_input(dir, 200);

    let ok = load(&dir.join("ok"), &[], &good);
    assert_exit(&ok, ExitCode::Ok, "a good load");

    let usage = Command::new(bin()).args(["load", "--no-such-flag"]).output().unwrap();
    assert_exit(&usage, ExitCode::Usage, "an unknown flag");
    let size = load(&dir.join("size"), &["--memory", "64m"], &good);
    assert_exit(&size, ExitCode::Usage, "a size that is no quantity");
    assert!(String::from_utf8_lossy(&size.stderr).contains("--memory"), "names the flag");

    let bad = dir.join("bad.nt");
    std::fs::write(&bad, "<http://example.org/s> <http://example.org/p> .\n").unwrap();
    assert_exit(&load(&dir.join("bad"), &[], &[bad]), ExitCode::BadInput, "a syntax error");

    let missing = load(&dir.join("missing"), &[], &[dir.join("no-such-file.nt")]);
    assert_exit(&missing, ExitCode::InputMissing, "a missing input");

    let small = load(&dir.join("small"), &["--memory", "1Mi", "--threads", "2"], &good);
    assert_exit(&small, ExitCode::Resources, "a budget below the minimum");

    // Another load holds the lock of this database: a retry later may succeed.
    let busy_dir = dir.join("busy");
    std::fs::create_dir_all(&busy_dir).unwrap();
    let lock = File::create(busy_dir.join(".db.lock")).unwrap();
    lock.try_lock().unwrap();
    assert_exit(&load(&busy_dir, &[], &good), ExitCode::Transient, "another load running");
    drop(lock);
}

/// A work directory that cannot be created is final (a flag to fix), not transient: a
/// retry loop would spin on it.
#[test]
fn an_unusable_tmpdir_is_a_final_error_not_a_transient_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let good = good_input(dir, 50);
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let under_a_file = file.join("tmp");
    let out = load(&dir.join("notdir"), &["--tmpdir", under_a_file.to_str().unwrap()], &good);
    assert_exit(&out, ExitCode::Usage, "--tmpdir below a file (ENOTDIR)");

    // Permission bits do not stop root; as any other user a read-only directory must give
    // the same final code.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        use std::os::unix::fs::PermissionsExt;
        let ro = dir.join("read-only");
        std::fs::create_dir(&ro).unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        let out = load(&ro, &["--tmpdir", ro.join("tmp").to_str().unwrap()], &good);
        assert_exit(&out, ExitCode::Usage, "a read-only --tmpdir parent (EACCES)");
    }
}

/// SIGTERM stops the load at a safe point with the interrupted code.
#[cfg(feature = "failpoints")]
#[test]
fn sigterm_exits_interrupted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let good = good_input(dir, 20_000);
    let child = Command::new(bin())
        .arg("load")
        .arg("--loc")
        .arg(dir.join("db"))
        .args(&good)
        .env("FAILPOINTS", "checkpoint.saved=1*sleep(5000)")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let checkpoint = dir.join(".db.spill").join("checkpoint.json");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !checkpoint.exists() {
        assert!(std::time::Instant::now() < deadline, "no checkpoint in 120 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, ExitCode::Interrupted, "SIGTERM");
}
