//! `health`'s text, drawn from its document alone.

use crate::health::{Health, Status};
use crate::report::table::{Align, Table};
use crate::report::{Body, Document};

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
    for p in &h.projection {
        s.push_str(&format!("projection: {}\n", p.sentence()));
    }
    if let Some(n) = &h.projection_note {
        s.push_str(&format!("no wear projection: {n}\n"));
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
