//! The process's allocator: blocks of 2 MiB and more are mappings of their own, aligned to
//! 2 MiB and backed by transparent huge pages (`madvise(MADV_HUGEPAGE)`); smaller ones come
//! from the system allocator.
//!
//! The load's big buffers (the dictionary's tables, arenas and keys, tuple logs, sort
//! buffers) are each written once through and the dictionary's read at random: with 4 KiB
//! pages that is a page fault per 4 KiB and a TLB miss on most lookups (a bsbm-x10 load took
//! 650k page faults). Where the kernel's policy is `madvise`, the usual default, nothing else
//! asks for huge pages; with the advice a fault maps 2 MiB at once. A growing block moves its
//! pages to the new place (`mremap`) instead of copying them. Resident memory is the same: a
//! block is mapped to its size rounded up to 4 KiB, and only the pages written are backed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;

const PAGE: usize = 4096;
const HUGE_PAGE: usize = 2 << 20;

pub struct HugePageAlloc;

fn is_huge(size: usize, align: usize) -> bool {
    size >= HUGE_PAGE && align <= HUGE_PAGE
}

fn mapped_len(size: usize) -> usize {
    size.next_multiple_of(PAGE)
}

/// A fresh zeroed mapping of `size` bytes starting on a 2 MiB boundary, advised for huge
/// pages (the advice fails harmlessly where THP is off); null when the mapping fails.
fn map(size: usize) -> *mut u8 {
    let len = mapped_len(size);
    let span = len + HUGE_PAGE;
    // SAFETY: a new private anonymous mapping; the parts outside [start, start + len) are
    // unmapped at once, and nothing else refers to them.
    unsafe {
        let p = libc::mmap(
            ptr::null_mut(),
            span,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return ptr::null_mut();
        }
        let p = p as usize;
        let start = p.next_multiple_of(HUGE_PAGE);
        if start > p {
            libc::munmap(p as *mut libc::c_void, start - p);
        }
        let end = start + len;
        if p + span > end {
            libc::munmap(end as *mut libc::c_void, p + span - end);
        }
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        start as *mut u8
    }
}

/// Grows the mapping at `p` from `old` to `new` bytes: in place when the addresses after it
/// are free, else by moving its pages into a fresh aligned mapping.
///
/// # Safety
/// `p` is a mapping of `old` bytes made by [`map`].
unsafe fn grow(p: *mut u8, old: usize, new: usize) -> *mut u8 {
    let (old_len, new_len) = (mapped_len(old), mapped_len(new));
    // SAFETY: `p` is a mapping of `old_len` bytes (the caller's promise); `q` a fresh one of
    // at least `old_len`, whose first `old_len` bytes the moved pages replace.
    unsafe {
        if libc::mremap(p as *mut libc::c_void, old_len, new_len, 0) != libc::MAP_FAILED {
            libc::madvise(p as *mut libc::c_void, new_len, libc::MADV_HUGEPAGE);
            return p;
        }
        let q = map(new);
        if q.is_null() {
            return q;
        }
        let moved = libc::mremap(
            p as *mut libc::c_void,
            old_len,
            old_len,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            q as *mut libc::c_void,
        );
        if moved == libc::MAP_FAILED {
            ptr::copy_nonoverlapping(p, q, old);
            libc::munmap(p as *mut libc::c_void, old_len);
        }
        q
    }
}

// SAFETY: huge blocks (by the layout's size and alignment, which `dealloc` and `realloc` see
// again) are mappings of their own, aligned to 2 MiB >= their alignment; the rest is `System`'s.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if is_huge(layout.size(), layout.align()) {
            return map(layout.size());
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if is_huge(layout.size(), layout.align()) {
            return map(layout.size()); // anonymous mappings are zeroed
        }
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if is_huge(layout.size(), layout.align()) {
            unsafe { libc::munmap(p as *mut libc::c_void, mapped_len(layout.size())) };
            return;
        }
        unsafe { System.dealloc(p, layout) }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (old_size, align) = (layout.size(), layout.align());
        // SAFETY: `p` was allocated with `layout`: a mapping when huge, `System`'s otherwise;
        // the new block is what `is_huge(new_size, align)` says.
        unsafe {
            match (is_huge(old_size, align), is_huge(new_size, align)) {
                (false, false) => System.realloc(p, layout, new_size),
                (true, true) if mapped_len(new_size) <= mapped_len(old_size) => {
                    let (keep, had) = (mapped_len(new_size), mapped_len(old_size));
                    if keep < had {
                        libc::munmap(p.add(keep) as *mut libc::c_void, had - keep);
                    }
                    p
                }
                (true, true) => grow(p, old_size, new_size),
                (false, true) => {
                    let q = map(new_size);
                    if !q.is_null() {
                        ptr::copy_nonoverlapping(p, q, old_size);
                        System.dealloc(p, layout);
                    }
                    q
                }
                (true, false) => {
                    let q = System.alloc(Layout::from_size_align_unchecked(new_size, align));
                    if !q.is_null() {
                        ptr::copy_nonoverlapping(p, q, new_size);
                        libc::munmap(p as *mut libc::c_void, mapped_len(old_size));
                    }
                    q
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_bytes_across_every_size_class() {
        let a = HugePageAlloc;
        let sizes = [100, HUGE_PAGE - 1, HUGE_PAGE, 3 * HUGE_PAGE + 5, 64 << 20, 5000, HUGE_PAGE + PAGE];
        let layout = Layout::from_size_align(sizes[0], 8).unwrap();
        // SAFETY: each block is used within its current size and freed with its layout.
        unsafe {
            let mut p = a.alloc(layout);
            let mut size = sizes[0];
            for (k, b) in std::slice::from_raw_parts_mut(p, size).iter_mut().enumerate() {
                *b = (k % 251) as u8;
            }
            for &next in &sizes[1..] {
                p = a.realloc(p, Layout::from_size_align(size, 8).unwrap(), next);
                assert!(!p.is_null());
                if is_huge(next, 8) {
                    assert_eq!(p as usize % HUGE_PAGE, 0, "a huge block starts on a 2 MiB boundary");
                }
                let kept = size.min(next);
                let data = std::slice::from_raw_parts_mut(p, next);
                assert!(data[..kept].iter().enumerate().all(|(k, &b)| b == (k % 251) as u8), "{size} -> {next}");
                for (k, b) in data.iter_mut().enumerate().skip(kept) {
                    *b = (k % 251) as u8;
                }
                size = next;
            }
            a.dealloc(p, Layout::from_size_align(size, 8).unwrap());
            let z = Layout::from_size_align(8 << 20, 64).unwrap();
            let q = a.alloc_zeroed(z);
            assert!(std::slice::from_raw_parts(q, z.size()).iter().all(|&b| b == 0));
            a.dealloc(q, z);
        }
    }
}
