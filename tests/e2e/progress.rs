//! One progress mechanism (issue 20): an indicatif bar on stderr, drawn only on a terminal
//! and never on stdout, so `--json` stays one clean document.

use crate::common;

use common::{flashscope, has_tool, skip};
use std::path::{Path, PathBuf};

/// A 16 MiB sparse file to read (a real target: runs take wall time, unlike `sim:`).
fn image(dir: &Path) -> PathBuf {
    let img = dir.join("x.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    img
}

/// With stderr a pipe (not a terminal) no command draws progress: no carriage return, no
/// escape sequence, no ETA, and stdout is one JSON document.
#[test]
fn no_progress_off_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path());
    let img = img.to_str().unwrap();
    let d = dir.path().to_str().unwrap();
    let runs: &[&[&str]] = &[
        &[
            "io",
            img,
            "--rw",
            "randread",
            "--runtime",
            "1s",
            "--time-based",
            "--direct=0",
        ],
        &["align", "sim:sd-16g"],
        &["scatter", "sim:sd-16g"],
        &["interval", "sim:sd-16g"],
        &["probe", "sim:sd-16g", "--write"],
        &["verify", "sim:sd-16g,size=64M", "--write"],
        &["bench", "sim:sd-16g", "--write", "--quick"],
        &["fs", "seq", d, "--size", "4M", "--mode", "buffered"],
    ];
    for args in runs {
        let out = flashscope()
            .args(*args)
            .arg("--json")
            .env("XDG_STATE_HOME", dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        for bad in ["\r", "\x1b", "ETA"] {
            assert!(!err.contains(bad), "{args:?}: stderr has {bad:?}: {err:?}");
        }
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: stdout is not one JSON document: {e}"));
    }
}

/// On a terminal (util-linux `script` gives the command a pseudo-terminal) `io` draws its
/// bar with an ETA on stderr, while its `--json` stdout, sent to a file, stays clean.
#[test]
fn io_draws_a_bar_on_a_terminal() {
    if !has_tool("script") {
        return skip("util-linux `script` is not installed (Debian: bsdutils)");
    }
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path());
    let json = dir.path().join("out.json");
    // The binary, through the cross runner (qemu-user) when one is set.
    let c = common::flashscope_abs();
    let bin: Vec<String> = std::iter::once(c.get_program())
        .chain(c.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cmd = format!(
        "{} io {} --rw randread --runtime 1500ms --time-based --direct=0 --json > {}",
        bin.join(" "),
        img.display(),
        json.display()
    );
    // A terminal type the bar draws on, whatever the caller's (CI and the non-root
    // fresh-clone run have none).
    let term = std::env::var("TERM")
        .ok()
        .filter(|t| !t.is_empty() && t != "dumb")
        .unwrap_or_else(|| "xterm".into());
    let out = std::process::Command::new("script")
        .envs(common::HISTORY_OFF)
        .env("TERM", term)
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tty}");
    assert!(
        tty.contains("io:") && tty.contains("ETA"),
        "no bar drawn: {tty:?}"
    );
    let doc = std::fs::read(&json).unwrap();
    assert!(
        !doc.contains(&b'\r') && !doc.contains(&0x1b),
        "progress on stdout"
    );
    serde_json::from_slice::<serde_json::Value>(&doc).expect("stdout is one JSON document");
}

/// What a command drew on a pseudo-terminal (`script`), split into the lines the terminal
/// showed (at each carriage return or newline), escape sequences and trailing blanks
/// removed; `None` (after saying why) where `script` is missing.
fn drawn_on_a_terminal(args: &str, dir: &Path) -> Option<Vec<String>> {
    if !has_tool("script") {
        skip("util-linux `script` is not installed (Debian: bsdutils)");
        return None;
    }
    let c = common::flashscope_abs();
    let bin: Vec<String> = std::iter::once(c.get_program())
        .chain(c.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cmd = format!(
        "{} {args} --json > {}",
        bin.join(" "),
        dir.join("out.json").display()
    );
    let out = std::process::Command::new("script")
        .envs(common::HISTORY_OFF)
        .env("XDG_STATE_HOME", dir)
        .env("TERM", "xterm")
        .env("COLUMNS", "80")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let tty = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{args}: {tty}");
    let escape = strip_escapes(&tty);
    Some(
        escape
            .split(['\r', '\n'])
            .map(|l| l.trim_end().to_string())
            .filter(|l| !l.is_empty())
            .collect(),
    )
}

/// `text` without its CSI escape sequences (`ESC [ ... letter`).
fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// A 64 MiB file of random bytes (preserve mode saves and restores real data).
fn random_image(dir: &Path) -> PathBuf {
    use rand::{RngCore, SeedableRng};
    let img = dir.join("card.img");
    let mut data = vec![0u8; 64 << 20];
    rand_pcg::Pcg64::seed_from_u64(31).fill_bytes(&mut data);
    std::fs::write(&img, &data).unwrap();
    img
}

/// The bar of a preserve-mode write test fits an 80-column terminal, names its phases,
/// and shows preserve mode's saving (bench claims its region) and restoring as phases of
/// their own with bytes done of total, instead of a bar frozen on "elapsed" (issue 31.3).
#[test]
fn a_preserve_mode_bar_names_saving_and_restoring_and_fits_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let img = random_image(dir.path());
    let before = std::fs::read(&img).unwrap();
    for (args, must) in [
        (
            format!("probe {} --write", img.display()),
            &["probe: restoring", "probe: verifying"][..],
        ),
        (
            format!("bench {} --write --quick --size 16M", img.display()),
            &[
                "bench: saving",
                "bench: SEQ1M Q8T1 read",
                "bench: restoring",
            ][..],
        ),
    ] {
        let Some(lines) = drawn_on_a_terminal(&args, dir.path()) else {
            return;
        };
        let bars: Vec<&String> = lines
            .iter()
            .filter(|l| !l.starts_with("flashscope ") && !l.starts_with("preserve mode:"))
            .collect();
        assert!(!bars.is_empty(), "{args}: no bar drawn: {lines:?}");
        for l in &bars {
            assert!(
                l.chars().count() < 80,
                "{args}: a {}-column line wraps in 80 columns: {l:?}",
                l.chars().count()
            );
        }
        for m in must {
            assert!(
                bars.iter().any(|l| l.starts_with(m)),
                "{args}: no {m:?} phase drawn: {bars:?}"
            );
        }
        // Bytes done of the total with the rate, where the phase counts bytes.
        assert!(
            bars.iter()
                .any(|l| l.contains(" MiB/") && l.contains("ETA")),
            "{args}: {bars:?}"
        );
    }
    assert!(
        std::fs::read(&img).unwrap() == before,
        "the image was restored"
    );
}

/// A plan's time is worked out from the rates measured on the card before it writes
/// (issue 31.3), not from a fixed "10 MiB/s card": the same test on a simulated card ten
/// times as fast (its modelled speeds) plans about a tenth of the time, and says the rate
/// it measured and what it assumes about writes; open-au and io alike. No wall time is
/// asserted.
#[test]
fn a_plan_s_estimate_follows_the_measured_rate() {
    let state = tempfile::tempdir().unwrap();
    let plan = |bw: u32, args: &[&str]| {
        let spec = format!(
            "sim:custom,size=512M,erase=1M,page=16K,open_au=3,cmd=0us,read_bw={}M,write_bw={}M,native_bw={}M,noise=0",
            2 * bw,
            bw,
            bw
        );
        let mut all = vec![args[0], &spec];
        all.extend(&args[1..]);
        all.extend(["--write", "--json"]);
        let (code, _out, err) = common::run_in(state.path(), &all);
        assert_eq!(code, 0, "{err}");
        let prefix = format!("flashscope {}:", args[0]);
        let line = err
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no plan line: {err}"))
            .to_string();
        let after = |key: &str| -> f64 {
            let rest =
                &line[line.find(key).unwrap_or_else(|| panic!("{key}: {line}")) + key.len()..];
            let mut words = rest.split_whitespace();
            let v: f64 = words.next().unwrap().parse().unwrap();
            let unit = words.next().unwrap();
            v * match unit {
                "s" => 1.0,
                "ms" => 1e-3,
                "min" => 60.0,
                "MiB/s" | "GiB/s" | "KiB/s" => 1.0,
                u => panic!("unit {u}: {line}"),
            }
        };
        assert!(
            line.contains("(measured just now), writes assumed at half that"),
            "{line}"
        );
        assert!(!line.contains("10 MiB/s card"), "{line}");
        (after("taking about "), after("at the "), line)
    };
    for args in [
        &["open-au", "--erase-size", "1M"][..],
        &["io", "--rw", "write", "--blocksize", "1M", "--size", "256M"],
    ] {
        let (slow_s, slow_rate, slow_line) = plan(10, args);
        let (fast_s, fast_rate, fast_line) = plan(100, args);
        assert!(
            slow_line.contains("MiB/s its reads ran") && fast_line.contains("MiB/s its reads ran")
        );
        let rate = fast_rate / slow_rate;
        let time = slow_s / fast_s;
        assert!((8.0..12.0).contains(&rate), "{slow_line}\n{fast_line}");
        assert!((8.0..12.0).contains(&time), "{slow_line}\n{fast_line}");
    }
}

/// A drawn bar line split into its label (the first 30 columns), the filled cells of its
/// bar (`None` for a spinner) and its figures.
fn frame(line: &str) -> Option<(String, Option<usize>, String)> {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() < 32 {
        return None;
    }
    let label: String = chars[..30]
        .iter()
        .collect::<String>()
        .trim_end()
        .to_string();
    let rest = &chars[31..];
    let bar: Vec<char> = rest.iter().take(8).copied().collect();
    if bar.len() == 8 && bar.iter().all(|c| *c == '█' || *c == '░') {
        let full = bar.iter().filter(|c| **c == '█').count();
        let figures: String = rest.iter().skip(9).collect();
        Some((label, Some(full), figures))
    } else {
        let figures: String = rest.iter().skip(2).collect();
        Some((label, None, figures))
    }
}

/// What a frame's figures say is done: a count ("4/12") or bytes ("32 MiB/256 MiB").
fn done_of(figures: &str) -> Option<f64> {
    let before = figures.trim_start().split('/').next()?;
    let mut words = before.split_whitespace();
    let n: f64 = words.next()?.parse().ok()?;
    let unit = match words.next() {
        None | Some("B") => 1.0,
        Some("KiB") => 1024.0,
        Some("MiB") => 1048576.0,
        Some("GiB") => 1073741824.0,
        Some(_) => return None,
    };
    Some(n * unit)
}

/// In preserve mode every frame bench draws is one phase's (issue 45.6): the bar never
/// steps back from one frame to the next under the same label, and preserve mode's
/// saving, restoring and verifying (counted in bytes) are never drawn under a test's
/// label (a test's count is tests done). A 97 s run drew the bar backwards 67 times and
/// the journal's saving under "SEQ1M Q8T1 write" when the label, length, position and
/// figures reached the terminal as separate updates.
#[test]
fn a_preserve_mode_bar_never_steps_back_nor_draws_saving_under_a_test_s_label() {
    let dir = tempfile::tempdir().unwrap();
    let img = random_image(dir.path());
    let before = std::fs::read(&img).unwrap();
    let args = format!("bench {} --write --quick --size 16M", img.display());
    let Some(lines) = drawn_on_a_terminal(&args, dir.path()) else {
        return;
    };
    let frames: Vec<(String, Option<usize>, String)> = lines
        .iter()
        .filter(|l| l.starts_with("bench:"))
        .filter_map(|l| frame(l))
        .collect();
    assert!(frames.len() >= 10, "too few frames drawn: {lines:?}");
    let mut problems = Vec::new();
    for (label, _, figures) in &frames {
        let test = label.contains(" read") || label.contains(" write");
        if test && figures.contains("iB/") {
            problems.push(format!(
                "bytes drawn under a test's label: {label} {figures}"
            ));
        }
    }
    for w in frames.windows(2) {
        let ((l0, f0, t0), (l1, f1, t1)) = (&w[0], &w[1]);
        if l0 != l1 {
            continue;
        }
        if let (Some(a), Some(b)) = (f0, f1) {
            if b < a {
                problems.push(format!("the bar stepped back: {l0} {a} cells, then {b}"));
            }
        }
        if let (Some(a), Some(b)) = (done_of(t0), done_of(t1)) {
            if b < a {
                problems.push(format!("the count stepped back: {l0}: {t0:?}, then {t1:?}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems in {} frames: {problems:#?}",
        problems.len(),
        frames.len()
    );
    assert!(
        std::fs::read(&img).unwrap() == before,
        "the image was restored"
    );
}
