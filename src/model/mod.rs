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
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
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

/// The figures as given, each parsed once where it was given (the command line parses
/// them with [`Figure::parse`]); `None` where not given.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DatasheetFigures {
    pub kind: Option<FlashKind>,
    pub erase_ns: Option<u64>,
    pub erase_block_bytes: Option<u64>,
    pub program_ns: Option<u64>,
    pub page_bytes: Option<u64>,
    pub bus_clock_hz: Option<f64>,
    pub bus_lines: Option<u32>,
    pub cmd_bytes: Option<u64>,
    pub total_bytes: Option<u64>,
    pub read_chunk_bytes: Option<u64>,
}

/// Default amount written when `--size` is left out; the speed does not depend on it
/// once it spans whole erase blocks.
pub const DEFAULT_TOTAL: u64 = 128 << 20;

/// One datasheet figure's option: its name, what to give, and how its text reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    EraseTime,
    EraseSize,
    ProgramTime,
    Page,
    BusClock,
    BusLines,
    CmdBytes,
    Size,
    ReadChunk,
}

/// A figure's value, in the unit its option takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FigureValue {
    Ns(u64),
    Bytes(u64),
    Hz(f64),
    Count(u64),
}

impl Figure {
    /// The option's name on the command line.
    pub fn option(self) -> &'static str {
        match self {
            Figure::EraseTime => "--erase-time",
            Figure::EraseSize => "--erase-size",
            Figure::ProgramTime => "--program-time",
            Figure::Page => "--page",
            Figure::BusClock => "--bus-clock",
            Figure::BusLines => "--bus-lines",
            Figure::CmdBytes => "--cmd-bytes",
            Figure::Size => "--size",
            Figure::ReadChunk => "--read-chunk",
        }
    }

    /// What to give, with an example.
    fn what(self) -> &'static str {
        match self {
            Figure::EraseTime => "the block erase time (tBE), e.g. 3ms",
            Figure::EraseSize => "the erase block size, e.g. 128K",
            Figure::ProgramTime => "the page program time (tPP or tPROG), e.g. 400us",
            Figure::Page => "the page size, e.g. 2K",
            Figure::BusClock => "the bus clock, e.g. 100MHz",
            Figure::BusLines => "the number of data lines, e.g. 4 for quad SPI",
            Figure::CmdBytes => "command + address + dummy bytes, e.g. 5",
            Figure::Size => "the amount to write, e.g. 32M",
            Figure::ReadChunk => "bytes per read command, e.g. 2K",
        }
    }

    /// "missing --page: give the page size from the datasheet, e.g. 2K".
    fn missing(self) -> Error {
        let (thing, example) = self
            .what()
            .split_once(", e.g.")
            .unwrap_or((self.what(), ""));
        let example = if example.is_empty() {
            String::new()
        } else {
            format!(", e.g.{example}")
        };
        Error::usage(format!(
            "missing {}: give {thing} from the datasheet{example}",
            self.option()
        ))
    }

    /// Parse the option's text: a positive time, size or frequency, or a whole number;
    /// errors name the option, its text and what to give.
    pub fn parse(self, text: &str) -> Result<FigureValue> {
        let option = self.option();
        let not_positive = || {
            Error::usage(format!(
                "{option} '{text}' is not positive: give {}",
                self.what()
            ))
        };
        match self {
            Figure::EraseTime | Figure::ProgramTime => {
                let ns =
                    parse_duration_ns(text).map_err(|e| Error::usage(format!("{option}: {e}")))?;
                if ns == 0 {
                    return Err(not_positive());
                }
                Ok(FigureValue::Ns(ns))
            }
            Figure::EraseSize | Figure::Page | Figure::Size | Figure::ReadChunk => {
                let v = parse_size(text).map_err(|e| Error::usage(format!("{option}: {e}")))?;
                if v == 0 {
                    return Err(not_positive());
                }
                Ok(FigureValue::Bytes(v))
            }
            Figure::BusClock => {
                let hz =
                    parse_frequency_hz(text).map_err(|e| Error::usage(format!("{option}: {e}")))?;
                if hz <= 0.0 {
                    return Err(not_positive());
                }
                Ok(FigureValue::Hz(hz))
            }
            Figure::BusLines => {
                let lines: u32 = text.trim().parse().map_err(|_| {
                    Error::usage(format!(
                        "{option} '{text}' is not a whole number: give the data lines, e.g. 1, 2, 4 or 8"
                    ))
                })?;
                if ![1, 2, 4, 8, 16].contains(&lines) {
                    return Err(Error::usage(format!(
                        "{option} '{text}': a flash bus has 1, 2, 4, 8 or 16 data lines (SPI 1/2/4/8, SD 1/4, eMMC 1/4/8, raw NAND 8/16)"
                    )));
                }
                Ok(FigureValue::Count(lines.into()))
            }
            Figure::CmdBytes => text.trim().parse().map(FigureValue::Count).map_err(|_| {
                Error::usage(format!(
                    "{option} '{text}' is not a whole number: give {}",
                    self.what()
                ))
            }),
        }
    }
}

impl FigureValue {
    /// The value as a count of its unit (ns, bytes, lines); a frequency rounds to Hz.
    pub fn whole(self) -> u64 {
        match self {
            FigureValue::Ns(v) | FigureValue::Bytes(v) | FigureValue::Count(v) => v,
            FigureValue::Hz(hz) => hz.round() as u64,
        }
    }

    /// The value as a float (a frequency keeps its fraction).
    pub fn real(self) -> f64 {
        match self {
            FigureValue::Hz(hz) => hz,
            v => v.whole() as f64,
        }
    }
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

impl DatasheetFigures {
    /// Whether any figure was given (`--reference` alone shows only the reference rows).
    pub fn any_given(&self) -> bool {
        *self != DatasheetFigures::default()
    }

    /// The datasheet, when every figure it needs was given and they fit together; errors
    /// name the option and what to give.
    pub fn datasheet(&self) -> Result<Datasheet> {
        let kind = self
            .kind
            .ok_or_else(|| Error::usage("missing --kind: give spi-nor, spi-nand or raw-nand"))?;
        let need = |v: Option<u64>, f: Figure| v.ok_or_else(|| f.missing());
        let erase_ns = need(self.erase_ns, Figure::EraseTime)?;
        let erase_block_bytes = need(self.erase_block_bytes, Figure::EraseSize)?;
        let program_ns = need(self.program_ns, Figure::ProgramTime)?;
        let page_bytes = need(self.page_bytes, Figure::Page)?;
        let bus_clock_hz = self
            .bus_clock_hz
            .ok_or_else(|| Figure::BusClock.missing())?;
        let bus_lines = self.bus_lines.ok_or_else(|| Figure::BusLines.missing())?;
        let total_bytes = self.total_bytes.unwrap_or(DEFAULT_TOTAL);
        if page_bytes > erase_block_bytes {
            return Err(Error::usage(format!(
                "--page {} is larger than --erase-size {}: a page is part of an erase block",
                format_bytes(page_bytes),
                format_bytes(erase_block_bytes)
            )));
        }
        let read_bytes_per_command = self.read_chunk_bytes.unwrap_or(match kind {
            FlashKind::SpiNor => total_bytes,
            FlashKind::SpiNand | FlashKind::RawNand => page_bytes,
        });
        Ok(Datasheet {
            kind,
            erase_ns,
            erase_block_bytes,
            program_ns,
            page_bytes,
            bus_clock_hz,
            bus_lines,
            cmd_bytes: self.cmd_bytes.unwrap_or(0),
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Term {
    /// "erase", "program", "bus" or "command".
    pub name: String,
    pub count: u64,
    #[serde(serialize_with = "whole_ns")]
    #[cfg_attr(test, schemars(with = "u64"))]
    pub each_ns: f64,
    #[serde(serialize_with = "whole_ns")]
    #[cfg_attr(test, schemars(with = "u64"))]
    pub total_ns: f64,
    /// The arithmetic in words.
    pub formula: String,
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Estimate {
    pub write_terms: Vec<Term>,
    #[serde(serialize_with = "whole_ns")]
    #[cfg_attr(test, schemars(with = "u64"))]
    pub write_ns: f64,
    pub write_bytes_per_s: f64,
    /// Data rate of the bus: clock × lines / 8.
    pub bus_bytes_per_s: f64,
    pub read_terms: Vec<Term>,
    #[serde(serialize_with = "whole_ns")]
    #[cfg_attr(test, schemars(with = "u64"))]
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

    fn text(
        kind: FlashKind,
        e: &str,
        eb: &str,
        p: &str,
        pg: &str,
        total: &str,
    ) -> DatasheetFigures {
        let v = |f: Figure, t: &str| f.parse(t).unwrap();
        DatasheetFigures {
            kind: Some(kind),
            erase_ns: Some(v(Figure::EraseTime, e).whole()),
            erase_block_bytes: Some(v(Figure::EraseSize, eb).whole()),
            program_ns: Some(v(Figure::ProgramTime, p).whole()),
            page_bytes: Some(v(Figure::Page, pg).whole()),
            bus_clock_hz: Some(v(Figure::BusClock, "100MHz").real()),
            bus_lines: Some(v(Figure::BusLines, "4").whole() as u32),
            cmd_bytes: None,
            total_bytes: Some(v(Figure::Size, total).whole()),
            read_chunk_bytes: None,
        }
    }

    /// Worked example 1 of the vendor's storage-performance guide: GD25Q256E, about 290 KiB/s.
    #[test]
    fn spi_nor_worked_example() {
        let d = text(FlashKind::SpiNor, "0.15s", "64K", "0.25ms", "256", "32M")
            .datasheet()
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
            .datasheet()
            .unwrap();
        let e = estimate(&d);
        let ms: Vec<f64> = e.write_terms.iter().map(|t| t.total_ns / 1e6).collect();
        assert!((ms[0] - 3072.0).abs() < 1e-6, "{ms:?}");
        assert!((ms[1] - 26214.4).abs() < 1e-6);
        assert!((ms[2] - 2684.0).abs() < 1.0);
        let mib_s = e.write_bytes_per_s / 1048576.0;
        assert!((mib_s - 4.0).abs() < 0.01, "{mib_s}");
    }

    /// The guide's read formula: (N/4) / (5 + N/4) × clock × 4 bit/s.
    #[test]
    fn read_rate_follows_the_command_overhead_formula() {
        let mut t = text(FlashKind::SpiNand, "3ms", "128K", "0.4ms", "2K", "128M");
        t.cmd_bytes = Some(5);
        let e = estimate(&t.datasheet().unwrap());
        let n = 2048.0;
        let expect = (n / 4.0) / (5.0 + n / 4.0) * 100e6 * 4.0 / 8.0;
        assert!((e.read_bytes_per_s - expect).abs() / expect < 1e-9);
        // Without command bytes the read runs at the bus rate.
        let e0 = estimate(
            &text(FlashKind::SpiNor, "1s", "4K", "1ms", "256", "1M")
                .datasheet()
                .unwrap(),
        );
        assert!((e0.read_bytes_per_s - 50e6).abs() < 1.0);
    }

    #[test]
    fn missing_or_non_positive_figures_are_named() {
        let good = text(FlashKind::SpiNand, "3ms", "128K", "0.4ms", "2K", "128M");
        let missing: Vec<(DatasheetFigures, &str)> = vec![
            (
                DatasheetFigures {
                    erase_ns: None,
                    ..good
                },
                "missing --erase-time: give the block erase time (tBE) from the datasheet, e.g. 3ms",
            ),
            (DatasheetFigures { kind: None, ..good }, "missing --kind"),
            (
                DatasheetFigures {
                    bus_lines: None,
                    ..good
                },
                "missing --bus-lines",
            ),
            (
                DatasheetFigures {
                    page_bytes: Some(1 << 20),
                    ..good
                },
                "larger than --erase-size",
            ),
        ];
        for (t, want) in missing {
            let e = t.datasheet().unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(want), "{e} lacks {want}");
        }
        let unparsable = [
            (Figure::Page, "0", "--page '0' is not positive"),
            (
                Figure::ProgramTime,
                "0ms",
                "--program-time '0ms' is not positive",
            ),
            (Figure::EraseTime, "-3ms", "--erase-time"),
            (Figure::BusClock, "0", "--bus-clock '0' is not positive"),
            (
                Figure::BusClock,
                "-5MHz",
                "--bus-clock '-5MHz' is not positive",
            ),
            (Figure::BusLines, "0", "--bus-lines '0'"),
            (Figure::BusLines, "four", "--bus-lines 'four'"),
            (Figure::Size, "0", "--size '0'"),
            (Figure::CmdBytes, "x", "--cmd-bytes 'x'"),
        ];
        for (f, text, want) in unparsable {
            let e = f.parse(text).unwrap_err();
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
