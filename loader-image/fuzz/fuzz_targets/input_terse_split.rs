//! The parallel Turtle/TriG split against the sequential parse (rdf_input::terse_check::
//! check_split): any bytes, cut by the splitter into chunks of a size the input picks, each
//! chunk parsed on its own with the state the splitter gave it, give exactly what one
//! sequential parse gives, in skip and in strict mode: the same quads in the same order
//! (blank nodes included), the same rejects and errors at the same positions, the same
//! prefix declarations.
//!
//! Input: byte 0 = bit 0: TriG (else Turtle), bit 1: with a base IRI, bits 2..8: chunk size
//! (1 << (bits % 12) bytes); the rest is the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdf_input::terse_check::check_split;

fuzz_target!(|input: &[u8]| {
    let Some((&flags, data)) = input.split_first() else { return };
    let base = (flags & 2 != 0).then_some("http://example.org/base/doc");
    let target = 1usize << ((flags >> 2) % 12);
    if let Err(e) = check_split(data, flags & 1 != 0, base, target) {
        panic!("{e}");
    }
});
