//! The null backend: no I/O at all, so a run on it measures the harness itself (as fio's
//! null engine does).

use super::{monotonic_ns, Backend};
use std::io;

/// A device of a given size that transfers nothing and returns at once.
pub struct NullBackend {
    size: u64,
    sector: u32,
}

impl NullBackend {
    pub fn new(size: u64, sector: u32) -> Self {
        NullBackend { size, sector }
    }
}

impl Backend for NullBackend {
    fn size_bytes(&self) -> u64 {
        self.size
    }
    fn logical_sector_bytes(&self) -> u32 {
        self.sector
    }
    fn read_at(&mut self, _buf: &mut [u8], _offset: u64) -> io::Result<()> {
        Ok(())
    }
    fn write_at(&mut self, _buf: &[u8], _offset: u64) -> io::Result<()> {
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn clock_ns(&self) -> u64 {
        monotonic_ns()
    }
    fn idle(&mut self, ns: u64) {
        std::thread::sleep(std::time::Duration::from_nanos(ns));
    }
}
