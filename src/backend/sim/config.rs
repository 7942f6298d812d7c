//! The simulator's parameters: the `sim:` spec grammar, its keys, defaults and presets.

use crate::vocab::hostpath::{PresentedHost, Timing};
use crate::vocab::units::{format_bytes, format_ns, is_pow2_or_3x, parse_duration_ns, parse_size};
use crate::{Error, Result};

/// What a fake card does with data beyond its real capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FakeMode {
    /// Addresses alias modulo the real size.
    Wrap,
    /// Writes beyond the real size are lost; reads there give fixed data.
    Limbo,
    /// Beyond the real size, regions of the real size alternate: wrap, limbo, wrap, …
    Chain,
}

impl FakeMode {
    pub fn name(self) -> &'static str {
        match self {
            FakeMode::Wrap => "wrap",
            FakeMode::Limbo => "limbo",
            FakeMode::Chain => "chain",
        }
    }
}

/// An injected fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// I/O errors for any request touching `[offset, offset+len)`.
    Eio { offset: u64, len: u64 },
    /// Data read back from `[offset, offset+len)` is silently corrupted (bit flips).
    Flip { offset: u64, len: u64 },
    /// The device disappears after this many operations.
    Vanish { ops: u64 },
}

/// What a simulated card presents to the host as its sysfs `type`: the register set a
/// reader finds (an MMC/SD card's CID, EXT_CSD fields) or none at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardBus {
    /// An SD card (sysfs `type` SD): no standard wear counter.
    Sd,
    /// An eMMC (sysfs `type` MMC): `rev`, `life_time`, `pre_eol_info`.
    Mmc,
    /// No MMC/SD registers (a USB stick, an SSD, raw NAND).
    None,
}

impl CardBus {
    pub fn name(self) -> &'static str {
        match self {
            CardBus::Sd => "sd",
            CardBus::Mmc => "mmc",
            CardBus::None => "none",
        }
    }
}

/// Every parameter of a simulated flash device. Sizes in bytes, times in ns, bandwidths
/// in bytes per second.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The preset it started from ("custom" for the plain defaults).
    pub preset: String,
    pub size: u64,
    pub erase: u64,
    pub page: u64,
    pub open_au: u32,
    pub open_au_random: u32,
    pub fat_au: u32,
    pub slc: u64,
    pub real: Option<u64>,
    pub fake_mode: FakeMode,
    pub noise: f64,
    pub outliers: f64,
    /// Longest outlier, in ns (each outlier adds 0.5 ms up to this).
    pub outlier_max: u64,
    pub seed: u64,
    pub read_bw: u64,
    pub write_bw: u64,
    pub native_bw: u64,
    pub cmd: u64,
    pub page_cost: u64,
    pub erase_cost: u64,
    pub erase_time: u64,
    pub sector: u32,
    pub faults: Vec<Fault>,
    /// Volatile controller write cache: the last `cache` bytes written are served from
    /// it (0 = none). Hides a fake card from a probe that reads back too soon.
    pub cache: u64,
    /// Bandwidth of reads served wholly from that cache, with no command overhead (the
    /// controller answers from its RAM); 0 = at the medium's speed, so timing shows nothing.
    pub cache_bw: u64,
    /// The register set the card presents (sysfs `type`).
    pub card: CardBus,
    /// eMMC EXT_CSD_REV (8 = eMMC 5.1); below 7 there are no life-time fields.
    pub ext_csd_rev: u8,
    /// eMMC DEVICE_LIFE_TIME_EST_TYP_A and _TYP_B bands (0x01 = 0-10 % used … 0x0B =
    /// exceeded; 0x00 = not defined).
    pub life_time: Option<(u8, u8)>,
    /// eMMC PRE_EOL_INFO (1 normal, 2 warning, 3 urgent; 0 = not defined).
    pub pre_eol: Option<u8>,
    /// Controller read cache: the last `read_cache` bytes read (by logical address, in
    /// sectors, least recently used evicted first) answer a repeat read of them (0 = none).
    pub read_cache: u64,
    /// Time to answer a read wholly in that cache, before the transfer at `read_bw`
    /// (instead of `cmd` and any boundary cost).
    pub read_hit: u64,
    /// Read-ahead: a read the cache does not answer also loads this many following bytes.
    pub prefetch: u64,
    /// Extra time of the first access after the device sat idle for `wake_after` (0 = none).
    pub wake: u64,
    /// Idle time after which the next access pays `wake`.
    pub wake_after: u64,
    /// Speed drift: read transfer times grow by this fraction per second of device time
    /// (0 = steady; negative = the device speeds up, down to a tenth of the time). A
    /// device that warms up, throttles or shares its medium changes speed during a run.
    pub drift: f64,
    /// Command queue and small-write area (A1/A2 cards).
    pub app: AppPerf,
    /// The host the card sits behind (`host_timing`, `usb`, `uas`, `host_cmdq`).
    pub host: SimHost,
}

/// The host path a simulated card sits behind: what caps its transfers and its command
/// queue as a real host would, and what it presents to a reader (debugfs `ios`, the USB
/// link's attributes, `cmdq_en`). The default is no host path at all: an ideal host that
/// caps nothing and presents nothing, the card alone (every simulated card before these
/// keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SimHost {
    /// The MMC/SD bus timing the host negotiated (`host_timing`).
    pub timing: Option<Timing>,
    /// The USB generation of the reader the card sits in (`usb`: 2 or 3).
    pub usb: Option<u8>,
    /// The reader speaks UAS (`uas=1`), else bulk-only.
    pub uas: bool,
    /// `host_cmdq`: whether the host sends the card several commands at once; `None` for
    /// the host's usual (see [`SimHost::queues`]).
    pub cmdq: Option<bool>,
}

impl SimHost {
    /// Whether the host queues commands: as `host_cmdq` says, else its usual: an eMMC
    /// host does (Linux enables eMMC command queueing where the card has it), an SD host
    /// does not (mainline Linux has no SD command queueing), USB does over UAS and not
    /// over bulk-only, and no host path (the card alone) caps nothing.
    pub fn queues(&self, card: CardBus) -> bool {
        if let Some(q) = self.cmdq {
            return q;
        }
        if self.usb.is_some() {
            return self.uas;
        }
        match self.timing {
            None => true,
            Some(_) => card == CardBus::Mmc,
        }
    }

    /// The clock (Hz) and bus width (bits) the host runs `timing` at for `card`.
    fn clock_and_width(timing: Timing, card: CardBus) -> (u64, u8) {
        let mmc = card == CardBus::Mmc;
        let width = if mmc { 8 } else { 4 };
        let clock = match timing {
            Timing::Legacy if mmc => 26_000_000,
            Timing::Legacy | Timing::UhsSdr12 => 25_000_000,
            Timing::MmcHighSpeed | Timing::MmcDdr52 => 52_000_000,
            Timing::SdHighSpeed | Timing::UhsSdr25 | Timing::UhsDdr50 => 50_000_000,
            Timing::UhsSdr50 => 100_000_000,
            Timing::UhsSdr104 => 208_000_000,
            Timing::MmcHs200 | Timing::MmcHs400 => 200_000_000,
        };
        (clock, width)
    }

    /// The most the host path moves per second (`None`: no cap), and the time it adds to
    /// every command (USB's command and status phases). The model's own figures, not the
    /// reader's: SD high-speed, SDR50 and SDR104 at what one card measured through them
    /// (micropython PR #19623: 22.4, 43.5 and 83.3 MB/s), other MMC modes at 85 % of the
    /// bus's raw rate, USB 2.0 at 35 MB/s (40 over UAS) and USB 3 at 400 MB/s.
    pub fn cap(&self, card: CardBus) -> (Option<u64>, u64) {
        if let Some(gen) = self.usb {
            return match (gen, self.uas) {
                (2, false) => (Some(35_000_000), 250_000),
                (2, true) => (Some(40_000_000), 125_000),
                (_, false) => (Some(400_000_000), 60_000),
                (_, true) => (Some(400_000_000), 30_000),
            };
        }
        let Some(t) = self.timing else {
            return (None, 0);
        };
        let measured = match t {
            Timing::SdHighSpeed => Some(22_400_000),
            Timing::UhsSdr50 => Some(43_500_000),
            Timing::UhsSdr104 => Some(83_300_000),
            _ => None,
        };
        let (clock, width) = Self::clock_and_width(t, card);
        let edges = if t.double_data_rate() { 2 } else { 1 };
        let raw = clock * width as u64 * edges / 8;
        (Some(measured.unwrap_or(raw * 85 / 100)), 0)
    }

    /// What the host path presents (nothing without one).
    pub fn presented(&self, card: CardBus) -> PresentedHost {
        let mut p = PresentedHost {
            sd_card: card == CardBus::Sd,
            ..PresentedHost::default()
        };
        if let Some(gen) = self.usb {
            p.usb_speed = Some(if gen == 2 { "480" } else { "5000" }.to_string());
            p.usb_protocol = Some(if self.uas { "62" } else { "50" }.to_string());
            p.usb_driver = Some(if self.uas { "uas" } else { "usb-storage" }.to_string());
            return p;
        }
        let Some(t) = self.timing else {
            return p;
        };
        let (clock, width) = Self::clock_and_width(t, card);
        let one_eight = matches!(t, Timing::MmcHs200 | Timing::MmcHs400) || t.uhs();
        let (vdd, voltage) = if one_eight && card == CardBus::Mmc {
            ("7 (1.65 - 1.95 V)", "1 (1.80 V)")
        } else if one_eight {
            ("21 (3.3 ~ 3.4 V)", "1 (1.80 V)")
        } else {
            ("21 (3.3 ~ 3.4 V)", "0 (3.30 V)")
        };
        let (width_code, timing_code) = (if width == 8 { 3 } else { 2 }, t.kernel_code());
        p.ios = Some(format!(
            "clock:\t\t{clock} Hz\nactual clock:\t{clock} Hz\nvdd:\t\t{vdd}\nbus mode:\t2 (push-pull)\nchip select:\t0 (don't care)\npower mode:\t2 (on)\nbus width:\t{width_code} ({width} bits)\ntiming spec:\t{timing_code} ({})\nsignal voltage:\t{voltage}\ndriver type:\t0 (driver type B)\n",
            t.kernel_words()
        ));
        // An eMMC's sysfs has cmdq_en; an SD card's only on a kernel that queues to SD
        // cards (Raspberry Pi's), modelled by giving host_cmdq.
        if card == CardBus::Mmc || self.cmdq.is_some() {
            p.cmdq_en = Some(if self.queues(card) { "1" } else { "0" }.to_string());
        }
        p
    }
}

/// What an application-performance (A1/A2) card adds: a command queue that overlaps the
/// command overheads of queued requests, and a page-mapped area that takes small random
/// writes without page rounding or block copies, merging them in the background.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppPerf {
    /// Commands the card overlaps when the host has several outstanding (1 = none): each
    /// pays `cmd / min(outstanding, cmd_queue)` of command time.
    pub cmd_queue: u32,
    /// Bytes of small writes (shorter than a page, not continuing an open block in order)
    /// the page-mapped area holds before it must merge (0 = no such area).
    pub random_area: u64,
}

impl Default for AppPerf {
    fn default() -> Self {
        AppPerf {
            cmd_queue: 1,
            random_area: 0,
        }
    }
}

/// One key of the spec grammar with its meaning (for `sim list` and error messages).
pub struct KeyDoc {
    pub key: &'static str,
    pub meaning: &'static str,
}

/// The keys `sim:` specs accept (docs/simulator.md lists them): a contract, kept or versioned.
pub const KEYS: &[KeyDoc] = &[
    KeyDoc {
        key: "size",
        meaning: "announced capacity",
    },
    KeyDoc {
        key: "erase",
        meaning: "erase block (allocation unit): a power of two or 3 x one",
    },
    KeyDoc {
        key: "page",
        meaning: "page size: a power of two or 3 x one, dividing erase",
    },
    KeyDoc {
        key: "open_au",
        meaning: "erase blocks kept open for linear writing",
    },
    KeyDoc {
        key: "open_au_random",
        meaning: "open erase blocks that tolerate random order (0 = none)",
    },
    KeyDoc {
        key: "fat_au",
        meaning: "leading erase blocks with faster small writes (FAT area)",
    },
    KeyDoc {
        key: "slc",
        meaning: "fast write cache before the sustained-write cliff (0 = none)",
    },
    KeyDoc {
        key: "real",
        meaning: "real capacity of a fake card (absent = honest)",
    },
    KeyDoc {
        key: "fake_mode",
        meaning: "wrap | limbo | chain: what happens beyond real",
    },
    KeyDoc {
        key: "noise",
        meaning: "relative timing jitter, e.g. 0.05",
    },
    KeyDoc {
        key: "outliers",
        meaning: "probability of a long outlier per operation (background GC)",
    },
    KeyDoc {
        key: "outlier_max",
        meaning: "longest outlier (default 10ms; each adds 0.5 ms up to this)",
    },
    KeyDoc {
        key: "seed",
        meaning: "random seed for noise and outliers",
    },
    KeyDoc {
        key: "read_bw",
        meaning: "media read bandwidth per second",
    },
    KeyDoc {
        key: "write_bw",
        meaning: "media write bandwidth per second (cache speed when slc > 0)",
    },
    KeyDoc {
        key: "native_bw",
        meaning: "write bandwidth once the slc cache is full",
    },
    KeyDoc {
        key: "cmd",
        meaning: "base command latency",
    },
    KeyDoc {
        key: "page_cost",
        meaning: "extra read time when a request crosses a page boundary",
    },
    KeyDoc {
        key: "erase_cost",
        meaning: "extra read time when a request crosses an erase-block boundary",
    },
    KeyDoc {
        key: "erase_time",
        meaning: "time to erase one block",
    },
    KeyDoc {
        key: "sector",
        meaning: "logical sector size (512 or 4096)",
    },
    KeyDoc {
        key: "cache",
        meaning:
            "volatile write cache: reads of the last SIZE bytes written come from it (0 = none)",
    },
    KeyDoc {
        key: "cache_bw",
        meaning: "read bandwidth of data wholly in that cache, no command time (0 = the medium's)",
    },
    KeyDoc {
        key: "card",
        meaning: "sd | mmc | none: the registers the card presents (sysfs type; none = USB stick, SSD)",
    },
    KeyDoc {
        key: "ext_csd_rev",
        meaning: "eMMC EXT_CSD revision, 0-8 (default 8 = eMMC 5.1; below 7 the wear fields read 0x00, as on hardware)",
    },
    KeyDoc {
        key: "life_time",
        meaning: "eMMC wear bands A/B, e.g. 0x02/0x01 (0x01 = 0-10% used ... 0x0B = exceeded)",
    },
    KeyDoc {
        key: "pre_eol",
        meaning: "eMMC pre-EOL info: 1 normal, 2 warning (80% of reserved blocks), 3 urgent",
    },
    KeyDoc {
        key: "read_cache",
        meaning: "controller read cache: a repeat read of the last SIZE bytes read is a hit (0 = none)",
    },
    KeyDoc {
        key: "read_hit",
        meaning: "time of a read the read cache answers, before the transfer (no cmd, no boundary cost)",
    },
    KeyDoc {
        key: "prefetch",
        meaning: "read-ahead: a read the cache misses also loads this many following bytes",
    },
    KeyDoc {
        key: "wake",
        meaning: "extra time of the first access after the device sat idle (0 = none)",
    },
    KeyDoc {
        key: "wake_after",
        meaning: "idle time after which the next access pays wake (default 1ms)",
    },
    KeyDoc {
        key: "fault",
        meaning: "eio@OFFSET+LEN, flip@OFFSET+LEN, vanish@OPS; several separated by ;",
    },
    KeyDoc {
        key: "drift",
        meaning: "read transfer times grow by this fraction per second of device time, e.g. 0.3 (0 = steady; negative = faster)",
    },
    KeyDoc {
        key: "cmd_queue",
        meaning: "commands the card overlaps at queue depth > 1 (1 = none): each pays cmd / min(depth, cmd_queue)",
    },
    KeyDoc {
        key: "host_timing",
        meaning: "MMC/SD bus timing of the host: legacy, sd-hs, sdr12, sdr25, sdr50, sdr104, ddr50, mmc-hs, ddr52, hs200, hs400 (absent = no host path: the card alone)",
    },
    KeyDoc {
        key: "usb",
        meaning: "the card sits in a USB reader: 2.0 or 3.0 (not with host_timing)",
    },
    KeyDoc {
        key: "uas",
        meaning: "with usb: 1 = the reader speaks UAS, 0 = bulk-only (default)",
    },
    KeyDoc {
        key: "host_cmdq",
        meaning: "1 = the host queues commands to the card, 0 = one at a time (default: eMMC and UAS queue, SD and bulk-only do not)",
    },
    KeyDoc {
        key: "random_area",
        meaning: "page-mapped area for random writes below a page, at write_bw, merged at native_bw when idle or full (0 = none)",
    },
];

const MIB: u64 = 1 << 20;
const KIB: u64 = 1 << 10;
const GIB: u64 = 1 << 30;
const US: u64 = 1_000;
const MS: u64 = 1_000_000;

impl Default for SimConfig {
    /// A typical SD card (the `sd-16g` preset): 4 MiB erase blocks, 16 KiB pages.
    fn default() -> Self {
        SimConfig {
            preset: "custom".to_string(),
            size: 16 * GIB,
            erase: 4 * MIB,
            page: 16 * KIB,
            open_au: 4,
            open_au_random: 0,
            fat_au: 1,
            slc: 0,
            real: None,
            fake_mode: FakeMode::Wrap,
            noise: 0.02,
            outliers: 0.001,
            outlier_max: 10 * MS,
            seed: 1,
            read_bw: 22 * MIB,
            write_bw: 12 * MIB,
            native_bw: 12 * MIB,
            cmd: 650 * US,
            page_cost: 80 * US,
            erase_cost: 220 * US,
            erase_time: 2 * MS,
            sector: 512,
            faults: Vec::new(),
            cache: 0,
            cache_bw: 0,
            card: CardBus::Sd,
            ext_csd_rev: 8,
            life_time: None,
            pre_eol: None,
            read_cache: 0,
            read_hit: 0,
            prefetch: 0,
            wake: 0,
            wake_after: MS,
            drift: 0.0,
            app: AppPerf::default(),
            host: SimHost::default(),
        }
    }
}

/// A named preset: a short description and the keys it sets over the defaults.
pub struct Preset {
    pub name: &'static str,
    pub about: &'static str,
    pub keys: &'static str,
}

/// The built-in presets, modelled on typical media.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "sd-16g",
        about: "typical 16 GB SD card (Class 10): 4 MiB erase blocks, 16 KiB pages, 4 open AUs",
        keys: "",
    },
    Preset {
        name: "sd-a2-64g",
        about: "64 GB A2 microSD: 8 MiB erase blocks, random-write friendly, 4 GiB SLC cache",
        keys: "size=64G,erase=8M,page=16K,open_au=8,open_au_random=4,fat_au=1,slc=4G,read_bw=90M,write_bw=60M,native_bw=25M,cmd=250us,page_cost=40us,erase_cost=150us,erase_time=3ms,cmd_queue=2,random_area=64M",
    },
    Preset {
        name: "sd-a2-fake-64g",
        about: "64 GB microSD labelled A2 that is not: no command queue or small-write area, fails A2 (and A1) on random 4 KiB writes",
        keys: "size=64G,erase=8M,page=16K,open_au=8,open_au_random=4,fat_au=1,slc=4G,read_bw=90M,write_bw=60M,native_bw=25M,cmd=250us,page_cost=40us,erase_cost=150us,erase_time=3ms",
    },
    Preset {
        name: "emmc-8g",
        about: "8 GB eMMC: 512 KiB erase groups, 8 KiB pages, many open blocks",
        keys: "size=8G,erase=512K,page=8K,open_au=16,open_au_random=8,fat_au=0,read_bw=150M,write_bw=40M,native_bw=40M,cmd=100us,page_cost=15us,erase_cost=45us,erase_time=1ms,card=mmc,ext_csd_rev=8,life_time=0x02/0x01,pre_eol=1",
    },
    Preset {
        name: "usb-32g",
        about: "32 GB USB stick with TLC flash: 12 MiB erase blocks, 24 KiB pages, 2 open AUs",
        keys: "size=32G,erase=12M,page=24K,open_au=2,open_au_random=0,fat_au=1,read_bw=35M,write_bw=10M,native_bw=10M,cmd=400us,page_cost=60us,erase_cost=200us,erase_time=4ms,card=none",
    },
    Preset {
        name: "fake-64g",
        about: "fake card: announces 64 GiB, holds 8 GiB, addresses wrap around",
        keys: "size=64G,real=8G,fake_mode=wrap,erase=4M,page=16K,open_au=2,read_bw=15M,write_bw=6M,native_bw=6M,cmd=800us",
    },
    Preset {
        name: "spinand-128m",
        about: "128 MiB SPI-NAND: 128 KiB blocks, 2 KiB pages, one open block",
        keys: "size=128M,erase=128K,page=2K,open_au=1,open_au_random=0,fat_au=0,read_bw=20M,write_bw=4M,native_bw=4M,cmd=100us,page_cost=60us,erase_cost=20us,erase_time=3ms,card=none",
    },
    Preset {
        name: "ssd-256g",
        about: "SATA SSD: page-mapped, reads show no geometry signal",
        keys: "size=256G,erase=4M,page=16K,open_au=64,open_au_random=64,fat_au=0,read_bw=500M,write_bw=450M,native_bw=450M,cmd=60us,page_cost=0ns,erase_cost=0ns,erase_time=1ms,card=none",
    },
    Preset {
        name: "nogeo-1g",
        about: "no geometry at all (RAM-backed or virtual, like zram or a loop over tmpfs): reads cost the same everywhere, but a read cache answers repeats, a read-ahead loads what follows, and the first access after idle is slow",
        keys: "size=1G,erase=4M,page=16K,open_au=64,open_au_random=64,fat_au=0,read_bw=2G,write_bw=1G,native_bw=1G,cmd=22us,page_cost=0ns,erase_cost=0ns,erase_time=0ns,card=none,read_cache=2M,read_hit=6us,prefetch=4K,wake=15us,wake_after=1ms",
    },
];

fn parse_bw(key: &str, v: &str) -> Result<u64> {
    let bw = crate::vocab::units::parse_rate(v).map_err(|_| {
        Error::usage(format!(
            "sim key {key}='{v}' is not a bandwidth: use e.g. 22M (bytes per second)"
        ))
    })?;
    if bw < 1.0 {
        return Err(Error::usage(format!("sim key {key} must be above 0")));
    }
    Ok(bw.round() as u64)
}

fn parse_range(kind: &str, v: &str) -> Result<(u64, u64)> {
    let (o, l) = v.split_once('+').ok_or_else(|| {
        Error::usage(format!(
            "fault '{kind}@{v}' needs OFFSET+LEN, e.g. {kind}@1G+4K"
        ))
    })?;
    let offset = parse_size(o)?;
    let len = parse_size(l)?;
    if len == 0 {
        return Err(Error::usage(format!("fault '{kind}@{v}' has length 0")));
    }
    Ok((offset, len))
}

/// One eMMC register byte in a sim key: hex with `0x` or decimal, at most `max`.
fn parse_register_byte(key: &str, v: &str, max: u8) -> Result<u8> {
    let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u8::from_str_radix(hex, 16),
        None => v.parse::<u8>(),
    };
    match parsed {
        Ok(b) if b <= max => Ok(b),
        _ => Err(Error::usage(format!(
            "sim key {key}='{v}' must be a number from 0 to 0x{max:02x} (hex with 0x, or decimal)"
        ))),
    }
}

/// Parse `fault=` text: `eio@OFFSET+LEN`, `flip@OFFSET+LEN`, `vanish@OPS`, separated by `;`.
pub fn parse_faults(text: &str) -> Result<Vec<Fault>> {
    let mut out = Vec::new();
    for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (kind, arg) = part.split_once('@').ok_or_else(|| {
            Error::usage(format!(
                "fault '{part}' is not KIND@ARG (eio@OFFSET+LEN, flip@OFFSET+LEN, vanish@OPS)"
            ))
        })?;
        out.push(match kind {
            "eio" => {
                let (offset, len) = parse_range(kind, arg)?;
                Fault::Eio { offset, len }
            }
            "flip" => {
                let (offset, len) = parse_range(kind, arg)?;
                Fault::Flip { offset, len }
            }
            "vanish" => Fault::Vanish {
                ops: arg.parse().map_err(|_| {
                    Error::usage(format!(
                        "fault 'vanish@{arg}' needs a whole number of operations"
                    ))
                })?,
            },
            other => {
                return Err(Error::usage(format!(
                "unknown fault kind '{other}': use eio@OFFSET+LEN, flip@OFFSET+LEN or vanish@OPS"
            )))
            }
        });
    }
    Ok(out)
}

impl SimConfig {
    /// Parse the part after `sim:`: `PRESET[,key=value...]` or `custom,key=value...`.
    pub fn parse(text: &str) -> Result<SimConfig> {
        let mut parts = text.split(',').map(str::trim);
        let first = parts.next().unwrap_or("");
        let mut cfg = if first == "custom" {
            SimConfig::default()
        } else if let Some(p) = PRESETS.iter().find(|p| p.name == first) {
            SimConfig::from_preset(p)?
        } else {
            let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
            return Err(Error::usage(format!(
                "unknown simulator preset '{first}': use one of {} or 'custom' (see `flashscope sim list`)",
                names.join(", ")
            )));
        };
        let mut seen = std::collections::HashSet::new();
        for kv in parts {
            if kv.is_empty() {
                continue;
            }
            let key = kv.split_once('=').map_or(kv, |(k, _)| k.trim());
            if !seen.insert(key.to_string()) {
                return Err(Error::usage(format!(
                    "sim key {key} is given twice in 'sim:{text}': keep one"
                )));
            }
            cfg.set(kv)?;
        }
        if seen.contains("fake_mode") && cfg.real.is_none() {
            return Err(Error::usage(format!(
                "sim key fake_mode needs real=SIZE (how much the fake card holds), e.g. 'sim:{text},real=4G'"
            )));
        }
        cfg.validate()?;
        Ok(cfg)
    }

    fn from_preset(p: &Preset) -> Result<SimConfig> {
        let mut cfg = SimConfig {
            preset: p.name.to_string(),
            ..SimConfig::default()
        };
        for kv in p.keys.split(',').filter(|s| !s.is_empty()) {
            cfg.set(kv)?;
        }
        Ok(cfg)
    }

    /// Set one `key=value`.
    pub fn set(&mut self, kv: &str) -> Result<()> {
        let (key, value) = kv
            .split_once('=')
            .ok_or_else(|| Error::usage(format!("sim spec item '{kv}' is not key=value")))?;
        let (key, value) = (key.trim(), value.trim());
        let count = |v: &str| -> Result<u32> {
            v.parse::<u32>()
                .map_err(|_| Error::usage(format!("sim key {key}='{v}' is not a whole number")))
        };
        let size = |v: &str| -> Result<u64> {
            parse_size(v).map_err(|_| {
                Error::usage(format!(
                    "sim key {key}='{v}' is not a size: use bytes or K, M, G, T, e.g. 4M"
                ))
            })
        };
        let time = |v: &str| -> Result<u64> {
            parse_duration_ns(v).map_err(|_| {
                Error::usage(format!(
                    "sim key {key}='{v}' is not a time: use ns, us, ms, s, m or h, e.g. 300us"
                ))
            })
        };
        let fraction = |v: &str| -> Result<f64> {
            match v.parse::<f64>() {
                Ok(f) if f.is_finite() && (0.0..1.0).contains(&f) => Ok(f),
                _ => Err(Error::usage(format!(
                    "sim key {key}='{v}' must be a number from 0 to below 1"
                ))),
            }
        };
        match key {
            "size" => self.size = size(value)?,
            "erase" => self.erase = size(value)?,
            "page" => self.page = size(value)?,
            "open_au" => self.open_au = count(value)?,
            "open_au_random" => self.open_au_random = count(value)?,
            "fat_au" => self.fat_au = count(value)?,
            "slc" => self.slc = size(value)?,
            "real" => self.real = Some(size(value)?),
            "fake_mode" => {
                self.fake_mode = match value {
                    "wrap" => FakeMode::Wrap,
                    "limbo" => FakeMode::Limbo,
                    "chain" => FakeMode::Chain,
                    _ => {
                        return Err(Error::usage(format!(
                            "sim key fake_mode='{value}' must be wrap, limbo or chain"
                        )))
                    }
                }
            }
            "noise" => self.noise = fraction(value)?,
            "outliers" => self.outliers = fraction(value)?,
            "outlier_max" => self.outlier_max = time(value)?,
            "seed" => {
                self.seed = value.parse().map_err(|_| {
                    Error::usage(format!("sim key seed='{value}' is not a whole number"))
                })?
            }
            "read_bw" => self.read_bw = parse_bw(key, value)?,
            "write_bw" => {
                self.write_bw = parse_bw(key, value)?;
            }
            "native_bw" => self.native_bw = parse_bw(key, value)?,
            "cmd" => self.cmd = time(value)?,
            "page_cost" => self.page_cost = time(value)?,
            "erase_cost" => self.erase_cost = time(value)?,
            "erase_time" => self.erase_time = time(value)?,
            "sector" => self.sector = count(value)?,
            "fault" => self.faults.extend(parse_faults(value)?),
            "cache" => self.cache = size(value)?,
            "card" => {
                self.card = match value {
                    "sd" => CardBus::Sd,
                    "mmc" => CardBus::Mmc,
                    "none" => CardBus::None,
                    _ => {
                        return Err(Error::usage(format!(
                            "sim key card='{value}' must be sd, mmc or none"
                        )))
                    }
                }
            }
            "ext_csd_rev" => self.ext_csd_rev = parse_register_byte(key, value, 8)?,
            "life_time" => {
                let (a, b) = value.split_once('/').ok_or_else(|| {
                    Error::usage(format!(
                        "sim key life_time='{value}' needs two bands A/B, e.g. life_time=0x02/0x01"
                    ))
                })?;
                self.life_time = Some((
                    parse_register_byte(key, a.trim(), 0x0b)?,
                    parse_register_byte(key, b.trim(), 0x0b)?,
                ));
            }
            "pre_eol" => self.pre_eol = Some(parse_register_byte(key, value, 3)?),
            "read_cache" => self.read_cache = size(value)?,
            "read_hit" => self.read_hit = time(value)?,
            "prefetch" => self.prefetch = size(value)?,
            "wake" => self.wake = time(value)?,
            "wake_after" => self.wake_after = time(value)?,
            "drift" => {
                self.drift = match value.parse::<f64>() {
                    Ok(f) if f.is_finite() && (-1.0..=100.0).contains(&f) => f,
                    _ => {
                        return Err(Error::usage(format!(
                            "sim key drift='{value}' must be a fraction per second from -1 to 100, e.g. 0.3"
                        )))
                    }
                }
            }
            "cmd_queue" => self.app.cmd_queue = count(value)?,
            "random_area" => self.app.random_area = size(value)?,
            "host_timing" => {
                self.host.timing = Some(Timing::from_sim_name(value).ok_or_else(|| {
                    Error::usage(format!(
                        "sim key host_timing='{value}' must be one of {}",
                        Timing::SIM_NAMES.join(", ")
                    ))
                })?)
            }
            "usb" => {
                self.host.usb = Some(match value {
                    "2" | "2.0" => 2,
                    "3" | "3.0" => 3,
                    _ => {
                        return Err(Error::usage(format!(
                            "sim key usb='{value}' must be 2.0 or 3.0 (the USB generation of the card's reader)"
                        )))
                    }
                })
            }
            "uas" | "host_cmdq" => {
                let on = match value {
                    "1" => true,
                    "0" => false,
                    _ => {
                        return Err(Error::usage(format!(
                            "sim key {key}='{value}' must be 0 or 1"
                        )))
                    }
                };
                if key == "uas" {
                    self.host.uas = on;
                } else {
                    self.host.cmdq = Some(on);
                }
            }
            "cache_bw" if value.trim() == "0" => self.cache_bw = 0,
            "cache_bw" => self.cache_bw = parse_bw(key, value)?,
            _ => {
                let names: Vec<&str> = KEYS.iter().map(|k| k.key).collect();
                return Err(Error::usage(format!(
                    "unknown sim key '{key}': valid keys are {}",
                    names.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// Check the parameters describe a device that can exist.
    pub fn validate(&self) -> Result<()> {
        let e = |m: String| Err(Error::usage(m));
        if let (Some(t), Some(_)) = (self.host.timing, self.host.usb) {
            return e(format!(
                "sim keys host_timing={} and usb are given together: a card in a USB reader shows the host no MMC bus timing; keep one",
                t.sim_name()
            ));
        }
        if self.host.uas && self.host.usb.is_none() {
            return e("sim key uas=1 needs usb=2.0 or usb=3.0 (UAS is a USB transport)".into());
        }
        if let Some(t) = self.host.timing {
            let sd_mode = t.uhs() || matches!(t, Timing::SdHighSpeed);
            let mmc_mode = matches!(
                t,
                Timing::MmcHighSpeed | Timing::MmcDdr52 | Timing::MmcHs200 | Timing::MmcHs400
            );
            let fits = match self.card {
                CardBus::Sd => !mmc_mode,
                CardBus::Mmc => !sd_mode,
                CardBus::None => false,
            };
            if !fits {
                return e(format!(
                    "sim key host_timing={} does not fit card={}: SD modes (sd-hs, sdr*, ddr50) need card=sd, eMMC modes (mmc-hs, ddr52, hs200, hs400) card=mmc, and card=none has no MMC bus (use usb=2.0 or 3.0)",
                    t.sim_name(),
                    self.card.name()
                ));
            }
        }
        if self.sector != 512 && self.sector != 4096 {
            return e(format!(
                "sim key sector={} must be 512 or 4096",
                self.sector
            ));
        }
        if self.size == 0 || self.size % self.sector as u64 != 0 {
            return e(format!(
                "sim size={} must be a positive multiple of the {}-byte sector",
                self.size, self.sector
            ));
        }
        if !is_pow2_or_3x(self.erase) {
            return e(format!(
                "sim erase={} is neither a power of two nor 3 x a power of two (e.g. 4M or 12M)",
                self.erase
            ));
        }
        if !is_pow2_or_3x(self.page) {
            return e(format!(
                "sim page={} is neither a power of two nor 3 x a power of two (e.g. 16K or 24K)",
                self.page
            ));
        }
        if self.page < self.sector as u64 {
            return e(format!(
                "sim page={} is smaller than the {}-byte sector",
                self.page, self.sector
            ));
        }
        if self.page > self.erase {
            return e(format!(
                "sim page={} is larger than erase={}",
                self.page, self.erase
            ));
        }
        if self.erase % self.page != 0 {
            return e(format!(
                "sim page={} does not divide erase={}",
                self.page, self.erase
            ));
        }
        if self.size < self.erase {
            return e(format!(
                "sim size={} is smaller than one erase block ({})",
                format_bytes(self.size),
                format_bytes(self.erase)
            ));
        }
        if self.open_au == 0 {
            return e("sim open_au must be at least 1".to_string());
        }
        if self.open_au > 4096 || self.open_au_random > 4096 {
            return e("sim open_au and open_au_random must be at most 4096".to_string());
        }
        if self.fat_au as u64 * self.erase > self.size {
            return e(format!(
                "sim fat_au={} erase blocks do not fit in size={}",
                self.fat_au,
                format_bytes(self.size)
            ));
        }
        if self.slc > self.size {
            return e(format!(
                "sim slc={} is larger than size={}",
                format_bytes(self.slc),
                format_bytes(self.size)
            ));
        }
        if let Some(real) = self.real {
            if real > self.size {
                return e(format!(
                    "sim real={} is larger than size={}: a fake card holds less than it announces",
                    format_bytes(real),
                    format_bytes(self.size)
                ));
            }
            if real == 0 || real % self.sector as u64 != 0 {
                return e(format!(
                    "sim real={real} must be a positive multiple of the sector size"
                ));
            }
        }
        if self.read_cache > 64 * MIB || self.prefetch > 64 * MIB {
            return e(format!(
                "sim read_cache={} and prefetch={} must be at most 64 MiB each (a controller's RAM)",
                format_bytes(self.read_cache),
                format_bytes(self.prefetch)
            ));
        }
        if self.app.cmd_queue == 0 || self.app.cmd_queue > 256 {
            return e(format!(
                "sim cmd_queue={} must be from 1 (no command queue) to 256",
                self.app.cmd_queue
            ));
        }
        if self.app.random_area > self.size {
            return e(format!(
                "sim random_area={} is larger than size={}",
                format_bytes(self.app.random_area),
                format_bytes(self.size)
            ));
        }
        if self.card != CardBus::Mmc && (self.life_time.is_some() || self.pre_eol.is_some()) {
            return e(format!(
                "sim keys life_time and pre_eol describe an eMMC, and this card is card={}: add card=mmc",
                self.card.name()
            ));
        }
        for f in &self.faults {
            if let Fault::Eio { offset, len } | Fault::Flip { offset, len } = *f {
                if offset.checked_add(len).is_none_or(|end| end > self.size) {
                    return e(format!(
                        "fault range {offset}+{len} reaches beyond the end of the device ({} bytes)",
                        self.size
                    ));
                }
            }
        }
        Ok(())
    }

    /// The host path the card sits behind, as a kernel presents it (`SimHost::presented`).
    pub fn host_presented(&self) -> PresentedHost {
        self.host.presented(self.card)
    }

    /// The sysfs attributes the card presents, as the Linux MMC core prints them in
    /// `/sys/class/block/mmcblkN/device/`: `type`, and for an eMMC `rev` (`0x%x`),
    /// `life_time` (`0x%02x 0x%02x`) and `pre_eol_info` (`0x%02x`), which the kernel fills
    /// from EXT_CSD only at revision 7 and later (0x00 = not defined below that). Empty
    /// for `card=none`. Readers (e.g. `health`) take this map as they take a directory.
    pub fn card_attributes(&self) -> std::collections::BTreeMap<String, String> {
        let mut m = std::collections::BTreeMap::new();
        match self.card {
            CardBus::None => {}
            CardBus::Sd => {
                m.insert("type".to_string(), "SD".to_string());
            }
            CardBus::Mmc => {
                m.insert("type".to_string(), "MMC".to_string());
                m.insert("rev".to_string(), format!("0x{:x}", self.ext_csd_rev));
                let provided = self.ext_csd_rev >= 7;
                let (a, b) = self.life_time.filter(|_| provided).unwrap_or((0, 0));
                m.insert("life_time".to_string(), format!("0x{a:02x} 0x{b:02x}"));
                let p = self.pre_eol.filter(|_| provided).unwrap_or(0);
                m.insert("pre_eol_info".to_string(), format!("0x{p:02x}"));
            }
        }
        m
    }

    /// The keys and values as `key=value` pairs, in the documented order.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![
            ("size", format_bytes(self.size)),
            ("erase", format_bytes(self.erase)),
            ("page", format_bytes(self.page)),
            ("open_au", self.open_au.to_string()),
            ("open_au_random", self.open_au_random.to_string()),
            ("fat_au", self.fat_au.to_string()),
            ("slc", format_bytes(self.slc)),
        ];
        if let Some(real) = self.real {
            v.push(("real", format_bytes(real)));
            v.push(("fake_mode", self.fake_mode.name().to_string()));
        }
        v.extend([
            ("noise", self.noise.to_string()),
            ("outliers", self.outliers.to_string()),
            ("outlier_max", format_ns(self.outlier_max as f64)),
            ("seed", self.seed.to_string()),
            ("read_bw", format!("{}/s", format_bytes(self.read_bw))),
            ("write_bw", format!("{}/s", format_bytes(self.write_bw))),
            ("native_bw", format!("{}/s", format_bytes(self.native_bw))),
            ("cmd", format_ns(self.cmd as f64)),
            ("page_cost", format_ns(self.page_cost as f64)),
            ("erase_cost", format_ns(self.erase_cost as f64)),
            ("erase_time", format_ns(self.erase_time as f64)),
            ("sector", self.sector.to_string()),
        ]);
        if self.card != CardBus::Sd {
            v.push(("card", self.card.name().to_string()));
        }
        if self.card == CardBus::Mmc {
            v.push(("ext_csd_rev", self.ext_csd_rev.to_string()));
        }
        if let Some((a, b)) = self.life_time {
            v.push(("life_time", format!("0x{a:02x}/0x{b:02x}")));
        }
        if let Some(p) = self.pre_eol {
            v.push(("pre_eol", p.to_string()));
        }
        if self.cache > 0 {
            v.push(("cache", format_bytes(self.cache)));
        }
        if self.cache_bw > 0 {
            v.push(("cache_bw", format!("{}/s", format_bytes(self.cache_bw))));
        }
        if self.read_cache > 0 {
            v.push(("read_cache", format_bytes(self.read_cache)));
            v.push(("read_hit", format_ns(self.read_hit as f64)));
        }
        if self.prefetch > 0 {
            v.push(("prefetch", format_bytes(self.prefetch)));
        }
        if self.wake > 0 {
            v.push(("wake", format_ns(self.wake as f64)));
            v.push(("wake_after", format_ns(self.wake_after as f64)));
        }
        if self.drift != 0.0 {
            v.push(("drift", self.drift.to_string()));
        }
        if self.app.cmd_queue != 1 {
            v.push(("cmd_queue", self.app.cmd_queue.to_string()));
        }
        if self.app.random_area > 0 {
            v.push(("random_area", format_bytes(self.app.random_area)));
        }
        if let Some(t) = self.host.timing {
            v.push(("host_timing", t.sim_name().to_string()));
        }
        if let Some(gen) = self.host.usb {
            v.push(("usb", format!("{gen}.0")));
            v.push(("uas", u8::from(self.host.uas).to_string()));
        }
        if let Some(q) = self.host.cmdq {
            v.push(("host_cmdq", u8::from(q).to_string()));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse_and_validate() {
        for p in PRESETS {
            let cfg = SimConfig::parse(p.name).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(cfg.preset, p.name);
        }
        let fake = SimConfig::parse("fake-64g").unwrap();
        assert_eq!(fake.size, 64 * GIB);
        assert_eq!(fake.real, Some(8 * GIB));
        assert_eq!(fake.fake_mode, FakeMode::Wrap);
        assert_eq!(SimConfig::parse("sd-16g").unwrap().size, 16 * GIB);
    }

    #[test]
    fn custom_keys_override_defaults() {
        let c = SimConfig::parse(
            "custom,size=1T,erase=12M,page=24K,noise=0.1,fault=eio@1G+4K;vanish@100",
        )
        .unwrap();
        assert_eq!(c.size, 1 << 40);
        assert_eq!(c.erase, 12 * MIB);
        assert_eq!(c.page, 24 * KIB);
        assert_eq!(c.faults.len(), 2);
        assert_eq!(c.faults[1], Fault::Vanish { ops: 100 });
    }

    /// The host keys round-trip through `pairs`, and the host presents what a kernel
    /// prints: an SD host at high-speed queues nothing unless told, an eMMC host does.
    #[test]
    fn host_keys_round_trip_and_present_kernel_files() {
        for spec in [
            "custom,host_timing=sd-hs",
            "custom,host_timing=sdr104,host_cmdq=1",
            "custom,card=mmc,host_timing=hs400",
            "custom,card=none,usb=2.0",
            "custom,usb=3.0,uas=1",
        ] {
            let c = SimConfig::parse(spec).unwrap();
            let again: Vec<String> = c.pairs().iter().map(|(k, v)| format!("{k}={v}")).collect();
            let c2 = SimConfig::parse(&format!("custom,{}", again.join(","))).unwrap();
            assert_eq!(c2.host, c.host, "{spec}");
        }
        let sd = SimConfig::parse("custom,host_timing=sd-hs").unwrap();
        assert!(!sd.host.queues(sd.card));
        assert_eq!(sd.host.cap(sd.card), (Some(22_400_000), 0));
        let p = sd.host.presented(sd.card);
        let ios = p.ios.unwrap();
        assert!(ios.contains("timing spec:\t2 (sd high-speed)\n"), "{ios}");
        assert!(
            ios.contains("bus width:\t2 (4 bits)\n") && ios.contains("(3.30 V)"),
            "{ios}"
        );
        assert_eq!(p.cmdq_en, None);
        let emmc = SimConfig::parse("custom,card=mmc,host_timing=hs200").unwrap();
        assert!(emmc.host.queues(emmc.card));
        assert_eq!(emmc.host.presented(emmc.card).cmdq_en.as_deref(), Some("1"));
        let bot = SimConfig::parse("custom,usb=2.0").unwrap();
        assert!(!bot.host.queues(bot.card));
        let p = bot.host.presented(bot.card);
        assert_eq!(
            (
                p.usb_speed.as_deref(),
                p.usb_protocol.as_deref(),
                p.usb_driver.as_deref()
            ),
            (Some("480"), Some("50"), Some("usb-storage"))
        );
        assert_eq!(
            SimConfig::parse("custom").unwrap().host.cap(CardBus::Sd),
            (None, 0)
        );
    }

    #[test]
    fn malformed_specs_name_the_offending_value() {
        let cases = [
            ("custom,size=banana", "banana"),
            ("custom,colour=red", "colour"),
            ("custom,erase=5M", "erase"),
            ("custom,page=8M,erase=4M", "larger than erase"),
            ("custom,page=12K,erase=4M", "does not divide"),
            ("custom,real=32G,size=16G", "larger than size"),
            ("custom,size=1M,erase=4M", "smaller than one erase block"),
            ("custom,fake_mode=magic", "magic"),
            ("custom,fault=boom@3", "boom"),
            ("custom,noise=2", "noise"),
            ("nosuchcard", "nosuchcard"),
            ("custom,size", "key=value"),
            ("custom,cmd_queue=0", "cmd_queue"),
            ("custom,host_timing=sdr208", "host_timing"),
            ("custom,host_timing=hs200", "does not fit card=sd"),
            (
                "custom,card=mmc,host_timing=sdr104",
                "does not fit card=mmc",
            ),
            (
                "custom,card=none,host_timing=sd-hs",
                "card=none has no MMC bus",
            ),
            ("custom,host_timing=sd-hs,usb=2.0", "keep one"),
            ("custom,usb=1.1", "usb"),
            ("custom,uas=1", "needs usb"),
            ("custom,host_cmdq=yes", "host_cmdq"),
            ("custom,size=1G,random_area=2G", "random_area"),
        ];
        for (spec, needle) in cases {
            let err = SimConfig::parse(spec).expect_err(spec).to_string();
            assert!(err.contains(needle), "{spec}: {err}");
        }
    }
}
