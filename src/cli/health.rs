//! `flashscope health TARGET`: wear and end of life from what the device reports
//! (read-only; nothing is measured).

use super::Output;
use crate::health::{self, Health, Status};
use crate::report::table::{Align, Table};
use crate::report::{Body, Document};
use crate::vocab::error::Verdict;
use crate::Result;
use std::path::PathBuf;

/// Arguments of `health`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  flashscope health sim:emmc-8g
  flashscope health /dev/mmcblk0 --max-wear 70%
  flashscope health --ext-csd ext_csd.txt     a dump of /sys/kernel/debug/mmc0/mmc0:0001/ext_csd
  flashscope health /dev/sda --json           SMART through smartctl (smartmontools)

Sources: eMMC sysfs life_time and pre_eol_info (else the EXT_CSD register, read as root);
SD cards have no standard wear counter (said so); SATA, NVMe, SAS and USB disks through
`smartctl --json` when smartmontools is installed.
Verdict: end of life when a life-time band is exceeded (0x0B), pre-EOL is urgent, SMART
failed or 100 % is used; worn at --max-wear or pre-EOL warning; unknown with no source.
Exit 3 when worn or at end of life; 0 for ok and unknown.")]
pub struct Args {
    /// Block device (/dev/mmcblk0, /dev/sda, /dev/nvme0n1) or sim:PRESET[,key=value...].
    pub target: Option<String>,
    /// Used percentage at which the device counts as worn: 1 to 100, e.g. 80% or 80.
    #[arg(long, default_value = "80%", value_name = "PERCENT")]
    pub max_wear: String,
    /// Decode this EXT_CSD dump instead: 512 bytes binary, or the 1024 hex digits that
    /// /sys/kernel/debug/mmc0/mmc0:0001/ext_csd prints.
    #[arg(long, value_name = "FILE")]
    pub ext_csd: Option<PathBuf>,
    /// Read sysfs below DIR instead of /sys (recorded trees, for tests).
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysfs_root: Option<PathBuf>,
}

/// Check the file options, assess and print the document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    // The file options name themselves when what they point at is not there.
    if let Some(p) = &args.ext_csd {
        if let Err(e) = std::fs::metadata(p) {
            return Err(crate::Error::usage(format!(
                "--ext-csd {}: {e}: give a dump file (512 bytes binary, or the 1024 hex digits debugfs prints)",
                p.display()
            )));
        }
    }
    if let Some(dir) = &args.sysfs_root {
        if !dir.is_dir() {
            return Err(crate::Error::usage(format!(
                "--sysfs-root {}: not a directory (give the root of a recorded sysfs tree)",
                dir.display()
            )));
        }
    }
    let roots = match &args.sysfs_root {
        Some(dir) => crate::platform::Roots {
            sys: dir.clone(),
            ..crate::platform::Roots::system()
        },
        None => crate::platform::Roots::system(),
    };
    let opts = health::Options {
        max_wear_percent: health::parse_max_wear(&args.max_wear)?,
        ext_csd: args.ext_csd.clone(),
        roots,
    };
    let (doc, verdict) = crate::commands::health::measure(args.target.as_deref(), &opts)?;
    out.emit(&doc);
    Ok(verdict)
}

/// `health`'s text from its document: the verdict line, then each figure with its meaning.
pub fn render(doc: &Document) -> String {
    match &doc.body {
        Body::Health(b) => render_health(&b.health),
        _ => String::new(),
    }
}

fn render_health(h: &Health) -> String {
    let verdict = match h.status {
        Status::Ok => "wear OK",
        Status::Worn => "WORN",
        Status::EndOfLife => "END OF LIFE",
        Status::Unknown => "wear unknown",
    };
    let mut s = match (&h.emmc, &h.smart) {
        (Some(w), _) => format!(
            "{}: eMMC {verdict} — type A {}, type B {}, pre-EOL {} (reserved blocks)\n",
            h.spec,
            w.life_time_a.short(),
            w.life_time_b.short(),
            w.pre_eol.short()
        ),
        (None, Some(w)) => format!(
            "{}: SMART {verdict} — {}{}\n",
            h.spec,
            w.percentage_used
                .as_ref()
                .map_or("no wear figure".to_string(), |p| format!(
                    "{} % of rated life used",
                    p.value
                )),
            match w.passed {
                Some(true) => ", overall assessment PASSED",
                Some(false) => ", overall assessment FAILED",
                None => "",
            }
        ),
        (None, None) => format!("{}: {verdict} — {}\n", h.spec, h.device),
    };
    s.push_str(&format!("device: {}\n", h.device));
    for r in &h.reasons {
        s.push_str(&format!("  {r}\n"));
    }
    if let Some(l) = &h.lacks {
        s.push_str(&format!("no wear data: {l}\n"));
    }
    let mut t = Table::new(&["figure", "value", "meaning"])
        .align(1, Align::Left)
        .align(2, Align::Left);
    if let Some(w) = &h.emmc {
        if let Some(r) = w.ext_csd_rev {
            t.row(vec![
                "EXT_CSD revision".into(),
                r.to_string(),
                crate::device::emmc::revision_name(r).into(),
            ]);
        }
        t.row(vec![
            "type A life".into(),
            w.life_time_a.short(),
            w.life_time_a.meaning("type A memory"),
        ]);
        t.row(vec![
            "type B life".into(),
            w.life_time_b.short(),
            w.life_time_b.meaning("type B memory"),
        ]);
        t.row(vec![
            "pre-EOL".into(),
            w.pre_eol.short(),
            w.pre_eol.meaning(),
        ]);
    }
    if let Some(w) = &h.smart {
        let fig = |f: &Option<crate::health::smart::Sourced>| {
            f.as_ref()
                .map_or(("not reported".to_string(), String::new()), |p| {
                    (p.value.to_string(), p.source.clone())
                })
        };
        for (name, f) in [
            ("life used %", &w.percentage_used),
            ("available spare %", &w.available_spare),
            ("media errors", &w.media_errors),
        ] {
            let (v, src) = fig(f);
            t.row(vec![name.into(), v, src]);
        }
        if let Some(p) = w.passed {
            t.row(vec![
                "SMART assessment".into(),
                if p { "PASSED" } else { "FAILED" }.into(),
                "the drive's own overall verdict".into(),
            ]);
        }
    }
    if let Some(sd) = &h.sd {
        for (name, v) in [
            ("maker", &sd.manufacturer),
            ("product", &sd.product),
            ("made", &sd.made),
        ] {
            if let Some(v) = v {
                t.row(vec![name.into(), v.clone(), "CID register".into()]);
            }
        }
        t.row(vec![
            "claims".into(),
            if sd.ssr_read {
                if sd.claims.is_empty() {
                    "no class".into()
                } else {
                    sd.claims.join(" ")
                }
            } else {
                "SSR not exposed".into()
            },
            "SD Status register: speed classes, not wear".into(),
        ]);
    }
    let table = t.render();
    if table.lines().count() > 2 {
        s.push('\n');
        s.push_str(&table);
    }
    if let Some(w) = &h.emmc {
        s.push_str(&format!(
            "type A memory is usually the SLC / enhanced area, type B the MLC/TLC main area; source: {}\n",
            w.source
        ));
    }
    for n in &h.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}
