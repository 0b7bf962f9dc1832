//! Compressed input: detection by magic bytes and the decompression dispatch
//! (rdf_input::detect, open_decompressed, decompress).
//!
//! Input: byte 0 = bits 0-1 and 4: codec (none, gzip, bzip2, zstd, xz, lzma; index modulo 6),
//! bit 2: round-trip mode, bit 3 (raw mode): put the codec's magic bytes in front of the rest.
//! - Raw mode: the rest (after the magic) is a file. detect() names the codec of its magic
//!   bytes, whatever the content; reading it through open_decompressed, and through every
//!   codec's decoder, ends in data or an error, never a panic or a hang (libFuzzer's
//!   -timeout catches hangs); as bzip2, the loader's decoder agrees with libbzip2's.
//! - Round-trip mode: byte 1 = members (1-3), bytes 2-3 = where to cut (u16), byte 4 bit 0
//!   = cut; the rest is split into that many members, each compressed on its own and
//!   concatenated (as `cat a.gz b.gz`, or pbzip2/zstd -T/xz output; .lzma has one stream
//!   only, so one member). Decompressing gives back
//!   exactly all members' bytes; a copy cut short inside its last member is an error, never
//!   silently shorter data.
#![no_main]

use std::io::{Cursor, Read, Write};
use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rdf_input::{decompress, detect, open_decompressed, Compression};

/// Decompressed bytes read per run at most: a few KiB of zstd can claim gigabytes.
const READ_LIMIT: u64 = 4 << 20;

const CODECS: [Compression; 6] =
    [Compression::None, Compression::Gzip, Compression::Bzip2, Compression::Zstd, Compression::Xz, Compression::Lzma];

fn magic(c: Compression) -> &'static [u8] {
    match c {
        Compression::None => b"",
        Compression::Gzip => &[0x1f, 0x8b],
        Compression::Bzip2 => b"BZh",
        Compression::Zstd => &[0x28, 0xb5, 0x2f, 0xfd],
        Compression::Xz => &[0xfd, b'7', b'z', b'X', b'Z', 0],
        // .lzma has no magic: a typical header (lc=3 lp=0 pb=2, 8 MiB dictionary, size unknown).
        Compression::Lzma => &[0x5d, 0, 0, 0x80, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
    }
}

/// The codec a file's first bytes name, as the formats define them; .lzma by the header
/// checks of liblzma's own format detection (see lzma_alone_decoder: properties, dictionary
/// size 2^n or 2^n + 2^(n-1), uncompressed size unknown or under 256 GiB).
fn codec_of(file: &[u8]) -> Compression {
    if let Some(c) = CODECS[1..5].iter().copied().find(|&c| file.starts_with(magic(c))) {
        return c;
    }
    if file.len() >= 13 && file[0] < 225 {
        let dict = u32::from_le_bytes(file[1..5].try_into().expect("4 bytes"));
        let size = u64::from_le_bytes(file[5..13].try_into().expect("8 bytes"));
        let dict_ok = dict == u32::MAX || (0..32).any(|n| dict == 1 << n || n > 0 && dict == (1 << n) + (1 << (n - 1)));
        if dict_ok && (size == u64::MAX || size < 1 << 38) {
            return Compression::Lzma;
        }
    }
    Compression::None
}

fn compress(c: Compression, data: &[u8]) -> Vec<u8> {
    match c {
        Compression::None => data.to_vec(),
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).expect("gzip");
            e.finish().expect("gzip")
        }
        Compression::Bzip2 => {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            e.write_all(data).expect("bzip2");
            e.finish().expect("bzip2")
        }
        Compression::Zstd => zstd::encode_all(data, 1).expect("zstd"),
        Compression::Xz => {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 1);
            e.write_all(data).expect("xz");
            e.finish().expect("xz")
        }
        Compression::Lzma => {
            let opts = liblzma::stream::LzmaOptions::new_preset(1).expect("lzma preset");
            let stream = liblzma::stream::Stream::new_lzma_encoder(&opts).expect("lzma encoder");
            let mut e = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
            e.write_all(data).expect("lzma");
            e.finish().expect("lzma")
        }
    }
}

/// Reads at most READ_LIMIT decompressed bytes: the data, or the first error.
fn read_decompressed(compressed: Vec<u8>, c: Compression) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    decompress(Cursor::new(compressed), c)?.take(READ_LIMIT).read_to_end(&mut out)?;
    Ok(out)
}

/// bzip2 goes through the loader's own block decoder (rdf_input's bzip2_block), which hands
/// what it does not handle to libbzip2: the same bytes as libbzip2 alone, or an error where
/// libbzip2 has one. (Where libbzip2 stopped at READ_LIMIT, an error the loader found in the
/// same block, whose CRC libbzip2 had not reached yet, is no difference.)
fn same_as_libbzip2(file: &[u8]) {
    if file.is_empty() {
        return; // no magic, so never bzip2 (the loader's reader gives no bytes, libbzip2 an error)
    }
    let ours = read_decompressed(file.to_vec(), Compression::Bzip2);
    let mut out = Vec::new();
    let theirs = bzip2::read::MultiBzDecoder::new(file).take(READ_LIMIT).read_to_end(&mut out).map(|_| out);
    match (ours, theirs) {
        (Ok(a), Ok(b)) => assert!(a == b, "bzip2: {} bytes decoded, libbzip2 {}", a.len(), b.len()),
        (Err(_), Err(_)) => {}
        (Err(_), Ok(b)) if b.len() as u64 == READ_LIMIT => {}
        (a, b) => {
            panic!("bzip2: the loader's decoder gave {:?}, libbzip2 {:?}", a.map(|v| v.len()), b.map(|v| v.len()))
        }
    }
}

fn scratch_file() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("rdf-bulkload-fuzz-decompress-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        // No extension: detect() sniffs the syntax from the decompressed content too.
        dir.join("input")
    })
}

fuzz_target!(|input: &[u8]| {
    let Some((&flags, rest)) = input.split_first() else { return };
    let codec = CODECS[usize::from((flags & 3) | (flags >> 2 & 4)) % CODECS.len()];
    if flags & 4 == 0 {
        let mut file = Vec::new();
        if flags & 8 != 0 {
            file.extend_from_slice(magic(codec));
        }
        file.extend_from_slice(rest);
        let path = scratch_file();
        std::fs::write(path, &file).expect("write the input file");
        let detected = match detect(path) {
            Ok(f) => f,
            // Sniffing the syntax reads the start through the decoder, which may fail.
            Err(e) => {
                assert!(codec_of(&file) != Compression::None, "detect failed on plain bytes: {e}");
                return;
            }
        };
        assert_eq!(detected.compression, codec_of(&file), "compression is decided by the magic bytes");
        assert_eq!(detected.size, file.len() as u64);
        if let Ok(r) = open_decompressed(path, detected.compression) {
            let _ = r.take(READ_LIMIT).read_to_end(&mut Vec::new());
        }
        for c in CODECS {
            let _ = read_decompressed(file.clone(), c);
        }
        same_as_libbzip2(&file);
        return;
    }

    let Some(&[members, cut_hi, cut_lo, cut_flags]) = rest.get(..4).map(|h| <&[u8; 4]>::try_from(h).expect("4 bytes"))
    else {
        return;
    };
    let body = &rest[4..];
    let members = if codec == Compression::Lzma { 1 } else { 1 + usize::from(members % 3) };
    let parts: Vec<&[u8]> =
        (0..members).map(|i| &body[body.len() * i / members..body.len() * (i + 1) / members]).collect();
    let mut stream = Vec::new();
    let mut last_start = 0;
    for part in &parts {
        last_start = stream.len();
        stream.extend(compress(codec, part));
    }
    let back = read_decompressed(stream.clone(), codec).unwrap_or_else(|e| panic!("{codec:?}: {members} members: {e}"));
    assert!(back == body, "{codec:?}: {members} members decompress to other bytes");

    let last_len = stream.len() - last_start;
    if cut_flags & 1 != 0 && codec != Compression::None && last_len >= 2 {
        let cut = last_start + 1 + usize::from(u16::from_be_bytes([cut_hi, cut_lo])) % (last_len - 1);
        stream.truncate(cut);
        if let Ok(short) = read_decompressed(stream, codec) {
            panic!(
                "{codec:?}: cut at {cut} of {} bytes, read {} bytes without an error",
                last_start + last_len,
                short.len()
            );
        }
    }
});
