//! Parsing and formatting of sizes (powers of 1024) and durations.

use crate::{Error, Result};

const KIB: u64 = 1024;

/// Parse a size: plain bytes, or a number with K, M, G, T (powers of 1024; an optional
/// `iB`/`B` suffix is accepted, e.g. `4M`, `4MiB`, `1.5M`, `512`). Fractions must give a
/// whole number of bytes.
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let bad = || {
        Error::usage(format!(
            "'{text}' is not a size: use bytes or a number with K, M, G or T (powers of 1024), e.g. 4M"
        ))
    };
    if t.is_empty() {
        return Err(bad());
    }
    let lower = t.to_ascii_lowercase();
    let stripped = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (num, mult) = match stripped.chars().last() {
        Some('k') => (&stripped[..stripped.len() - 1], KIB),
        Some('m') => (&stripped[..stripped.len() - 1], KIB.pow(2)),
        Some('g') => (&stripped[..stripped.len() - 1], KIB.pow(3)),
        Some('t') => (&stripped[..stripped.len() - 1], KIB.pow(4)),
        Some(c) if c.is_ascii_digit() => (stripped, 1),
        _ => return Err(bad()),
    };
    if num.is_empty() || num.starts_with('-') || num.starts_with('+') {
        return Err(bad());
    }
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

/// clap's check of a size option (`value_parser`): the value stays text for the command,
/// and a bad one is refused by clap, whose message names the option and the value.
pub fn size_arg(text: &str) -> std::result::Result<String, String> {
    parse_size(text)
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}

/// clap's check of a duration option (`value_parser`), as [`size_arg`] for sizes.
pub fn duration_arg(text: &str) -> std::result::Result<String, String> {
    parse_duration_ns(text)
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
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

/// Parse a duration into nanoseconds: a number with ns, us (or µs), ms or s; a plain
/// number is seconds.
pub fn parse_duration_ns(text: &str) -> Result<u64> {
    let t = text.trim();
    let bad = || {
        Error::usage(format!(
            "'{text}' is not a duration: use a number with ns, us, ms or s, e.g. 300us"
        ))
    };
    let (num, mult) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("us").or_else(|| t.strip_suffix("µs")) {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else {
        (t, 1e9)
    };
    let num = num.trim();
    if num.is_empty() || num.starts_with('-') {
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
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn durations_parse_to_ns() {
        assert_eq!(parse_duration_ns("300us").unwrap(), 300_000);
        assert_eq!(parse_duration_ns("300µs").unwrap(), 300_000);
        assert_eq!(parse_duration_ns("1.08ms").unwrap(), 1_080_000);
        assert_eq!(parse_duration_ns("2s").unwrap(), 2_000_000_000);
        assert_eq!(parse_duration_ns("5").unwrap(), 5_000_000_000);
        assert_eq!(parse_duration_ns("40ns").unwrap(), 40);
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
}
