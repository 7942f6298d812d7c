//! End-to-end tests of `flashscope model`: the worked examples of
//! a vendor's storage-performance guide (its test vectors), the reference table, and bad figures.

use crate::common;
use common::{flashscope, json};
use predicates::prelude::*;

use common::NOR;

const NAND: [&str; 17] = [
    "model",
    "--kind",
    "spi-nand",
    "--erase-time",
    "3ms",
    "--erase-size",
    "128K",
    "--program-time",
    "0.4ms",
    "--page",
    "2K",
    "--bus-clock",
    "100MHz",
    "--bus-lines",
    "4",
    "--size",
    "128M",
];

fn term_s(v: &serde_json::Value, phase: &str, name: &str) -> f64 {
    v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["phase"] == phase && t["name"] == name)
        .and_then(|t| t["total_ns"].as_f64())
        .unwrap()
        / 1e9
}

#[test]
fn spi_nor_worked_example_is_about_290_kib_per_s() {
    let v = json(&NOR);
    assert_eq!(v["command"], "model");
    assert!((term_s(&v, "write", "erase") - 76.8).abs() < 1e-6);
    assert!((term_s(&v, "write", "program") - 32.8).abs() < 0.05);
    assert!((term_s(&v, "write", "bus") - 0.67).abs() < 0.005);
    let w = v["inferences"]["seq_write_bytes_per_s"]["value"]
        .as_u64()
        .unwrap() as f64
        / 1024.0;
    // The guide rounds 32 MiB / 110.2 s to "about 290 KiB/s"; exactly it is 297 KiB/s.
    assert!((285.0..300.0).contains(&w), "{w} KiB/s");
}

#[test]
fn spi_nand_worked_example_is_4_mib_per_s() {
    let v = json(&NAND);
    assert!((term_s(&v, "write", "erase") * 1e3 - 3072.0).abs() < 1e-6);
    assert!((term_s(&v, "write", "program") * 1e3 - 26214.4).abs() < 1e-6);
    assert!((term_s(&v, "write", "bus") * 1e3 - 2684.0).abs() < 1.0);
    let w = v["inferences"]["seq_write_bytes_per_s"]["value"]
        .as_u64()
        .unwrap() as f64
        / 1048576.0;
    assert!((w - 4.0).abs() < 0.01, "{w} MiB/s");
    // Bus-limited read with no command bytes: 100 MHz × 4 lines = 50·10^6 B/s.
    assert_eq!(
        v["inferences"]["seq_read_bytes_per_s"]["value"].as_u64(),
        Some(50_000_000)
    );
}

#[test]
fn text_prints_each_term_and_the_result() {
    flashscope()
        .args(NOR)
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "spi-nor: sequential write at most 297 KiB/s",
        ))
        .stdout(predicate::str::contains("76.8 s"))
        .stdout(predicate::str::contains("32.8 s"))
        .stdout(predicate::str::contains("671 ms"))
        .stdout(predicate::str::contains("512 erase blocks of 64 KiB"));
}

#[test]
fn command_bytes_slow_the_read_as_the_formula_says() {
    let mut args = NAND.to_vec();
    args.extend(["--cmd-bytes", "5"]);
    let v = json(&args);
    let n = 2048.0;
    let expect = (n / 4.0) / (5.0 + n / 4.0) * 100e6 * 4.0 / 8.0;
    let got = v["inferences"]["seq_read_bytes_per_s"]["value"]
        .as_u64()
        .unwrap() as f64;
    assert!((got - expect).abs() < 1.0, "{got} vs {expect}");
}

#[test]
fn reference_prints_the_vendor_table_filtered() {
    let v = json(&[
        "model",
        "--reference",
        "--media",
        "spi-nand",
        "--part",
        "GD5F",
    ]);
    let rows = v["reference"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r["media"] == "spi nand"));
    assert_eq!(rows[0]["seq_write"], "2.9M/s");
    assert_eq!(rows[0]["rand_write_iops"], 592);
    flashscope()
        .args(["model", "--reference", "--media", "spi nor"])
        .assert()
        .success()
        .stdout(predicate::str::contains("GD25F256"))
        .stdout(predicate::str::contains("270 KiB/s"))
        .stdout(predicate::str::contains("K9F4G08U0F").not());
    // Beside a computed figure.
    let mut args = NAND.to_vec();
    args.extend(["--reference", "--media", "spi-nand"]);
    let v = json(&args);
    assert!(v["inferences"]["seq_write_bytes_per_s"]["value"].is_u64());
    assert!(v["reference"].as_array().unwrap().len() >= 2);
}

#[test]
fn missing_or_non_positive_figures_are_usage_errors() {
    let fail = |args: &[&str], needle: &str| {
        flashscope()
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle))
            .stderr(predicate::str::contains("panicked").not());
    };
    fail(&["model"], "missing --kind");
    let mut no_lines: Vec<&str> = NOR.to_vec();
    no_lines.drain(13..15);
    fail(&no_lines, "missing --bus-lines");
    let mut no_page: Vec<&str> = NOR.to_vec();
    no_page.drain(9..11);
    fail(&no_page, "missing --page");
    let with = |opt: &str, val: &'static str| -> Vec<&'static str> {
        let mut a = NOR.to_vec();
        let i = a.iter().position(|x| *x == opt).unwrap();
        a[i + 1] = val;
        a
    };
    fail(
        &with("--erase-time", "0"),
        "--erase-time '0' is not positive",
    );
    fail(
        &with("--program-time", "-1ms"),
        "--program-time: '-1ms' is not a duration",
    );
    fail(
        &with("--bus-clock", "-5MHz"),
        "--bus-clock '-5MHz' is not positive",
    );
    fail(&with("--page", "0"), "--page '0' is not positive");
    fail(
        &with("--bus-clock", "0MHz"),
        "--bus-clock '0MHz' is not positive",
    );
    fail(&with("--bus-lines", "0"), "--bus-lines '0'");
    fail(&with("--bus-lines", "four"), "--bus-lines 'four'");
    fail(&with("--size", "0"), "--size 0 is zero");
    fail(&with("--erase-size", "banana"), "'banana' is not a size");
    fail(
        &["model", "--reference", "--media", "floppy"],
        "no reference row matches",
    );
    fail(&["model", "--media", "spi-nand"], "--reference");
}
