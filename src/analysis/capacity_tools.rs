//! Reader for the output of other fake-capacity tests, as people paste it when they ask
//! whether a card is fake: the probe of a well-known open-source suite (its "Device
//! geometry" block), that suite's read-back check ("Data OK" / "Data LOST"), and the
//! Windows fill-and-verify test (its English or German result window). `analyze` restates
//! each one's verdict, usable size and cache, and says where that tool is known to be
//! blind. Only the output format is read here; nothing of those tools is reused. Pure;
//! never panics; numbers it cannot read are left out, not guessed.

use crate::vocab::units::format_bytes;
use crate::vocab::Inference;
use serde::{Deserialize, Serialize};

/// Which tool printed the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Tool {
    F3probe,
    F3read,
    H2testw,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::F3probe => "f3probe",
            Tool::F3read => "f3read",
            Tool::H2testw => "h2testw",
        }
    }
}

/// What the tool concluded, in its own terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ToolVerdict {
    /// "the real thing" / "Test finished without errors" / no data lost.
    Genuine,
    /// "a counterfeit of type …".
    Counterfeit,
    /// "damaged".
    Damaged,
    /// Data lost in the read-back ("DATA LOST", "likely to be defective").
    DataLost,
}

/// One pasted result of a capacity test, restated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CapacityToolReport {
    /// "f3probe", "f3read" or "h2testw".
    pub tool: Tool,
    /// The version line, when the paste has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub verdict: ToolVerdict,
    /// The counterfeit type the probe named (limbo, wraparound, chain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fake_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usable_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub announced_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_bytes: Option<u64>,
    /// Data read back intact and lost (read-back tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_bytes: Option<u64>,
    /// "Only X of Y MByte tested": X and Y in bytes (MByte = 2^20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tested_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_bytes: Option<u64>,
    /// Where this tool is known to be blind, for this verdict.
    pub blind_spots: Vec<String>,
}

const SECTOR: u64 = 512;

/// A trimmed line and the set of ASCII bytes in it. Each line of a pasted log is searched
/// for about twenty keys; a key with a byte the line lacks is not searched for (a searcher
/// built for every key and line was a quarter of `analyze`'s time on a 60 MiB log).
struct Line<'a> {
    text: &'a str,
    ascii: u128,
}

/// The set of ASCII bytes in `s` (a constant for each key).
const fn ascii_set(s: &str) -> u128 {
    let (b, mut set, mut i) = (s.as_bytes(), 0u128, 0);
    while i < b.len() {
        if b[i] < 128 {
            set |= 1 << b[i];
        }
        i += 1;
    }
    set
}

/// Whether the [`Line`] holds the literal key (case-sensitive).
macro_rules! has {
    ($line:expr, $key:expr) => {
        $line.has(const { ascii_set($key) }, $key)
    };
}

/// The [`Line`]'s value after the literal key (case-sensitive), trimmed.
macro_rules! after {
    ($line:expr, $key:expr) => {
        $line.after(const { ascii_set($key) }, $key)
    };
}

impl<'a> Line<'a> {
    fn new(text: &'a str) -> Self {
        Line {
            text,
            ascii: ascii_set(text),
        }
    }

    /// Whether the line holds `key`, whose ASCII bytes are `set`.
    fn has(&self, set: u128, key: &str) -> bool {
        set & !self.ascii == 0 && self.text.contains(key)
    }

    /// The value of the line after `key`, whose ASCII bytes are `set`, trimmed.
    fn after(&self, set: u128, key: &str) -> Option<&'a str> {
        if set & !self.ascii != 0 {
            return None;
        }
        let text = self.text;
        text.find(key).map(|i| text[i + key.len()..].trim())
    }
}

/// The integer in the first parentheses of `s` before `unit` ("(16477879 blocks)").
fn paren_count(s: &str) -> Option<u64> {
    let open = s.find('(')?;
    let inner = &s[open + 1..];
    let num: String = inner
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    num.parse().ok()
}

/// "2^34 Bytes" inside parentheses.
fn paren_pow2(s: &str) -> Option<u64> {
    let i = s.find("2^")?;
    let n: String = s[i + 2..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    let n: u32 = n.parse().ok()?;
    (n < 64).then(|| 1u64 << n)
}

/// A decimal number written with a comma or a point ("9,62", "3.9").
fn decimal(s: &str) -> Option<f64> {
    let t: String = s
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
        .collect();
    let v: f64 = t.replace(',', ".").parse().ok()?;
    v.is_finite().then_some(v)
}

/// Every phrase [`detect`] looks for (none holds a line break, so a text has one exactly
/// when one of its lines has it: the streaming [`Reader`] checks them line by line).
const KEYS: [&str; 18] = [
    "Device geometry",
    "*Usable* size",
    "Usable size",
    "F3 probe",
    "is the real thing",
    "is a counterfeit of type",
    "Announced size",
    "Data OK:",
    "Data LOST:",
    "H2testw",
    "MByte tested",
    "MByte getestet",
    "Test finished without errors",
    "Test ohne Fehler beendet",
    "likely to be defective",
    "wahrscheinlich defekt",
    "GByte",
    "KByte",
];

/// The ASCII bytes of each of [`KEYS`].
const KEY_SETS: [u128; KEYS.len()] = {
    let mut sets = [0; KEYS.len()];
    let mut i = 0;
    while i < KEYS.len() {
        sets[i] = ascii_set(KEYS[i]);
        i += 1;
    }
    sets
};

/// Which tool's output `text` is, if any.
pub fn detect(text: &str) -> Option<Tool> {
    detect_by(|k| text.contains(k))
}

/// [`detect`] on whether the text has each of [`KEYS`] (and "MByte").
fn detect_by(has: impl Fn(&str) -> bool) -> Option<Tool> {
    if has("Device geometry") && (has("*Usable* size") || has("Usable size"))
        || has("F3 probe")
        || (has("is the real thing") || has("is a counterfeit of type")) && has("Announced size")
    {
        return Some(Tool::F3probe);
    }
    if has("Data OK:") && has("Data LOST:") {
        return Some(Tool::F3read);
    }
    let h2 = [
        "H2testw",
        "MByte tested",
        "MByte getestet",
        "Test finished without errors",
        "Test ohne Fehler beendet",
        "likely to be defective",
        "wahrscheinlich defekt",
    ];
    if h2.iter().any(|k| has(k)) && (has("MByte") || has("GByte") || has("KByte")) {
        return Some(Tool::H2testw);
    }
    None
}

/// Read a pasted capacity-test result (`None`: not one this reader knows, or no verdict
/// line in it).
pub fn parse(text: &str) -> Option<CapacityToolReport> {
    let mut r = Reader::default();
    for (i, line) in text.split('\n').enumerate() {
        r.line(i + 1, line);
    }
    r.finish()
}

/// [`parse`] one line at a time, so a large text is never held whole (`analyze` reads a
/// file once, for this and for the flashbench reader together): which phrases the text
/// has so far, and what each tool's reader took from it.
#[derive(Default)]
pub struct Reader {
    seen: [bool; KEYS.len()],
    mbyte: bool,
    probe: Probe,
    read: Read,
    h2: H2,
}

impl Reader {
    /// One line of the text (without its line feed), numbered from 1.
    pub fn line(&mut self, lineno: usize, line: &str) {
        let line = if lineno == 1 {
            line.strip_prefix('\u{feff}').unwrap_or(line)
        } else {
            line
        };
        // No key starts or ends with a blank: the trimmed line holds the same keys.
        let line = Line::new(line.trim());
        for ((seen, key), set) in self.seen.iter_mut().zip(KEYS).zip(KEY_SETS) {
            *seen = *seen || line.has(set, key);
        }
        self.mbyte = self.mbyte || has!(line, "MByte");
        self.probe.line(&line);
        self.read.line(&line);
        self.h2.line(&line);
    }

    /// The report, when the text is one tool's result with its verdict.
    pub fn finish(self) -> Option<CapacityToolReport> {
        let has = |k: &str| {
            k == "MByte" && self.mbyte || KEYS.iter().zip(self.seen).any(|(key, s)| s && *key == k)
        };
        match detect_by(has)? {
            Tool::F3probe => self.probe.finish(),
            Tool::F3read => self.read.finish(),
            Tool::H2testw => self.h2.finish(),
        }
    }
}

impl CapacityToolReport {
    /// A report of `tool` with nothing read yet (the verdict until a line says otherwise).
    fn empty(tool: Tool) -> Self {
        CapacityToolReport {
            tool,
            version: None,
            verdict: ToolVerdict::Genuine,
            fake_type: None,
            usable_bytes: None,
            announced_bytes: None,
            cache_bytes: None,
            ok_bytes: None,
            lost_bytes: None,
            tested_bytes: None,
            free_bytes: None,
            blind_spots: Vec::new(),
        }
    }
}

/// The probe's reader: its version, verdict and sizes in blocks so far.
#[derive(Default)]
struct Probe {
    version: Option<String>,
    verdict: Option<ToolVerdict>,
    fake_type: Option<String>,
    block: Option<u64>,
    usable_blocks: Option<u64>,
    announced_blocks: Option<u64>,
    cache_blocks: Option<u64>,
}

impl Probe {
    fn line(&mut self, line: &Line) {
        let Probe {
            version,
            verdict,
            fake_type,
            block,
            usable_blocks,
            announced_blocks,
            cache_blocks,
        } = self;
        if let Some(v) = after!(line, "F3 probe") {
            *version = Some(format!(
                "F3 probe {}",
                v.split_whitespace().next().unwrap_or("")
            ));
        }
        if has!(line, "is the real thing") {
            *verdict = Some(ToolVerdict::Genuine);
        } else if let Some(t) = after!(line, "is a counterfeit of type") {
            *verdict = Some(ToolVerdict::Counterfeit);
            *fake_type = t
                .split_whitespace()
                .next()
                .map(|w| {
                    w.trim_matches(|c: char| !c.is_ascii_alphanumeric())
                        .to_string()
                })
                .filter(|w| !w.is_empty() && w.len() <= 32);
        } else if has!(line, "is damaged") {
            *verdict = Some(ToolVerdict::Damaged);
        }
        if let Some(v) = after!(line, "Usable* size:").or_else(|| after!(line, "Usable size:")) {
            *usable_blocks = paren_count(v);
        } else if let Some(v) = after!(line, "Announced size:") {
            *announced_blocks = paren_count(v);
        } else if let Some(v) = after!(line, "Approximate cache size:") {
            *cache_blocks = paren_count(v);
        } else if let Some(v) = after!(line, "Physical block size:") {
            *block = paren_pow2(v);
        }
    }

    fn finish(self) -> Option<CapacityToolReport> {
        let mut r = CapacityToolReport::empty(Tool::F3probe);
        r.version = self.version;
        r.fake_type = self.fake_type;
        r.verdict = self.verdict?;
        let bs = self.block.unwrap_or(SECTOR);
        r.usable_bytes = self.usable_blocks.and_then(|b| b.checked_mul(bs));
        r.announced_bytes = self.announced_blocks.and_then(|b| b.checked_mul(bs));
        r.cache_bytes = self.cache_blocks.and_then(|b| b.checked_mul(bs));
        r.blind_spots = match r.verdict {
        ToolVerdict::Genuine => vec![
            "its search assumes the real size of a wrap-around fake is a power of two: a fake that wraps at another size passes as \"the real thing\" (a served card that wraps at exactly 3,000,000,000 bytes: this probe's version 8.0 wrote 2.15 GB in 206 s and called it the real thing; `flashscope probe` found the wrap at 3,000,000,000 bytes in 13.6 s, writing 2.2 MB)".into(),
        ],
        ToolVerdict::Damaged => vec![
            "it says \"damaged\" with a usable size of 0 on chain fakes too (writes that land on a chain of other blocks), so this does not tell a damaged card from a fake".into(),
        ],
        _ => Vec::new(),
    };
        Some(r)
    }
}

/// The read-back check's reader: its OK and LOST figures so far.
#[derive(Default)]
struct Read {
    ok: Option<u64>,
    lost: Option<u64>,
}

impl Read {
    fn line(&mut self, line: &Line) {
        if let Some(v) = after!(line, "Data OK:") {
            self.ok = paren_count(v).and_then(|s| s.checked_mul(SECTOR));
        } else if let Some(v) = after!(line, "Data LOST:") {
            self.lost = paren_count(v).and_then(|s| s.checked_mul(SECTOR));
        }
    }

    fn finish(self) -> Option<CapacityToolReport> {
        let (ok, lost) = (self.ok?, self.lost?);
        Some(CapacityToolReport {
            tool: Tool::F3read,
            version: None,
            verdict: if lost > 0 {
                ToolVerdict::DataLost
            } else {
                ToolVerdict::Genuine
            },
            fake_type: None,
            usable_bytes: (lost == 0).then_some(ok),
            announced_bytes: None,
            cache_bytes: None,
            ok_bytes: Some(ok),
            lost_bytes: Some(lost),
            tested_bytes: ok.checked_add(lost),
            free_bytes: None,
            blind_spots: {
                let mut b = vec![
                "it checks only the files its writing half put into the filesystem's free space: space already used by files, and anything beyond what the filesystem offers, is not tested".to_string(),
            ];
                if lost > 0 {
                    b.push("it reports how much was lost, not where the good part ends: \"Data OK\" counts good sectors wherever they are, so it is no safe size to shrink a partition to".into());
                }
                b
            },
        })
    }
}

/// The fill-and-verify test's reader: the report so far (its verdict apart).
struct H2 {
    r: CapacityToolReport,
    verdict: Option<ToolVerdict>,
}

impl Default for H2 {
    fn default() -> Self {
        H2 {
            r: CapacityToolReport::empty(Tool::H2testw),
            verdict: None,
        }
    }
}

impl H2 {
    fn line(&mut self, line: &Line) {
        let unit = |w: &str| match w {
            "Byte" => Some(1u64),
            "KByte" => Some(1 << 10),
            "MByte" => Some(1 << 20),
            "GByte" => Some(1 << 30),
            "TByte" => Some(1 << 40),
            _ => None,
        };
        let H2 { r, verdict } = self;
        // Only a line with a unit or "Only" / "Nur" is read word by word.
        let words: Vec<&str> = if has!(line, "Byte") || has!(line, "Only") || has!(line, "Nur") {
            line.text.split_whitespace().collect()
        } else {
            Vec::new()
        };
        if line.text.starts_with("H2testw v") || line.text.starts_with("H2testw V") {
            r.version = Some(line.text.chars().take(32).collect());
        }
        if has!(line, "Test finished without errors") || has!(line, "Test ohne Fehler beendet") {
            *verdict = Some(ToolVerdict::Genuine);
        } else if has!(line, "likely to be defective") || has!(line, "wahrscheinlich defekt") {
            *verdict = Some(ToolVerdict::DataLost);
        }
        // "Warning: Only 7446 of 7447 MByte tested." / "Achtung: Nur 7446 von 7447 MByte getestet."
        if let Some(i) = words.iter().position(|w| *w == "Only" || *w == "Nur") {
            if let (Some(a), Some(b), Some(u)) =
                (words.get(i + 1), words.get(i + 3), words.get(i + 4))
            {
                if let (Some(a), Some(b), Some(u)) = (decimal(a), decimal(b), unit(u)) {
                    r.tested_bytes = Some((a * u as f64) as u64);
                    r.free_bytes = Some((b * u as f64) as u64);
                }
            }
        }
        // "3.9 GByte OK (8192000 sectors)" / "11.0 GByte DATA LOST (23150144 sectors)"
        if words.len() >= 3 && unit(words[1]).is_some() {
            let sectors = paren_count(line.text).and_then(|s| s.checked_mul(SECTOR));
            if words[2] == "OK" {
                r.ok_bytes = sectors;
            } else if has!(line, "DATA LOST") || has!(line, "DATEN VERLOREN") {
                r.lost_bytes = sectors;
            }
        }
    }

    fn finish(self) -> Option<CapacityToolReport> {
        let mut r = self.r;
        r.verdict = self.verdict?;
        if r.verdict == ToolVerdict::Genuine {
            r.usable_bytes = r.tested_bytes;
        }
        r.blind_spots.push(
        "it tests only the free space of the filesystem it writes to: files already on the card and the filesystem's own areas are not tested".into(),
    );
        if let (Some(t), Some(f)) = (r.tested_bytes, r.free_bytes) {
            if t < f {
                r.blind_spots.push(format!(
                "this run tested {} of the {} MiB free (its \"Only … tested\" line): the rest is unchecked",
                t >> 20,
                f >> 20
            ));
            }
        }
        if r.verdict == ToolVerdict::DataLost {
            r.blind_spots.push(
            "it reports how much was lost, not where the good part ends: the OK figure is no safe size to shrink a partition to".into(),
        );
        }
        Some(r)
    }
}

/// The inferences a report gives: `fake_kind` (the probe's), `usable_bytes`,
/// `write_cache_bytes`, `lost_bytes`. Restated, never measured here: at most tentative,
/// and inconclusive where the tool is known to answer wrongly.
pub fn inferences(r: &CapacityToolReport) -> Vec<(&'static str, Inference)> {
    let tool = r.tool.name();
    let blind = if r.blind_spots.is_empty() {
        String::new()
    } else {
        format!("; where {tool} is blind: {}", r.blind_spots.join("; "))
    };
    let mut v = Vec::new();
    let size = |b: Option<u64>| b.map(format_bytes).unwrap_or_else(|| "?".into());
    match r.verdict {
        ToolVerdict::Genuine => {
            if r.tool == Tool::F3probe {
                v.push((
                    "fake_kind",
                    Inference::new(
                        "none",
                        0.6,
                        format!("{tool} says the device is the real thing{blind}"),
                    ),
                ));
            }
            if let Some(u) = r.usable_bytes {
                v.push((
                    "usable_bytes",
                    Inference::new(
                        u,
                        0.6,
                        format!(
                            "{tool} found {} usable with no data lost{blind}",
                            size(Some(u))
                        ),
                    ),
                ));
            }
        }
        ToolVerdict::Counterfeit => {
            let kind = match r.fake_type.as_deref() {
                Some("wraparound") => "wrap",
                Some("limbo") => "limbo",
                Some("chain") => "chain",
                _ => "bad",
            };
            v.push((
                "fake_kind",
                Inference::new(
                    kind,
                    0.75,
                    format!(
                        "{tool} says the device is a counterfeit of type {} (announced {}, usable {})",
                        r.fake_type.as_deref().unwrap_or("?"),
                        size(r.announced_bytes),
                        size(r.usable_bytes)
                    ),
                ),
            ));
            if let Some(u) = r.usable_bytes {
                v.push((
                    "usable_bytes",
                    Inference::new(
                        u,
                        0.75,
                        format!(
                            "{tool}'s usable size of the counterfeit (announced {})",
                            size(r.announced_bytes)
                        ),
                    ),
                ));
            }
        }
        ToolVerdict::Damaged => {
            v.push((
                "fake_kind",
                Inference::inconclusive(format!(
                    "{tool} says the device is damaged (usable {}){blind}; `flashscope probe` tells the two apart",
                    size(r.usable_bytes)
                )),
            ));
        }
        ToolVerdict::DataLost => {
            if let Some(l) = r.lost_bytes {
                v.push((
                    "lost_bytes",
                    Inference::new(
                        l,
                        0.75,
                        format!(
                            "{tool} read back {} intact and {} lost: the device loses data{blind}",
                            size(r.ok_bytes),
                            size(Some(l))
                        ),
                    ),
                ));
            }
            v.push((
                "usable_bytes",
                Inference::inconclusive(format!(
                    "{tool} lost data but does not say where the good part ends ({} intact in all){blind}",
                    size(r.ok_bytes)
                )),
            ));
        }
    }
    if r.tool == Tool::F3probe {
        if let Some(c) = r.cache_bytes {
            v.push((
                "write_cache_bytes",
                Inference::new(c, 0.6, format!("{tool}'s approximate cache size, restated")),
            ));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_else_is_taken_for_a_capacity_test() {
        assert_eq!(
            detect("align 4096 pre 1ms on 1ms post 1ms diff 0ns\n"),
            None
        );
        assert_eq!(parse("Data OK: lots\n"), None);
        // A probe's text without a verdict line is not restated.
        assert_eq!(
            parse("Device geometry:\n *Usable* size: 1 GB (2 blocks)\n"),
            None
        );
        // Hostile numbers: no panic, no overflow.
        let r = parse("F3 probe 8.0\nBad news: The device `/dev/sdb' is a counterfeit of type limbo\nDevice geometry:\n *Usable* size: 1 GB (99999999999999999999999 blocks)\n Physical block size: 512.00 Byte (2^99 Bytes)\n").unwrap();
        assert_eq!(r.usable_bytes, None);
    }
}
