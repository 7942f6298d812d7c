//! The simulated flash device: a model of an SD card, eMMC, USB stick, SPI-NAND or SSD on
//! a virtual clock, deterministic for a seed.
//!
//! The model (also described in docs/simulator.md so users can learn from it):
//! - read: `cmd + len / read_bw`, plus `page_cost` when the request touches one page more
//!   than its length needs (it straddles a page boundary) and `erase_cost` when it
//!   straddles an erase-block boundary — the step that `align` detects;
//! - write: `cmd` plus programming whole pages (`ceil` to the page) at `write_bw`; an erase
//!   block is written fast while it is open and written in order. Writing a block that is
//!   not open opens it, closing the least recently used one when `open_au` are open, at
//!   the cost of copying the closed block's unwritten remainder and erasing it (garbage
//!   collection: the cliff `open-au` finds). Skipping ahead copies the gap; going back
//!   inside a block copies the whole block unless it is one of `open_au_random` blocks in
//!   random mode. A write at a block's start begins that block afresh;
//! - the first `fat_au` erase blocks are page-mapped: no page rounding, no copies;
//! - with `slc` > 0, the first `slc` bytes of sustained writing go at `write_bw`, then at
//!   `native_bw`; the cache drains at `native_bw` while the device is idle;
//! - a fake card (`real` < `size`) aliases (`wrap`), loses (`limbo`) or alternates
//!   (`chain`) data beyond `real`;
//! - with `cache` > 0, a volatile controller write cache keeps the last `cache` bytes
//!   written (by logical address, in 4 KiB chunks, oldest evicted first) and answers reads
//!   of them, at the same speed as the medium (or, with `cache_bw`, at that bandwidth with
//!   no command time, as a controller answering from its RAM): a fake card then looks
//!   honest to a probe that reads back too soon; writing more than the cache holds pushes
//!   the data out;
//! - with `read_cache` > 0, a controller read cache keeps the sectors of the last
//!   `read_cache` bytes read (least recently used evicted first): a read wholly in it is a
//!   hit and costs `read_hit` plus the transfer, with no command time and no boundary cost;
//!   a read it misses costs the full time and loads its sectors, and with `prefetch` the
//!   `prefetch` bytes that follow (read-ahead). A repeat read of a recent position is then
//!   fast and a first read slow, whatever the geometry;
//! - with `wake` > 0, the first operation after the device sat idle for `wake_after` or
//!   more takes `wake` longer (a controller leaving its power-saving state);
//! - with `cmd_queue` > 1, when the host has several requests outstanding (a queue depth
//!   above 1) each pays `cmd / min(outstanding, cmd_queue)` of command time: the card
//!   overlaps that many commands (an A1/A2 card's command queue); at depth 1 nothing
//!   changes;
//! - with `random_area` > 0, a write shorter than a page that does not continue an open
//!   block in order goes to a page-mapped area instead: `len / write_bw`, no page rounding,
//!   no block copies. The area holds `random_area` bytes; it merges them into their blocks
//!   at `native_bw` while the device is idle, and when it is full each write first waits
//!   for its own length to be merged (sustained small random writes run at the rate the
//!   merging allows);
//! - with a host path (`host_timing`, or `usb` with `uas`), no request's data crosses the
//!   bus faster than the path's cap (`config::SimHost::cap`): a request whose rate on the
//!   card is higher takes `len / cap − len / rate` longer (every other cost stays), and
//!   USB adds its command and status phases to every command; a host
//!   that does not queue commands (`host_cmdq=0`; by default SD hosts and bulk-only USB)
//!   never lets `cmd_queue` overlap any. The path presents what a kernel would: debugfs
//!   `ios`, `cmdq_en`, the USB link's speed, transport and driver;
//! - noise: every time is multiplied by `1 + noise × N(0,1)`, and with probability
//!   `outliers` an operation takes 0.5–10 ms longer (background garbage collection).
//!
//! Probes never see these parameters: only timings and data, exactly as on hardware.

pub mod config;
pub mod store;

pub use config::{FakeMode, Fault, SimConfig, PRESETS};

use crate::backend::Backend;
use rand::Rng;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use std::collections::{HashMap, VecDeque};
use std::io;
use store::SparseStore;

const CACHE_CHUNK: u64 = 4096;

/// The volatile write cache (`cache=SIZE`): logical 4 KiB chunks of the most recent writes.
#[derive(Default)]
struct WriteCache {
    data: SparseStore,
    /// Chunk index → sequence number of the write that last put it in the cache.
    latest: HashMap<u64, u64>,
    /// Writes in order: (sequence, offset, length).
    log: VecDeque<(u64, u64, u64)>,
    bytes: u64,
    seq: u64,
}

/// The controller read cache (`read_cache=SIZE`): logical sectors, least recently used
/// first out.
#[derive(Default)]
struct ReadCache {
    /// Sector index → the stamp of its latest use.
    latest: HashMap<u64, u64>,
    /// Uses in order (stale entries are skipped when evicting).
    order: VecDeque<(u64, u64)>,
    stamp: u64,
}

impl ReadCache {
    fn holds(&self, first: u64, last: u64) -> bool {
        (first..=last).all(|s| self.latest.contains_key(&s))
    }

    /// Mark sectors `first..=last` used, evicting beyond `capacity` sectors.
    fn touch(&mut self, first: u64, last: u64, capacity: u64) {
        for s in first..=last {
            self.stamp += 1;
            self.latest.insert(s, self.stamp);
            self.order.push_back((s, self.stamp));
        }
        while self.latest.len() as u64 > capacity {
            let Some((s, st)) = self.order.pop_front() else {
                break;
            };
            if self.latest.get(&s) == Some(&st) {
                self.latest.remove(&s);
            }
        }
        // Stale entries pile up when the same sectors are read over and over: compact.
        if self.order.len() as u64 > 4 * capacity.max(1024) {
            let latest = &self.latest;
            self.order.retain(|(s, st)| latest.get(s) == Some(st));
        }
    }
}

/// An erase block the controller keeps open for writing.
#[derive(Debug, Clone)]
struct OpenBlock {
    index: u64,
    /// Bytes written in order from the block's start.
    write_ptr: u64,
    /// Accepts random order without copying (one of `open_au_random`).
    random: bool,
}

/// The simulated device; see the module documentation for its timing model.
pub struct SimDevice {
    cfg: SimConfig,
    clock: u64,
    last_end: u64,
    rng: Pcg64,
    store: SparseStore,
    /// Open erase blocks, least recently used first.
    open: Vec<OpenBlock>,
    slc_fill: u64,
    ops: u64,
    cache: WriteCache,
    read_cache: ReadCache,
    app: AppState,
}

/// The state of an A1/A2 card's command queue and small-write area (`cmd_queue`,
/// `random_area`).
struct AppState {
    /// Requests the host has outstanding for the next read or write (1 = one at a time).
    outstanding: usize,
    /// Bytes in the page-mapped small-write area waiting to be merged.
    area_fill: u64,
}

const NS_PER_S: f64 = 1e9;

fn transfer_ns(bytes: u64, bw: u64) -> f64 {
    bytes as f64 * NS_PER_S / bw as f64
}

/// Units of `unit` a request touches beyond the minimum its length needs (0 or 1).
fn extra_units(offset: u64, len: u64, unit: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    let touched = (offset + len - 1) / unit - offset / unit + 1;
    touched - len.div_ceil(unit)
}

impl SimDevice {
    pub fn new(cfg: SimConfig) -> Self {
        let rng = Pcg64::seed_from_u64(cfg.seed);
        SimDevice {
            cfg,
            clock: 0,
            last_end: 0,
            rng,
            store: SparseStore::new(),
            open: Vec::new(),
            slc_fill: 0,
            ops: 0,
            cache: WriteCache::default(),
            read_cache: ReadCache::default(),
            app: AppState {
                outstanding: 1,
                area_fill: 0,
            },
        }
    }

    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    /// Bytes of written data the simulator holds in memory.
    pub fn resident_bytes(&self) -> u64 {
        self.store.resident_bytes()
    }

    /// Count an operation and fail when the device has vanished.
    fn begin_op(&mut self) -> io::Result<()> {
        self.ops += 1;
        for f in &self.cfg.faults {
            if let Fault::Vanish { ops } = *f {
                if self.ops > ops {
                    return Err(io::Error::from_raw_os_error(libc::ENODEV));
                }
            }
        }
        // Idle time since the last operation merges the small-write area, then drains the
        // write cache; a long one puts the controller to sleep, and this operation wakes it.
        let idle = self.clock.saturating_sub(self.last_end);
        if self.cfg.wake > 0 && (idle >= self.cfg.wake_after || self.ops == 1) {
            self.clock += self.cfg.wake;
        }
        let idle = self.merge_small_writes(idle);
        if idle > 0 && self.slc_fill > 0 {
            let drained = (idle as f64 * self.cfg.native_bw as f64 / NS_PER_S) as u64;
            self.slc_fill = self.slc_fill.saturating_sub(drained);
        }
        Ok(())
    }

    fn check_range(&self, offset: u64, len: u64) -> io::Result<()> {
        let sector = self.cfg.sector as u64;
        if offset % sector != 0 || len % sector != 0 {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        if offset
            .checked_add(len)
            .is_none_or(|end| end > self.cfg.size)
        {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "request beyond the end of the device",
            ));
        }
        for f in &self.cfg.faults {
            if let Fault::Eio {
                offset: fo,
                len: fl,
            } = *f
            {
                if offset < fo + fl && fo < offset + len {
                    return Err(io::Error::from_raw_os_error(libc::EIO));
                }
            }
        }
        Ok(())
    }

    /// Apply jitter and outliers to a modelled time and advance the clock by it.
    fn spend(&mut self, model_ns: f64) {
        let mut t = model_ns;
        if self.cfg.noise > 0.0 {
            // Box–Muller: one standard normal draw.
            let u1: f64 = self.rng.gen_range(f64::EPSILON..1.0);
            let u2: f64 = self.rng.gen();
            let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            t *= (1.0 + self.cfg.noise * z).max(0.2);
        }
        if self.cfg.outliers > 0.0 && self.rng.gen::<f64>() < self.cfg.outliers {
            let max = (self.cfg.outlier_max as f64).max(0.5e6 + 1.0);
            t += self.rng.gen_range(0.5e6..max);
        }
        self.clock += t.max(0.0).round() as u64;
        self.last_end = self.clock;
    }

    fn read_model_ns(&self, offset: u64, len: u64) -> f64 {
        let c = &self.cfg;
        c.cmd as f64
            + transfer_ns(len, c.read_bw) * self.drift_factor()
            + (extra_units(offset, len, c.page) * c.page_cost) as f64
            + (extra_units(offset, len, c.erase) * c.erase_cost) as f64
    }

    /// What `drift` has made of a read transfer's time by now (1 when steady): `1 + drift ×
    /// seconds of device time`, never below a tenth.
    fn drift_factor(&self) -> f64 {
        (1.0 + self.cfg.drift * self.clock as f64 / 1e9).max(0.1)
    }

    /// The time of a read through the read cache (when there is one): a hit when every
    /// sector is cached, else the medium's time; either way the sectors (and on a miss the
    /// read-ahead) become the most recently used.
    fn read_cached_ns(&mut self, offset: u64, len: u64, queue_saving: f64) -> f64 {
        let c = &self.cfg;
        if c.read_cache == 0 || len == 0 {
            return self.read_model_ns(offset, len) - queue_saving;
        }
        let sector = c.sector as u64;
        let capacity = c.read_cache.div_ceil(sector);
        let first = offset / sector;
        let last = (offset + len - 1) / sector;
        if self.read_cache.holds(first, last) {
            let t = c.read_hit as f64 + transfer_ns(len, c.read_bw) * self.drift_factor();
            self.read_cache.touch(first, last, capacity);
            return t;
        }
        let t = self.read_model_ns(offset, len) - queue_saving;
        let ahead = (offset + len + c.prefetch).min(c.size);
        let end = ahead.div_ceil(sector).max(last + 1) - 1;
        self.read_cache.touch(first, end, capacity);
        t
    }

    /// The current program bandwidth (cache speed until the SLC cache is full).
    fn program_bw(&self) -> u64 {
        if self.cfg.slc > 0 && self.slc_fill >= self.cfg.slc {
            self.cfg.native_bw
        } else {
            self.cfg.write_bw
        }
    }

    fn write_model_ns(&mut self, offset: u64, len: u64) -> f64 {
        if let Some(t) = self.small_write_ns(offset, len) {
            return self.cfg.cmd as f64 + t;
        }
        let erase = self.cfg.erase;
        let page = self.cfg.page;
        let mut t = self.cfg.cmd as f64;
        let mut pos = offset;
        let end = offset + len;
        while pos < end {
            let index = pos / erase;
            let within = pos % erase;
            let seg = (erase - within).min(end - pos);
            let bw = self.program_bw();
            if index < self.cfg.fat_au as u64 {
                t += transfer_ns(seg, bw);
            } else {
                let pages = (within + seg).div_ceil(page) - within / page;
                t += transfer_ns(pages * page, bw);
                t += self.open_block_cost(index, within, seg);
            }
            if self.cfg.slc > 0 {
                self.slc_fill = (self.slc_fill + seg).min(self.cfg.slc);
            }
            pos += seg;
        }
        t
    }

    /// Extra time for writing `[within, within+seg)` of erase block `index` given the
    /// open-block state (garbage collection, gap fills, read-modify-write).
    fn open_block_cost(&mut self, index: u64, within: u64, seg: u64) -> f64 {
        let erase = self.cfg.erase;
        let copy_bw = self.cfg.native_bw;
        let mut t = 0.0;
        let pos = match self.open.iter().position(|b| b.index == index) {
            Some(p) => p,
            None => {
                if self.open.len() >= self.cfg.open_au as usize {
                    let victim = self.open.remove(0);
                    t += transfer_ns(erase - victim.write_ptr.min(erase), copy_bw)
                        + self.cfg.erase_time as f64;
                }
                self.open.push(OpenBlock {
                    index,
                    write_ptr: 0,
                    random: false,
                });
                self.open.len() - 1
            }
        };
        let random_in_use = self.open.iter().filter(|b| b.random).count();
        let mut block = self.open.remove(pos);
        if within == 0 {
            block.write_ptr = 0; // a fresh start of the block: old contents are superseded
        }
        if within > block.write_ptr {
            t += transfer_ns(within - block.write_ptr, copy_bw);
        } else if within < block.write_ptr && !block.random {
            if random_in_use < self.cfg.open_au_random as usize {
                block.random = true;
            } else {
                t += transfer_ns(erase, copy_bw) + self.cfg.erase_time as f64;
            }
        }
        block.write_ptr = block.write_ptr.max(within + seg);
        if block.write_ptr < erase {
            self.open.push(block); // most recently used at the back
        }
        t
    }

    /// Command time a request saves when the card overlaps it with others queued behind
    /// it (`cmd_queue`); takes the host's outstanding count, which holds for one request.
    /// A host that sends one command at a time (`host_cmdq=0`, bulk-only USB, an SD host
    /// without command queueing) never lets the card overlap any.
    fn queue_saving_ns(&mut self) -> f64 {
        let outstanding = std::mem::replace(&mut self.app.outstanding, 1);
        if !self.cfg.host.queues(self.cfg.card) {
            return 0.0;
        }
        let overlap = outstanding.clamp(1, self.cfg.app.cmd_queue.max(1) as usize);
        self.cfg.cmd as f64 * (1.0 - 1.0 / overlap as f64)
    }

    /// A request's time through the host path (`host_timing`, `usb`): its data crosses
    /// the bus at the slower of the card's rate (`card_bw`, the one its modelled time
    /// used) and the path's cap, so a slow path adds the difference and leaves every
    /// other cost (command, boundaries, copies) as it was; USB adds its command and
    /// status phases to every command. The card alone without a host path.
    fn through_host_ns(&self, len: u64, t: f64, card_bw: u64) -> f64 {
        let (cap, overhead) = self.cfg.host.cap(self.cfg.card);
        let slower = match cap {
            Some(bw) if bw < card_bw => transfer_ns(len, bw) - transfer_ns(len, card_bw),
            _ => 0.0,
        };
        t + slower + overhead as f64
    }

    /// Idle time merges the small-write area at `native_bw`; returns the idle time left.
    fn merge_small_writes(&mut self, idle: u64) -> u64 {
        if self.app.area_fill == 0 || idle == 0 {
            return idle;
        }
        let needed = transfer_ns(self.app.area_fill, self.cfg.native_bw).ceil() as u64;
        if needed <= idle {
            self.app.area_fill = 0;
            idle - needed
        } else {
            let merged = (idle as f64 * self.cfg.native_bw as f64 / NS_PER_S) as u64;
            self.app.area_fill = self.app.area_fill.saturating_sub(merged);
            0
        }
    }

    /// The time (without the command) of a write the small-write area takes, or `None`
    /// when it goes to its erase block: a write shorter than a page that does not
    /// continue an open block in order.
    fn small_write_ns(&mut self, offset: u64, len: u64) -> Option<f64> {
        let area = self.cfg.app.random_area;
        if area == 0 || len == 0 || len >= self.cfg.page {
            return None;
        }
        let (index, within) = (offset / self.cfg.erase, offset % self.cfg.erase);
        if self
            .open
            .iter()
            .any(|b| b.index == index && b.write_ptr == within)
        {
            return None;
        }
        let mut t = transfer_ns(len, self.cfg.write_bw);
        let over = (self.app.area_fill + len).saturating_sub(area);
        if over > 0 {
            t += transfer_ns(over, self.cfg.native_bw);
        }
        self.app.area_fill = (self.app.area_fill + len).min(area);
        Some(t)
    }

    /// Map a logical range onto physical spans; `None` physical means the data is lost
    /// (limbo). Returns (logical offset, physical offset or None, length).
    fn spans(&self, offset: u64, len: u64) -> Vec<(u64, Option<u64>, u64)> {
        let Some(real) = self.cfg.real else {
            return vec![(offset, Some(offset), len)];
        };
        let mut out = Vec::new();
        let mut pos = offset;
        let end = offset + len;
        while pos < end {
            let region = pos / real;
            let seg = ((region + 1) * real).min(end) - pos;
            let phys = if region == 0 {
                Some(pos)
            } else {
                let wrap = match self.cfg.fake_mode {
                    FakeMode::Wrap => true,
                    FakeMode::Limbo => false,
                    FakeMode::Chain => region % 2 == 1,
                };
                wrap.then_some(pos - region * real)
            };
            out.push((pos, phys, seg));
            pos += seg;
        }
        out
    }

    /// The medium's content of a logical range (through aliasing; lost data reads as 0).
    fn read_medium(&self, offset: u64, buf: &mut [u8]) {
        for (logical, phys, n) in self.spans(offset, buf.len() as u64) {
            let at = (logical - offset) as usize;
            let part = &mut buf[at..at + n as usize];
            match phys {
                Some(p) => self.store.read(p, part),
                None => part.fill(0),
            }
        }
    }

    /// Put a write into the volatile cache and evict the oldest writes beyond its size.
    fn cache_write(&mut self, offset: u64, buf: &[u8]) {
        if self.cfg.cache == 0 || buf.is_empty() {
            return;
        }
        let (mut offset, mut buf) = (offset, buf);
        let len = buf.len() as u64;
        if len >= self.cfg.cache {
            // Everything older is pushed out; only the write's tail stays.
            self.cache = WriteCache {
                seq: self.cache.seq,
                ..WriteCache::default()
            };
            let tail = offset + len - self.cfg.cache;
            let start = tail - tail % CACHE_CHUNK;
            let start = start.max(offset);
            buf = &buf[(start - offset) as usize..];
            offset = start;
        }
        let len = buf.len() as u64;
        let first = offset / CACHE_CHUNK;
        let last = (offset + len - 1) / CACHE_CHUNK;
        let seq = self.cache.seq;
        self.cache.seq += 1;
        for chunk in first..=last {
            let start = chunk * CACHE_CHUNK;
            let covered = start >= offset && start + CACHE_CHUNK <= offset + len;
            if !covered && !self.cache.latest.contains_key(&chunk) {
                // A partly written chunk enters the cache with the medium's other bytes.
                let n = CACHE_CHUNK.min(self.cfg.size - start) as usize;
                let mut old = vec![0u8; n];
                self.read_medium(start, &mut old);
                self.cache.data.write(start, &old);
            }
            self.cache.latest.insert(chunk, seq);
        }
        self.cache.data.write(offset, buf);
        self.cache.log.push_back((seq, offset, len));
        self.cache.bytes += len;
        while self.cache.bytes > self.cfg.cache {
            let Some((s, o, l)) = self.cache.log.pop_front() else {
                break;
            };
            self.cache.bytes -= l;
            for chunk in o / CACHE_CHUNK..=(o + l - 1) / CACHE_CHUNK {
                if self.cache.latest.get(&chunk) == Some(&s) {
                    self.cache.latest.remove(&chunk);
                    self.cache.data.erase(chunk * CACHE_CHUNK, CACHE_CHUNK);
                }
            }
        }
    }

    /// Overlay the cached chunks of a logical range onto data read from the medium; true
    /// when the cache held every chunk of it.
    fn cache_read(&self, offset: u64, buf: &mut [u8]) -> bool {
        if self.cache.latest.is_empty() || buf.is_empty() {
            return false;
        }
        let end = offset + buf.len() as u64;
        let mut all = true;
        for chunk in offset / CACHE_CHUNK..=(end - 1) / CACHE_CHUNK {
            all &= self.cache.latest.contains_key(&chunk);
            if self.cache.latest.contains_key(&chunk) {
                let s = (chunk * CACHE_CHUNK).max(offset);
                let e = ((chunk + 1) * CACHE_CHUNK).min(end);
                self.cache
                    .data
                    .read(s, &mut buf[(s - offset) as usize..(e - offset) as usize]);
            }
        }
        all
    }

    fn corrupt(&self, offset: u64, buf: &mut [u8]) {
        let len = buf.len() as u64;
        for f in &self.cfg.faults {
            if let Fault::Flip {
                offset: fo,
                len: fl,
            } = *f
            {
                let start = offset.max(fo);
                let end = (offset + len).min(fo + fl);
                let mut p = start + (64 - (start - fo) % 64) % 64;
                while p < end {
                    buf[(p - offset) as usize] ^= 0x01;
                    p += 64;
                }
            }
        }
    }
}

impl Backend for SimDevice {
    fn size_bytes(&self) -> u64 {
        self.cfg.size
    }

    fn logical_sector_bytes(&self) -> u32 {
        self.cfg.sector
    }

    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let saving = self.queue_saving_ns();
        self.begin_op()?;
        let len = buf.len() as u64;
        self.check_range(offset, len)?;
        self.read_medium(offset, buf);
        let cached = self.cache_read(offset, buf);
        self.corrupt(offset, buf);
        let (t, card_bw) = if cached && self.cfg.cache_bw > 0 {
            (transfer_ns(len, self.cfg.cache_bw), self.cfg.cache_bw)
        } else {
            (self.read_cached_ns(offset, len, saving), self.cfg.read_bw)
        };
        let t = self.through_host_ns(len, t, card_bw);
        self.spend(t);
        Ok(())
    }

    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let saving = self.queue_saving_ns();
        self.begin_op()?;
        let len = buf.len() as u64;
        self.check_range(offset, len)?;
        for (logical, phys, n) in self.spans(offset, len) {
            if let Some(p) = phys {
                let at = (logical - offset) as usize;
                self.store.write(p, &buf[at..at + n as usize]);
            }
        }
        self.cache_write(offset, buf);
        let card_bw = self.program_bw();
        let t = self.write_model_ns(offset, len) - saving;
        let t = self.through_host_ns(len, t, card_bw);
        self.spend(t);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.begin_op()?;
        let t = self.through_host_ns(0, self.cfg.cmd as f64, u64::MAX);
        self.spend(t);
        Ok(())
    }

    fn discard(&mut self, offset: u64, len: u64) -> io::Result<()> {
        self.begin_op()?;
        self.check_range(offset, len)?;
        for (_, phys, n) in self.spans(offset, len) {
            if let Some(p) = phys {
                self.store.erase(p, n);
            }
        }
        let erase = self.cfg.erase;
        let first = offset / erase;
        let last = (offset + len).div_ceil(erase);
        self.open.retain(|b| b.index < first || b.index >= last);
        let blocks = (last - first).min(1024);
        let t = self.cfg.cmd as f64 + (blocks * self.cfg.erase_time) as f64 / 8.0;
        let t = self.through_host_ns(0, t, u64::MAX);
        self.spend(t);
        Ok(())
    }

    fn clock_ns(&self) -> u64 {
        self.clock
    }

    fn idle(&mut self, ns: u64) {
        self.clock += ns;
    }

    fn queued(&mut self, outstanding: usize) {
        self.app.outstanding = outstanding.max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{AlignedBuf, Timed};

    fn quiet(spec: &str) -> SimDevice {
        SimDevice::new(SimConfig::parse(&format!("{spec},noise=0,outliers=0")).unwrap())
    }

    #[test]
    fn reads_pay_for_crossing_page_and_erase_boundaries() {
        let mut d = Timed::new(quiet("sd-16g"));
        let mut b = AlignedBuf::new(1024);
        let inside = d.read_timed(&mut b, 8 << 20).unwrap();
        let across_page = d.read_timed(&mut b, (8 << 20) + 16384 - 512).unwrap();
        let across_erase = d.read_timed(&mut b, (8 << 20) - 512).unwrap();
        assert!(inside > 600_000 && inside < 800_000, "{inside}");
        assert_eq!(across_page - inside, 80_000);
        assert_eq!(across_erase - inside, 300_000);
    }

    #[test]
    fn a_read_cache_answers_repeats_and_read_ahead_and_forgets_the_oldest() {
        let mut d = Timed::new(quiet(
            "custom,size=64M,erase=1M,page=16K,cmd=20us,read_bw=1G,page_cost=0ns,erase_cost=0ns,read_cache=8K,read_hit=5us,prefetch=2K",
        ));
        let mut b = AlignedBuf::new(1024);
        let first = d.read_timed(&mut b, 1 << 20).unwrap();
        let again = d.read_timed(&mut b, 1 << 20).unwrap();
        let ahead = d.read_timed(&mut b, (1 << 20) + 2048).unwrap();
        let beyond = d.read_timed(&mut b, (1 << 20) + 4096).unwrap();
        assert_eq!(first, 20_000 + 954, "a first read pays the command");
        assert_eq!(again, 5_000 + 954, "a repeat is a hit");
        assert_eq!(ahead, again, "the read-ahead covered it");
        assert_eq!(beyond, first, "past the read-ahead: a miss");
        // 8 KiB of other reads push the first one out.
        for i in 0..8u64 {
            d.read_timed(&mut b, (8 << 20) + i * 65536).unwrap();
        }
        assert_eq!(d.read_timed(&mut b, 1 << 20).unwrap(), first);
        // The geometry still shows on misses and never on hits.
        let mut g = Timed::new(quiet("sd-16g,read_cache=64K,read_hit=10us"));
        let across = g.read_timed(&mut b, (8 << 20) - 512).unwrap();
        let hit = g.read_timed(&mut b, (8 << 20) - 512).unwrap();
        assert!(across > 900_000, "{across}");
        assert!(hit < 100_000, "{hit}");
    }

    #[test]
    fn the_first_access_after_idle_is_slow() {
        let mut d = Timed::new(quiet(
            "custom,size=64M,erase=1M,page=16K,cmd=20us,read_bw=1G,page_cost=0ns,erase_cost=0ns,wake=30us,wake_after=1ms",
        ));
        let mut b = AlignedBuf::new(1024);
        let cold = d.read_timed(&mut b, 0).unwrap();
        let warm = d.read_timed(&mut b, 4096).unwrap();
        assert_eq!(
            cold - warm,
            30_000,
            "the very first access wakes the device"
        );
        d.idle(500_000);
        assert_eq!(
            d.read_timed(&mut b, 8192).unwrap(),
            warm,
            "0.5 ms is no sleep"
        );
        d.idle(2_000_000);
        assert_eq!(d.read_timed(&mut b, 8192).unwrap(), cold);
    }

    #[test]
    fn data_round_trips_and_fakes_alias_or_lose_it() {
        let mut honest = quiet("custom,size=64M,erase=1M,page=16K");
        let mut w = AlignedBuf::new(4096);
        w.fill(0xab);
        honest.write_at(&w, 40 << 20).unwrap();
        let mut r = AlignedBuf::new(4096);
        honest.read_at(&mut r, 40 << 20).unwrap();
        assert!(r.iter().all(|&x| x == 0xab));

        let mut wrap = quiet("custom,size=64M,erase=1M,page=16K,real=16M,fake_mode=wrap");
        wrap.write_at(&w, 40 << 20).unwrap();
        wrap.read_at(&mut r, 8 << 20).unwrap();
        assert!(r.iter().all(|&x| x == 0xab), "40M aliases 8M modulo 16M");

        let mut limbo = quiet("custom,size=64M,erase=1M,page=16K,real=16M,fake_mode=limbo");
        limbo.write_at(&w, 40 << 20).unwrap();
        limbo.read_at(&mut r, 40 << 20).unwrap();
        assert!(r.iter().all(|&x| x == 0), "limbo loses the write");

        let mut chain = quiet("custom,size=64M,erase=1M,page=16K,real=16M,fake_mode=chain");
        chain.write_at(&w, 20 << 20).unwrap(); // region 1: wraps onto 4M
        chain.read_at(&mut r, 4 << 20).unwrap();
        assert!(r.iter().all(|&x| x == 0xab));
        chain.write_at(&w, 36 << 20).unwrap(); // region 2: lost
        chain.read_at(&mut r, 36 << 20).unwrap();
        assert!(r.iter().all(|&x| x == 0));
    }

    #[test]
    fn more_open_blocks_than_the_controller_keeps_collapse_small_writes() {
        let throughput = |n: u64| {
            let mut d = Timed::new(quiet("custom,size=1G,erase=4M,page=16K,open_au=4,fat_au=0"));
            let b = AlignedBuf::new(16384);
            let mut busy = 0;
            for step in 0..64u64 {
                for au in 0..n {
                    busy += d
                        .write_timed(&b, (16 + au) * (4 << 20) + step * 16384)
                        .unwrap();
                }
            }
            (64 * n * 16384) as f64 / busy as f64
        };
        let four = throughput(4);
        let five = throughput(5);
        assert!(four > 5.0 * five, "4 open: {four}, 5 open: {five}");
    }

    #[test]
    fn random_order_is_cheap_only_in_random_capable_blocks() {
        let cost = |spec: &str| {
            let mut d = Timed::new(quiet(spec));
            let b = AlignedBuf::new(16384);
            let mut busy = 0;
            for i in [5u64, 1, 7, 3, 2, 6, 0, 4] {
                busy += d.write_timed(&b, (8 << 20) + i * 16384).unwrap();
            }
            busy
        };
        let strict = cost("custom,size=1G,open_au_random=0,fat_au=0");
        let tolerant = cost("custom,size=1G,open_au_random=2,fat_au=0");
        assert!(strict > 3 * tolerant, "strict {strict} tolerant {tolerant}");
    }

    #[test]
    fn slc_cache_runs_out_and_drains_when_idle() {
        let mut d = Timed::new(quiet(
            "custom,size=1G,slc=64M,write_bw=100M,native_bw=10M,fat_au=0",
        ));
        let b = AlignedBuf::new(1 << 20);
        let first = d.write_timed(&b, 0).unwrap();
        for i in 1..80u64 {
            d.write_timed(&b, i << 20).unwrap();
        }
        let after = d.write_timed(&b, 80 << 20).unwrap();
        assert!(after > 5 * first, "cached {first} native {after}");
        d.idle(30_000_000_000);
        let recovered = d.write_timed(&b, 81 << 20).unwrap();
        assert!(recovered * 3 < after);
    }

    #[test]
    fn faults_fail_corrupt_and_vanish() {
        let mut d = quiet("custom,size=64M,erase=1M,page=16K,fault=eio@1M+4K;flip@2M+512;vanish@5");
        let mut b = AlignedBuf::new(4096);
        assert_eq!(
            d.read_at(&mut b, 1 << 20).unwrap_err().raw_os_error(),
            Some(libc::EIO)
        );
        d.read_at(&mut b, 2 << 20).unwrap();
        assert_eq!(
            b.iter().filter(|&&x| x != 0).count(),
            8,
            "one flipped bit every 64 bytes of 512"
        );
        d.read_at(&mut b, 0).unwrap();
        d.read_at(&mut b, 0).unwrap();
        d.read_at(&mut b, 0).unwrap();
        let e = d.read_at(&mut b, 0).unwrap_err();
        assert!(crate::vocab::error::is_vanished(&e));
    }

    #[test]
    fn a_write_cache_hides_a_fake_until_more_than_it_holds_is_written() {
        let mut d = quiet("custom,size=64M,erase=1M,page=16K,real=16M,fake_mode=limbo,cache=2M");
        let mut w = AlignedBuf::new(4096);
        w.fill(0xab);
        d.write_at(&w, 40 << 20).unwrap();
        let mut r = AlignedBuf::new(8192);
        d.read_at(&mut r, (40 << 20) - 4096).unwrap();
        assert!(r[..4096].iter().all(|&x| x == 0), "unwritten neighbour");
        assert!(
            r[4096..].iter().all(|&x| x == 0xab),
            "served from the cache"
        );
        let filler = AlignedBuf::new(1 << 20);
        d.write_at(&filler, 0).unwrap();
        let mut r = AlignedBuf::new(4096);
        d.read_at(&mut r, 40 << 20).unwrap();
        assert!(
            r.iter().all(|&x| x == 0xab),
            "1M + 4K written: still cached"
        );
        d.write_at(&filler, 1 << 20).unwrap();
        d.read_at(&mut r, 40 << 20).unwrap();
        assert!(r.iter().all(|&x| x == 0), "evicted: the fake shows");
        // A partial write keeps the chunk's other bytes; honest data survives eviction.
        let mut h = quiet("custom,size=64M,erase=1M,page=16K,cache=8K");
        h.write_at(&w, 0).unwrap();
        let mut s = AlignedBuf::new(512);
        s.fill(0x11);
        h.write_at(&s, 512).unwrap();
        let mut r = AlignedBuf::new(4096);
        h.read_at(&mut r, 0).unwrap();
        assert_eq!((r[0], r[600], r[1100]), (0xab, 0x11, 0xab));
        h.write_at(&filler, 1 << 20).unwrap();
        h.read_at(&mut r, 0).unwrap();
        assert_eq!((r[0], r[600], r[1100]), (0xab, 0x11, 0xab));
    }

    #[test]
    fn a_command_queue_overlaps_command_time_only_when_requests_are_outstanding() {
        let read = |spec: &str, outstanding: usize| {
            let mut d = Timed::new(quiet(spec));
            let mut b = AlignedBuf::new(4096);
            d.inner_mut().queued(outstanding);
            let queued = d.read_timed(&mut b, 64 << 20).unwrap();
            // The count holds for one request: the next goes alone.
            let alone = d.read_timed(&mut b, 96 << 20).unwrap();
            (queued, alone)
        };
        let cfg = SimConfig::parse("sd-a2-64g").unwrap();
        let (q1, alone) = read("sd-a2-64g", 1);
        let (q32, after) = read("sd-a2-64g", 32);
        assert_eq!(alone, q1);
        assert_eq!(after, q1, "the outstanding count is used once");
        // cmd_queue=2: half the command time is overlapped.
        assert_eq!(q1 - q32, cfg.cmd / 2);
        // Without a command queue depth changes nothing.
        let (f1, _) = read("sd-a2-fake-64g", 1);
        let (f32, _) = read("sd-a2-fake-64g", 32);
        assert_eq!(f1, f32);
    }

    /// Issue 47.2: a host path caps the transfer and nothing else (boundary costs stay
    /// visible through it), and a host that does not queue leaves the card's queue idle.
    #[test]
    fn a_host_path_caps_transfers_keeps_boundary_costs_and_can_leave_the_queue_idle() {
        let time = |spec: &str, len: usize, offset: u64, outstanding: usize| {
            let mut d = Timed::new(quiet(spec));
            let mut b = AlignedBuf::new(len);
            d.inner_mut().queued(outstanding);
            d.read_timed(&mut b, offset).unwrap()
        };
        let card = "sd-a2-64g";
        let hs = "sd-a2-64g,host_timing=sd-hs";
        // 1 MiB at SD high-speed: the 22.4 MB/s cap, not the card's 90 MiB/s.
        let mib = time(hs, 1 << 20, 64 << 20, 1) as f64;
        let cfg = SimConfig::parse(card).unwrap();
        let want = cfg.cmd as f64 + (1u64 << 20) as f64 * 1e9 / 22.4e6;
        assert!((mib - want).abs() < 2.0, "{mib} vs {want}");
        assert!(time(card, 1 << 20, 64 << 20, 1) as f64 * 3.0 < mib);
        // The erase-block boundary costs the same through the slow path.
        let inside = |s: &str| time(s, 4096, 64 << 20, 1);
        let across = |s: &str| time(s, 4096, (64 << 20) - 2048, 1);
        assert_eq!(across(card) - inside(card), across(hs) - inside(hs));
        assert!(across(hs) > inside(hs));
        // An SD host without command queueing: depth 32 saves nothing; told to queue, it does.
        assert_eq!(time(hs, 4096, 96 << 20, 32), time(hs, 4096, 96 << 20, 1));
        let q = "sd-a2-64g,host_timing=sd-hs,host_cmdq=1";
        assert_eq!(
            time(q, 4096, 96 << 20, 1) - time(q, 4096, 96 << 20, 32),
            cfg.cmd / 2
        );
        // Bulk-only USB adds its command phases to each command.
        let usb = time("sd-a2-64g,usb=2.0", 4096, 96 << 20, 1);
        assert!(usb >= time(card, 4096, 96 << 20, 1) + 250_000, "{usb}");
    }

    #[test]
    fn the_small_write_area_takes_random_writes_until_full_then_runs_at_the_merge_rate() {
        let spec =
            "custom,size=1G,erase=4M,page=16K,fat_au=0,write_bw=40M,native_bw=10M,random_area=1M";
        let mut d = Timed::new(quiet(spec));
        let cfg = SimConfig::parse(spec).unwrap();
        let b = AlignedBuf::new(4096);
        let at = |i: u64| (16 << 20) + (i * 7919 % 4096) * (64 << 10);
        let first = d.write_timed(&b, at(0)).unwrap();
        let fast = cfg.cmd + 4096 * 1_000_000_000 / (40 << 20);
        assert!(first.abs_diff(fast) <= 1, "{first} vs {fast}");
        for i in 1..256u64 {
            d.write_timed(&b, at(i)).unwrap();
        }
        // 1 MiB written: full; each further write waits for 4 KiB to be merged.
        let full = d.write_timed(&b, at(256)).unwrap();
        let slow = fast + 4096 * 1_000_000_000 / (10 << 20);
        assert!(full.abs_diff(slow) <= 1, "{full} vs {slow}");
        // Idle time merges it.
        d.idle(1_000_000_000);
        assert!(d.write_timed(&b, at(257)).unwrap().abs_diff(fast) <= 1);
        // A page-sized write, or one continuing its block in order, goes to the block.
        let page = AlignedBuf::new(16384);
        let big = d.write_timed(&page, 512 << 20).unwrap();
        assert!(big > fast);
        let mut strict = Timed::new(quiet(spec.trim_end_matches(",random_area=1M")));
        let mut area = Timed::new(quiet(spec));
        for dev in [&mut strict, &mut area] {
            dev.write_timed(&page, 32 << 20).unwrap();
        }
        assert_eq!(
            strict.write_timed(&b, (32 << 20) + 16384).unwrap(),
            area.write_timed(&b, (32 << 20) + 16384).unwrap(),
            "in order: not the area's"
        );
    }

    #[test]
    fn same_seed_same_timings() {
        let run = || {
            let mut d = Timed::new(SimDevice::new(
                SimConfig::parse("sd-16g,noise=0.1,outliers=0.05,seed=7").unwrap(),
            ));
            let mut b = AlignedBuf::new(4096);
            (0..50u64)
                .map(|i| d.read_timed(&mut b, i * 65536).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;
    use crate::backend::AlignedBuf;

    #[test]
    fn a_terabyte_card_holds_only_what_was_written() {
        let mut d = SimDevice::new(SimConfig::parse("custom,size=1T,noise=0").unwrap());
        let mut b = AlignedBuf::new(1 << 20);
        for (i, x) in b.iter_mut().enumerate() {
            *x = (i % 253) as u8 + 1;
        }
        for i in 0..16u64 {
            d.write_at(&b, i * (63 << 30)).unwrap();
        }
        assert_eq!(d.resident_bytes(), 16 << 20);
    }

    fn stamps(salt: u64, offset: u64, len: usize) -> AlignedBuf {
        let mut b = AlignedBuf::new(len);
        crate::pattern::Stamper::new(salt).fill(&mut b, offset);
        b
    }

    fn quiet(spec: &str) -> SimDevice {
        SimDevice::new(SimConfig::parse(&format!("{spec},noise=0,outliers=0")).unwrap())
    }

    /// Write stamps over `[0, len)` in 1 MiB pieces, as `verify` does.
    fn stamp_all(d: &mut SimDevice, salt: u64, len: u64) {
        for off in (0..len).step_by(1 << 20) {
            d.write_at(&stamps(salt, off, 1 << 20), off).unwrap();
        }
    }

    #[test]
    fn a_verified_card_holds_stamps_in_a_few_bytes_and_reads_them_back_exactly() {
        let mut d = quiet("custom,size=1G,erase=4M,page=16K");
        stamp_all(&mut d, 21, 256 << 20);
        assert!(d.resident_bytes() < 1024, "{}", d.resident_bytes());
        let mut r = AlignedBuf::new(1 << 20);
        for off in [0u64, 100 << 20, 255 << 20] {
            d.read_at(&mut r, off).unwrap();
            assert!(r[..] == stamps(21, off, 1 << 20)[..], "at {off}");
        }
    }

    #[test]
    fn fakes_alias_or_lose_stamps_as_they_do_any_data() {
        use crate::pattern::{Stamper, UnitClass};
        let s = Stamper::new(3);
        let mut r = AlignedBuf::new(1 << 20);
        // wrap: 64 MiB announced, 16 MiB real; the last pass over 8 MiB wrote 56 MiB.
        let mut wrap = quiet("custom,size=64M,erase=1M,page=16K,real=16M,fake_mode=wrap");
        stamp_all(&mut wrap, 3, 64 << 20);
        assert!(wrap.resident_bytes() < 1024, "{}", wrap.resident_bytes());
        for at in [8u64 << 20, 24 << 20, 56 << 20] {
            wrap.read_at(&mut r, at).unwrap();
            assert!(r[..] == stamps(3, 56 << 20, 1 << 20)[..], "at {at}");
        }
        wrap.read_at(&mut r, 8 << 20).unwrap();
        assert_eq!(
            s.classify_unit(&r[..512], 8 << 20),
            UnitClass::Overwritten { from: 56 << 20 }
        );
        // limbo: beyond 16 MiB nothing is kept; below, the data is intact.
        let mut limbo = quiet("custom,size=64M,erase=1M,page=16K,real=16M,fake_mode=limbo");
        stamp_all(&mut limbo, 3, 64 << 20);
        limbo.read_at(&mut r, 40 << 20).unwrap();
        assert!(r.iter().all(|&b| b == 0));
        limbo.read_at(&mut r, 15 << 20).unwrap();
        assert!(r[..] == stamps(3, 15 << 20, 1 << 20)[..]);
        // chain: region 1 (16..32 MiB) wraps onto 0..16, region 2 is lost.
        let mut chain = quiet("custom,size=64M,erase=1M,page=16K,real=16M,fake_mode=chain");
        stamp_all(&mut chain, 3, 64 << 20);
        chain.read_at(&mut r, 4 << 20).unwrap();
        assert!(
            r[..] == stamps(3, 52 << 20, 1 << 20)[..],
            "region 3 wrapped last"
        );
        chain.read_at(&mut r, 36 << 20).unwrap();
        assert!(r.iter().all(|&b| b == 0));
        chain.read_at(&mut r, 20 << 20).unwrap();
        assert!(r[..] == stamps(3, 52 << 20, 1 << 20)[..]);
    }

    #[test]
    fn flipped_bits_show_on_compactly_stored_stamps() {
        use crate::pattern::{Stamper, UnitClass};
        let mut d = quiet("custom,size=64M,erase=1M,page=16K,fault=flip@2M+4K");
        stamp_all(&mut d, 8, 8 << 20);
        let mut r = AlignedBuf::new(1 << 20);
        d.read_at(&mut r, 2 << 20).unwrap();
        let want = stamps(8, 2 << 20, 1 << 20);
        let differ: Vec<usize> = (0..r.len()).filter(|&i| r[i] != want[i]).collect();
        assert_eq!(differ, (0..4096).step_by(64).collect::<Vec<_>>());
        assert_eq!(
            Stamper::new(8).classify_unit(&r[..512], 2 << 20),
            UnitClass::Changed { bits: 8 }
        );
        // What was read (flipped) and written back is kept as bytes, flips included.
        d.write_at(&r[..4096], 2 << 20).unwrap();
        assert_eq!(d.resident_bytes(), 4096 + 2 * 32);
    }
}
