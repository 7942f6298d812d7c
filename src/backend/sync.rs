//! The sync backend: pread/pwrite on a file descriptor (opened with O_DIRECT by the target
//! module where the test reads the medium).

use super::{monotonic_ns, Backend};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Synchronous positional I/O on an open block device or regular file.
pub struct SyncBackend {
    file: File,
    size: u64,
    sector: u32,
    is_block: bool,
    /// The writer's lock on the file this backend writes (`device::open`): held while
    /// the backend lives, so no other flashscope writes the same bytes meanwhile.
    lock: Option<std::sync::Arc<File>>,
}

impl SyncBackend {
    /// Wrap an open file of `size` bytes whose I/O granularity is `sector` bytes.
    pub fn new(file: File, size: u64, sector: u32, is_block: bool) -> Self {
        SyncBackend {
            file,
            size,
            sector,
            is_block,
            lock: None,
        }
    }

    /// Keep `lock` (an open file with the writer's `flock`) as long as this backend.
    pub fn holding(mut self, lock: Option<std::sync::Arc<File>>) -> Self {
        self.lock = lock;
        self
    }

    pub fn file(&self) -> &File {
        &self.file
    }
}

impl Backend for SyncBackend {
    fn size_bytes(&self) -> u64 {
        self.size
    }
    fn logical_sector_bytes(&self) -> u32 {
        self.sector
    }
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.file.write_all_at(buf, offset)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
    fn discard(&mut self, offset: u64, len: u64) -> io::Result<()> {
        if self.is_block {
            crate::sys::block_discard(&self.file, offset, len)
        } else {
            crate::sys::punch_hole(&self.file, offset, len)
        }
    }
    fn clock_ns(&self) -> u64 {
        monotonic_ns()
    }
    fn idle(&mut self, ns: u64) {
        std::thread::sleep(std::time::Duration::from_nanos(ns));
    }
    fn fast_queue(
        &self,
        depth: usize,
        buffers: usize,
        buffer_len: usize,
    ) -> Option<Box<dyn super::queue::IoQueue>> {
        let file = self.file.try_clone().ok()?;
        if depth > 1 {
            if let Ok(q) = super::uring::UringQueue::new(
                file.try_clone().ok()?,
                depth,
                buffers,
                buffer_len,
                !self.is_block,
            ) {
                return Some(Box::new(q));
            }
        }
        let dev = SyncBackend::new(file, self.size, self.sector, self.is_block);
        Some(Box::new(super::queue::BackendQueue::new(
            dev, 1, buffers, buffer_len,
        )))
    }
}
