//! The behaviour corpus (issue 32): every command that runs on `sim:` targets, in text and
//! `--json` mode, with its exit code, stdout, stderr and each file it writes, recorded in
//! tests/data/corpus/ (one file per run and mode) and compared byte for byte. A refactor
//! that changes any figure, sentence, field or exit code fails here with the run's command
//! line and the first differing lines.
//!
//! Regenerate after an intended change, and review the diff of tests/data/corpus/:
//!
//! ```text
//! FLASHSCOPE_UPDATE_CORPUS=1 cargo test --test e2e corpus::
//! ```
//!
//! The runs are [`common::RUNS`] (the table typed.rs reads back) less the runs that measure
//! the host ([`host_bound`]), and [`MORE`]: the written files, the read-only and honest
//! variants, and the commands that read saved documents. `sim:` devices run on a virtual
//! clock, so their figures are the same on every machine and under any load.
//!
//! What is normalised ([`normalise`]), and only that, because it comes from the host and
//! not from the device (found by running every run twice, then three times more pinned to
//! one CPU beside two busy loops on it: `taskset -c 0`; nothing else differed):
//! - the temporary paths: the run's directory `DIR`, the shared `STATE`, the state
//!   directory `XDG_STATE`;
//! - JSON number fields measured on the host's clock or of the host ([`HOST_FIELDS`]):
//!   `elapsed_ns` (wall time; a simulated align reports its device time apart, as
//!   `device_elapsed_ns`, which is kept), `usr_cpu`, `sys_cpu`, `usr_ns`, `sys_ns` (CPU
//!   time of the test threads) and the `environment` block's `load1`, `cpus` and `steal`
//!   (the machine's load average, CPU count and steal time); io's text line
//!   `cpu: usr=X%, sys=Y%` likewise;
//! - timestamps (`YYYY-MM-DDTHH:MM`, with seconds, fraction and `Z`/offset when there):
//!   when a run started, when the history stored it, when the report was rendered;
//! - the machine's name where the history shows it (`"host": "NAME"`, `host NAME,`) and the
//!   crate's version (`flashscope VERSION`, `,VERSION,` in the history's CSV).
//!
//! The documents saved for the runs that read documents (compare, report, history
//! import) have those host values fixed ([`fixed_input`]: numbers 0, timestamps
//! 2000-01-01T00:00:00Z), so what those runs print (a report's "took", the documents it
//! embeds) is compared whole too.
//!
//! Every other byte is compared as it is.

use crate::common;
use std::path::{Path, PathBuf};

/// Set (to anything but empty or 0) to write the corpus from today's behaviour.
const UPDATE: &str = "FLASHSCOPE_UPDATE_CORPUS";

/// The runs beside [`common::RUNS`]; `DIR` and `STATE` as there. Each runs in text mode
/// and with `--json`, after the runs of [`common::RUNS`], in this order (history ids and
/// saved document names depend on it).
const MORE: &[(&[&str], i32)] = &[
    // Read-only probe: it refuses without --write.
    (&["probe", "sim:sd-16g"], 2),
    (&["auto", "sim:sd-16g", "--write"], 0),
    // The written files: plots, raw data, Prometheus and JUnit (with one check met and
    // one failed: exit 3).
    (
        &[
            "bench",
            "sim:sd-16g",
            "--write",
            "--quick",
            "--expect",
            "seq_write>=10MB/s,rand_read_iops>=1500",
            "--prometheus",
            "DIR/bench.prom",
            "--junit",
            "DIR/bench.xml",
        ],
        3,
    ),
    (&["align", "sim:sd-16g", "--plot", "DIR/align.svg"], 0),
    (
        &[
            "scatter",
            "sim:sd-16g",
            "--plot",
            "DIR/scatter.svg",
            "-o",
            "DIR/scatter.tsv",
        ],
        0,
    ),
    (&["interval", "sim:sd-16g", "--plot", "DIR/interval.svg"], 0),
    (
        &[
            "verify",
            "sim:fake-64g,size=256M,real=128M",
            "--write",
            "--plot",
            "DIR/verify.svg",
        ],
        3,
    ),
    (
        &[
            "analyze",
            "tests/data/flashbench/seed-align-01.txt",
            "--plot",
            "DIR/analyze.svg",
        ],
        0,
    ),
    // Documents saved by the runs before (STATE/COMMAND-N.json, see common::RUNS).
    // A read and a write are not comparable: refused, then compared with --force.
    (&["compare", "STATE/io-0.json", "STATE/io-1.json"], 2),
    (
        &["compare", "STATE/io-0.json", "STATE/io-1.json", "--force"],
        0,
    ),
    (
        &[
            "report",
            "STATE/info-0.json",
            "STATE/bench-0.json",
            "STATE/align-0.json",
            "STATE/probe-0.json",
            "-o",
            "DIR/report.html",
        ],
        0,
    ),
    (
        &[
            "history",
            "import",
            "STATE/bench-0.json",
            "STATE/io-0.json",
            "--history",
            "STATE/imported.db",
        ],
        0,
    ),
    (&["history", "list", "--history", "STATE/imported.db"], 0),
    (
        &["history", "show", "1", "--history", "STATE/imported.db"],
        0,
    ),
    (&["history", "show", "2", "--history", "STATE/h.db"], 0),
    (
        &[
            "history",
            "export",
            "--format",
            "csv",
            "--history",
            "STATE/imported.db",
        ],
        0,
    ),
];

/// Why a run of [`common::RUNS`] is not in the corpus, or `None`: it measures or describes
/// the host, not a simulated device, so its figures differ between runs and machines.
fn host_bound(args: &[&str]) -> Option<&'static str> {
    match args {
        // Speeds of the temporary directory's filesystem and page cache, on the host clock.
        ["fs", ..] => Some("fs measures the host's filesystem on its clock"),
        // A file's filesystem (ext4, tmpfs, overlay...) is the checkout's, not the file's.
        ["info", t, ..] if !t.starts_with("sim:") => {
            Some("info on a file names the filesystem of the checkout")
        }
        _ => None,
    }
}

/// One run's record: what the corpus file holds.
struct Record {
    /// The file's name in tests/data/corpus.
    name: String,
    /// The command line as a user types it (with DIR and STATE).
    line: String,
    text: String,
}

#[test]
fn every_commands_output_is_the_same_as_recorded() {
    let runs: Vec<(&[&str], i32)> = common::RUNS
        .iter()
        .filter(|(a, _)| host_bound(a).is_none())
        .chain(MORE)
        .copied()
        .collect();
    let state = tempfile::tempdir().unwrap();
    // The runs that read nothing from STATE run side by side first; the rest then in
    // order, each after the runs it reads the documents or history of.
    let independent: Vec<usize> = (0..runs.len())
        .filter(|&i| !runs[i].0.iter().any(|a| a.contains("STATE")))
        .collect();
    let mut done: Vec<Option<[(Record, String); 2]>> = (0..runs.len()).map(|_| None).collect();
    {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results = std::sync::Mutex::new(Vec::new());
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(&i) = independent.get(k) else { break };
                    let r = both_modes(runs[i].0, state.path());
                    results.lock().unwrap().push((i, r));
                });
            }
        });
        for (i, r) in results.into_inner().unwrap() {
            done[i] = Some(r);
        }
    }
    let mut records = Vec::new();
    let mut saved: Vec<String> = Vec::new();
    for (i, (args, code)) in runs.iter().enumerate() {
        let [(text, _), (json, doc)] = match done[i].take() {
            Some(r) => r,
            None => both_modes(args, state.path()),
        };
        assert!(
            text.text.contains(&format!("\nexit {code}\n")),
            "{}: not the exit code {code} the table expects:\n{}",
            text.line,
            text.text
        );
        // Saved as typed.rs saves them: COMMAND-N.json, the Nth document of its command.
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&doc) {
            if let Some(c) = v["command"].as_str() {
                let c = c.replace(' ', "_");
                let n = saved.iter().filter(|s| **s == c).count();
                let path = state.path().join(format!("{c}-{n}.json"));
                std::fs::write(path, fixed_input(&doc)).unwrap();
                saved.push(c);
            }
        }
        records.push(text);
        records.push(json);
    }
    check(&records);
}

/// `flashscope ARGS` in text mode and with `--json`: each mode's record and its raw stdout.
fn both_modes(args: &[&str], state: &Path) -> [(Record, String); 2] {
    [run(args, state, false), run(args, state, true)]
}

/// Run `flashscope ARGS [--json]` with DIR a fresh directory and STATE `state`; record its
/// exit code, stdout, stderr and the files left in DIR, normalised.
fn run(args: &[&str], state: &Path, json: bool) -> (Record, String) {
    let dir = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let paths = [
        (dir.path().display().to_string(), "DIR"),
        (state.display().to_string(), "STATE"),
        (xdg.path().display().to_string(), "XDG_STATE"),
    ];
    let mut real: Vec<String> = args
        .iter()
        .map(|a| a.replace("DIR", &paths[0].0).replace("STATE", &paths[1].0))
        .collect();
    let mut shown: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    if json {
        real.push("--json".into());
        shown.push("--json".into());
    }
    let line = format!("flashscope {}", shown.join(" "));
    let out = common::flashscope_in(xdg.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(&real)
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out
        .status
        .code()
        .map_or_else(|| "killed by a signal".to_string(), |c| c.to_string());
    let mut text = format!("{line}\nexit {code}\n");
    section(&mut text, "stdout", &stdout);
    section(&mut text, "stderr", &stderr);
    for f in files_under(dir.path()) {
        let rel = f.strip_prefix(dir.path()).unwrap().display().to_string();
        let bytes = std::fs::read(&f).unwrap();
        let body = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => format!(
                "(binary, {} bytes, sha256 {})\n",
                e.as_bytes().len(),
                common::sha256_of(&f)
            ),
        };
        section(&mut text, &format!("file DIR/{rel}"), &body);
    }
    let text = normalise(&text, &paths);
    let name = format!("{}.{}.txt", slug(args), if json { "json" } else { "text" });
    (Record { name, line, text }, stdout)
}

/// A `=== TITLE` line, then `body`, ended by a newline (`(no newline at end)` is said).
fn section(text: &mut String, title: &str, body: &str) {
    text.push_str(&format!("=== {title}\n"));
    text.push_str(body);
    if !body.is_empty() && !body.ends_with('\n') {
        text.push_str("\n(no newline at end)\n");
    }
}

/// Every file under `dir`, sorted by path.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The corpus file's name for a run: its arguments, `tests/data/` left out, each run of
/// characters other than letters, digits, `.`, `-` and `=` as one `_`.
fn slug(args: &[&str]) -> String {
    let joined = args
        .iter()
        .map(|a| a.trim_start_matches("tests/data/"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut s = String::new();
    for c in joined.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '=') {
            s.push(c);
        } else if !s.ends_with('_') {
            s.push('_');
        }
    }
    s.chars().take(120).collect()
}

/// The JSON fields whose values come from the host (see the module's comment), each on
/// its own line in the pretty-printed documents.
const HOST_FIELDS: &[&str] = &[
    "elapsed_ns",
    "usr_cpu",
    "sys_cpu",
    "usr_ns",
    "sys_ns",
    "load1",
    "cpus",
    "steal",
];

/// What varies between runs and machines, replaced by a name for it (module comment).
fn normalise(text: &str, paths: &[(String, &str)]) -> String {
    let mut t = text.to_string();
    for (p, name) in paths {
        t = t.replace(p.as_str(), name);
    }
    let host = hostname();
    let version = env!("CARGO_PKG_VERSION");
    let t = t
        .replace(&format!("\"host\": \"{host}\""), "\"host\": \"<hostname>\"")
        .replace(&format!("host {host},"), "host <hostname>,")
        .replace(&format!("flashscope {version}"), "flashscope <version>")
        .replace(&format!(",{version},"), ",<version>,");
    let lines: Vec<String> = t
        .lines()
        .map(|l| match l.split_once("cpu: usr=") {
            // io's text: the CPU time of its threads, as the JSON's usr_cpu and sys_cpu.
            Some((indent, _)) if indent.trim().is_empty() => {
                format!("{indent}cpu: usr=<host>%, sys=<host>%")
            }
            _ => host_field(l, "\"<host>\""),
        })
        .collect();
    let mut t = lines.join("\n");
    if text.ends_with('\n') {
        t.push('\n');
    }
    timestamps(&t, "<time>")
}

/// This machine's name, as the history records it.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// A document saved for the runs that read documents (compare, report, history import),
/// with the host's values ([`HOST_FIELDS`], timestamps) fixed: those runs' outputs show
/// them (the report's "took", its embedded documents), so fixed inputs let the corpus
/// compare their outputs whole.
fn fixed_input(doc: &str) -> String {
    let lines: Vec<String> = doc.lines().map(|l| host_field(l, "0")).collect();
    timestamps(&lines.join("\n"), "2000-01-01T00:00:00Z")
}

/// A line `  "FIELD": NUMBER,` of a [`HOST_FIELDS`] field with NUMBER as `with`.
fn host_field(line: &str, with: &str) -> String {
    let trimmed = line.trim_start();
    for f in HOST_FIELDS {
        if let Some(rest) = trimmed.strip_prefix(&format!("\"{f}\": ")) {
            let comma = if rest.ends_with(',') { "," } else { "" };
            let value = rest.trim_end_matches(',');
            // Numbers only: bench's `cpus` parameter is the list it was told to pin to.
            if !value.parse::<f64>().is_ok_and(f64::is_finite) {
                continue;
            }
            let indent = &line[..line.len() - trimmed.len()];
            return format!("{indent}\"{f}\": {with}{comma}");
        }
    }
    line.to_string()
}

/// Each `YYYY-MM-DDTHH:MM` (or with a space for `T`), with its seconds, fraction and
/// zone, as `with`.
fn timestamps(t: &str, with: &str) -> String {
    const SHAPE: &[u8] = b"dddd-dd-ddTdd:dd";
    let b = t.as_bytes();
    let fits = |i: usize| {
        i + SHAPE.len() <= b.len()
            && SHAPE.iter().enumerate().all(|(k, &s)| {
                let c = b[i + k];
                match s {
                    b'd' => c.is_ascii_digit(),
                    b'T' => c == b'T' || c == b' ',
                    _ => c == s,
                }
            })
    };
    let mut out = String::new();
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        if fits(i) && (i == 0 || !b[i - 1].is_ascii_digit()) {
            out.push_str(&t[last..i]);
            out.push_str(with);
            let mut j = i + SHAPE.len();
            if j + 3 <= b.len() && b[j] == b':' && b[j + 1..j + 3].iter().all(u8::is_ascii_digit) {
                j += 3;
            }
            if j < b.len() && b[j] == b'.' {
                j += 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
            }
            if j < b.len() && b[j] == b'Z' {
                j += 1;
            } else if j + 6 <= b.len()
                && matches!(b[j], b'+' | b'-')
                && t[j + 1..j + 6].bytes().enumerate().all(|(k, c)| {
                    if k == 2 {
                        c == b':'
                    } else {
                        c.is_ascii_digit()
                    }
                })
            {
                j += 6;
            }
            i = j;
            last = j;
        } else {
            i += 1;
        }
    }
    out.push_str(&t[last..]);
    out
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus")
}

/// Compare each record with its file (or write them all under [`UPDATE`]); a file no run
/// wrote is stale and fails too.
fn check(records: &[Record]) {
    let dir = corpus_dir();
    let mut names = std::collections::BTreeSet::new();
    for r in records {
        assert!(
            names.insert(r.name.clone()),
            "two runs are named {}",
            r.name
        );
    }
    let update = std::env::var(UPDATE).is_ok_and(|v| !v.is_empty() && v != "0");
    if update {
        std::fs::create_dir_all(&dir).unwrap();
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "txt") {
                std::fs::remove_file(p).unwrap();
            }
        }
        for r in records {
            std::fs::write(dir.join(&r.name), &r.text).unwrap();
        }
        return;
    }
    let mut failures = Vec::new();
    for r in records {
        match std::fs::read_to_string(dir.join(&r.name)) {
            Err(e) => failures.push(format!("{}: no tests/data/corpus/{} ({e})", r.line, r.name)),
            Ok(want) if want != r.text => failures.push(format!(
                "{}: differs from tests/data/corpus/{}\n{}",
                r.line,
                r.name,
                first_differences(&want, &r.text)
            )),
            Ok(_) => {}
        }
    }
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            if n.ends_with(".txt") && !names.contains(&n) {
                failures.push(format!("tests/data/corpus/{n}: no run wrote it (stale)"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} recorded runs changed (after an intended change: {UPDATE}=1 cargo test \
         --test e2e corpus::, then review the diff of tests/data/corpus/):\n\n{}",
        failures.len(),
        records.len(),
        failures.join("\n\n")
    );
}

/// The first few differing lines of `want` and `got`, numbered, as `-` and `+` lines.
fn first_differences(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let mut out = Vec::new();
    for i in 0..w.len().max(g.len()) {
        let (a, b) = (w.get(i), g.get(i));
        if a != b {
            out.push(format!("  line {}:", i + 1));
            out.push(format!("  - {}", a.unwrap_or(&"(end of file)")));
            out.push(format!("  + {}", b.unwrap_or(&"(end of file)")));
            if out.len() >= 15 {
                out.push("  ...".into());
                break;
            }
        }
    }
    if w.len() != g.len() {
        out.push(format!("  ({} lines recorded, {} now)", w.len(), g.len()));
    }
    out.join("\n")
}
