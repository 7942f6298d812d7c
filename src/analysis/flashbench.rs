//! Reader for flashbench output (align, interval, open-au, find-fat), so that logs people
//! already have can go through the same inference code as live measurements.
//!
//! Accepted: times with ns, µs/us, ms or s (plain numbers are ns), sizes like `4MiB`,
//! rates like `8.79M/s` (K/M/G taken as powers of 1024), tabs or spaces, and an optional
//! leading command line (`$ sudo ./flashbench -a -b 1024 /dev/mmcblk0` or
//! `# flashbench ...`) from which the test kind, block size, erase size, `--open-au-nr`
//! and `--random` are taken. Parsing never panics; bad input gives an error naming the line.

use crate::analysis::align::AlignPoint;
use crate::units::parse_size;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Which flashbench test produced a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LogKind {
    Align,
    Interval,
    OpenAu,
    FindFat,
}

impl LogKind {
    /// The name used in flashscope's output ("align", "interval", "open-au", "find-fat").
    pub fn name(self) -> &'static str {
        match self {
            LogKind::Align => "align",
            LogKind::Interval => "interval",
            LogKind::OpenAu => "open-au",
            LogKind::FindFat => "find-fat",
        }
    }
}

/// What the leading flashbench command line said (each `None` when it was not given).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandLine {
    pub text: String,
    pub kind: Option<LogKind>,
    /// `-p` / `--program` or `-s` / `--scatter`: kinds flashscope does not analyse.
    pub unsupported: Option<String>,
    pub block_bytes: Option<u64>,
    pub erase_bytes: Option<u64>,
    pub open_au_nr: Option<u32>,
    pub random: bool,
}

/// One `align` line: the read times around an alignment and flashbench's diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlignRow {
    pub align_bytes: u64,
    pub pre_ns: f64,
    pub on_ns: f64,
    pub post_ns: f64,
    pub diff_ns: f64,
}

/// One `interval` line: read time of one request size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalRow {
    pub bytes: u64,
    pub min_ns: f64,
    pub avg_ns: f64,
    pub max_ns: f64,
}

/// One `--open-au` line: write throughput at one write size with `open_au_nr` erase
/// blocks written in turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAuRow {
    pub size_bytes: u64,
    pub bytes_per_s: f64,
}

/// A parsed `--open-au` log: the samples an open-AU inference works on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAuLog {
    pub erase_bytes: Option<u64>,
    pub block_bytes: Option<u64>,
    /// How many erase blocks flashbench kept open (`--open-au-nr`).
    pub open_au_nr: Option<u32>,
    /// `--random`: pseudo-random order inside each erase block.
    pub random: bool,
    pub rows: Vec<OpenAuRow>,
}

/// One `--find-fat` line: write throughput at one write size in each of the first erase
/// blocks (column i = erase block i).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindFatRow {
    pub size_bytes: u64,
    pub bytes_per_s: Vec<f64>,
}

/// A parsed `--find-fat` log: the samples a FAT-area inference works on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindFatLog {
    pub erase_bytes: Option<u64>,
    pub rows: Vec<FindFatRow>,
}

/// flashbench's own regression line from an interval log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regression {
    /// Throughput as printed (MB = 10^6 bytes), in bytes per second.
    pub bytes_per_s: f64,
    pub access_ns: f64,
}

/// The contents of one log, by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LogData {
    Align {
        rows: Vec<AlignRow>,
    },
    Interval {
        rows: Vec<IntervalRow>,
        regression: Option<Regression>,
    },
    OpenAu(OpenAuLog),
    FindFat(FindFatLog),
}

/// A parsed flashbench log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlashbenchLog {
    pub command: Option<CommandLine>,
    pub data: LogData,
}

impl FlashbenchLog {
    pub fn kind(&self) -> LogKind {
        match self.data {
            LogData::Align { .. } => LogKind::Align,
            LogData::Interval { .. } => LogKind::Interval,
            LogData::OpenAu(_) => LogKind::OpenAu,
            LogData::FindFat(_) => LogKind::FindFat,
        }
    }

    /// The block size of an align log: the command line's, else half the smallest
    /// alignment (flashbench starts at twice the block size).
    pub fn align_block_bytes(&self) -> Option<u64> {
        if let Some(b) = self.command.as_ref().and_then(|c| c.block_bytes) {
            return Some(b);
        }
        match &self.data {
            LogData::Align { rows } => rows.iter().map(|r| r.align_bytes).min().map(|a| a / 2),
            _ => None,
        }
    }

    /// Align rows as inference points (block size as given, or derived).
    pub fn align_points(&self, block_bytes: u64) -> Vec<AlignPoint> {
        match &self.data {
            LogData::Align { rows } => rows
                .iter()
                .map(|r| AlignPoint {
                    block_bytes,
                    align_bytes: r.align_bytes,
                    diff_ns: r.diff_ns,
                    se_ns: 0.0,
                    base_ns: 0.5 * (r.pre_ns + r.post_ns),
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// Parse a flashbench time: a number (sign and exponent allowed) with ns, µs, us, ms or s;
/// a plain number is nanoseconds.
pub fn parse_time_ns(text: &str) -> Option<f64> {
    let t = text.trim().trim_end_matches([',', ':', ';']);
    let (num, mult) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t
        .strip_suffix("µs")
        .or_else(|| t.strip_suffix("us"))
        // Greek mu, and the micro sign of a Latin-1 log after lossy UTF-8 decoding.
        .or_else(|| t.strip_suffix("\u{3bc}s"))
        .or_else(|| t.strip_suffix("\u{fffd}s"))
    {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else {
        (t, 1.0)
    };
    let v: f64 = num.trim().parse().ok()?;
    let ns = v * mult;
    ns.is_finite().then_some(ns)
}

/// Parse a flashbench rate such as `8.79M/s`, `912K/s` or `1.25 MB/s` into bytes per second
/// (K, M, G as powers of 1024 as flashbench prints them; `MB/s` as 10^6).
pub fn parse_rate(text: &str) -> Option<f64> {
    let t = text.trim();
    let t = t.strip_suffix("/s")?;
    let (num, mult) = if let Some(n) = t.strip_suffix("MB") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('G') {
        (n, 1024.0 * 1024.0 * 1024.0)
    } else if let Some(n) = t.strip_suffix('M') {
        (n, 1024.0 * 1024.0)
    } else if let Some(n) = t.strip_suffix('K') {
        (n, 1024.0)
    } else if let Some(n) = t.strip_suffix('B') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v * mult)
}

fn size_token(t: &str) -> Option<u64> {
    parse_size(t).ok()
}

/// Parse the flags of a flashbench command line.
fn parse_command(line: &str) -> Result<CommandLine> {
    let body = line.trim_start_matches(['$', '#']).trim();
    let words: Vec<&str> = body.split_whitespace().collect();
    let mut c = CommandLine {
        text: line.trim().to_string(),
        ..Default::default()
    };
    let start = words
        .iter()
        .position(|w| w.ends_with("flashbench"))
        .map(|p| p + 1)
        .unwrap_or(0);
    let bad = |flag: &str, v: &str| {
        Error::usage(format!(
            "flashbench command line '{}': {flag} value '{v}' is not understood",
            line.trim()
        ))
    };
    let mut i = start;
    let set_kind = |c: &mut CommandLine, k: LogKind| {
        if c.kind.is_none() {
            c.kind = Some(k);
        }
    };
    while i < words.len() {
        let w = words[i];
        // --name=value or --name value / -x value / -xVALUE
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) if w.starts_with("--") => (n, Some(v)),
            _ => (w, None),
        };
        let value = |i: &mut usize| -> Option<String> {
            if let Some(v) = inline {
                return Some(v.to_string());
            }
            *i += 1;
            words.get(*i).map(|s| s.to_string())
        };
        match name {
            "-a" | "--align" => set_kind(&mut c, LogKind::Align),
            "-i" | "--interval" => set_kind(&mut c, LogKind::Interval),
            "-O" | "--open-au" => set_kind(&mut c, LogKind::OpenAu),
            "-f" | "--find-fat" => set_kind(&mut c, LogKind::FindFat),
            "-p" | "--program" => c.unsupported = Some("program (-p)".into()),
            "-s" | "--scatter" => c.unsupported = Some("scatter (-s)".into()),
            "-r" | "--random" => c.random = true,
            "-b" | "--blocksize" => {
                let v = value(&mut i).unwrap_or_default();
                c.block_bytes = Some(size_token(&v).ok_or_else(|| bad("--blocksize", &v))?);
            }
            "-e" | "--erasesize" => {
                let v = value(&mut i).unwrap_or_default();
                c.erase_bytes = Some(size_token(&v).ok_or_else(|| bad("--erasesize", &v))?);
            }
            "--open-au-nr" => {
                let v = value(&mut i).unwrap_or_default();
                c.open_au_nr = Some(v.parse().map_err(|_| bad("--open-au-nr", &v))?);
            }
            "-c" | "--count" | "-o" | "--out" | "--offset" | "--scatter-order"
            | "--scatter-span" | "--interval-order" | "--fat-nr" => {
                let _ = value(&mut i);
            }
            _ if w.starts_with("-b") && w.len() > 2 => {
                let v = &w[2..];
                c.block_bytes = Some(size_token(v).ok_or_else(|| bad("-b", v))?);
            }
            _ if w.starts_with("-e") && w.len() > 2 => {
                let v = &w[2..];
                c.erase_bytes = Some(size_token(v).ok_or_else(|| bad("-e", v))?);
            }
            _ if w.starts_with('-') && !w.starts_with("--") => {
                // A cluster of short flags such as -ar.
                for ch in w[1..].chars() {
                    match ch {
                        'a' => set_kind(&mut c, LogKind::Align),
                        'i' => set_kind(&mut c, LogKind::Interval),
                        'O' => set_kind(&mut c, LogKind::OpenAu),
                        'f' => set_kind(&mut c, LogKind::FindFat),
                        'r' => c.random = true,
                        'p' => c.unsupported = Some("program (-p)".into()),
                        's' => c.unsupported = Some("scatter (-s)".into()),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(c)
}

fn is_command_line(line: &str) -> bool {
    let t = line.trim_start();
    (t.starts_with('$') || t.starts_with('#')) && t.contains("flashbench")
}

/// Parse one flashbench log (`name` is used in error messages).
pub fn parse(name: &str, text: &str) -> Result<FlashbenchLog> {
    let mut command = None;
    let mut align = Vec::new();
    let mut interval = Vec::new();
    let mut regression = None;
    let mut two_col: Vec<OpenAuRow> = Vec::new();
    let mut multi_col: Vec<FindFatRow> = Vec::new();
    let mut unknown: Vec<(usize, String)> = Vec::new();

    for (lineno, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if is_command_line(line) {
            if command.is_none() {
                command = Some(parse_command(line)?);
            }
            continue;
        }
        if line.starts_with('#') || line.starts_with('$') {
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        let bad_line = || {
            Error::usage(format!(
                "{name}, line {}: '{line}' looks like a flashbench {} line but a value is not understood",
                lineno + 1,
                w.first().copied().unwrap_or("")
            ))
        };
        if w[0] == "align" {
            // align N pre T on T post T diff T
            if w.len() < 10 || w[2] != "pre" || w[4] != "on" || w[6] != "post" || w[8] != "diff" {
                return Err(bad_line());
            }
            let align_bytes: u64 = w[1].parse().map_err(|_| bad_line())?;
            let t = |s: &str| parse_time_ns(s).ok_or_else(bad_line);
            align.push(AlignRow {
                align_bytes,
                pre_ns: t(w[3])?,
                on_ns: t(w[5])?,
                post_ns: t(w[7])?,
                diff_ns: t(w[9])?,
            });
            continue;
        }
        if w.len() >= 8 && w[1] == "bytes:" && w[2] == "min" {
            // N bytes: min T avg T max T: R MB/s
            let bytes: u64 = w[0].parse().map_err(|_| bad_line())?;
            let t = |s: &str| parse_time_ns(s).ok_or_else(bad_line);
            interval.push(IntervalRow {
                bytes,
                min_ns: t(w[3])?,
                avg_ns: t(w[5])?,
                max_ns: t(w[7])?,
            });
            continue;
        }
        if w.len() >= 4 && w[1].starts_with("MB/s") && line.ends_with("access time") {
            // R MB/s, T access time
            let mbs: f64 = w[0].parse().map_err(|_| bad_line())?;
            let access = parse_time_ns(w[2]).ok_or_else(bad_line)?;
            regression = Some(Regression {
                bytes_per_s: mbs * 1e6,
                access_ns: access,
            });
            continue;
        }
        if w[0] == "bytes" {
            // "bytes N, time T overhead X": flashbench's residuals; recomputed, not needed.
            continue;
        }
        if let Some(size) = size_token(w[0]).filter(|_| w.len() >= 2 && w[0].ends_with('B')) {
            let rates: Option<Vec<f64>> = w[1..].iter().map(|r| parse_rate(r)).collect();
            let Some(rates) = rates else {
                return Err(bad_line());
            };
            if rates.len() == 1 {
                two_col.push(OpenAuRow {
                    size_bytes: size,
                    bytes_per_s: rates[0],
                });
            } else {
                multi_col.push(FindFatRow {
                    size_bytes: size,
                    bytes_per_s: rates,
                });
            }
            continue;
        }
        unknown.push((lineno + 1, line.to_string()));
    }

    if let Some(u) = command.as_ref().and_then(|c| c.unsupported.clone()) {
        return Err(Error::usage(format!(
            "{name}: a flashbench {u} log; flashscope analyses align (-a), interval (-i), open-au (-O) and find-fat (-f) logs"
        )));
    }
    let found: Vec<LogKind> = [
        (!align.is_empty()).then_some(LogKind::Align),
        (!interval.is_empty()).then_some(LogKind::Interval),
        (!two_col.is_empty()).then_some(LogKind::OpenAu),
        (!multi_col.is_empty()).then_some(LogKind::FindFat),
    ]
    .into_iter()
    .flatten()
    .collect();
    let declared = command.as_ref().and_then(|c| c.kind);
    if found.is_empty() {
        let what = match unknown.first() {
            Some((n, l)) => format!("line {n} ('{l}') is not a flashbench result line"),
            None => "it holds no result lines".to_string(),
        };
        return Err(Error::usage(format!(
            "{name}: not a flashbench log of a known kind (align, interval, open-au, find-fat): {what}"
        )));
    }
    if found.len() > 1 {
        return Err(Error::usage(format!(
            "{name}: mixes several flashbench result kinds ({}); give one test per file",
            found
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut kind = found[0];
    // A single-rate-per-line log is open-au unless the command line says find-fat (with
    // --fat-nr=1), and a multi-column one is find-fat.
    if let Some(d) = declared {
        if d != kind {
            let compatible = matches!(
                (d, kind),
                (LogKind::FindFat, LogKind::OpenAu) | (LogKind::OpenAu, LogKind::FindFat)
            );
            if !compatible {
                return Err(Error::usage(format!(
                    "{name}: the command line says {} but the lines are {} results",
                    d.name(),
                    kind.name()
                )));
            }
            kind = d;
        }
    }
    if let Some((n, l)) = unknown.first() {
        return Err(Error::usage(format!(
            "{name}, line {n}: '{l}' is not a flashbench {} line",
            kind.name()
        )));
    }
    let cmd = command.clone().unwrap_or_default();
    let data = match kind {
        LogKind::Align => LogData::Align { rows: align },
        LogKind::Interval => LogData::Interval {
            rows: interval,
            regression,
        },
        LogKind::OpenAu => LogData::OpenAu(OpenAuLog {
            erase_bytes: cmd.erase_bytes,
            block_bytes: cmd.block_bytes,
            open_au_nr: cmd.open_au_nr,
            random: cmd.random,
            rows: if two_col.is_empty() {
                multi_col
                    .into_iter()
                    .filter_map(|r| {
                        r.bytes_per_s.first().map(|&b| OpenAuRow {
                            size_bytes: r.size_bytes,
                            bytes_per_s: b,
                        })
                    })
                    .collect()
            } else {
                two_col
            },
        }),
        LogKind::FindFat => LogData::FindFat(FindFatLog {
            erase_bytes: cmd.erase_bytes,
            rows: if multi_col.is_empty() {
                two_col
                    .into_iter()
                    .map(|r| FindFatRow {
                        size_bytes: r.size_bytes,
                        bytes_per_s: vec![r.bytes_per_s],
                    })
                    .collect()
            } else {
                multi_col
            },
        }),
    };
    Ok(FlashbenchLog { command, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_take_every_unit_and_keep_the_sign() {
        assert_eq!(parse_time_ns("735µs"), Some(735_000.0));
        assert_eq!(parse_time_ns("735us"), Some(735_000.0));
        assert_eq!(parse_time_ns("735\u{3bc}s"), Some(735_000.0));
        let latin1 = String::from_utf8_lossy(b"735\xb5s").to_string();
        assert_eq!(parse_time_ns(&latin1), Some(735_000.0));
        assert_eq!(parse_time_ns("1.08ms"), Some(1_080_000.0));
        assert_eq!(parse_time_ns("-2926ns"), Some(-2926.0));
        assert_eq!(parse_time_ns("2s"), Some(2e9));
        assert_eq!(parse_time_ns("-1.92268e+06"), Some(-1.92268e6));
        assert_eq!(parse_time_ns("fast"), None);
    }

    #[test]
    fn rates_are_binary_and_mb_is_decimal() {
        assert_eq!(parse_rate("912K/s"), Some(912.0 * 1024.0));
        assert_eq!(parse_rate("8.79M/s"), Some(8.79 * 1024.0 * 1024.0));
        assert_eq!(parse_rate("1MB/s"), Some(1e6));
        assert_eq!(parse_rate("8.79"), None);
    }

    #[test]
    fn align_with_tabs_and_a_command_line() {
        let log = "# flashbench -a /dev/mmcblk0  --blocksize=1024\nalign 8192\tpre 785µs\ton 808µs\tpost 725µs\tdiff 53.3µs\n";
        let l = parse("t", log).unwrap();
        assert_eq!(l.kind(), LogKind::Align);
        assert_eq!(l.align_block_bytes(), Some(1024));
        let p = l.align_points(1024);
        assert!((p[0].diff_ns - 53_300.0).abs() < 1e-6);
    }

    #[test]
    fn without_a_command_line_the_block_size_comes_from_the_smallest_alignment() {
        let log = "align 16384 pre 1ms on 1.1ms post 1ms diff 100us\nalign 32768 pre 1ms on 1.1ms post 1ms diff 100us\n";
        let l = parse("t", log).unwrap();
        assert_eq!(l.align_block_bytes(), Some(8192));
    }

    #[test]
    fn dollar_prompt_and_short_clusters() {
        let log = "$ sudo ./flashbench -O -r -e 4M -b16K --open-au-nr 3 /dev/sdb\n4MiB 7.75M/s\n2MiB 5.03M/s\n";
        let l = parse("t", log).unwrap();
        let LogData::OpenAu(o) = &l.data else {
            panic!("{l:?}")
        };
        assert_eq!(o.erase_bytes, Some(4 << 20));
        assert_eq!(o.block_bytes, Some(16384));
        assert_eq!(o.open_au_nr, Some(3));
        assert!(o.random);
        assert_eq!(o.rows.len(), 2);
    }

    #[test]
    fn bad_logs_are_clear_errors() {
        let e = parse("x.txt", "hello world\n").unwrap_err();
        assert!(e.to_string().contains("not a flashbench log"), "{e}");
        let e = parse("x.txt", "").unwrap_err();
        assert!(e.to_string().contains("no result lines"), "{e}");
        let e = parse("x.txt", "align 4096 pre 1ms on zz post 1ms diff 3us\n").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
        let e = parse("p.txt", "# flashbench -p /dev/sdb\n2MiB 7.62M/s 10.3M/s\n").unwrap_err();
        assert!(e.to_string().contains("program"), "{e}");
    }
}
