//! Reading input files: digest of the raw bytes as they pass, decompression, read-ahead on
//! a thread of its own.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::sync::{Arc, Mutex};

use md5::{Digest, Md5};
use rdf_input::InputFile;

/// MD5 of a file's raw (compressed) bytes, filled in once it has been read to the end.
#[derive(Clone, Debug, Default)]
pub(crate) struct RawDigest {
    pub md5: Option<String>,
}

/// Counts and hashes what passes through; publishes the digest at end of file.
struct DigestReader<R> {
    inner: R,
    md5: Md5,
    out: Arc<Mutex<RawDigest>>,
    done: bool,
    progress: Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for DigestReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !self.done && !buf.is_empty() {
            self.done = true;
            let digest = self.md5.clone().finalize();
            *self.out.lock().expect("digest") = RawDigest { md5: Some(bulkload_storage::checkpoint::hex(&digest)) };
        }
        self.md5.update(&buf[..n]);
        self.progress.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Opens an input for reading decompressed bytes, digesting the raw bytes on the way;
/// formats that decode in parallel (bzip2) use up to `threads` cores.
pub(crate) fn open_input(
    f: &InputFile,
    digest: Arc<Mutex<RawDigest>>,
    progress: Arc<std::sync::atomic::AtomicU64>,
    threads: usize,
) -> io::Result<Box<dyn Read + Send>> {
    let raw = DigestReader { inner: File::open(&f.path)?, md5: Md5::new(), out: digest, done: false, progress };
    rdf_input::decompress_threads(BufReader::with_capacity(1 << 20, raw), f.compression, threads)
}

/// Runs a reader on its own thread (decompression off the parsing thread), handing over
/// blocks through a bounded channel.
pub(crate) struct ReadAhead {
    rx: crossbeam_channel::Receiver<io::Result<Vec<u8>>>,
    cur: Vec<u8>,
    pos: usize,
    done: bool,
}

impl ReadAhead {
    pub(crate) fn spawn(mut inner: Box<dyn Read + Send>) -> ReadAhead {
        let (tx, rx) = crossbeam_channel::bounded(4);
        std::thread::Builder::new()
            .name("decompress".into())
            .spawn(move || loop {
                let mut block = vec![0u8; 1 << 20];
                let mut n = 0;
                let res = loop {
                    match inner.read(&mut block[n..]) {
                        Ok(0) => break Ok(()),
                        Ok(k) => {
                            n += k;
                            if n == block.len() {
                                break Ok(());
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                block.truncate(n);
                let end = n == 0;
                let send = match res {
                    Ok(()) => tx.send(Ok(block)),
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                if send.is_err() || end {
                    return;
                }
            })
            .expect("spawn decompression thread");
        ReadAhead { rx, cur: Vec::new(), pos: 0, done: false }
    }
}

impl Read for ReadAhead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.cur.len() {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok(block)) => {
                    if block.is_empty() {
                        self.done = true;
                    }
                    self.cur = block;
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let n = buf.len().min(self.cur.len() - self.pos);
        buf[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
