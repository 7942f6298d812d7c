//! `flashscope report`: saved `--json` documents of every charted command in one HTML
//! page, refused inputs, and the page as headless Chromium draws it.

use crate::common;
use common::{flashscope, skip};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// (file name, arguments, exit code, charts its section must have).
const RUNS: &[(&str, &[&str], i32, usize)] = &[
    ("align", &["align", "sim:sd-16g"], 0, 1),
    ("scatter", &["scatter", "sim:sd-16g"], 0, 1),
    ("interval", &["interval", "sim:sd-16g"], 0, 1),
    ("probe", &["probe", "sim:fake-64g", "--write"], 3, 1),
    ("slc", &["slc", "sim:sd-a2-64g", "--write"], 0, 1),
    ("open-au", &["open-au", "sim:sd-16g", "--write"], 0, 1),
    ("fat", &["fat", "sim:sd-16g", "--write"], 0, 1),
    ("program", &["program", "sim:sd-16g", "--write"], 0, 1),
    (
        "bench",
        &["bench", "sim:sd-16g", "--write", "--quick"],
        0,
        2,
    ),
    (
        "io",
        &["io", "sim:sd-16g", "--rw", "randread", "--runtime", "3"],
        0,
        2,
    ),
    (
        "verify",
        &["verify", "sim:fake-64g,size=256M,real=128M", "--write"],
        3,
        2,
    ),
];

/// Every command's `--json` saved in `dir`; the paths in RUNS order.
fn save_documents(dir: &Path) -> Vec<PathBuf> {
    RUNS.iter()
        .map(|(name, args, code, _)| {
            let out = flashscope()
                .args(*args)
                .arg("--json")
                .env("XDG_STATE_HOME", dir)
                .output()
                .unwrap();
            assert_eq!(
                out.status.code(),
                Some(*code),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let p = dir.join(format!("{name}.json"));
            std::fs::write(&p, &out.stdout).unwrap();
            p
        })
        .collect()
}

fn report(dir: &Path, docs: &[PathBuf], name: &str) -> (PathBuf, String) {
    let html = dir.join(name);
    let out = flashscope()
        .arg("report")
        .args(docs)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&html).unwrap();
    (html, text)
}

/// The page's document sections, in order.
fn sections(html: &str) -> Vec<&str> {
    html.split("<section class=\"document\"").skip(1).collect()
}

#[test]
fn one_page_holds_every_commands_document_with_its_charts() {
    let dir = tempfile::tempdir().unwrap();
    let docs = save_documents(dir.path());
    let (_, html) = report(dir.path(), &docs, "report.html");
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("@media print"));
    assert!(!html.contains("<script"), "no script");
    let secs = sections(&html);
    assert_eq!(secs.len(), RUNS.len());
    for ((name, args, _, charts), sec) in RUNS.iter().zip(&secs) {
        assert!(
            sec.contains(&format!("<h2>{name} on {}", args[1])),
            "{name}: section out of order"
        );
        assert_eq!(
            sec.matches("<svg").count(),
            *charts,
            "{name}: charts in its section"
        );
        assert!(!sec.contains("no chart:"), "{name}: a chart failed");
        assert!(sec.contains("<details><summary>Raw samples ("), "{name}");
        assert!(sec.contains("Plan and what was written"), "{name}");
    }
    // Each document's verdict and every inference with its evidence.
    let probe = secs[3];
    assert!(
        probe.contains("FAKE: announces 64 GiB"),
        "the probe's verdict"
    );
    assert!(probe.contains("preserve: test_bytes_written"));
    let align_doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&docs[0]).unwrap()).unwrap();
    for (k, inf) in align_doc["inferences"].as_object().unwrap() {
        assert!(secs[0].contains(&format!("<td>{k}</td>")), "{k}");
        let evidence = inf["evidence"].as_str().unwrap().replace('\'', "&#39;");
        assert!(secs[0].contains(&evidence), "{k}'s evidence");
    }
    // The surface maps colour what the runs found: aliased cells on the fake.
    for sec in [secs[3], secs[10]] {
        let map = &sec[sec.rfind("<svg").unwrap()..];
        assert!(map.contains("fill=\"#ff7f0e\""), "aliased cells drawn");
        assert!(map.contains("fill=\"#2ca02c\""), "good cells drawn");
    }
    // Stdin once, beside files.
    let out = flashscope()
        .args(["report", "-", "-o"])
        .arg(dir.path().join("one.html"))
        .write_stdin(std::fs::read(&docs[1]).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let entries: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(entries.is_empty(), "temporary files left: {entries:?}");
}

#[test]
fn files_that_are_not_whole_flashscope_documents_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let out_html = dir.path().join("r.html");
    let doc = flashscope()
        .args(["scatter", "sim:sd-16g", "--order", "4", "--json"])
        .output()
        .unwrap()
        .stdout;
    let cases: [(&str, Vec<u8>, &str); 5] = [
        ("cut.json", doc[..doc.len() / 2].to_vec(), "ends early"),
        (
            "other.json",
            br#"{"schema": "other/2"}"#.to_vec(),
            "other/2",
        ),
        ("text.json", b"hello".to_vec(), "not a JSON document"),
        (
            "shape.json",
            br#"{"schema": "flashscope/1", "command": 5}"#.to_vec(),
            "out of shape",
        ),
        (
            "unknown.json",
            String::from_utf8_lossy(&doc)
                .replace("\"command\": \"scatter\"", "\"command\": \"defrag\"")
                .into_bytes(),
            "'defrag' is not one flashscope knows",
        ),
    ];
    for (name, bytes, needle) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let out = flashscope()
            .arg("report")
            .arg(&p)
            .arg("-o")
            .arg(&out_html)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(name) && err.contains(needle), "{name}: {err}");
        assert!(!out_html.exists(), "{name}: nothing written");
    }
    let out = flashscope()
        .args(["report", "-", "-", "-o"])
        .arg(&out_html)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = flashscope()
        .args(["report", "/dev/zero", "-o"])
        .arg(&out_html)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a device is refused");
}

/// Two shapes the size cap admits but memory would not (issue 44.9), each refused by
/// name with its count and its cap (exit 2), beside the same document just under the cap,
/// which reads: a bench document whose `jobs` (fio's free-form JSON, a tree about 16
/// times its text) take 4 MiB and more, and one whose per-second values are 4 Mi and
/// more (tiny values: 4 times their text in `f64`). `compare` reads bench documents the
/// same way.
#[test]
fn documents_over_the_jobs_and_sample_caps_are_refused_with_the_count_and_the_cap() {
    const JOBS_CAP: usize = 4 << 20;
    const VALUES_CAP: usize = 4 << 20;
    let dir = tempfile::tempdir().unwrap();
    let out_html = dir.path().join("r.html");
    let doc = flashscope()
        .args(["bench", "sim:sd-16g", "--quick", "--json"])
        .output()
        .unwrap()
        .stdout;
    let doc: serde_json::Value = serde_json::from_slice(&doc).unwrap();
    let listed = |doc: &serde_json::Value| {
        // Every value in a list, as the reader counts them.
        fn count(v: &serde_json::Value) -> usize {
            match v {
                serde_json::Value::Array(a) => a.len() + a.iter().map(count).sum::<usize>(),
                serde_json::Value::Object(o) => o.values().map(count).sum(),
                _ => 0,
            }
        }
        count(doc)
    };
    let base = listed(&doc);
    // `jobs` padded with a free-form field to `len` bytes of text.
    let with_jobs = |len: usize| {
        let mut d = doc.clone();
        let now = serde_json::to_string(&d["jobs"]).unwrap().len();
        d["jobs"][0]["padding"] = serde_json::json!("x".repeat(len - now - 14));
        let text = serde_json::to_string(&d).unwrap();
        let jobs = serde_json::to_string(&d["jobs"]).unwrap().len();
        (text, jobs)
    };
    // The first figure's per-second values made up to `n` values in all (tiny ones).
    let with_values = |n: usize| {
        let mut d = doc.clone();
        let had = d["samples"][0]["per_second_bw"].as_array().unwrap().len();
        let mut more = vec![serde_json::json!(1); had + n - base];
        more[0] = serde_json::json!(1.5);
        d["samples"][0]["per_second_bw"] = serde_json::Value::Array(more);
        assert_eq!(listed(&d), n);
        serde_json::to_string(&d).unwrap()
    };
    let (jobs_under, n) = with_jobs(JOBS_CAP - 1000);
    assert!(n < JOBS_CAP, "{n}");
    let (jobs_over, n_over) = with_jobs(JOBS_CAP + 1000);
    assert!(n_over > JOBS_CAP, "{n_over}");
    let cases = [
        ("jobs-under.json", jobs_under, None),
        (
            "jobs-over.json",
            jobs_over,
            Some(format!("take {n_over} bytes, more than the {JOBS_CAP}")),
        ),
        ("values-under.json", with_values(VALUES_CAP), None),
        (
            "values-over.json",
            with_values(VALUES_CAP + 1),
            Some(format!(
                "{} values in its lists (per-second samples and the like), more than the {VALUES_CAP}",
                VALUES_CAP + 1
            )),
        ),
    ];
    for (name, text, refusal) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        // `compare` reads them the same way: its refusals are checked (its bootstrap of
        // 4 Mi values is the release binary's to time, in scripts/document-memory).
        let cmds: &[&[&str]] = if refusal.is_some() {
            &[&["report"], &["compare"]]
        } else {
            &[&["report"]]
        };
        for cmd in cmds {
            let mut c = flashscope();
            c.args(*cmd).arg(&p);
            if cmd[0] == "report" {
                c.arg("-o").arg(&out_html);
            } else {
                c.arg(&p);
            }
            let out = c.output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            match &refusal {
                Some(needle) => {
                    assert_eq!(out.status.code(), Some(2), "{cmd:?} {name}: {err}");
                    assert!(
                        err.contains(name) && err.contains(needle.as_str()),
                        "{cmd:?} {name}: {err}"
                    );
                }
                None => assert_eq!(out.status.code(), Some(0), "{cmd:?} {name}: {err}"),
            }
        }
    }
}

/// The README's "Reports" example, run as written (in a temporary directory).
#[test]
fn the_readme_report_example_runs_as_written() {
    let block = common::readme_console_block("## Reports");
    let lines: Vec<&str> = block.lines().filter_map(|l| l.strip_prefix("$ ")).collect();
    assert!(lines.iter().any(|l| l.starts_with("flashscope report ")));
    let dir = tempfile::tempdir().unwrap();
    for l in &lines {
        let st = common::sh_example(dir.path(), l).status;
        // 3 where the example shows a finding (a fake card).
        assert!(matches!(st.code(), Some(0) | Some(3)), "`{l}`: {st:?}");
    }
    let html = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().ends_with(".html"))
        .expect("the example writes an HTML page");
    assert!(std::fs::read_to_string(html.path())
        .unwrap()
        .contains("<svg"));
}

// ---- Headless Chromium ----------------------------------------------------------------

/// Run chromium headless with `args` and a private profile; None when it is not here.
/// Killed (by its pid) after a minute.
fn chromium(profile: &Path, args: &[String]) -> Option<std::process::Output> {
    let bin = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| common::has_tool(b))?;
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-extensions",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    // Drain stdout (the DOM dump) while waiting, so a full pipe cannot stall it.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut v);
        v
    });
    let t0 = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} took over 60 s: killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut out = child.wait_with_output().unwrap();
    out.stdout = reader.join().unwrap();
    Some(out)
}

/// An RGB screenshot: width, height, 3 bytes a pixel.
struct Shot {
    w: usize,
    h: usize,
    rgb: Vec<u8>,
}

fn decode(png_path: &Path) -> Shot {
    let dec = png::Decoder::new(std::fs::File::open(png_path).unwrap());
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r.next_frame(&mut buf).unwrap();
    let ch = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let rgb = buf[..info.buffer_size()]
        .chunks(ch)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    Shot {
        w: info.width as usize,
        h: info.height as usize,
        rgb,
    }
}

impl Shot {
    fn px(&self, x: usize, y: usize) -> [u8; 3] {
        let i = (y * self.w + x) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// Share of pixels in rows `y0..y1` that are not near white.
    fn ink(&self, y0: usize, y1: usize) -> f64 {
        let (mut n, mut all) = (0usize, 0usize);
        for y in y0..y1.min(self.h) {
            for x in 0..self.w {
                all += 1;
                n += usize::from(self.px(x, y).iter().any(|&c| c < 235));
            }
        }
        n as f64 / all.max(1) as f64
    }

    /// Pixels in rows `y0..y1` of the charts' series and surface-map colours, and the
    /// bounding box (width, height) of all of them.
    fn chart_pixels(&self, y0: usize, y1: usize) -> (usize, usize, usize) {
        const PALETTE: [[u8; 3]; 6] = [
            [0x1f, 0x77, 0xb4],
            [0xd6, 0x27, 0x28],
            [0x2c, 0xa0, 0x2c],
            [0xff, 0x7f, 0x0e],
            [0x94, 0x67, 0xbd],
            [0xd9, 0xd9, 0xd9],
        ];
        let (mut n, mut x0, mut x1, mut ya, mut yb) = (0, usize::MAX, 0, usize::MAX, 0);
        for y in y0..y1.min(self.h) {
            for x in 0..self.w {
                let p = self.px(x, y);
                let hit = PALETTE
                    .iter()
                    .any(|c| c.iter().zip(p).all(|(a, b)| a.abs_diff(b) <= 3));
                if hit {
                    n += 1;
                    (x0, x1, ya, yb) = (x0.min(x), x1.max(x), ya.min(y), yb.max(y));
                }
            }
        }
        if n == 0 {
            return (0, 0, 0);
        }
        (n, x1 - x0 + 1, yb - ya + 1)
    }
}

/// Height each chart gets on the test page of charts.
const SLOT: usize = 760;

#[test]
fn chromium_draws_the_page_and_every_chart_with_a_size() {
    let dir = tempfile::tempdir().unwrap();
    let profile = tempfile::tempdir().unwrap();
    if !common::has_tool("chromium") && !common::has_tool("chromium-browser") {
        return skip("chromium is not installed (Debian: apt-get install chromium)");
    }
    let docs = save_documents(dir.path());
    let (html_path, html) = report(dir.path(), &docs, "report.html");
    let url = format!("file://{}", html_path.display());

    // The DOM as Chromium parsed it: every chart is an <svg> element there too, no script.
    let out = chromium(profile.path(), &["--dump-dom".into(), url.clone()]).unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let svgs = html.matches("<svg").count();
    assert_eq!(
        dom.matches("<svg").count(),
        svgs,
        "charts in the parsed DOM"
    );
    assert!(!dom.contains("<script"));

    // The page itself: not blank. Kept in target/ for a person to look at, or in a
    // temporary directory when target/ is not this user's (the non-root fresh-clone run).
    let kept = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let scratch = tempfile::tempdir().unwrap();
    let shots = if tempfile::tempfile_in(&kept).is_ok() {
        kept
    } else {
        scratch.path().to_path_buf()
    };
    let page_png = shots.join("report-page.png");
    let _ = std::fs::remove_file(&page_png);
    chromium(
        profile.path(),
        &[
            format!("--screenshot={}", page_png.display()),
            "--window-size=1200,4000".into(),
            url,
        ],
    )
    .unwrap();
    let page = decode(&page_png);
    assert_eq!((page.w, page.h), (1200, 4000));
    let ink = page.ink(0, page.h);
    assert!(ink > 0.03, "the page is nearly blank: {ink:.4} of it drawn");
    assert!(page.chart_pixels(0, page.h).0 > 2000, "charts on the page");

    // Every chart with the report's own CSS, each in a slot of its own, so each one's
    // drawn size can be measured: a chart that collapsed to nothing leaves its slot blank.
    let head = &html[..html.find("<body>").unwrap()];
    let mut figures = Vec::new();
    let mut rest = html.as_str();
    while let Some(i) = rest.find("<figure class=\"chart\">") {
        let end = rest[i..].find("</figure>").unwrap() + i + "</figure>".len();
        figures.push(&rest[i..end]);
        rest = &rest[end..];
    }
    assert_eq!(figures.len(), svgs);
    let mut page = format!("{head}<body style=\"margin:0;padding:0;max-width:1100px\">\n");
    for f in &figures {
        page.push_str(&format!(
            "<div style=\"height:{SLOT}px;overflow:hidden\">{f}</div>\n"
        ));
    }
    page.push_str("</body></html>\n");
    let charts_html = dir.path().join("charts.html");
    std::fs::write(&charts_html, page).unwrap();
    let charts_png = shots.join("report-charts.png");
    let _ = std::fs::remove_file(&charts_png);
    chromium(
        profile.path(),
        &[
            format!("--screenshot={}", charts_png.display()),
            format!("--window-size=1200,{}", SLOT * figures.len()),
            format!("file://{}", charts_html.display()),
        ],
    )
    .unwrap();
    let shot = decode(&charts_png);
    assert_eq!(shot.h, SLOT * figures.len());
    for (i, f) in figures.iter().enumerate() {
        let title = f
            .split("font-weight=\"bold\">")
            .nth(1)
            .and_then(|t| t.split('<').next())
            .unwrap_or("?");
        let (n, w, h) = shot.chart_pixels(i * SLOT, (i + 1) * SLOT);
        assert!(
            n > 150 && w > 300 && h > 150,
            "chart {i} ({title}): {n} chart-coloured pixels over {w}×{h}"
        );
    }
}
