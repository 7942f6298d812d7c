//! A command's text is a pure function of its document: `render(&doc)` of the document a
//! run's `--json` gives prints exactly what that run printed, so a stored run (history, a
//! saved --json file) prints as the command did.

use crate::common;
use common::flashscope_in;
use flashscope::output;
use flashscope::report::{Body, Document, Target};

/// The text `flashscope ARGS` printed and the JSON document of that same run: (text,
/// json). A measuring command's run is recorded in a fresh history and its document read
/// back with `history show 1 --json`, so both are of one run even where timings vary;
/// a command the history does not keep (`info`, `model`) measures nothing and is run a
/// second time with `--json`. The command must exit with `code`.
fn text_of_json(args: &[&str], code: i32) -> (String, String) {
    text_of_json_env(&[], args, code)
}

/// [`text_of_json`] with these environment variables set for both runs.
fn text_of_json_env(env: &[(&str, &str)], args: &[&str], code: i32) -> (String, String) {
    let state = tempfile::tempdir().unwrap();
    let db = state.path().join("h.db");
    let db = db.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = flashscope_in(state.path())
            .envs(env.iter().copied())
            .args(args)
            .timeout(std::time::Duration::from_secs(300))
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        (out.status.code(), stdout, out.stderr)
    };
    let command = match args {
        ["fs", sub, ..] => format!("fs {sub}"),
        [c, ..] => c.to_string(),
        [] => panic!("no command"),
    };
    let recorded = flashscope::history::is_measuring(&command);
    let text_args: Vec<&str> = if recorded {
        args.iter().copied().chain(["--history", db]).collect()
    } else {
        args.to_vec()
    };
    let (got, text, err) = run(&text_args);
    assert_eq!(
        got,
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&err)
    );
    let json_args: Vec<&str> = if recorded {
        vec!["history", "show", "1", "--history", db, "--json"]
    } else {
        args.iter().copied().chain(["--json"]).collect()
    };
    let (got, json, err) = run(&json_args);
    let want = if recorded { 0 } else { code };
    assert_eq!(
        got,
        Some(want),
        "{json_args:?}: {}",
        String::from_utf8_lossy(&err)
    );
    (text, json)
}

/// A command's text from its document.
type Render = fn(&Document) -> String;

/// The document of `json`, read as `history show` and `report` read a saved one.
fn doc(json: &str) -> Document {
    Document::from_json("stdout", json.as_bytes()).unwrap()
}

/// Run `args`, render its document with `render` and expect the run's very text, which
/// must begin with `start` (so an empty or wrong rendering cannot pass).
fn same_text(args: &[&str], render: Render, start: &str) {
    same_text_env(&[], args, 0, render, start)
}

/// [`same_text`] with environment variables `env`, for a run that exits with `code`.
fn same_text_env(env: &[(&str, &str)], args: &[&str], code: i32, render: Render, start: &str) {
    let (text, json) = text_of_json_env(env, args, code);
    assert!(
        !text.is_empty() && text.starts_with(start),
        "{args:?} printed:\n{text}"
    );
    let d = doc(&json);
    assert_eq!(
        render(&d),
        text,
        "{args:?}: rendered from the document (left) is not what the run printed (right)"
    );
    // The one dispatcher every run and `history show` print through picks that renderer.
    assert_eq!(output::render(&d), text, "{args:?}: output::render");
}

#[test]
fn info_prints_its_document() {
    same_text(
        &["info", "sim:sd-16g"],
        output::info::render,
        "sim:sd-16g: ",
    );
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("disk.img");
    std::fs::write(&img, vec![0u8; 1 << 20]).unwrap();
    let img = img.to_str().unwrap();
    same_text(&["info", img], output::info::render, img);
}

#[test]
fn health_prints_its_document() {
    same_text(
        &["health", "sim:emmc-8g"],
        output::health::render,
        "sim:emmc-8g: ",
    );
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/health");
    for (tree, start) in [
        ("emmc-5.1", "/dev/mmcblk0: eMMC "),
        ("sd-card", "/dev/mmcblk0: wear unknown"),
    ] {
        let root = format!("{data}/sysfs/{tree}");
        same_text(
            &["health", "/dev/mmcblk0", "--sysfs-root", &root],
            output::health::render,
            start,
        );
    }
    let dump = format!("{data}/ext_csd/emmc51-rev8-titron.txt");
    same_text_env(
        &[],
        &["health", "--ext-csd", &dump, "--max-wear", "5%"],
        3,
        output::health::render,
        "",
    );
    // SMART through smartctl's JSON (a stub first on PATH): wear, spare, media errors; a
    // disk with no wear figure.
    let path = std::env::var("PATH").unwrap_or_default();
    for (fixture, tree, dev, start) in [
        (
            "nvme-samsung-970-media-errors.json",
            "nvme",
            "/dev/nvme0n1",
            "/dev/nvme0n1: SMART ",
        ),
        (
            "ata-wdc-hdd-no-wear.json",
            "sata-disk",
            "/dev/sda",
            "/dev/sda: SMART ",
        ),
    ] {
        let (stub, _) = common::stub_smartctl(fixture, 0);
        let path = format!("{}:{path}", stub.path().display());
        let root = format!("{data}/sysfs/{tree}");
        same_text_env(
            &[("PATH", &path)],
            &["health", dev, "--sysfs-root", &root],
            0,
            output::health::render,
            start,
        );
    }
}

#[test]
fn model_prints_its_document() {
    same_text(
        &common::NOR,
        output::model::render,
        "spi-nor: sequential write",
    );
    same_text(
        &["model", "--reference"],
        output::model::render,
        "measured by the vendor",
    );
    let both: Vec<&str> = common::NOR
        .iter()
        .copied()
        .chain(["--reference", "--media", "emmc"])
        .collect();
    same_text(&both, output::model::render, "spi-nor: sequential write");
    // A term under 100 ns with a fraction prints as the document keeps it (whole ns).
    let raw_nand = "model --kind raw-nand --erase-time 3ms --erase-size 128K --program-time 0.4ms \
                    --page 2K --bus-clock 133MHz --bus-lines 8 --cmd-bytes 5";
    let args: Vec<&str> = raw_nand.split_whitespace().collect();
    same_text(&args, output::model::render, "raw-nand: ");
}

#[test]
fn io_prints_its_document() {
    let sim = ["io", "sim:sd-16g", "--runtime", "1s", "--size", "16M"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        sim.iter().chain(extra).copied().collect()
    };
    same_text(
        &with(&["--rw", "randread"]),
        output::io::render,
        "job: rw=randread",
    );
    same_text(
        &with(&["--rw", "randwrite", "--write", "--verify"]),
        output::io::render,
        "job: rw=randwrite",
    );
    // Two jobs: the text's figures are the jobs summed (fio's group reporting).
    same_text(
        &with(&[
            "--rw",
            "randrw",
            "--numjobs",
            "2",
            "--iodepth",
            "4",
            "--write",
        ]),
        output::io::render,
        "job: rw=randrw",
    );
    // A real file through the page cache: real timings, CPU time and the page cache.
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("io.img");
    std::fs::write(&img, vec![0u8; 8 << 20]).unwrap();
    let buffered = common::io_buffered(img.to_str().unwrap());
    same_text(&buffered, output::io::render, "job: rw=randrw");
}

#[test]
fn an_io_document_saved_before_its_totals_prints_what_it_holds() {
    let (text, json) = text_of_json(&["io", "sim:sd-16g", "--size", "4M", "--rw", "read"], 0);
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v.as_object_mut().unwrap().remove("totals").unwrap();
    let old = output::io::render(&doc(&v.to_string()));
    // The job line, but no figures the document does not hold.
    assert_eq!(
        old,
        text.lines().next().unwrap().to_string() + "\n",
        "{old}"
    );
}

#[test]
fn fs_prints_its_documents() {
    let cases: [(&str, Render, &str); 4] = [
        (
            "seq --size 4M --runs 2",
            output::fs::render_seq,
            "sustained write ",
        ),
        (
            "files --sizes 64K,4K --total 1M",
            output::fs::render_files,
            "",
        ),
        (
            "matrix --max-file 256K --max-record 64K",
            output::fs::render_matrix,
            "iozone-style matrix, ",
        ),
        (
            "matrix --max-file 256K --max-record 64K --fsync",
            output::fs::render_matrix,
            "iozone-style matrix, 15 cells with fsync",
        ),
    ];
    for (args, render, start) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (sub, options) = args.split_once(' ').unwrap();
        let args: Vec<&str> = ["fs", sub, dir.path().to_str().unwrap()]
            .into_iter()
            .chain(options.split(' '))
            .collect();
        same_text(&args, render, start);
    }
}

#[test]
fn a_renderer_given_another_commands_document_prints_nothing() {
    let other = Document::new(Target::None, Body::SimList(Default::default()));
    let renderers: [Render; 7] = [
        output::info::render,
        output::health::render,
        output::model::render,
        output::io::render,
        output::fs::render_seq,
        output::fs::render_files,
        output::fs::render_matrix,
    ];
    for render in renderers {
        assert_eq!(render(&other), "");
    }
}

/// The other commands print through the same dispatcher, from their documents alone (the
/// write tests with their wear line; `history show` is pinned in tests/e2e/history.rs).
#[test]
fn the_other_commands_print_their_documents() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/flashbench/");
    let logs: Vec<String> = [
        "seed-align-01.txt",
        "seed-align-02.txt",
        "seed-interval-01.txt",
        "seed-openau-01.txt",
        "seed-fat-01.txt",
    ]
    .iter()
    .map(|f| format!("{data}{f}"))
    .collect();
    let mut analyze = vec!["analyze"];
    analyze.extend(logs.iter().map(|s| s.as_str()));
    let cases: [(&[&str], i32, Render, &str); 12] = [
        (
            &["sim", "list"],
            0,
            output::sim::render,
            "Simulator presets",
        ),
        (&analyze, 0, output::analyze::render, "erase block "),
        (
            &["align", "sim:sd-16g"],
            0,
            output::align::render,
            "erase block 4 MiB",
        ),
        (
            &["interval", "sim:sd-16g"],
            0,
            output::interval::render,
            "access time ",
        ),
        (
            &["scatter", "sim:sd-16g", "--count", "2"],
            0,
            output::scatter::render,
            "scatter: ",
        ),
        (
            &["auto", "sim:sd-16g"],
            0,
            output::auto::render,
            "sim:sd-16g: 16 GiB",
        ),
        (
            &["auto", "sim:fake-64g", "--write"],
            3,
            output::auto::render,
            "FAKE",
        ),
        (
            &["bench", "sim:sd-16g", "--runtime", "1s"],
            0,
            output::bench::render,
            "",
        ),
        (
            &["verify", "sim:sd-16g,size=64M", "--write"],
            0,
            output::verify::render,
            "OK: every byte",
        ),
        (
            &[
                "verify",
                "sim:fake-64g,size=16G,real=1G",
                "--write",
                "--range",
                "0+2G",
            ],
            3,
            output::verify::render,
            "FAILED: 1 GiB",
        ),
        (
            &["probe", "sim:fake-64g", "--write"],
            3,
            output::probe::render,
            "FAKE",
        ),
        (
            &["slc", "sim:sd-16g", "--write", "--time-budget", "5s"],
            0,
            output::slc::render,
            "",
        ),
    ];
    for (args, code, render, start) in cases {
        let (text, json) = text_of_json(args, code);
        assert!(text.starts_with(start), "{args:?} printed:\n{text}");
        let d = doc(&json);
        let own = render(&d);
        assert!(!own.is_empty() && text.starts_with(&own), "{args:?}: {own}");
        assert_eq!(output::render(&d), text, "{args:?}: output::render");
    }
}
