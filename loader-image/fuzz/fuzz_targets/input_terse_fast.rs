//! The Turtle/TriG fast path (rdf_input's fastterse.rs) against oxttl
//! (rdf_input::terse_check::check_fast): any bytes, cut into chunks of a size the input
//! picks, parsed with the fast path on (its statements taken through a model of the
//! pipeline's term checks) give exactly what the parse without it gives, in skip and in
//! strict mode: the same quads in the same order (blank nodes included), the same rejects
//! and errors at the same positions, the same prefix declarations.
//!
//! Input: byte 0 = bit 0: TriG (else Turtle), bit 1: with a base IRI, bits 2..8: chunk size
//! (1 << (bits % 12) bytes); the rest is the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdf_input::terse_check::check_fast;

fuzz_target!(|input: &[u8]| {
    let Some((&flags, data)) = input.split_first() else { return };
    let base = (flags & 2 != 0).then_some("http://example.org/base/doc");
    let target = 1usize << ((flags >> 2) % 12);
    if let Err(e) = check_fast(data, flags & 1 != 0, base, target) {
        panic!("{e}");
    }
});
