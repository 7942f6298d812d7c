//! Reader for flashbench output (align, interval, open-au, find-fat), so that logs people
//! already have can go through the same inference code as live measurements.
//!
//! It reads what people paste: times with ns, µs/us, ms or s (plain numbers are ns), sizes
//! like `4MiB`, rates like `8.79M/s` (K/M/G taken as powers of 1024), tabs or spaces, CRLF
//! line ends, a UTF-8 byte-order mark, and the command line in any prompt form
//! (`$ sudo ./flashbench -a -b 1024 /dev/mmcblk0`, `~ # flashbench ...`,
//! `root #flashbench ...`, `pi@pi:~ $ flashbench ...`), from which the test kind, block
//! size, erase size, `--open-au-nr` and `--random` are taken. flashbench prints each time
//! into a 7-character field, so a negative diff below -9999 ns loses its unit (`-90026n`,
//! `-123456`): those are read as ns, and a cut-off diff is recovered from
//! `on - (pre + post) / 2`. Several runs in one text (several commands' outputs, or a shell
//! loop's output without command lines) are split at command lines and where the sizes
//! start again ([`parse_all`]). A last line cut off in the middle is left out with a
//! warning. Parsing never panics; bad input gives an error naming the line.

use crate::analysis::align::AlignPoint;
use crate::vocab::units::parse_size;
use crate::vocab::Warning;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Which flashbench test produced a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AlignRow {
    pub align_bytes: u64,
    pub pre_ns: f64,
    pub on_ns: f64,
    pub post_ns: f64,
    pub diff_ns: f64,
}

/// One `interval` line: read time of one request size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct IntervalRow {
    pub bytes: u64,
    pub min_ns: f64,
    pub avg_ns: f64,
    pub max_ns: f64,
}

/// One `--open-au` line: write throughput at one write size with `open_au_nr` erase
/// blocks written in turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct OpenAuRow {
    pub size_bytes: u64,
    pub bytes_per_s: f64,
}

/// A parsed `--open-au` log: the samples an open-AU inference works on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct OpenAuLog {
    pub erase_bytes: Option<u64>,
    pub block_bytes: Option<u64>,
    /// How many erase blocks flashbench kept open (`--open-au-nr`).
    pub open_au_nr: Option<u32>,
    /// Where `open_au_nr` came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_au_nr_source: Option<OpenAuNrSource>,
    /// `--random`: pseudo-random order inside each erase block.
    pub random: bool,
    pub rows: Vec<OpenAuRow>,
}

/// Where an open-AU run's count of open erase blocks came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum OpenAuNrSource {
    /// `--open-au-nr` on the run's flashbench command line.
    CommandLine,
    /// flashscope's `--open-au-nr` option.
    Option,
    /// Assumed: a text holding several runs without command lines, taken as counts 1, 2,
    /// 3, … in the order of the runs. An inference on such counts is at most tentative.
    RunOrder,
}

/// One `--find-fat` line: write throughput at one write size in each of the first erase
/// blocks (column i = erase block i).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FindFatRow {
    pub size_bytes: u64,
    pub bytes_per_s: Vec<f64>,
}

/// A parsed `--find-fat` log: the samples a FAT-area inference works on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FindFatLog {
    pub erase_bytes: Option<u64>,
    pub rows: Vec<FindFatRow>,
}

/// flashbench's own regression line from an interval log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Regression {
    /// Throughput as printed (MB = 10^6 bytes), in bytes per second.
    pub bytes_per_s: f64,
    pub access_ns: f64,
}

/// The contents of one log, by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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

/// A parsed flashbench log: one run of one test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FlashbenchLog {
    pub command: Option<CommandLine>,
    pub data: LogData,
    /// The line of the text where this run starts (its command line or first result).
    #[serde(default)]
    pub line: usize,
    /// What was read in a way a person should know about (a cut last line, a diff
    /// recovered from the other columns, an open-AU count taken from the run order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
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

/// Parse a flashbench time: a number (sign and exponent allowed) with ns, µs, us, ms or s
/// (or the unit cut to `n` / `µ` by flashbench's field width); a plain number is
/// nanoseconds.
pub fn parse_time_ns(text: &str) -> Option<f64> {
    let t = text.trim().trim_end_matches([',', ':', ';']);
    // flashbench's 7-character field cuts "-90026ns" to "-90026n" and "1e+03µs" to
    // "1e+03µ"; a UTF-8 log shown as Latin-1 and pasted back turns µ into "Âµ".
    let (num, mult) = if let Some(n) = t.strip_suffix("ns").or_else(|| t.strip_suffix('n')) {
        (n, 1.0)
    } else if let Some(n) = t
        .strip_suffix("Âµs")
        .or_else(|| t.strip_suffix("µs"))
        .or_else(|| t.strip_suffix("us"))
        // Greek mu, and the micro sign of a Latin-1 log after lossy UTF-8 decoding.
        .or_else(|| t.strip_suffix("\u{3bc}s"))
        .or_else(|| t.strip_suffix("\u{fffd}s"))
        .or_else(|| t.strip_suffix("Âµ"))
        .or_else(|| t.strip_suffix('µ'))
        .or_else(|| t.strip_suffix('\u{3bc}'))
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
/// (K, M, G as powers of 1024 as flashbench prints them; `MB/s` as 10^6): the one rate
/// parser, which requires the `/s` here (a bare number is no rate in a log).
pub fn parse_rate(text: &str) -> Option<f64> {
    let t = text.trim();
    t.strip_suffix("/s")?;
    crate::vocab::units::parse_rate(t)
        .ok()
        .filter(|r| *r >= 0.0)
}

fn size_token(t: &str) -> Option<u64> {
    parse_size(t).ok()
}

/// Evaluate shell integer arithmetic as published flashbench commands use it in option
/// values (`--erasesize=$[4*1024*1024]`, `$((4 << 20))`): integers (decimal or `0x` hex),
/// `+ - * / % << >>`, unary minus and parentheses. `None` for anything else, for a
/// division by zero or an overflow; the nesting is bounded, so no input can recurse deep.
pub fn eval_shell_arith(expr: &str) -> Option<i64> {
    struct P<'a> {
        s: &'a [u8],
        i: usize,
        depth: u32,
    }
    impl P<'_> {
        fn ws(&mut self) {
            while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
                self.i += 1;
            }
        }
        fn eat(&mut self, t: &str) -> bool {
            self.ws();
            if self.s[self.i..].starts_with(t.as_bytes()) {
                self.i += t.len();
                true
            } else {
                false
            }
        }
        fn shift(&mut self) -> Option<i64> {
            let mut v = self.sum()?;
            loop {
                if self.eat("<<") {
                    let r = u32::try_from(self.sum()?).ok().filter(|r| *r < 63)?;
                    v = v.checked_mul(1i64 << r)?;
                } else if self.eat(">>") {
                    let r = u32::try_from(self.sum()?).ok().filter(|r| *r < 63)?;
                    v >>= r;
                } else {
                    return Some(v);
                }
            }
        }
        fn sum(&mut self) -> Option<i64> {
            let mut v = self.product()?;
            loop {
                if self.eat("+") {
                    v = v.checked_add(self.product()?)?;
                } else if self.eat("-") {
                    v = v.checked_sub(self.product()?)?;
                } else {
                    return Some(v);
                }
            }
        }
        fn product(&mut self) -> Option<i64> {
            let mut v = self.unary()?;
            loop {
                if self.eat("*") {
                    v = v.checked_mul(self.unary()?)?;
                } else if self.eat("/") {
                    v = v.checked_div(self.unary()?)?;
                } else if self.eat("%") {
                    v = v.checked_rem(self.unary()?)?;
                } else {
                    return Some(v);
                }
            }
        }
        fn unary(&mut self) -> Option<i64> {
            self.depth += 1;
            if self.depth > 64 {
                return None;
            }
            let v = if self.eat("-") {
                self.unary()?.checked_neg()
            } else if self.eat("+") {
                self.unary()
            } else if self.eat("(") {
                let v = self.shift()?;
                self.eat(")").then_some(v)
            } else {
                self.ws();
                let rest = &self.s[self.i..];
                let (radix, skip) = if rest.starts_with(b"0x") || rest.starts_with(b"0X") {
                    (16, 2)
                } else {
                    (10, 0)
                };
                let n = rest[skip..]
                    .iter()
                    .take_while(|c| c.is_ascii_hexdigit() && (radix == 16 || c.is_ascii_digit()))
                    .count();
                if n == 0 {
                    return None;
                }
                let digits = std::str::from_utf8(&rest[skip..skip + n]).ok()?;
                self.i += skip + n;
                i64::from_str_radix(digits, radix).ok()
            };
            self.depth -= 1;
            v
        }
    }
    let mut p = P {
        s: expr.as_bytes(),
        i: 0,
        depth: 0,
    };
    let v = p.shift()?;
    p.ws();
    (p.i == p.s.len()).then_some(v)
}

/// The longest shell arithmetic expression read (`$[…]`, `$((…))`), in bytes.
const ARITH_MAX: usize = 256;

/// Replace each shell arithmetic expansion in a command line (`$[…]`, `$((…))`) by its
/// value, so `--erasesize=$[4*1024*1024]` reads as `--erasesize=4194304`. An expansion
/// that does not evaluate is left as it is (the option then says it is not understood).
fn expand_shell_arith(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        // The closing bracket is looked for within `ARITH_MAX` bytes only, so a line of
        // many unclosed `$((` costs linear time, not a scan to its end for each.
        let close = |inner: &str, pat: &[u8]| {
            inner
                .as_bytes()
                .windows(pat.len())
                .take(ARITH_MAX)
                .position(|w| w == pat)
        };
        let span = if let Some(inner) = tail.strip_prefix("$((") {
            close(inner, b"))").map(|e| (&inner[..e], 3 + e + 2))
        } else if let Some(inner) = tail.strip_prefix("$[") {
            close(inner, b"]").map(|e| (&inner[..e], 2 + e + 1))
        } else {
            None
        };
        match span.and_then(|(expr, len)| eval_shell_arith(expr).map(|v| (v, len))) {
            Some((v, len)) => {
                out.push_str(&v.to_string());
                rest = &tail[len..];
            }
            None => {
                out.push('$');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Parse the flags of a flashbench command line (`start`: the index of the first word
/// after the program name).
fn parse_command(name: &str, lineno: usize, line: &str, start: usize) -> Result<CommandLine> {
    let expanded = expand_shell_arith(line);
    let start = flashbench_invocation(&expanded).unwrap_or(start);
    let words: Vec<&str> = expanded.split_whitespace().collect();
    let mut c = CommandLine {
        text: line.trim().to_string(),
        ..Default::default()
    };
    let bad = |flag: &str, v: &str| {
        Error::usage(format!(
            "{name}, line {lineno}: flashbench command line '{}': {flag} value '{v}' is not understood",
            line.trim()
        ))
    };
    let zero = |flag: &str| {
        Error::usage(format!(
            "{name}, line {lineno}: flashbench command line '{}': {flag} 0 is not possible; correct the line, or remove it and give the value with flashscope's option",
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
                let n: u32 = v.parse().map_err(|_| bad("--open-au-nr", &v))?;
                if n == 0 {
                    return Err(zero("--open-au-nr"));
                }
                c.open_au_nr = Some(n);
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
    if c.block_bytes == Some(0) {
        return Err(zero("--blocksize"));
    }
    if c.erase_bytes == Some(0) {
        return Err(zero("--erasesize"));
    }
    Ok(c)
}

/// Parse the value of flashscope's `--open-au-nr`: one positive count, or several separated
/// by commas (one per open-AU run without a count, in the order the runs are read).
pub fn parse_open_au_nr_list(text: &str) -> Result<Vec<u32>> {
    let t = text.trim();
    let fix = "give how many erase blocks flashbench kept open, e.g. --open-au-nr 2, or one count per run in order, e.g. --open-au-nr 1,2,8,9";
    if t.is_empty() {
        return Err(Error::usage(format!("--open-au-nr is empty: {fix}")));
    }
    let mut v = Vec::new();
    for part in t.split(',') {
        let p = part.trim();
        match p.parse::<u32>() {
            Ok(0) => {
                return Err(Error::usage(format!(
                    "--open-au-nr {t}: 0 open erase blocks is not possible (at least 1); {fix}"
                )))
            }
            Ok(n) => v.push(n),
            Err(_) if p.starts_with('-') => {
                return Err(Error::usage(format!(
                    "--open-au-nr {t}: {p} is negative; {fix}"
                )))
            }
            Err(_) => {
                return Err(Error::usage(format!(
                    "--open-au-nr {t}: '{p}' is not a count; {fix}"
                )))
            }
        }
    }
    Ok(v)
}

/// If `line` runs flashbench, after any shell prompt (`$ sudo ./flashbench`, `# flashbench`,
/// `~ # flashbench`, `root #flashbench`, `pi@pi:~ $ flashbench`) or none, the index of the
/// first word after the program name. A line that only mentions flashbench (a comment) is
/// not a command: a command has an option or a device after the program name.
fn flashbench_invocation(line: &str) -> Option<usize> {
    // Most lines are results: a line without the name is no invocation, found without
    // splitting it into words (by a searcher built once: a million lines each built one).
    static NAME: std::sync::LazyLock<memchr::memmem::Finder> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("flashbench"));
    NAME.find(line.as_bytes())?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let i = words.iter().take(8).position(|w| {
        let w = w.trim_start_matches(['#', '$', '%', '>']);
        w.rsplit('/').next() == Some("flashbench")
    })?;
    words[i + 1..]
        .iter()
        .any(|w| w.starts_with('-') || w.starts_with('/') || w.starts_with('<'))
        .then_some(i + 1)
}

/// A comment, or a shell prompt that does not run flashbench (`$ ls`, `~ #`, `root@pi:~# `,
/// `[root@host ~]# dmesg`): not part of any result.
fn is_prompt_or_comment(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with(['#', '$', '%', '>']) {
        return true;
    }
    let Some(i) = t.find(['#', '$', '%', '>']) else {
        return false;
    };
    let prefix = &t[..i];
    prefix.len() <= 64
        && prefix.split_whitespace().count() <= 2
        && t[i + 1..].chars().next().is_none_or(char::is_whitespace)
}

/// One result line, by kind.
#[derive(Debug, Clone)]
enum Row {
    Align(AlignRow),
    Interval(IntervalRow),
    Regression(Regression),
    /// flashbench's "bytes N, time T overhead X" residuals: recomputed, not needed.
    Residual,
    Rates(u64, Vec<f64>),
}

impl Row {
    /// Rows of one run: align and open-au/find-fat sizes go down, interval sizes go up.
    fn family(&self) -> Option<u8> {
        match self {
            Row::Align(_) => Some(0),
            Row::Interval(_) => Some(1),
            Row::Rates(..) => Some(2),
            Row::Regression(_) | Row::Residual => None,
        }
    }

    /// The size a run steps through (alignment, request size, write size).
    fn key(&self) -> Option<u64> {
        match self {
            Row::Align(r) => Some(r.align_bytes),
            Row::Interval(r) => Some(r.bytes),
            Row::Rates(s, _) => Some(*s),
            Row::Regression(_) | Row::Residual => None,
        }
    }

    /// What a run keeps of this row to tell whether the next one continues it (`None`
    /// for the rows that are not counted: the regression and residual lines).
    fn last(&self) -> Option<Last> {
        Some(Last {
            family: self.family()?,
            key: self.key()?,
            cols: match self {
                Row::Rates(_, r) => r.len(),
                _ => 0,
            },
        })
    }

    /// True when `self` cannot follow `prev` in a run whose sizes so far went in direction
    /// `dir` (flashbench's go down for align, open-au and find-fat, up for interval; a
    /// hand-sorted log may go the other way): another kind, another column count, a size
    /// repeated, or a step against the direction (the sizes start again).
    fn restarts_after(&self, prev: &Last, dir: Option<std::cmp::Ordering>) -> bool {
        if self.family() != Some(prev.family) {
            return true;
        }
        if let Row::Rates(_, r) = self {
            if r.len() != prev.cols {
                return true;
            }
        }
        self.key()
            .is_some_and(|k| k == prev.key || dir.is_some_and(|d| k.cmp(&prev.key) != d))
    }
}

/// A run's last counted row, as far as the next row needs it: its kind of row, its size
/// and (rates) its column count.
#[derive(Debug, Clone, Copy)]
struct Last {
    family: u8,
    key: u64,
    cols: usize,
}

/// Why a line that looks like a result was not read.
enum Bad {
    /// Fields missing or unreadable: a cut line, or not flashbench's format.
    Cut(Error),
    /// The values are impossible (a negative read time, alignment 0): always an error.
    Invalid(Error),
}

/// A time field with no unit letters ("-123456"): flashbench prints negative values as
/// integer ns in a 7-character field, so such a value may have lost digits.
fn unitless(t: &str) -> bool {
    t.chars()
        .all(|c| c.is_ascii_digit() || c == '-' || c == '.')
}

/// Read one line as a flashbench result (`Ok(None)`: it is not one).
fn parse_row(
    name: &str,
    lineno: usize,
    line: &str,
    warnings: &mut Vec<Warning>,
) -> std::result::Result<Option<Row>, Bad> {
    let w: Vec<&str> = line.split_whitespace().collect();
    let cut = || {
        Bad::Cut(Error::usage(format!(
            "{name}, line {lineno}: '{line}' looks like a flashbench {} line but a value is not understood",
            w.first().copied().unwrap_or("")
        )))
    };
    let invalid = |what: String| {
        Bad::Invalid(Error::usage(format!(
            "{name}, line {lineno}: '{line}': {what}; correct or remove the line (a flashbench log has no such values)"
        )))
    };
    let time = |label: &str, s: &str| -> std::result::Result<f64, Bad> {
        let v = parse_time_ns(s).ok_or_else(cut)?;
        if v < 0.0 {
            return Err(invalid(format!(
                "the {label} time {s} is negative, and a read cannot take negative time"
            )));
        }
        Ok(v)
    };
    if w.first() == Some(&"align") {
        // align N pre T on T post T diff T
        if w.len() < 10 || w[2] != "pre" || w[4] != "on" || w[6] != "post" || w[8] != "diff" {
            return Err(cut());
        }
        let align_bytes: u64 = w[1].parse().map_err(|_| cut())?;
        if align_bytes == 0 {
            return Err(invalid("alignment 0 is not possible: flashbench aligns at powers of two from twice the block size".into()));
        }
        let (pre_ns, on_ns, post_ns) = (time("pre", w[3])?, time("on", w[5])?, time("post", w[7])?);
        let mut diff_ns = parse_time_ns(w[9]).ok_or_else(cut)?;
        if unitless(w[9]) && diff_ns < 0.0 {
            // Possibly cut: of the value and its versions with the lost digits, take the
            // one the other columns support.
            let recomputed = on_ns - 0.5 * (pre_ns + post_ns);
            let best = (0..4)
                .map(|k| diff_ns * 10f64.powi(k))
                .min_by(|a, b| (a - recomputed).abs().total_cmp(&(b - recomputed).abs()))
                .unwrap_or(diff_ns);
            if best != diff_ns {
                warnings.push(Warning::DiffRecovered {
                    file: name.to_string(),
                    line: lineno,
                    field: w[9].to_string(),
                    read_ns: best,
                    recomputed_ns: recomputed,
                });
                diff_ns = best;
            }
        }
        return Ok(Some(Row::Align(AlignRow {
            align_bytes,
            pre_ns,
            on_ns,
            post_ns,
            diff_ns,
        })));
    }
    if w.len() >= 2 && w[1] == "bytes:" {
        // N bytes: min T avg T max T: R MB/s
        if w.len() < 8 || w[2] != "min" {
            return Err(cut());
        }
        let bytes: u64 = w[0].parse().map_err(|_| cut())?;
        if bytes == 0 {
            return Err(invalid("a read of 0 bytes is not possible".into()));
        }
        return Ok(Some(Row::Interval(IntervalRow {
            bytes,
            min_ns: time("min", w[3])?,
            avg_ns: time("avg", w[5])?,
            max_ns: time("max", w[7])?,
        })));
    }
    if w.len() >= 4 && w[1].starts_with("MB/s") && line.ends_with("access time") {
        // R MB/s, T access time (the access time of a fit may be negative)
        let mbs: f64 = w[0].parse().map_err(|_| cut())?;
        let access = parse_time_ns(w[2]).ok_or_else(cut)?;
        return Ok(Some(Row::Regression(Regression {
            bytes_per_s: mbs * 1e6,
            access_ns: access,
        })));
    }
    if w.first() == Some(&"bytes") {
        return Ok(Some(Row::Residual));
    }
    if let Some(size) = w
        .first()
        .filter(|t| w.len() >= 2 && t.ends_with('B'))
        .and_then(|t| size_token(t))
    {
        if size == 0 {
            return Err(invalid("a write size of 0 bytes is not possible".into()));
        }
        let mut rates = Vec::with_capacity(w.len() - 1);
        for r in &w[1..] {
            match parse_rate(r) {
                Some(v) => rates.push(v),
                None if r.starts_with('-') => {
                    return Err(invalid(format!("the rate {r} is negative")))
                }
                None => return Err(cut()),
            }
        }
        return Ok(Some(Row::Rates(size, rates)));
    }
    Ok(None)
}

/// One run being collected: its rows already in the form the log keeps (a run of a
/// million lines costs its rows, not a copy of its text).
#[derive(Default)]
struct Run {
    line: usize,
    command: Option<CommandLine>,
    /// Whether any result line (counted or not) was read.
    has_rows: bool,
    align: Vec<AlignRow>,
    interval: Vec<IntervalRow>,
    regression: Option<Regression>,
    two_col: Vec<OpenAuRow>,
    multi_col: Vec<FindFatRow>,
    /// The last counted row (not a regression or residual line).
    last: Option<Last>,
    /// The first line that is no result (an error names it; later ones are not kept).
    unknown: Option<(usize, String)>,
    warnings: Vec<Warning>,
    /// Whether the sizes go up or down (known from the second row on).
    dir: Option<std::cmp::Ordering>,
}

impl Run {
    fn last_counted(&self) -> Option<Last> {
        self.last
    }

    fn push(&mut self, row: Row) {
        self.has_rows = true;
        if let Some(last) = row.last() {
            self.last = Some(last);
        }
        match row {
            Row::Align(r) => self.align.push(r),
            Row::Interval(r) => self.interval.push(r),
            Row::Regression(r) => self.regression = Some(r),
            Row::Residual => {}
            Row::Rates(size, rates) if rates.len() == 1 => self.two_col.push(OpenAuRow {
                size_bytes: size,
                bytes_per_s: rates[0],
            }),
            Row::Rates(size, rates) => self.multi_col.push(FindFatRow {
                size_bytes: size,
                bytes_per_s: rates,
            }),
        }
    }
}

/// Parse one flashbench log that holds one run (`name` is used in error messages); a text
/// with several runs is an error that says to use [`parse_all`].
pub fn parse(name: &str, text: &str) -> Result<FlashbenchLog> {
    let mut runs = parse_all(name, text)?;
    if runs.len() != 1 {
        return Err(Error::usage(format!(
            "{name}: holds {} flashbench runs (from lines {}); read them with parse_all",
            runs.len(),
            runs.iter()
                .map(|(_, l)| l.line.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(runs.remove(0).1)
}

/// Parse a text that holds one or more flashbench runs: several commands' outputs are split
/// at their command lines, and output without command lines where the sizes start again
/// (a shell loop). Returns each run with its name: `name` for a text of one run,
/// `name:LINE` (the line the run starts at) when there are several.
///
/// Open-AU runs without a count, when a text holds two or more of them, are taken as
/// `--open-au-nr` 1, 2, 3, … in their order, marked [`OpenAuNrSource::RunOrder`] with a
/// warning; [`apply_open_au_nr`] replaces those counts with the ones a user gives.
/// The most runs one log may hold.
pub const MAX_RUNS: usize = 10_000;

pub fn parse_all(name: &str, text: &str) -> Result<Vec<(String, FlashbenchLog)>> {
    let mut r = LogReader::new(name);
    for (i, line) in text.split('\n').enumerate() {
        r.line(i + 1, line);
    }
    r.finish(text.ends_with('\n'))
}

/// [`parse_all`] one line at a time: `analyze` streams a log through it, so the text is
/// never held whole, only each run's rows. Lines are given as split at `\n` (any `\r`,
/// blanks and a leading byte-order mark are taken off here); after the first error the
/// reader only waits for [`LogReader::finish`], which returns it.
pub struct LogReader<'a> {
    name: &'a str,
    runs: Vec<Run>,
    cur: Run,
    file_warnings: Vec<Warning>,
    /// The line being read: a command continued with a backslash grows until a line does
    /// not end with one. It is read when the next line starts (so the reader knows whether
    /// it was the last).
    pending: String,
    pending_no: usize,
    continues: bool,
    error: Option<Error>,
}

impl<'a> LogReader<'a> {
    /// A reader for the text `name` (named in errors, warnings and run names).
    pub fn new(name: &'a str) -> Self {
        LogReader {
            name,
            runs: Vec::new(),
            cur: Run::default(),
            file_warnings: Vec::new(),
            pending: String::new(),
            pending_no: 0,
            continues: false,
            error: None,
        }
    }

    /// One line of the text, without its `\n`, numbered from 1.
    pub fn line(&mut self, lineno: usize, line: &str) {
        if self.error.is_some() {
            return;
        }
        let line = if lineno == 1 {
            line.strip_prefix('\u{feff}').unwrap_or(line)
        } else {
            line
        };
        let l = line.trim();
        if l.is_empty() {
            return;
        }
        // A command line continued with a backslash (`flashbench -O \` then
        // `--erasesize=$[4*1024*1024] /dev/sdb`, the next line perhaps after the shell's
        // `> `) is one line, numbered as its first.
        if self.continues && self.pending_no != 0 {
            let l = l.strip_prefix("> ").unwrap_or(l);
            self.pending.push(' ');
            self.pending.push_str(l.trim_end_matches('\\').trim_end());
            self.continues = l.ends_with('\\');
            return;
        }
        self.read_pending(None);
        self.continues = l.ends_with('\\');
        self.pending.clear();
        self.pending.push_str(if self.continues {
            l.trim_end_matches('\\').trim_end()
        } else {
            l
        });
        self.pending_no = lineno;
    }

    /// Read the pending line (`last`: it is the text's last, and whether the text ends
    /// with a line feed).
    fn read_pending(&mut self, last: Option<bool>) {
        if self.pending_no == 0 || self.error.is_some() {
            return;
        }
        let line = std::mem::take(&mut self.pending);
        self.read_line(self.pending_no, &line, last);
        self.pending = line;
        self.pending_no = 0;
    }

    /// End the run being collected: keep it if it has lines (a command without results
    /// is a warning).
    fn end_run(&mut self) {
        let run = std::mem::take(&mut self.cur);
        if !run.has_rows && run.unknown.is_none() {
            if let Some(c) = &run.command {
                self.file_warnings.push(Warning::CommandWithoutResults {
                    file: self.name.to_string(),
                    line: run.line,
                    command: c.text.clone(),
                });
            }
        } else {
            self.runs.push(run);
        }
    }

    /// Read one whole (joined, trimmed, non-empty) line.
    fn read_line(&mut self, lineno: usize, line: &str, last: Option<bool>) {
        let name = self.name;
        if self.runs.len() > MAX_RUNS {
            self.error = Some(Error::usage(format!(
                "{name}: more than {MAX_RUNS} runs in one log (a run ends at a command line or where the sizes start again); real logs have a handful: split the file or give the runs that matter"
            )));
            return;
        }
        // `^C` on its own line or after a run's output: the run ends here. What stands
        // before it on the line is read if it is a whole result.
        let (line, interrupted) =
            match memchr::memchr(b'^', line.as_bytes()).and_then(|_| line.find("^C")) {
                Some(at) => (line[..at].trim(), true),
                None => (line, false),
            };
        if interrupted {
            if !line.is_empty() && flashbench_invocation(line).is_none() {
                if let Ok(Some(row)) = parse_row(name, lineno, line, &mut Vec::new()) {
                    let fits = self
                        .cur
                        .last_counted()
                        .is_none_or(|prev| !row.restarts_after(&prev, self.cur.dir));
                    let whole = match (&row, self.cur.last_counted()) {
                        (Row::Interval(_), _) => line.ends_with("MB/s"),
                        (Row::Rates(_, r), Some(p)) if p.family == 2 => r.len() == p.cols,
                        _ => true,
                    };
                    if fits && whole && row.family().is_some() {
                        if self.cur.line == 0 {
                            self.cur.line = lineno;
                        }
                        self.cur.push(row);
                    }
                }
            }
            if self.cur.has_rows || self.cur.command.is_some() {
                self.cur.warnings.push(Warning::InterruptedRun {
                    file: name.to_string(),
                    line: lineno,
                });
                self.end_run();
            }
            return;
        }
        if let Some(start) = flashbench_invocation(line) {
            self.end_run();
            self.cur.line = lineno;
            match parse_command(name, lineno, line, start) {
                Ok(c) => self.cur.command = Some(c),
                Err(e) => self.error = Some(e),
            }
            return;
        }
        if is_prompt_or_comment(line) {
            return;
        }
        let is_last = last.is_some();
        let ends_cleanly = last.unwrap_or(true);
        let mut row_warnings = Vec::new();
        let parsed = parse_row(name, lineno, line, &mut row_warnings);
        let cut_off = |what: &str, file_warnings: &mut Vec<Warning>| {
            file_warnings.push(Warning::CutLastLine {
                file: name.to_string(),
                line_no: lineno,
                line: line.to_string(),
                what: what.to_string(),
            });
        };
        let row = match parsed {
            Ok(Some(row)) => row,
            Ok(None) => {
                let first = line.split_whitespace().next().unwrap_or("");
                let looks_cut =
                    "align".starts_with(first) || first.starts_with(|c: char| c.is_ascii_digit());
                if is_last && looks_cut && (self.cur.has_rows || !self.runs.is_empty()) {
                    cut_off("is incomplete", &mut self.file_warnings);
                } else {
                    if !self.cur.has_rows && self.cur.line == 0 {
                        self.cur.line = lineno;
                    }
                    self.cur
                        .unknown
                        .get_or_insert_with(|| (lineno, line.to_string()));
                }
                return;
            }
            Err(Bad::Cut(e)) => {
                if is_last && (self.cur.has_rows || !self.runs.is_empty()) {
                    cut_off("is incomplete", &mut self.file_warnings);
                    return;
                }
                self.error = Some(e);
                return;
            }
            Err(Bad::Invalid(e)) => {
                self.error = Some(e);
                return;
            }
        };
        // A last line without its newline may be cut inside its final field.
        if is_last && !ends_cleanly {
            let incomplete = match (&row, self.cur.last_counted()) {
                (Row::Interval(_), _) => !line.ends_with("MB/s"),
                (Row::Rates(_, r), Some(p)) if p.family == 2 => r.len() != p.cols,
                _ => false,
            };
            if incomplete {
                cut_off("ends before its last field", &mut self.file_warnings);
                return;
            }
        }
        if let (Some(prev), Some(_)) = (self.cur.last_counted(), row.family()) {
            if row.restarts_after(&prev, self.cur.dir) {
                self.end_run();
                self.cur.line = lineno;
            } else if let Some(k) = row.key() {
                self.cur.dir = Some(k.cmp(&prev.key));
            }
        }
        if self.cur.line == 0 {
            self.cur.line = lineno;
        }
        self.cur.warnings.append(&mut row_warnings);
        self.cur.push(row);
    }

    /// The runs of the text (`ends_cleanly`: it ends with a line feed), or the first error.
    pub fn finish(mut self, ends_cleanly: bool) -> Result<Vec<(String, FlashbenchLog)>> {
        self.read_pending(Some(ends_cleanly));
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.end_run();
        let (name, runs, mut file_warnings) = (self.name, self.runs, self.file_warnings);

        if !runs.iter().any(|r| r.has_rows) {
            let what = match runs.iter().find_map(|r| r.unknown.as_ref()) {
                Some((n, l)) => format!("line {n} ('{l}') is not a flashbench result line"),
                None => "it holds no result lines".to_string(),
            };
            return Err(Error::usage(format!(
                "{name}: not a flashbench log of a known kind (align, interval, open-au, find-fat): {what}"
            )));
        }
        let several = runs.len() > 1;
        let mut logs = Vec::new();
        for run in runs {
            let run_name = if several {
                format!("{name}:{}", run.line)
            } else {
                name.to_string()
            };
            logs.push((run_name, build(name, run)?));
        }
        // Several open-AU runs without counts: a shell loop's output; assume 1, 2, 3, ….
        let uncounted: Vec<usize> = logs
            .iter()
            .enumerate()
            .filter(|(_, (_, l))| matches!(&l.data, LogData::OpenAu(o) if o.open_au_nr.is_none()))
            .map(|(i, _)| i)
            .collect();
        if uncounted.len() >= 2 {
            for (k, &i) in uncounted.iter().enumerate() {
                let (_, log) = &mut logs[i];
                if let LogData::OpenAu(o) = &mut log.data {
                    o.open_au_nr = Some(k as u32 + 1);
                    o.open_au_nr_source = Some(OpenAuNrSource::RunOrder);
                }
            }
            // One warning for all of them, on the first (a log of many runs would otherwise
            // print and keep one line per run).
            let first = uncounted[0];
            let warning = Warning::OpenAuNrFromRunOrder {
                run: logs[first].0.clone(),
                count: 1,
                runs: uncounted.len(),
            };
            logs[first].1.warnings.push(warning);
        }
        if let Some((_, first)) = logs.first_mut() {
            file_warnings.append(&mut first.warnings);
            first.warnings = file_warnings;
        }
        Ok(logs)
    }
}

/// Give open-AU runs without a count on their command line the counts of flashscope's
/// `--open-au-nr`: one count for all of them, or one per run in order. Returns warnings
/// (counts given but not needed).
pub fn apply_open_au_nr(
    logs: &mut [(String, FlashbenchLog)],
    counts: &[u32],
) -> Result<Vec<Warning>> {
    let targets: Vec<usize> = logs
        .iter()
        .enumerate()
        .filter(|(_, (_, l))| {
            matches!(&l.data, LogData::OpenAu(o) if o.open_au_nr_source != Some(OpenAuNrSource::CommandLine))
        })
        .map(|(i, _)| i)
        .collect();
    if targets.is_empty() {
        let any_open_au = logs.iter().any(|(_, l)| l.kind() == LogKind::OpenAu);
        return Ok(vec![Warning::OpenAuNrUnused { any_open_au }]);
    }
    if counts.len() != 1 && counts.len() != targets.len() {
        return Err(Error::usage(format!(
            "--open-au-nr gives {} counts but {} open-au runs have none on a command line ({}); give one count for all, or one per run in this order",
            counts.len(),
            targets.len(),
            targets.iter().map(|&i| logs[i].0.as_str()).collect::<Vec<_>>().join(", ")
        )));
    }
    for (k, &i) in targets.iter().enumerate() {
        let log = &mut logs[i].1;
        if let LogData::OpenAu(o) = &mut log.data {
            o.open_au_nr = Some(if counts.len() == 1 {
                counts[0]
            } else {
                counts[k]
            });
            o.open_au_nr_source = Some(OpenAuNrSource::Option);
        }
        log.warnings
            .retain(|w| !matches!(w, Warning::OpenAuNrFromRunOrder { .. }));
    }
    Ok(Vec::new())
}

/// Turn one collected run into a log: decide its kind and check every line belongs to it.
fn build(name: &str, run: Run) -> Result<FlashbenchLog> {
    let command = run.command;
    if let Some(u) = command.as_ref().and_then(|c| c.unsupported.clone()) {
        return Err(Error::usage(format!(
            "{name}: a flashbench {u} log; flashscope analyses align (-a), interval (-i), open-au (-O) and find-fat (-f) logs"
        )));
    }
    let Run {
        mut align,
        mut interval,
        regression,
        mut two_col,
        mut multi_col,
        ..
    } = run;
    // Vectors grown by doubling hold up to twice their rows: a long log keeps only its rows.
    align.shrink_to_fit();
    interval.shrink_to_fit();
    two_col.shrink_to_fit();
    multi_col.shrink_to_fit();
    let found: Vec<LogKind> = [
        (!align.is_empty()).then_some(LogKind::Align),
        (!interval.is_empty()).then_some(LogKind::Interval),
        (!two_col.is_empty()).then_some(LogKind::OpenAu),
        (!multi_col.is_empty()).then_some(LogKind::FindFat),
    ]
    .into_iter()
    .flatten()
    .collect();
    let Some(&found_kind) = found.first() else {
        let what = match &run.unknown {
            Some((n, l)) => format!("line {n} ('{l}') is not a flashbench result line"),
            None => "it holds no result lines".to_string(),
        };
        return Err(Error::usage(format!(
            "{name}: not a flashbench log of a known kind (align, interval, open-au, find-fat): {what}"
        )));
    };
    if found.len() > 1 {
        return Err(Error::usage(format!(
            "{name}, from line {}: mixes several flashbench result kinds ({}); give one test per file",
            run.line,
            found.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
        )));
    }
    let mut kind = found_kind;
    // A single-rate-per-line log is open-au unless the command line says find-fat (with
    // --fat-nr=1), and a multi-column one is find-fat.
    if let Some(d) = command.as_ref().and_then(|c| c.kind) {
        if d != kind {
            let compatible = matches!(
                (d, kind),
                (LogKind::FindFat, LogKind::OpenAu) | (LogKind::OpenAu, LogKind::FindFat)
            );
            if !compatible {
                return Err(Error::usage(format!(
                    "{name}, line {}: the command line says {} but the lines after it are {} results",
                    run.line,
                    d.name(),
                    kind.name()
                )));
            }
            kind = d;
        }
    }
    if let Some((n, l)) = &run.unknown {
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
            open_au_nr_source: cmd.open_au_nr.map(|_| OpenAuNrSource::CommandLine),
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
    Ok(FlashbenchLog {
        command,
        data,
        line: run.line,
        warnings: run.warnings,
    })
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

    const ALIGN: &str = "align 8192\tpre 785µs\ton 808µs\tpost 725µs\tdiff 53.3µs\nalign 4096\tpre 780µs\ton 800µs\tpost 720µs\tdiff 50µs\n";

    #[test]
    fn prompt_lines_of_every_shape_give_the_command() {
        for (prompt, block) in [
            ("~ # flashbench -a -b 1024 /dev/mmcblk0", Some(1024)),
            ("root #flashbench -a <device>", None),
            (
                "pi@raspberrypi:~ $ sudo ./flashbench -a /dev/sdb -b 4096",
                Some(4096),
            ),
            (
                "[root@host ~]# /usr/bin/flashbench --align --blocksize=2048 /dev/sdc",
                Some(2048),
            ),
            ("flashbench -a -b 512 /dev/sdb", Some(512)),
        ] {
            let text = format!("{prompt}\n{ALIGN}~ # \n");
            let l = parse("t", &text).unwrap_or_else(|e| panic!("{prompt}: {e}"));
            let c = l.command.as_ref().expect(prompt);
            assert_eq!(c.kind, Some(LogKind::Align), "{prompt}");
            assert_eq!(c.block_bytes, block, "{prompt}");
        }
        // A comment that mentions flashbench is not a command.
        let l = parse("t", &format!("# flashbench results of my card\n{ALIGN}")).unwrap();
        assert!(l.command.is_none());
    }

    #[test]
    fn a_bom_and_crlf_are_read() {
        let text = format!(
            "\u{feff}# flashbench -a -b 1024 /dev/sdb\r\n{}",
            ALIGN.replace('\n', "\r\n")
        );
        let l = parse("t", &text).unwrap();
        assert_eq!(l.align_block_bytes(), Some(1024));
        assert_eq!(l.align_points(1024).len(), 2);
    }

    #[test]
    fn flashbench_cut_numbers_are_read_and_a_cut_diff_is_recovered() {
        assert_eq!(parse_time_ns("-90026n"), Some(-90026.0));
        assert_eq!(parse_time_ns("1e+03µ"), Some(1e6));
        assert_eq!(parse_time_ns("735Âµs"), Some(735_000.0));
        // "-1234567ns" printed into 7 characters is "-123456".
        let text = "align 8192 pre 3.1ms on 1.9ms post 3.0ms diff -123456\nalign 4096 pre 1ms on 1ms post 1ms diff -90026n\n";
        let l = parse("t", text).unwrap();
        let p = l.align_points(4096);
        assert_eq!(p[0].diff_ns, -1_234_560.0);
        assert_eq!(p[1].diff_ns, -90026.0);
        assert!(
            l.warnings
                .iter()
                .any(|w| w.kind() == "diff_recovered" && w.to_string().contains("line 1")),
            "{:?}",
            l.warnings
        );
        // An exact 6-digit value that the columns support stays as it is.
        let l = parse(
            "t",
            "align 8192 pre 1.2ms on 1.08ms post 1.2ms diff -123456\n",
        )
        .unwrap();
        assert_eq!(l.align_points(4096)[0].diff_ns, -123456.0);
    }

    #[test]
    fn impossible_values_name_the_file_and_line() {
        for (text, want) in [
            (
                "align 8192 pre -1ms on 1ms post 1ms diff 0ns\n",
                "x.txt, line 1",
            ),
            (
                "align 0 pre 1ms on 1ms post 1ms diff 0ns\n",
                "alignment 0 is not possible",
            ),
            (
                "512 bytes: min -408us avg 493us max 924us: 1.25 MB/s\n",
                "min time -408us is negative",
            ),
            ("4MiB 1M/s\n0B 3M/s\n", "line 2"),
            (
                "# flashbench -O --open-au-nr=0 /dev/sdb\n4MiB 1M/s\n",
                "--open-au-nr 0 is not possible",
            ),
            (
                "# flashbench -a -b 0 /dev/sdb\nalign 8192 pre 1ms on 1ms post 1ms diff 0ns\n",
                "--blocksize 0",
            ),
        ] {
            let e = parse_all("x.txt", text).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(want), "{text}: {e}");
            assert!(e.to_string().contains("x.txt"), "{e}");
        }
        // A cut last line is not an impossible value: only a complete line is checked.
        let e = parse_all("x.txt", "align 8192 pre -1ms on 1ms post 1ms diff 0ns\nalign 4096 pre 1ms on 1ms post 1ms diff 0ns\n").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
    }

    #[test]
    fn a_cut_last_line_is_left_out_with_a_warning() {
        for cut in [
            "align 2048\tpre 780µs\ton 8",
            "align 2048\tpre 7",
            "al",
            "512KiB 6.3",
        ] {
            let text = format!("# flashbench -a /dev/sdb\n{ALIGN}{cut}");
            let l = parse("t", &text);
            if cut.starts_with('5') {
                // Rates after align rows are another run; cut, it is left out too.
                let l = l.unwrap();
                assert_eq!(l.align_points(1024).len(), 2);
                continue;
            }
            let l = l.unwrap_or_else(|e| panic!("{cut}: {e}"));
            assert_eq!(l.align_points(1024).len(), 2, "{cut}");
            let w = l
                .warnings
                .iter()
                .find(|w| w.kind() == "cut_last_line")
                .expect(cut);
            assert!(w.to_string().contains("line 4"), "{w}");
        }
        // A line cut inside its last field, without a newline: interval and find-fat.
        let l = parse("t", "512 bytes: min 408us avg 493us max 924us: 1.25 MB/s\n1024 bytes: min 439us avg 462us max 5").unwrap();
        let LogData::Interval { rows, .. } = &l.data else {
            panic!()
        };
        assert_eq!(rows.len(), 1);
        let l = parse("t", "4MiB 1M/s 2M/s 1M/s\n2MiB 1M/s 2M/s").unwrap();
        let LogData::FindFat(f) = &l.data else {
            panic!()
        };
        assert_eq!(f.rows.len(), 1);
        // Junk at the end is still an error.
        assert!(parse("t", &format!("{ALIGN}hello world")).is_err());
    }

    #[test]
    fn several_runs_are_split_at_command_lines_and_where_sizes_start_again() {
        let text = format!("$ flashbench -a -b 1024 /dev/sdb\n{ALIGN}$ flashbench -a -b 2048 /dev/sdb\n{ALIGN}{ALIGN}");
        let runs = parse_all("f", &text).unwrap();
        let names: Vec<&str> = runs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["f:1", "f:4", "f:7"]);
        assert_eq!(runs[1].1.align_block_bytes(), Some(2048));
        assert!(runs[2].1.command.is_none());
        assert!(parse("f", &text)
            .unwrap_err()
            .to_string()
            .contains("holds 3 flashbench runs"));
        // A hand-sorted (ascending) run is one run.
        let up = "align 4096 pre 1ms on 1ms post 1ms diff 1us\nalign 8192 pre 1ms on 1ms post 1ms diff 1us\nalign 16384 pre 1ms on 1ms post 1ms diff 1us\n";
        assert_eq!(parse_all("f", up).unwrap().len(), 1);
    }

    /// Each open-au run's count and where it came from.
    fn open_au_counts(
        runs: &[(String, FlashbenchLog)],
    ) -> Vec<(Option<u32>, Option<OpenAuNrSource>)> {
        runs.iter()
            .map(|(_, l)| match &l.data {
                LogData::OpenAu(o) => (o.open_au_nr, o.open_au_nr_source),
                _ => panic!("not an open-au run"),
            })
            .collect()
    }

    #[test]
    fn a_log_of_more_runs_than_the_cap_is_refused_naming_the_cap() {
        let run = "4MiB 8.1M/s\n2MiB 7.9M/s\n";
        let ok = run.repeat(MAX_RUNS);
        assert_eq!(parse_all("o", &ok).unwrap().len(), MAX_RUNS);
        let e = parse_all("o", &run.repeat(MAX_RUNS + 2)).unwrap_err();
        assert!(e.to_string().contains("more than 10000 runs"), "{e}");
    }

    #[test]
    fn raw_open_au_runs_take_counts_from_their_order_or_from_the_option() {
        let run = "4MiB 8M/s\n2MiB 7M/s\n1MiB 6M/s\n";
        let text = format!("{run}{run}{run}");
        let mut runs = parse_all("o", &text).unwrap();
        let counts = open_au_counts(&runs);
        assert_eq!(
            counts,
            [
                (Some(1), Some(OpenAuNrSource::RunOrder)),
                (Some(2), Some(OpenAuNrSource::RunOrder)),
                (Some(3), Some(OpenAuNrSource::RunOrder))
            ]
        );
        assert!(runs[0]
            .1
            .warnings
            .iter()
            .any(|w| w.kind() == "open_au_nr_from_run_order"));
        apply_open_au_nr(&mut runs, &[1, 8, 9]).unwrap();
        let counts = open_au_counts(&runs);
        assert_eq!(
            counts,
            [
                (Some(1), Some(OpenAuNrSource::Option)),
                (Some(8), Some(OpenAuNrSource::Option)),
                (Some(9), Some(OpenAuNrSource::Option))
            ]
        );
        assert!(runs.iter().all(|(_, l)| l
            .warnings
            .iter()
            .all(|w| w.kind() != "open_au_nr_from_run_order")));
        let e = apply_open_au_nr(&mut runs, &[1, 2]).unwrap_err();
        assert!(
            e.to_string().contains("gives 2 counts but 3 open-au runs"),
            "{e}"
        );
        for (v, want) in [
            ("0", "0 open erase blocks"),
            ("-3", "-3 is negative"),
            ("", "is empty"),
            ("2,x", "'x' is not a count"),
        ] {
            let e = parse_open_au_nr_list(v).unwrap_err();
            assert!(
                e.to_string().contains(want) && e.to_string().contains("--open-au-nr"),
                "{v}: {e}"
            );
        }
        assert_eq!(parse_open_au_nr_list("1, 2,8,9").unwrap(), [1, 2, 8, 9]);
    }

    #[test]
    fn shell_arithmetic_in_option_values_is_evaluated() {
        assert_eq!(eval_shell_arith("4*1024*1024"), Some(4 << 20));
        assert_eq!(eval_shell_arith(" 4 << 20 "), Some(4 << 20));
        assert_eq!(eval_shell_arith("(3*2)*1024/2"), Some(3072));
        assert_eq!(eval_shell_arith("0x400000"), Some(4 << 20));
        assert_eq!(eval_shell_arith("-(1+1)"), Some(-2));
        for bad in [
            "",
            "4*",
            "1/0",
            "x",
            "9223372036854775807*2",
            "1<<64",
            "(((1)",
        ] {
            assert_eq!(eval_shell_arith(bad), None, "{bad}");
        }
        // Many unclosed expansions on one command line: read in linear time, refused by name.
        let hostile = format!(
            "flashbench -O --erasesize={} /dev/sdb\n4MiB 8M/s\n",
            "$((1".repeat(1 << 16)
        );
        let e = parse("t", &hostile).unwrap_err();
        assert!(e.to_string().contains("--erasesize"));
        // Deep nesting is refused, not recursed into.
        let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert_eq!(eval_shell_arith(&deep), None);
        let l = parse(
            "t",
            "$ sudo ./flashbench -O --erasesize=$[4*1024*1024] -b $((16 * 1024)) --open-au-nr=$[1+1] /dev/sdb\n4MiB 8M/s\n2MiB 7M/s\n",
        )
        .unwrap();
        let LogData::OpenAu(o) = &l.data else {
            panic!("{l:?}")
        };
        assert_eq!(o.erase_bytes, Some(4 << 20));
        assert_eq!(o.block_bytes, Some(16384));
        // --open-au-nr is read as written ($[1+1] evaluates to 2).
        assert_eq!(o.open_au_nr, Some(2));
        // The command as printed stays as the user wrote it.
        assert!(l.command.unwrap().text.contains("$[4*1024*1024]"));
        // An expansion that is not arithmetic is still an error naming the option.
        let e = parse(
            "t",
            "flashbench -O --erasesize=$[four] /dev/sdb\n4MiB 8M/s\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("--erasesize"), "{e}");
    }

    #[test]
    fn a_command_continued_with_a_backslash_is_one_command() {
        let text = "$ sudo ./flashbench --open-au --open-au-nr=9 \\\n> --erasesize=$[4*1024*1024] \\\n   /dev/mmcblk0\n4MiB 8M/s\n2MiB 7M/s\n";
        let l = parse("t", text).unwrap();
        let c = l.command.as_ref().unwrap();
        assert_eq!(c.kind, Some(LogKind::OpenAu));
        assert_eq!(c.erase_bytes, Some(4 << 20));
        assert_eq!(c.open_au_nr, Some(9));
        assert_eq!(l.line, 1);
    }

    #[test]
    fn a_ctrl_c_ends_the_run_before_it_with_a_note() {
        let head = "$ flashbench -O -e 4M --open-au-nr=9 /dev/sdb\n4MiB 8M/s\n2MiB 7M/s\n";
        for (tail, rows) in [
            ("^C\n", 2),
            ("1MiB 6M/s^C\n", 3),
            ("1MiB ^C\n", 2),
            ("1MiB 6.2^C", 2),
        ] {
            let runs = parse_all("t", &format!("{head}{tail}$ flashbench -O -e 4M --open-au-nr=10 /dev/sdb\n4MiB 1M/s\n2MiB 1M/s\n"))
                .unwrap_or_else(|e| panic!("{tail}: {e}"));
            assert_eq!(runs.len(), 2, "{tail}");
            let LogData::OpenAu(o) = &runs[0].1.data else {
                panic!()
            };
            assert_eq!(o.rows.len(), rows, "{tail}");
            assert!(
                runs[0]
                    .1
                    .warnings
                    .iter()
                    .any(|w| w.kind() == "interrupted_run" && w.to_string().contains("line 4")),
                "{tail}: {:?}",
                runs[0].1.warnings
            );
            assert!(runs[1]
                .1
                .warnings
                .iter()
                .all(|w| w.kind() != "interrupted_run"));
        }
        // A log that is only an interrupted command has no results: a clear error.
        let e = parse_all("t", "$ flashbench -a /dev/sdb\n^C\n").unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }
}
