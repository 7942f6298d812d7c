//! Page-aligned I/O buffers, as O_DIRECT requires.
//!
//! Large I/O buffers can also live in transparent huge pages (`AlignedBuf::for_io`): for a
//! 1 MiB direct read or write the kernel pins the user buffer and copies into or out of it,
//! and over 4 KiB pages that costs a page-table walk and a pin per page, while over a huge
//! page it is one. On this kind of VM fio's own 1 MiB QD1 figures on zram and on a loop
//! device over RAM rise by 25-35 % with huge-page buffers (`--mem=shmhuge` against the
//! default `malloc`), and vary less from run to run, since where 4 KiB pages land
//! physically differs from one process to the next. That cost is the tool's, not the
//! device's, so the workload engine keeps it out of its figures where the kernel allows.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::OnceLock;

/// Alignment of every buffer: one page, enough for any logical sector size.
pub const BUFFER_ALIGN: usize = 4096;

/// A zero-initialised buffer aligned to `BUFFER_ALIGN`: on the heap, or (`for_io`) in its
/// own mapping advised to use transparent huge pages.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    /// Length of the anonymous mapping that holds the buffer; 0 for a heap buffer.
    mapped: usize,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only hands out &[u8].
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (`len` may be 0).
    pub fn new(len: usize) -> Self {
        if len == 0 {
            return AlignedBuf {
                ptr: NonNull::dangling(),
                len: 0,
                mapped: 0,
            };
        }
        let layout = Self::layout(len);
        // SAFETY: layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf {
            ptr,
            len,
            mapped: 0,
        }
    }

    /// A buffer for timed I/O: buffers of at least half a huge page are placed in huge
    /// pages (rounded up to whole ones, aligned to one) where the kernel has transparent
    /// huge pages enabled, so the kernel pins and copies them whole (see the module
    /// documentation); smaller ones, or where it has none, are `new(len)`. Every page is
    /// touched here, so the first timed I/O does not pay for the faults.
    pub fn for_io(len: usize) -> Self {
        match huge_page_size() {
            Some(huge) if len >= huge / 2 => {
                Self::huge(len, huge).unwrap_or_else(|| Self::new(len))
            }
            _ => Self::new(len),
        }
    }

    /// `len` bytes in a mapping of whole huge pages aligned to `huge`, advised
    /// MADV_HUGEPAGE; None when the mapping fails.
    fn huge(len: usize, huge: usize) -> Option<Self> {
        let size = len.checked_next_multiple_of(huge)?;
        let ptr = crate::sys::map_aligned(size, huge)?;
        let mut buf = AlignedBuf {
            ptr,
            len,
            mapped: size,
        };
        // Fault every page in now (the mapping is zeroed already; this only touches it).
        buf.fill(0);
        Some(buf)
    }

    /// Whether the buffer lives in its own huge-page mapping (`for_io` on a large buffer).
    #[cfg(test)]
    fn is_huge_mapped(&self) -> bool {
        self.mapped > 0
    }

    fn layout(len: usize) -> Layout {
        // BUFFER_ALIGN is a power of two and len is far below isize::MAX for any I/O size.
        Layout::from_size_align(len, BUFFER_ALIGN).unwrap_or_else(|_| {
            panic!("buffer of {len} bytes cannot be allocated with {BUFFER_ALIGN}-byte alignment")
        })
    }

    /// Fill every byte with `value`.
    pub fn fill(&mut self, value: u8) {
        self.as_mut().fill(value);
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr points to len initialised bytes owned by self (or is dangling with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl AsMut<[u8]> for AlignedBuf {
    fn as_mut(&mut self) -> &mut [u8] {
        self
    }
}

/// The kernel's transparent huge page size, when transparent huge pages can be had (the
/// sysfs knob exists and is not `[never]`); read once.
fn huge_page_size() -> Option<usize> {
    static SIZE: OnceLock<Option<usize>> = OnceLock::new();
    *SIZE.get_or_init(|| {
        let dir = std::path::Path::new("/sys/kernel/mm/transparent_hugepage");
        let enabled = std::fs::read_to_string(dir.join("enabled")).ok()?;
        if enabled.contains("[never]") {
            return None;
        }
        let size: usize = std::fs::read_to_string(dir.join("hpage_pmd_size"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        (size.is_power_of_two() && size >= BUFFER_ALIGN).then_some(size)
    })
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.mapped > 0 {
            // SAFETY: [ptr, ptr + mapped) is the mapping made in `huge`, owned by self, and
            // no slice of it outlives self.
            unsafe { crate::sys::unmap(self.ptr, self.mapped) };
        } else if self.len > 0 {
            // SAFETY: allocated in `new` with exactly this layout.
            unsafe { dealloc(self.ptr.as_ptr(), Self::layout(self.len)) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_page_aligned_and_zeroed() {
        for len in [0usize, 1, 512, 4096, 1 << 20] {
            let b = AlignedBuf::new(len);
            assert_eq!(b.len(), len);
            if len > 0 {
                assert_eq!(b.as_ptr() as usize % BUFFER_ALIGN, 0);
                assert!(b.iter().all(|&x| x == 0));
            }
        }
    }

    /// The kB of `AnonHugePages` of this process's mapping that spans exactly
    /// [lo, hi); None when no mapping does (under an emulator such as qemu-user the
    /// guest's addresses are not the host's).
    fn anon_huge_kb_of(lo: usize, hi: usize) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let want = format!("{lo:x}-{hi:x} ");
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&want)).skip(1);
        lines
            .find_map(|l| l.strip_prefix("AnonHugePages:"))
            .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse().ok())
    }

    #[test]
    fn io_buffers_of_a_mib_get_huge_pages_where_the_kernel_has_them() {
        let small = AlignedBuf::for_io(64 << 10);
        assert!(!small.is_huge_mapped(), "64 KiB stays on the heap");
        let mut b = AlignedBuf::for_io(3 << 20);
        assert_eq!(b.len(), 3 << 20);
        assert!(b.iter().all(|&x| x == 0));
        b[(3 << 20) - 1] = 7;
        assert_eq!(b[(3 << 20) - 1], 7);
        let Some(huge) = huge_page_size() else {
            assert!(!b.is_huge_mapped());
            eprintln!("no transparent huge pages here: heap buffers");
            return;
        };
        assert!(b.is_huge_mapped());
        assert_eq!(b.as_ptr() as usize % huge, 0, "aligned to a huge page");
        // Madvised regions take a huge page at the first fault, compacting memory for one
        // when the defrag policy allows it for them (this machine's default, "madvise").
        let defrag = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/defrag")
            .unwrap_or_default();
        // CI runs the other architectures under qemu-user, whose /proc/self/smaps is its
        // own rendering (guest addresses, no huge-page counts): check natively only.
        let native = cfg!(target_arch = "x86_64");
        let lo = b.as_ptr() as usize;
        match anon_huge_kb_of(lo, lo + b.mapped) {
            Some(kb) if native && !defrag.contains("[never]") && !defrag.contains("[defer]") => {
                assert_eq!(
                    kb, 4096,
                    "3 MiB rounds up to two huge pages, both faulted in"
                )
            }
            Some(kb) => eprintln!("defrag policy {defrag:?}: {kb} kB in huge pages"),
            None => eprintln!("the buffer's mapping is not in smaps (emulated?)"),
        }
        drop(b);
    }

    #[test]
    fn unaligned_buffers_give_the_same_stamps() {
        let s = crate::pattern::Stamper::new(5);
        let mut aligned = AlignedBuf::new(crate::pattern::UNIT);
        s.fill(&mut aligned, 4096);
        let mut raw = vec![0u8; crate::pattern::UNIT + 1];
        s.fill(&mut raw[1..], 4096);
        assert_eq!(&raw[1..], &aligned[..]);
        assert_eq!(
            s.classify_unit(&raw[1..], 4096),
            crate::pattern::UnitClass::Good
        );
        assert_eq!(
            s.classify_unit(&aligned, 4096),
            crate::pattern::UnitClass::Good
        );
    }
}
