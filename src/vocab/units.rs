//! The one vocabulary of sizes, rates and durations: parsing and formatting.
//! K, M, G, T (and KiB, MiB, ...) are powers of 1024; KB, MB, GB, TB are powers of 1000
//! (SD labels and speed classes count in those); formatting always uses binary units.
//!
//! The rate rule (one unit for the whole tool): every rate flashscope prints, measured or
//! required (text, HTML, SVG axes, tables, checks, warnings, `--expect` messages,
//! history and compare tables), is in binary units: [`format_rate`] (`12.1 MiB/s`), or a
//! number column or chart axis headed `MiB/s` and scaled by [`MIB_PER_S`]. A requirement
//! that is counted in 10^6 B/s (the SD Association's speed and application classes, a
//! `--expect` term written `10MB/s`) is stated in MiB/s like the figure beside it, its own
//! decimal figure following in parentheses: [`format_decimal_rate`] gives
//! `9.54 MiB/s (10 MB/s)`. `MB/s` is never printed on its own; JSON, Prometheus and CSV
//! keep bytes per second in their fields.

use super::error::{Error, Result};

const KIB: u64 = 1024;

/// How a size or rate suffix scales: `K`, `M`, `G`, `T` alone or with `iB` / `i` are
/// powers of 1024 (`4M` = `4MiB` = 4194304 bytes); `KB`, `MB`, `GB`, `TB` are powers of
/// 1000 (`10MB/s` = 10,000,000 bytes per second), as SD card labels and the SD speed
/// classes count them. Case does not matter. `B` alone, or no suffix, is bytes.
fn split_unit(text: &str) -> Option<(&str, u64)> {
    const SUFFIXES: [(&str, u64); 17] = [
        ("kib", 1 << 10),
        ("mib", 1 << 20),
        ("gib", 1 << 30),
        ("tib", 1 << 40),
        ("ki", 1 << 10),
        ("mi", 1 << 20),
        ("gi", 1 << 30),
        ("ti", 1 << 40),
        ("kb", 1_000),
        ("mb", 1_000_000),
        ("gb", 1_000_000_000),
        ("tb", 1_000_000_000_000),
        ("k", 1 << 10),
        ("m", 1 << 20),
        ("g", 1 << 30),
        ("t", 1 << 40),
        ("b", 1),
    ];
    // The suffix compared without a lowered copy of the text (a find-fat log of a
    // million lines reads seven rates on each).
    let ends_with = |suffix: &str| {
        let t = text.as_bytes();
        t.len() >= suffix.len()
            && t[t.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    };
    let (len, mult) = SUFFIXES
        .iter()
        .find(|(suffix, _)| ends_with(suffix))
        .map_or((0, 1), |&(suffix, mult)| (suffix.len(), mult));
    let num = text[..text.len() - len].trim();
    let plain = !num.is_empty()
        && !num.starts_with(['-', '+'])
        && num.chars().all(|c| c.is_ascii_digit() || c == '.');
    plain.then_some((num, mult))
}

/// Parse a size: plain bytes, or a number with K, M, G, T (powers of 1024, also written
/// KiB, MiB, ...) or KB, MB, GB, TB (powers of 1000): `4M`, `4MiB`, `1.5M`, `512`,
/// `32GB`. Fractions must give a whole number of bytes.
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let bad = || {
        Error::usage(format!(
            "'{text}' is not a size: use bytes or a number with K, M, G or T (powers of 1024), e.g. 4M"
        ))
    };
    let (num, mult) = split_unit(t).ok_or_else(bad)?;
    if let Ok(n) = num.parse::<u64>() {
        return n
            .checked_mul(mult)
            .ok_or_else(|| Error::usage(format!("size '{text}' is too large (more than 16 EiB)")));
    }
    let f: f64 = num.parse().map_err(|_| bad())?;
    let bytes = f * mult as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(bad());
    }
    if bytes.fract() != 0.0 {
        return Err(Error::usage(format!(
            "size '{text}' is not a whole number of bytes"
        )));
    }
    Ok(bytes as u64)
}

/// Parse a rate in bytes per second: a size as [`parse_size`] reads it (fractions
/// allowed), with or without `/s`: `22M`, `8.79M/s` (MiB/s), `10MB/s` (10^6 B/s).
/// The one rate parser: sim bandwidth keys, bench's `--expect`, flashbench logs.
pub fn parse_rate(text: &str) -> Result<f64> {
    let t = text.trim();
    let bad = || {
        Error::usage(format!(
            "'{text}' is not a rate: use bytes per second with K, M, G (powers of 1024) or KB, MB, GB (powers of 1000), e.g. 22M or 10MB/s"
        ))
    };
    let t = t.strip_suffix("/s").unwrap_or(t).trim_end();
    let (num, mult) = split_unit(t).ok_or_else(bad)?;
    let v: f64 = num.parse().map_err(|_| bad())?;
    let rate = v * mult as f64;
    if !rate.is_finite() {
        return Err(bad());
    }
    Ok(rate)
}

/// A size as `parse_size` reads it back, in the largest unit that keeps it whole
/// (e.g. `16G`, `1536M`, `4097K`, `513`).
pub fn short_size(bytes: u64) -> String {
    for (unit, mult) in [
        ("T", KIB.pow(4)),
        ("G", KIB.pow(3)),
        ("M", KIB.pow(2)),
        ("K", KIB),
    ] {
        if bytes >= mult && bytes % mult == 0 {
            return format!("{}{unit}", bytes / mult);
        }
    }
    bytes.to_string()
}

/// Parse the value of a size option, naming the option in every error: an empty value, a
/// negative one, one that is not a size and (unless `allow_zero`) zero are usage errors
/// that say the option, the value and what to give instead.
pub fn parse_size_option(option: &str, text: &str, allow_zero: bool) -> Result<u64> {
    let t = text.trim();
    let example = "a size such as 4K (bytes, or a number with K, M, G or T, powers of 1024)";
    if t.is_empty() {
        return Err(Error::usage(format!("{option} is empty: give {example}")));
    }
    if t.starts_with('-') {
        return Err(Error::usage(format!(
            "{option} {t} is negative: give {example}"
        )));
    }
    let v = parse_size(t).map_err(|e| Error::usage(format!("{option}: {e}")))?;
    if v == 0 && !allow_zero {
        return Err(Error::usage(format!(
            "{option} {t} is zero: give {example}"
        )));
    }
    Ok(v)
}

/// Parse a duration into nanoseconds: a number with ns, us (or µs), ms, s, m (or min)
/// or h (`300us`, `1.5ms`, `90s`, `2m`, `1h`); a plain number is seconds (fio's habit).
/// The one duration parser: options, sim keys and `--expect` terms all use it.
pub fn parse_duration_ns(text: &str) -> Result<u64> {
    let t = text.trim();
    let bad = || {
        Error::usage(format!(
            "'{text}' is not a duration: use a number with ns, us, ms, s, m or h, e.g. 300us, 90s, 2m"
        ))
    };
    // Longest suffix first: "ms" before "s", "min" before "m".
    const UNITS: [(&str, f64); 8] = [
        ("ns", 1.0),
        ("us", 1e3),
        ("µs", 1e3),
        ("ms", 1e6),
        ("min", 60e9),
        ("s", 1e9),
        ("m", 60e9),
        ("h", 3600e9),
    ];
    let (num, mult) = UNITS
        .iter()
        .find_map(|&(suffix, mult)| t.strip_suffix(suffix).map(|n| (n, mult)))
        .unwrap_or((t, 1e9));
    let num = num.trim();
    if num.is_empty() || num.starts_with('-') || num.starts_with('+') {
        return Err(bad());
    }
    let f: f64 = num.parse().map_err(|_| bad())?;
    let ns = f * mult;
    if !ns.is_finite() || ns < 0.0 || ns > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(ns.round() as u64)
}

/// Greatest common divisor (0 with 0 gives 0).
pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// True when `n` is a power of two or three times one: the sizes an erase block (or a
/// page) comes in. The simulator's keys and the write probes' `--erase-size` both ask.
pub fn is_pow2_or_3x(n: u64) -> bool {
    n > 0 && (n.is_power_of_two() || (n % 3 == 0 && (n / 3).is_power_of_two()))
}

/// Format bytes with binary units: `4 MiB`, `1.5 KiB`, `512 B`, `7.99 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{} {}", trim_number(v), UNITS[i])
    }
}

/// Format a rate in bytes per second with binary units: `22.5 MiB/s`.
pub fn format_rate(bytes_per_s: f64) -> String {
    if !bytes_per_s.is_finite() || bytes_per_s < 0.0 {
        return "n/a".to_string();
    }
    let mut s = format_bytes(bytes_per_s.round() as u64);
    s.push_str("/s");
    s
}

/// Bytes per second in one MiB/s: the scale of every rate column and chart axis.
pub const MIB_PER_S: f64 = 1_048_576.0;

/// A rate that is counted in 10^6 B/s (an SD class requirement, a `10MB/s` threshold),
/// in the tool's unit with its own decimal figure after it: `9.54 MiB/s (10 MB/s)`.
pub fn format_decimal_rate(bytes_per_s: f64) -> String {
    if !bytes_per_s.is_finite() || bytes_per_s < 0.0 {
        return "n/a".to_string();
    }
    format!(
        "{} ({} MB/s)",
        format_rate(bytes_per_s),
        trim_number(bytes_per_s / 1e6)
    )
}

/// Whether a rate as written (`10MB/s`, `22M`, `8MiB/s`) counts in powers of 1000, so
/// that it is shown back with [`format_decimal_rate`].
pub fn is_decimal_rate(text: &str) -> bool {
    let t = text.trim();
    let t = t.strip_suffix("/s").unwrap_or(t).trim_end();
    split_unit(t).is_some_and(|(_, mult)| mult > 1 && mult % 1000 == 0)
}

/// A number with up to three significant digits (2.50, 12.5, 125).
pub fn short_number(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A percentage for sentences: whole numbers from 10 %, one decimal below.
pub fn pct(x: f64) -> String {
    let p = x * 100.0;
    if p.abs() >= 9.95 {
        format!("{p:.0}")
    } else {
        format!("{p:.1}")
    }
}

/// A signed percentage: "+4.2%", "−3.0%", and "0.0%" for what rounds to nothing.
pub fn signed_pct(x: f64) -> String {
    let s = pct(x.abs());
    if s == "0.0" {
        format!("{s}%")
    } else if x < 0.0 {
        format!("−{s}%")
    } else {
        format!("+{s}%")
    }
}

/// An English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 22nd, 101st, 111th.
pub fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Format nanoseconds as ns, µs, ms or s with three significant digits; negative values
/// keep their sign (a negative diff is data, not an error).
pub fn format_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "n/a".to_string();
    }
    let sign = if ns < 0.0 { "-" } else { "" };
    let a = ns.abs();
    let (v, unit) = if a < 1e3 {
        (a, "ns")
    } else if a < 1e6 {
        (a / 1e3, "µs")
    } else if a < 1e9 {
        (a / 1e6, "ms")
    } else {
        (a / 1e9, "s")
    };
    format!("{sign}{} {unit}", trim_number(v))
}

/// Three significant digits without trailing zeros.
fn trim_number(v: f64) -> String {
    let s = if v >= 100.0 {
        fixed(v, 0)
    } else if v >= 10.0 {
        fixed(v, 1)
    } else {
        fixed(v, 2)
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `v` with `decimals` digits after the point, exactly as `format!("{v:.decimals$}")`
/// writes it, without its exact decimal expansion where the scaled value is not near a
/// tie: a table of a million rows spent a fifth of its time in that expansion.
fn fixed(v: f64, decimals: u32) -> String {
    let scaled = v * 10f64.powi(decimals as i32);
    // The product is within an ulp (about 1e-11 here) of the exact one, so away from a
    // tie it rounds to the same integer as the exact decimal rounding does.
    if v.is_sign_negative() || !(0.0..1e15).contains(&scaled) || (scaled.fract() - 0.5).abs() < 1e-6
    {
        return format!("{v:.prec$}", prec = decimals as usize);
    }
    let n = scaled.round() as u64;
    if decimals == 0 {
        return n.to_string();
    }
    let p = 10u64.pow(decimals);
    format!("{}.{:0width$}", n / p, n % p, width = decimals as usize)
}

/// A time in seconds since the Unix epoch as RFC 3339 UTC, e.g. `2026-11-25T16:40:00Z`
/// (the proleptic Gregorian calendar, days from the epoch as in Howard Hinnant's
/// `civil_from_days`); the documents' `started_at`.
pub fn format_rfc3339_utc(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3_600,
        secs / 60 % 60,
        secs % 60
    )
}

/// [`format_rfc3339_utc`]'s text read back (`2026-11-25T16:40:00Z`, the documents'
/// `started_at`): Unix seconds, `None` for any other shape or a date before 1970.
pub fn parse_rfc3339_utc(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || b[19] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = &text[r];
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Howard Hinnant's days_from_civil, the inverse of the formatter's civil_from_days.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3_600 + mm * 60 + ss;
    u64::try_from(secs).ok()
}

/// An option's value as given: the parsed value, and its spelling for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given<T> {
    pub value: T,
    pub text: String,
}

impl Given<u64> {
    /// A value made by the program (not typed by the user): spelled as a plain number.
    pub fn number(value: u64) -> Self {
        Given {
            value,
            text: value.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fixed_writes_what_the_exact_formatting_writes() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(46);
        let mut values = vec![
            0.0,
            -0.0,
            0.125,
            0.375,
            2.675,
            1.005,
            9.995,
            99.95,
            999.5,
            0.005,
            0.015,
            1e14,
            1e15,
            1e300,
            f64::MIN_POSITIVE,
            5e-324,
            -1.5,
            f64::NAN,
            f64::INFINITY,
        ];
        for _ in 0..200_000 {
            let exp = rng.gen_range(-4..16);
            values.push(rng.gen::<f64>() * 10f64.powi(exp));
            // Ties and their neighbours: k/2 of the last decimal.
            let tie = rng.gen_range(0..2_000_000u64) as f64 / 200.0;
            values.extend([
                tie,
                f64::from_bits(tie.to_bits() + 1),
                f64::from_bits(tie.to_bits().saturating_sub(1)),
            ]);
        }
        for v in values {
            for d in 0..3 {
                assert_eq!(
                    super::fixed(v, d),
                    format!("{v:.prec$}", prec = d as usize),
                    "{v:e} to {d} decimals"
                );
            }
        }
    }

    use super::*;

    #[test]
    fn three_times_power_of_two_is_allowed() {
        assert!(is_pow2_or_3x(12 << 20));
        assert!(is_pow2_or_3x(1536 * KIB));
        assert!(is_pow2_or_3x(4 << 20));
        assert!(!is_pow2_or_3x(5 << 20));
        assert!(!is_pow2_or_3x(9 << 20));
        assert!(!is_pow2_or_3x(0));
    }

    /// Ordinals for 1..=120 against the rule written out longhand: the last two digits
    /// 11, 12, 13 take "th"; otherwise the last digit 1, 2, 3 takes "st", "nd", "rd".
    #[test]
    fn ordinals_follow_english_for_1_to_120() {
        let named = [
            (1, "1st"),
            (2, "2nd"),
            (3, "3rd"),
            (4, "4th"),
            (10, "10th"),
            (11, "11th"),
            (12, "12th"),
            (13, "13th"),
            (21, "21st"),
            (22, "22nd"),
            (23, "23rd"),
            (101, "101st"),
            (111, "111th"),
            (112, "112th"),
            (113, "113th"),
            (120, "120th"),
        ];
        for (n, want) in named {
            assert_eq!(ordinal(n), want);
        }
        for n in 1..=120u64 {
            let text = ordinal(n);
            let digits = n.to_string();
            let tens = (n / 10) % 10;
            let want = if tens == 1 {
                "th"
            } else {
                match digits.chars().last() {
                    Some('1') => "st",
                    Some('2') => "nd",
                    Some('3') => "rd",
                    _ => "th",
                }
            };
            assert_eq!(text, format!("{digits}{want}"));
        }
    }

    #[test]
    fn short_sizes_read_back_as_the_same_size() {
        for b in [
            0,
            1,
            512,
            1024,
            4097 * 1024,
            1536 << 20,
            16 << 30,
            3 << 40,
            u64::MAX,
        ] {
            assert_eq!(parse_size(&short_size(b)).unwrap(), b, "{}", short_size(b));
        }
        assert_eq!(short_size(16 << 30), "16G");
        assert_eq!(short_size(1536 << 20), "1536M");
    }

    #[test]
    fn sizes_parse_in_powers_of_1024() {
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("4MiB").unwrap(), 4 << 20);
        assert_eq!(parse_size("1.5M").unwrap(), 1536 * 1024);
        assert_eq!(parse_size("16g").unwrap(), 16 << 30);
        assert_eq!(parse_size("1T").unwrap(), 1 << 40);
        for bad in ["", "banana", "-4K", "4X", "K", "1.0000001K", "99999999999T"] {
            assert!(parse_size(bad).is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn size_options_name_the_option_and_the_fix() {
        assert_eq!(parse_size_option("--blocksize", "4K", false).unwrap(), 4096);
        assert_eq!(parse_size_option("--offset", "0", true).unwrap(), 0);
        for (v, want) in [
            ("", "--blocksize is empty: give a size such as 4K"),
            ("  ", "--blocksize is empty"),
            ("-5", "--blocksize -5 is negative: give a size such as 4K"),
            ("0", "--blocksize 0 is zero: give a size such as 4K"),
            ("banana", "--blocksize: 'banana' is not a size"),
        ] {
            let e = parse_size_option("--blocksize", v, false).unwrap_err();
            assert!(e.to_string().contains(want), "{v:?}: {e}");
            assert_eq!(e.exit_code(), 2);
        }
    }

    #[test]
    fn binary_and_decimal_suffixes_mean_one_thing_everywhere() {
        for (text, bytes) in [
            ("4M", 4u64 << 20),
            ("4MiB", 4 << 20),
            ("4mi", 4 << 20),
            ("4m", 4 << 20),
            ("32GB", 32_000_000_000),
            ("32gb", 32_000_000_000),
            ("1.5K", 1536),
            ("512", 512),
            ("512B", 512),
            ("1T", 1 << 40),
            ("2TB", 2_000_000_000_000),
        ] {
            assert_eq!(parse_size(text).unwrap(), bytes, "{text}");
        }
        for bad in [
            "", "M", "-5", "+5", "1x1", "abc", "4 MB MB", "1e3", "nan", "inf",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        // Rates: the same suffixes, with or without /s; fractions allowed.
        assert_eq!(parse_rate("10MB/s").unwrap(), 10e6);
        assert_eq!(parse_rate("22M").unwrap(), 22.0 * 1048576.0);
        assert_eq!(parse_rate("22MiB/s").unwrap(), 22.0 * 1048576.0);
        assert_eq!(parse_rate("8.79M/s").unwrap(), 8.79 * 1048576.0);
        assert_eq!(parse_rate("1.25 MB/s").unwrap(), 1.25e6);
        for bad in ["fast", "/s", "-1M/s", "10 MB per s"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations_parse_to_ns() {
        assert_eq!(parse_duration_ns("300us").unwrap(), 300_000);
        assert_eq!(parse_duration_ns("300µs").unwrap(), 300_000);
        assert_eq!(parse_duration_ns("1.08ms").unwrap(), 1_080_000);
        assert_eq!(parse_duration_ns("2s").unwrap(), 2_000_000_000);
        assert_eq!(parse_duration_ns("5").unwrap(), 5_000_000_000);
        assert_eq!(parse_duration_ns("40ns").unwrap(), 40);
        assert_eq!(parse_duration_ns("90s").unwrap(), 90_000_000_000);
        assert_eq!(parse_duration_ns("2m").unwrap(), 120_000_000_000);
        assert_eq!(parse_duration_ns("2min").unwrap(), 120_000_000_000);
        assert_eq!(parse_duration_ns("1h").unwrap(), 3_600_000_000_000);
        assert_eq!(parse_duration_ns("500ms").unwrap(), 500_000_000);
        assert_eq!(parse_duration_ns("1.5m").unwrap(), 90_000_000_000);
        for bad in [
            "fast", "m", "2 hours", "1e999h", "+5s", "2mm", "nan", "infs",
        ] {
            assert!(parse_duration_ns(bad).is_err(), "{bad}");
        }
        assert!(parse_duration_ns("fast").is_err());
        assert!(parse_duration_ns("-1ms").is_err());
    }

    #[test]
    fn formatting_uses_binary_units_and_keeps_sign() {
        assert_eq!(format_bytes(4 << 20), "4 MiB");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(100), "100 B");
        assert_eq!(format_ns(-5850.0), "-5.85 µs");
        assert_eq!(format_ns(1_080_000.0), "1.08 ms");
        assert_eq!(format_ns(324_000.0), "324 µs");
    }

    #[test]
    fn rates_print_in_binary_units_and_decimal_requirements_say_both() {
        assert_eq!(format_rate(12_706_067.0), "12.1 MiB/s");
        assert_eq!(format_rate(10_000.0), "9.77 KiB/s");
        assert_eq!(format_decimal_rate(10e6), "9.54 MiB/s (10 MB/s)");
        assert_eq!(format_decimal_rate(2e6), "1.91 MiB/s (2 MB/s)");
        assert_eq!(format_decimal_rate(90e6), "85.8 MiB/s (90 MB/s)");
        assert!(is_decimal_rate("10MB/s") && is_decimal_rate("1.5 kb/s") && is_decimal_rate("2GB"));
        for binary in ["10MiB/s", "10M/s", "22M", "512", "4K/s", "fast"] {
            assert!(!is_decimal_rate(binary), "{binary}");
        }
    }

    #[test]
    fn rfc3339_reads_back_what_it_writes() {
        for t in [
            0u64,
            59,
            86_399,
            951_782_400,
            1_700_000_000,
            1_795_856_676,
            4_102_444_800,
        ] {
            assert_eq!(
                super::parse_rfc3339_utc(&super::format_rfc3339_utc(t)),
                Some(t)
            );
        }
        for bad in [
            "",
            "2026-11-25 16:40:00Z",
            "2026-13-25T16:40:00Z",
            "2026-11-25T16:40:00",
            "1969-12-31T23:59:59Z",
            "2026-1x-25T16:40:00Z",
        ] {
            assert_eq!(super::parse_rfc3339_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn rfc3339_from_unix_seconds() {
        assert_eq!(format_rfc3339_utc(0), "1970-01-01T00:00:00Z");
        // A leap day, the last second of a day and of a year, and the brief's example.
        assert_eq!(format_rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_rfc3339_utc(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(format_rfc3339_utc(1_735_689_599), "2024-12-31T23:59:59Z");
        assert_eq!(format_rfc3339_utc(1_795_624_800), "2026-11-25T16:40:00Z");
        assert_eq!(format_rfc3339_utc(4_107_542_400), "2100-03-01T00:00:00Z");
    }
}
