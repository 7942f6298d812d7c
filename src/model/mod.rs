//! The datasheet calculator: an upper bound for the sequential write and read speed of raw
//! flash behind a simple controller (SPI NOR, SPI NAND, raw NAND), from the erase time,
//! erase block, program time, page and bus figures, with every term shown so a person can
//! check it against the datasheet. `reference` holds the vendor's measured figures.
//!
//! write time = erase × ⌈total / erase block⌉ + program × ⌈total / page⌉
//!            + total / bus rate + command bytes per page on the command lines
//! read rate  = bytes per command / (command bytes on the command lines + bytes on the bus)

pub mod reference;

use crate::vocab::units::{format_bytes, parse_duration_ns, parse_size};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// The kind of flash and its bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlashKind {
    /// Serial NOR: commands on one line, data on 1, 2 or 4; reads continue across pages.
    SpiNor,
    /// Serial NAND: commands on one line, data on 1, 2 or 4; one read command per page.
    SpiNand,
    /// Parallel NAND: commands, addresses and data on the 8- or 16-bit bus; one read per page.
    RawNand,
}

impl FlashKind {
    /// The kind's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FlashKind::SpiNor => "spi-nor",
            FlashKind::SpiNand => "spi-nand",
            FlashKind::RawNand => "raw-nand",
        }
    }

    /// Lines the command, address and dummy bytes travel on.
    pub fn command_lines(self, bus_lines: u32) -> u32 {
        match self {
            FlashKind::SpiNor | FlashKind::SpiNand => 1,
            FlashKind::RawNand => bus_lines,
        }
    }
}

/// A frequency with SI units: `100 MHz`, `33.3 kHz`.
pub fn format_hz(hz: f64) -> String {
    let (v, unit) = if hz >= 1e9 {
        (hz / 1e9, "GHz")
    } else if hz >= 1e6 {
        (hz / 1e6, "MHz")
    } else if hz >= 1e3 {
        (hz / 1e3, "kHz")
    } else {
        (hz, "Hz")
    };
    let s = format!("{v:.3}");
    format!("{} {unit}", s.trim_end_matches('0').trim_end_matches('.'))
}

/// The figures a datasheet gives, checked (all positive).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Datasheet {
    pub kind: FlashKind,
    /// Block erase time (tBE), ns.
    pub erase_ns: u64,
    pub erase_block_bytes: u64,
    /// Page program time (tPP / tPROG), ns.
    pub program_ns: u64,
    pub page_bytes: u64,
    pub bus_clock_hz: f64,
    pub bus_lines: u32,
    /// Command + address + dummy bytes per command.
    pub cmd_bytes: u64,
    /// Amount written for the model.
    pub total_bytes: u64,
    /// Bytes read per read command (a page for NAND, everything for NOR by default).
    pub read_bytes_per_command: u64,
}

/// The figures as the user typed them; `None` where not given.
#[derive(Debug, Clone, Default)]
pub struct DatasheetText {
    pub kind: Option<FlashKind>,
    pub erase_time: Option<String>,
    pub erase_block: Option<String>,
    pub program_time: Option<String>,
    pub page: Option<String>,
    pub bus_clock: Option<String>,
    pub bus_lines: Option<String>,
    pub cmd_bytes: Option<String>,
    pub total: Option<String>,
    pub read_chunk: Option<String>,
}

/// Default amount written when `--size` is left out; the speed does not depend on it
/// once it spans whole erase blocks.
pub const DEFAULT_TOTAL: u64 = 128 << 20;

/// "missing --page: give the page size from the datasheet, e.g. 2K".
fn missing(option: &str, what: &str) -> Error {
    let (thing, example) = what.split_once(", e.g.").unwrap_or((what, ""));
    let example = if example.is_empty() {
        String::new()
    } else {
        format!(", e.g.{example}")
    };
    Error::usage(format!(
        "missing {option}: give {thing} from the datasheet{example}"
    ))
}

fn positive_time(text: &Option<String>, option: &str, what: &str) -> Result<u64> {
    let t = text.as_deref().ok_or_else(|| missing(option, what))?;
    let ns = parse_duration_ns(t).map_err(|e| Error::usage(format!("{option}: {e}")))?;
    if ns == 0 {
        return Err(Error::usage(format!(
            "{option} '{t}' is not positive: give {what}"
        )));
    }
    Ok(ns)
}

fn positive_size(text: &Option<String>, option: &str, what: &str) -> Result<u64> {
    let t = text.as_deref().ok_or_else(|| missing(option, what))?;
    let v = parse_size(t).map_err(|e| Error::usage(format!("{option}: {e}")))?;
    if v == 0 {
        return Err(Error::usage(format!(
            "{option} '{t}' is not positive: give {what}"
        )));
    }
    Ok(v)
}

/// Parse a frequency: Hz with an optional k, M or G (powers of 1000) and optional "Hz",
/// e.g. `100MHz`, `50M`, `2.5e7`.
pub fn parse_frequency_hz(text: &str) -> Result<f64> {
    let t = text.trim();
    let bad = || {
        Error::usage(format!(
            "'{text}' is not a frequency: use Hz with k, M or G, e.g. 100MHz"
        ))
    };
    let lower = t.to_ascii_lowercase();
    let s = lower.strip_suffix("hz").unwrap_or(&lower).trim();
    let (num, mult) = if let Some(n) = s.strip_suffix('k') {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 1e6)
    } else if let Some(n) = s.strip_suffix('g') {
        (n, 1e9)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    let hz = v * mult;
    if !hz.is_finite() {
        return Err(bad());
    }
    Ok(hz)
}

impl DatasheetText {
    /// Whether any figure was given (`--reference` alone shows only the reference rows).
    pub fn any_given(&self) -> bool {
        self.kind.is_some()
            || [
                &self.erase_time,
                &self.erase_block,
                &self.program_time,
                &self.page,
                &self.bus_clock,
                &self.bus_lines,
                &self.cmd_bytes,
                &self.total,
                &self.read_chunk,
            ]
            .iter()
            .any(|o| o.is_some())
    }

    /// Check every figure: present, parsable and positive; errors name the option and what
    /// to give.
    pub fn parse(&self) -> Result<Datasheet> {
        let kind = self
            .kind
            .ok_or_else(|| Error::usage("missing --kind: give spi-nor, spi-nand or raw-nand"))?;
        let erase_ns = positive_time(
            &self.erase_time,
            "--erase-time",
            "the block erase time (tBE), e.g. 3ms",
        )?;
        let erase_block_bytes = positive_size(
            &self.erase_block,
            "--erase-size",
            "the erase block size, e.g. 128K",
        )?;
        let program_ns = positive_time(
            &self.program_time,
            "--program-time",
            "the page program time (tPP or tPROG), e.g. 400us",
        )?;
        let page_bytes = positive_size(&self.page, "--page", "the page size, e.g. 2K")?;
        let clock_text = self
            .bus_clock
            .as_deref()
            .ok_or_else(|| missing("--bus-clock", "the bus clock, e.g. 100MHz"))?;
        let bus_clock_hz = parse_frequency_hz(clock_text)
            .map_err(|e| Error::usage(format!("--bus-clock: {e}")))?;
        if bus_clock_hz <= 0.0 {
            return Err(Error::usage(format!(
                "--bus-clock '{clock_text}' is not positive: give the bus clock, e.g. 100MHz"
            )));
        }
        let lines_text = self.bus_lines.as_deref().ok_or_else(|| {
            missing(
                "--bus-lines",
                "the number of data lines, e.g. 4 for quad SPI",
            )
        })?;
        let bus_lines: u32 = lines_text.trim().parse().map_err(|_| {
            Error::usage(format!(
                "--bus-lines '{lines_text}' is not a whole number: give the data lines, e.g. 1, 2, 4 or 8"
            ))
        })?;
        if ![1, 2, 4, 8, 16].contains(&bus_lines) {
            return Err(Error::usage(format!(
                "--bus-lines '{lines_text}': a flash bus has 1, 2, 4, 8 or 16 data lines (SPI 1/2/4/8, SD 1/4, eMMC 1/4/8, raw NAND 8/16)"
            )));
        }
        let cmd_bytes = match self.cmd_bytes.as_deref() {
            None => 0,
            Some(t) => t.trim().parse::<u64>().map_err(|_| {
                Error::usage(format!(
                    "--cmd-bytes '{t}' is not a whole number: give command + address + dummy bytes, e.g. 5"
                ))
            })?,
        };
        let total_bytes = match &self.total {
            None => DEFAULT_TOTAL,
            t => positive_size(t, "--size", "the amount to write, e.g. 32M")?,
        };
        if page_bytes > erase_block_bytes {
            return Err(Error::usage(format!(
                "--page {} is larger than --erase-size {}: a page is part of an erase block",
                format_bytes(page_bytes),
                format_bytes(erase_block_bytes)
            )));
        }
        let read_bytes_per_command = match &self.read_chunk {
            Some(_) => positive_size(
                &self.read_chunk,
                "--read-chunk",
                "bytes per read command, e.g. 2K",
            )?,
            None => match kind {
                FlashKind::SpiNor => total_bytes,
                FlashKind::SpiNand | FlashKind::RawNand => page_bytes,
            },
        };
        Ok(Datasheet {
            kind,
            erase_ns,
            erase_block_bytes,
            program_ns,
            page_bytes,
            bus_clock_hz,
            bus_lines,
            cmd_bytes,
            total_bytes,
            read_bytes_per_command,
        })
    }
}

/// Nanoseconds go out as whole numbers, as everywhere in flashscope's JSON.
fn whole_ns<S: serde::Serializer>(ns: &f64, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_u64(as_whole_ns(*ns))
}

/// A time as the document holds it: whole nanoseconds, 0 when not positive or not finite
/// (the text shows the same figure as the JSON, whether printed live or from a saved run).
pub fn as_whole_ns(ns: f64) -> u64 {
    if ns.is_finite() && ns > 0.0 {
        ns.round() as u64
    } else {
        0
    }
}

/// One term of the model: how many operations, each how long, together how long.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Term {
    /// "erase", "program", "bus" or "command".
    pub name: String,
    pub count: u64,
    #[serde(serialize_with = "whole_ns")]
    pub each_ns: f64,
    #[serde(serialize_with = "whole_ns")]
    pub total_ns: f64,
    /// The arithmetic in words.
    pub formula: String,
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub write_terms: Vec<Term>,
    #[serde(serialize_with = "whole_ns")]
    pub write_ns: f64,
    pub write_bytes_per_s: f64,
    /// Data rate of the bus: clock × lines / 8.
    pub bus_bytes_per_s: f64,
    pub read_terms: Vec<Term>,
    #[serde(serialize_with = "whole_ns")]
    pub read_ns: f64,
    /// Bus-limited sequential read speed, command overhead included.
    pub read_bytes_per_s: f64,
}

/// Evaluate the model.
pub fn estimate(d: &Datasheet) -> Estimate {
    let bus = d.bus_clock_hz * d.bus_lines as f64 / 8.0;
    let cmd_lines = d.kind.command_lines(d.bus_lines) as f64;
    let cmd_ns = d.cmd_bytes as f64 * 8.0 / cmd_lines / d.bus_clock_hz * 1e9;
    let blocks = d.total_bytes.div_ceil(d.erase_block_bytes);
    let pages = d.total_bytes.div_ceil(d.page_bytes);
    let bus_ns = d.total_bytes as f64 / bus * 1e9;
    let write_terms = vec![
        Term {
            name: "erase".into(),
            count: blocks,
            each_ns: d.erase_ns as f64,
            total_ns: blocks as f64 * d.erase_ns as f64,
            formula: format!(
                "{blocks} erase blocks of {} × erase time",
                format_bytes(d.erase_block_bytes)
            ),
        },
        Term {
            name: "program".into(),
            count: pages,
            each_ns: d.program_ns as f64,
            total_ns: pages as f64 * d.program_ns as f64,
            formula: format!(
                "{pages} pages of {} × program time",
                format_bytes(d.page_bytes)
            ),
        },
        Term {
            name: "bus".into(),
            count: 1,
            each_ns: bus_ns,
            total_ns: bus_ns,
            formula: format!(
                "{} ÷ ({} × {} lines ÷ 8)",
                format_bytes(d.total_bytes),
                format_hz(d.bus_clock_hz),
                d.bus_lines
            ),
        },
        Term {
            name: "command".into(),
            count: pages,
            each_ns: cmd_ns,
            total_ns: pages as f64 * cmd_ns,
            formula: format!(
                "{pages} program commands × {} command bytes on {} line(s)",
                d.cmd_bytes, cmd_lines
            ),
        },
    ];
    let write_ns: f64 = write_terms.iter().map(|t| t.total_ns).sum();
    let chunk = d.read_bytes_per_command.max(1);
    let commands = d.total_bytes.div_ceil(chunk);
    let read_terms = vec![
        Term {
            name: "bus".into(),
            count: 1,
            each_ns: bus_ns,
            total_ns: bus_ns,
            formula: format!(
                "{} ÷ ({} × {} lines ÷ 8)",
                format_bytes(d.total_bytes),
                format_hz(d.bus_clock_hz),
                d.bus_lines
            ),
        },
        Term {
            name: "command".into(),
            count: commands,
            each_ns: cmd_ns,
            total_ns: commands as f64 * cmd_ns,
            formula: format!(
                "{commands} read commands of {} × {} command bytes on {} line(s)",
                format_bytes(chunk),
                d.cmd_bytes,
                cmd_lines
            ),
        },
    ];
    let read_ns: f64 = read_terms.iter().map(|t| t.total_ns).sum();
    Estimate {
        write_terms,
        write_ns,
        write_bytes_per_s: d.total_bytes as f64 / write_ns * 1e9,
        bus_bytes_per_s: bus,
        read_terms,
        read_ns,
        read_bytes_per_s: d.total_bytes as f64 / read_ns * 1e9,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(kind: FlashKind, e: &str, eb: &str, p: &str, pg: &str, total: &str) -> DatasheetText {
        DatasheetText {
            kind: Some(kind),
            erase_time: Some(e.into()),
            erase_block: Some(eb.into()),
            program_time: Some(p.into()),
            page: Some(pg.into()),
            bus_clock: Some("100MHz".into()),
            bus_lines: Some("4".into()),
            cmd_bytes: None,
            total: Some(total.into()),
            read_chunk: None,
        }
    }

    /// Worked example 1 of datasheet-model.md: GD25Q256E, about 290 KiB/s.
    #[test]
    fn spi_nor_worked_example() {
        let d = text(FlashKind::SpiNor, "0.15s", "64K", "0.25ms", "256", "32M")
            .parse()
            .unwrap();
        let e = estimate(&d);
        let t: Vec<f64> = e.write_terms.iter().map(|t| t.total_ns / 1e9).collect();
        assert!((t[0] - 76.8).abs() < 1e-9, "{t:?}");
        assert!((t[1] - 32.768).abs() < 1e-9);
        assert!((t[2] - 0.671).abs() < 0.001);
        assert_eq!(t[3], 0.0);
        let kib_s = e.write_bytes_per_s / 1024.0;
        assert!((kib_s - 297.2).abs() < 0.5, "{kib_s}");
        assert!((e.bus_bytes_per_s / 1048576.0 - 47.68).abs() < 0.01);
    }

    /// Worked example 2: GD5F1GQ4UAYIG, 4.0 MiB/s.
    #[test]
    fn spi_nand_worked_example() {
        let d = text(FlashKind::SpiNand, "3ms", "128K", "0.4ms", "2K", "128M")
            .parse()
            .unwrap();
        let e = estimate(&d);
        let ms: Vec<f64> = e.write_terms.iter().map(|t| t.total_ns / 1e6).collect();
        assert!((ms[0] - 3072.0).abs() < 1e-6, "{ms:?}");
        assert!((ms[1] - 26214.4).abs() < 1e-6);
        assert!((ms[2] - 2684.0).abs() < 1.0);
        let mib_s = e.write_bytes_per_s / 1048576.0;
        assert!((mib_s - 4.0).abs() < 0.01, "{mib_s}");
    }

    /// The read formula of datasheet-model.md: (N/4) / (5 + N/4) × clock × 4 bit/s.
    #[test]
    fn read_rate_follows_the_command_overhead_formula() {
        let mut t = text(FlashKind::SpiNand, "3ms", "128K", "0.4ms", "2K", "128M");
        t.cmd_bytes = Some("5".into());
        let e = estimate(&t.parse().unwrap());
        let n = 2048.0;
        let expect = (n / 4.0) / (5.0 + n / 4.0) * 100e6 * 4.0 / 8.0;
        assert!((e.read_bytes_per_s - expect).abs() / expect < 1e-9);
        // Without command bytes the read runs at the bus rate.
        let e0 = estimate(
            &text(FlashKind::SpiNor, "1s", "4K", "1ms", "256", "1M")
                .parse()
                .unwrap(),
        );
        assert!((e0.read_bytes_per_s - 50e6).abs() < 1.0);
    }

    #[test]
    fn missing_or_non_positive_figures_are_named() {
        let good = text(FlashKind::SpiNand, "3ms", "128K", "0.4ms", "2K", "128M");
        let cases: Vec<(DatasheetText, &str)> = vec![
            (
                DatasheetText {
                    erase_time: None,
                    ..good.clone()
                },
                "missing --erase-time: give the block erase time (tBE) from the datasheet, e.g. 3ms",
            ),
            (
                DatasheetText {
                    kind: None,
                    ..good.clone()
                },
                "missing --kind",
            ),
            (
                DatasheetText {
                    page: Some("0".into()),
                    ..good.clone()
                },
                "--page '0' is not positive",
            ),
            (
                DatasheetText {
                    program_time: Some("0ms".into()),
                    ..good.clone()
                },
                "--program-time '0ms' is not positive",
            ),
            (
                DatasheetText {
                    erase_time: Some("-3ms".into()),
                    ..good.clone()
                },
                "--erase-time",
            ),
            (
                DatasheetText {
                    bus_clock: Some("0".into()),
                    ..good.clone()
                },
                "--bus-clock '0' is not positive",
            ),
            (
                DatasheetText {
                    bus_clock: Some("-5MHz".into()),
                    ..good.clone()
                },
                "--bus-clock '-5MHz' is not positive",
            ),
            (
                DatasheetText {
                    bus_lines: Some("0".into()),
                    ..good.clone()
                },
                "--bus-lines '0'",
            ),
            (
                DatasheetText {
                    bus_lines: None,
                    ..good.clone()
                },
                "missing --bus-lines",
            ),
            (
                DatasheetText {
                    total: Some("0".into()),
                    ..good.clone()
                },
                "--size '0'",
            ),
            (
                DatasheetText {
                    page: Some("1M".into()),
                    ..good.clone()
                },
                "larger than --erase-size",
            ),
        ];
        for (t, want) in cases {
            let e = t.parse().unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(want), "{e} lacks {want}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// The model is never faster than any one of its limits alone, and a slower figure
        /// never makes it faster.
        #[test]
        fn never_faster_than_any_single_limit(
            erase_us in 1u64..2_000_000,
            block_shift in 12u32..22,
            program_us in 1u64..5_000,
            page_shift in 8u32..12,
            clock_mhz in 1u32..200,
            lines in proptest::sample::select(vec![1u32, 2, 4, 8]),
            cmd in 0u64..8,
            total_mib in 1u64..64,
        ) {
            let d = Datasheet {
                kind: FlashKind::SpiNand,
                erase_ns: erase_us * 1000,
                erase_block_bytes: 1 << block_shift,
                program_ns: program_us * 1000,
                page_bytes: 1 << page_shift,
                bus_clock_hz: clock_mhz as f64 * 1e6,
                bus_lines: lines,
                cmd_bytes: cmd,
                total_bytes: total_mib << 20,
                read_bytes_per_command: 1 << page_shift,
            };
            let e = estimate(&d);
            let eps = 1.0 + 1e-9;
            proptest::prop_assert!(e.write_bytes_per_s > 0.0 && e.write_bytes_per_s.is_finite());
            proptest::prop_assert!(e.write_bytes_per_s <= e.bus_bytes_per_s * eps);
            proptest::prop_assert!(e.write_bytes_per_s <= d.page_bytes as f64 / (d.program_ns as f64 / 1e9) * eps);
            proptest::prop_assert!(e.write_bytes_per_s <= d.erase_block_bytes as f64 / (d.erase_ns as f64 / 1e9) * eps);
            proptest::prop_assert!(e.read_bytes_per_s <= e.bus_bytes_per_s * eps);
            let slower = estimate(&Datasheet { program_ns: d.program_ns * 2, ..d.clone() });
            proptest::prop_assert!(slower.write_bytes_per_s < e.write_bytes_per_s);
            let wider = estimate(&Datasheet { bus_lines: d.bus_lines * 2, ..d.clone() });
            proptest::prop_assert!(wider.write_bytes_per_s >= e.write_bytes_per_s);
        }
    }

    #[test]
    fn frequencies_parse_in_powers_of_1000() {
        assert_eq!(parse_frequency_hz("100MHz").unwrap(), 100e6);
        assert_eq!(parse_frequency_hz("50m").unwrap(), 50e6);
        assert_eq!(parse_frequency_hz("2.5e7").unwrap(), 25e6);
        assert_eq!(parse_frequency_hz("33 kHz").unwrap(), 33e3);
        assert!(parse_frequency_hz("fast").is_err());
        assert_eq!(format_hz(100e6), "100 MHz");
        assert_eq!(format_hz(33.3e3), "33.3 kHz");
    }
}
