//! Sparse data store: only written data costs memory, so a 1 TiB simulated card costs
//! what was written to it. Chunks that hold only zeros are not kept (reads give zeros).

use std::collections::HashMap;

const CHUNK: usize = 4096;

/// One chunk of zeros to compare against (slice equality is a memcmp, fast even in debug
/// builds, which GiB-scale simulated writes need).
static ZEROS: [u8; 1 << 16] = [0u8; 1 << 16];

fn is_zero(data: &[u8]) -> bool {
    data.chunks(ZEROS.len()).all(|c| c == &ZEROS[..c.len()])
}

/// Bytes at physical offsets, kept in 4 KiB chunks.
#[derive(Default)]
pub struct SparseStore {
    chunks: HashMap<u64, Box<[u8]>>,
}

impl SparseStore {
    pub fn new() -> Self {
        SparseStore::default()
    }

    /// Bytes of data held (excluding bookkeeping).
    pub fn resident_bytes(&self) -> u64 {
        (self.chunks.len() * CHUNK) as u64
    }

    /// Copy `buf.len()` bytes from physical offset `pos`; never-written bytes read as zero.
    pub fn read(&self, mut pos: u64, buf: &mut [u8]) {
        let mut done = 0;
        while done < buf.len() {
            let idx = pos / CHUNK as u64;
            let within = (pos % CHUNK as u64) as usize;
            let n = (CHUNK - within).min(buf.len() - done);
            match self.chunks.get(&idx) {
                Some(c) => buf[done..done + n].copy_from_slice(&c[within..within + n]),
                None => buf[done..done + n].fill(0),
            }
            done += n;
            pos += n as u64;
        }
    }

    /// Store `data` at physical offset `pos`.
    pub fn write(&mut self, mut pos: u64, data: &[u8]) {
        if self.chunks.is_empty() && is_zero(data) {
            return; // zeros over never-written space: nothing to keep
        }
        let mut done = 0;
        while done < data.len() {
            let idx = pos / CHUNK as u64;
            let within = (pos % CHUNK as u64) as usize;
            let n = (CHUNK - within).min(data.len() - done);
            let part = &data[done..done + n];
            let zero = is_zero(part);
            if n == CHUNK && zero {
                self.chunks.remove(&idx);
            } else if let Some(c) = self.chunks.get_mut(&idx) {
                c[within..within + n].copy_from_slice(part);
                if zero && is_zero(c) {
                    self.chunks.remove(&idx);
                }
            } else if !zero {
                let mut c = vec![0u8; CHUNK].into_boxed_slice();
                c[within..within + n].copy_from_slice(part);
                self.chunks.insert(idx, c);
            }
            done += n;
            pos += n as u64;
        }
    }

    /// Forget `[pos, pos+len)` (an erase): it reads as zeros afterwards.
    pub fn erase(&mut self, pos: u64, len: u64) {
        let end = pos.saturating_add(len);
        let mut p = pos;
        while p < end {
            let idx = p / CHUNK as u64;
            let within = p % CHUNK as u64;
            let n = (CHUNK as u64 - within).min(end - p);
            if n == CHUNK as u64 {
                self.chunks.remove(&idx);
            } else if self.chunks.contains_key(&idx) {
                let zeros = vec![0u8; n as usize];
                self.write(p, &zeros);
            }
            p += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_round_trip_and_zero_chunks_free_memory() {
        let mut s = SparseStore::new();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8 + 1).collect();
        s.write(1 << 40, &data);
        let mut back = vec![0u8; data.len()];
        s.read(1 << 40, &mut back);
        assert_eq!(back, data);
        assert!(s.resident_bytes() <= 4 * 4096);
        s.write(1 << 40, &vec![0u8; 12288]);
        s.erase((1 << 40) + 12288, 4096);
        assert_eq!(s.resident_bytes(), 0);
        let mut unwritten = vec![7u8; 100];
        s.read(12345, &mut unwritten);
        assert!(unwritten.iter().all(|&b| b == 0));
    }

    #[test]
    fn partial_chunk_writes_keep_neighbours() {
        let mut s = SparseStore::new();
        s.write(0, &[1u8; 4096]);
        s.write(100, &[2u8; 10]);
        let mut b = [0u8; 4096];
        s.read(0, &mut b);
        assert_eq!(b[99], 1);
        assert_eq!(b[100], 2);
        assert_eq!(b[110], 1);
    }
}
