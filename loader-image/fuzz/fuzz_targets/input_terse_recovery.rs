//! Skip mode's promise for Turtle/TriG (rdf_input::terse_check): the fuzzer's bytes drive a
//! generator of documents with injected errors (tricky but valid tokens: dots, braces and
//! `#` inside strings, IRIs and comments, dotted names and numbers, long strings, graph
//! blocks of every form); parsed as the loader parses them, every statement is loaded
//! exactly as a strict parse of it alone gives it (same graph) or lies inside a reject's
//! line range, nothing else is loaded, every bad statement is reported once and no reject
//! is about valid statements only.
//!
//! Input: byte 0 = bit 0: TriG (else Turtle); the rest are the generator's choices (a
//! seeded sequence continues where they end).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdf_input::terse_check::{check, generate, Choices};

fuzz_target!(|input: &[u8]| {
    let Some((&flags, choices)) = input.split_first() else { return };
    let seed = choices.iter().fold(flags as u64, |h, &b| h.wrapping_mul(31).wrapping_add(b as u64));
    let case = generate(&mut Choices::new(choices, seed), flags & 1 != 0);
    if let Err(e) = check(&case) {
        panic!("{e}");
    }
});
