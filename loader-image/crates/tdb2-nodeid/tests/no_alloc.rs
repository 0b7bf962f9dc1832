//! `inline_literal` is on the hot path of every literal of a load: it must not allocate.
//! A counting global allocator (this test binary only) checks that over a mix of inputs,
//! including inlined, rejected and invalid forms of every inlinable datatype. It counts the
//! test's own thread only: the harness's threads allocate when they like (4 of theirs once
//! failed this test under a busy machine).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use tdb2_nodeid::{inline_literal, JenaVersion};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTED.with(Cell::get) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn inline_literal_does_not_allocate() {
    const X: &str = "http://www.w3.org/2001/XMLSchema#";
    let long_frac = format!("2020-01-02T03:04:05.{}1Z", "0".repeat(400));
    let cases: Vec<(String, String)> = [
        ("42", "integer"),
        (" -36028797018963968 ", "long"),
        ("200", "byte"),
        ("abc", "int"),
        ("-123.456", "decimal"),
        ("1407374883553.280", "decimal"),
        ("-12.3400", "decimal"),
        ("1.000000000000000000000", "decimal"),
        ("100", "decimal"),
        ("1.0e0", "double"),
        ("1e100", "double"),
        ("123.456e10", "double"),
        ("NaN", "double"),
        ("1.00000017881393432617187499", "float"),
        ("1e40", "float"),
        ("true", "boolean"),
        ("TRUE", "boolean"),
        ("2020-01-02", "date"),
        ("2020-01-02T03:04:05.123+05:30", "dateTime"),
        ("2020-01-02T03:04:05.1234Z", "dateTime"),
        ("2020-01-02T03:04:05 ", "dateTimeStamp"),
        ("2020-02-30T00:00:00", "dateTime"),
        ("1000000005-01-01", "date"),
        ("x", "string"),
    ]
    .iter()
    .map(|(l, t)| (l.to_string(), format!("{X}{t}")))
    .chain([(long_frac, format!("{X}dateTime"))])
    .collect();
    COUNTED.with(|c| c.set(true));
    let before = ALLOCS.load(Ordering::Relaxed);
    let mut inlined = 0;
    for _ in 0..100 {
        for (lex, dt) in &cases {
            inlined += inline_literal(std::hint::black_box(lex), std::hint::black_box(dt)).is_some() as usize;
            // Jena 6's rule (decimals canonicalised) too.
            let v6 = std::hint::black_box(JenaVersion::V6);
            inlined += v6.inline_literal(std::hint::black_box(lex), std::hint::black_box(dt)).is_some() as usize;
        }
    }
    let after = ALLOCS.load(Ordering::Relaxed);
    COUNTED.with(|c| c.set(false));
    assert_eq!(after - before, 0, "inline_literal allocated");
    assert!(inlined > 0);
}
