//! `auto`'s text, drawn from its document alone.

use super::probe::MAKE_USABLE;
use crate::analysis::advice::{erase_unknown, Advice, DEFAULT_ALIGN, DEVICE, PARTITION};
use crate::report::results::AUTO_SLC_BYTES as SLC_BYTES;
use crate::report::results::{AutoResult, PlanAnnounced};
use crate::report::{Body, Document};
use crate::vocab::units::{format_bytes, format_ns};
use crate::vocab::Inference;
use crate::workload::bench::class_check_name;

/// A report path whose directory does not exist fails before anything is measured.
/// `auto`'s text from its document: the verdict block and where the details are (also
/// `history show`'s).
pub fn render(doc: &Document) -> String {
    let mut text = verdict_block(doc);
    if !text.is_empty() {
        text.push_str("details: --verbose (each step's measurements, the reason for each line), --json (all of it)\n");
    }
    text
}

/// The verdict block (capacity, classes, geometry, what to do), from auto's document alone.
fn verdict_block(doc: &Document) -> String {
    let Body::Auto(a) = &doc.body else {
        return String::new();
    };
    let size = doc.target.info().map_or(0, |i| i.size_bytes);
    let writes = a.parameters.write || a.parameters.destructive;
    let erase_known = doc
        .inferences
        .get("erase_block_bytes")
        .and_then(Inference::confident_u64)
        .is_some();
    let bench_skipped = a
        .skipped
        .iter()
        .find(|s| s.command == "bench")
        .map(|s| s.why.as_str());
    let classes_line = classes_line(doc, a, bench_skipped);
    let describe = |key: &str| -> String {
        match doc.inferences.get(key) {
            Some(i) if i.value.is_some() => format!(
                "{} ({})",
                i.as_u64().map(format_bytes).unwrap_or_else(|| "?".into()),
                i.status_word()
            ),
            Some(_) => "inconclusive".to_string(),
            None => "not measured".to_string(),
        }
    };
    let mut text = String::new();
    if let Some(v) = &a.verdict {
        text.push_str(&format!("{v}\n"));
    }
    text.push_str(&format!(
        "{}: {}; erase block {}, page {}",
        doc.target.name(),
        format_bytes(size),
        describe("erase_block_bytes"),
        describe("page_bytes")
    ));
    if let Some(i) = doc.inferences.get("open_au") {
        text.push_str(&format!(
            ", open erase blocks {}",
            i.value
                .as_ref()
                .map_or("inconclusive".to_string(), |v| format!(
                    "{v} ({})",
                    i.status_word()
                ))
        ));
    }
    text.push('\n');
    if let Some(h) = doc.target.host_path() {
        text.push_str(&super::info::host_path_line(h));
        text.push('\n');
    }
    if !writes {
        text.push_str("capacity: not checked (read-only run); --write adds the fake-capacity probe and the open-erase-block test, and saves and restores what they overwrite\n");
    }
    let budget_skips: Vec<&str> = a
        .skipped
        .iter()
        .filter(|s| s.why.contains("budget"))
        .map(|s| s.command.as_str())
        .collect();
    if let Some(s) = a.skipped.iter().find(|s| s.why.contains("budget")) {
        text.push_str(&format!(
            "skipped: {} ({})\n",
            budget_skips.join(", "),
            s.why
        ));
    }
    if let Some(l) = &classes_line {
        text.push_str(l);
        text.push('\n');
    }
    // A device in use (mounted, swap, held): the lines below would destroy what it holds.
    for w in &doc.warnings {
        if let crate::vocab::Warning::DeviceInUse { why } = w {
            text.push_str(&format!(
                "CAUTION: {why}: the lines below erase everything on it; run them only on a card you mean to wipe, after unmounting it\n"
            ));
        }
    }
    text.push_str(&actions(&a.advice, erase_known));
    text
}

/// The verdict block and, with `--verbose`, each step's text (`steps`: their documents) drawn from its document and
/// the reason for every advice line.
pub(crate) fn render_run(verbose: bool, doc: &Document, steps: &[Document]) -> String {
    let Body::Auto(a) = &doc.body else {
        return String::new();
    };
    if !verbose {
        return render(doc);
    }
    let mut text = verdict_block(doc);
    let verdict = &a.verdict;
    // A step's text, drawn from its document as the step's own command draws it.
    let step_text = |command: &str| {
        steps
            .iter()
            .find(|d| d.command() == command)
            .map(super::render)
    };
    text.push_str("\nGeometry (align):\n");
    text.push_str(&step_text("align").unwrap_or_default());
    if a.parameters.write || a.parameters.destructive {
        text.push_str("\nReal capacity (probe):\n");
        // The verdict and the partition line are in the verdict block already.
        for line in step_text("probe").unwrap_or_default().lines() {
            if Some(line) != verdict.as_deref() && !line.starts_with(MAKE_USABLE) {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    if let Some(t) = step_text("open-au").filter(|t| !t.is_empty()) {
        text.push_str("\nOpen erase blocks (open-au):\n");
        text.push_str(&t);
    }
    // The FAT area and the bounded write-cache test: one line each.
    let mut more_text = String::new();
    if let Some(t) = step_text("fat") {
        more_text.push_str(&format!("FAT area (fat): {}\n", result_line(&t)));
    }
    if let Some(t) = step_text("slc") {
        more_text.push_str(&format!(
            "Write cache (slc, at most {}): {}\n",
            format_bytes(SLC_BYTES),
            result_line(&t)
        ));
    }
    if !more_text.is_empty() {
        text.push('\n');
        text.push_str(&more_text);
    }
    if let Some(t) = step_text("bench").filter(|t| !t.is_empty()) {
        text.push_str("\nSpeed (bench --quick):\n");
        text.push_str(&t);
    }
    // The commands are in the verdict block: here only why, each once.
    text.push_str("\nWhy:\n");
    for a in &a.advice {
        text.push_str(&format!("- {}: {}\n", a.topic, a.text));
    }
    text
}

/// The advice as the verdict block shows it: the partition line, the mkfs lines to choose
/// from, the mount options; the reasons are in --verbose.
fn actions(advice: &[Advice], erase_known: bool) -> String {
    let mut s = format!(
        "what to do ({DEVICE}: the whole card; {PARTITION}: the partition sfdisk makes, e.g. /dev/sdX1):\n"
    );
    let is_format = |a: &&Advice| {
        a.command.is_some()
            && !matches!(
                a.topic.as_str(),
                "partition alignment" | "open erase blocks"
            )
    };
    let first = if advice.iter().filter(is_format).count() > 1 {
        "then one of:"
    } else {
        "then:"
    };
    let mut formats = 0;
    for a in advice {
        let label = match (a.topic.as_str(), &a.command) {
            ("partition alignment", Some(c)) => {
                s.push_str(&format!("  {c}\n"));
                if !erase_known {
                    s.push_str(&format!(
                        "  (aligned to a {} default, no mkfs tuning: the erase block is {})\n",
                        format_bytes(DEFAULT_ALIGN),
                        erase_unknown(true)
                    ));
                }
                continue;
            }
            (_, None) => {
                s.push_str(&format!("  {}\n", a.text));
                continue;
            }
            ("open erase blocks", Some(_)) => "mount f2fs:",
            _ => {
                formats += 1;
                if formats == 1 {
                    first
                } else {
                    ""
                }
            }
        };
        s.push_str(&format!(
            "  {label:<13} {}\n",
            a.command.as_deref().unwrap_or_default()
        ));
    }
    s
}

/// A step's result line: the first "value (status) - evidence" line of its text.
fn result_line(text: &str) -> &str {
    text.lines()
        .find(|l| l.contains(" - "))
        .or_else(|| text.lines().next())
        .unwrap_or_default()
}

/// The classes line of the verdict block: the claimed marks met or not with the figure
/// that decided, or what the bench met; `None` with nothing claimed and nothing measured.
/// `skipped`: why the bench did not run on a writing run.
/// The classes line: the marks claimed (by the SSR or `--label`) against what the bench
/// met, from auto's document (the claimed marks' checks are its `auto.class_*` checks).
fn classes_line(doc: &Document, a: &AutoResult, skipped: Option<&str>) -> Option<String> {
    let c = &a.classes;
    let claimed = (!c.claimed.is_empty()).then(|| {
        let who = match c.claimed_by.as_deref() {
            Some("ssr") => "by the card's SSR",
            _ => "by --label",
        };
        format!("claimed {} ({who}): ", c.claimed.join(" "))
    });
    let benched = a.steps.iter().any(|s| s.command == "bench");
    // The claimed marks' checks, in the order of the marks.
    let checks: Vec<&crate::vocab::Check> = c
        .claimed
        .iter()
        .filter_map(|mark| {
            let name = class_check_name("auto", mark);
            doc.checks.iter().find(|k| k.name == name)
        })
        .collect();
    let line = match (benched, &c.met, claimed) {
        (false, _, None) => return None,
        (false, _, Some(c)) => match skipped {
            Some(why) => format!("{c}not measured: the bench was skipped ({why})"),
            None => format!("{c}not measured — add --write"),
        },
        (true, None, c) => format!(
            "{}not measured: bench {}",
            c.unwrap_or_default(),
            a.classes
                .failure
                .as_deref()
                .unwrap_or("gave no write figures")
        ),
        (true, Some(met), None) if met.is_empty() => {
            format!(
                "meets none (sequential write below C2's {})",
                crate::vocab::units::format_decimal_rate(2e6)
            )
        }
        (true, Some(met), None) => {
            // As sure as the class inferences: a figure within its noise of a class line
            // leaves the verdict tentative or inconclusive in the JSON, and so in the text.
            let status = ["speed_class", "app_class"]
                .iter()
                .filter_map(|k| doc.inferences.get(*k))
                .map(|i| i.status_word())
                .find(|w| *w != "confident");
            if let Some(status) = status {
                format!(
                    "meets {} by the figures (measured, {status}: a figure lies within its noise of a class line; --verbose shows which)",
                    met.join(" ")
                )
            } else {
                format!("meets {} (measured)", met.join(" "))
            }
        }
        (true, Some(_), Some(claim)) => {
            let mut parts: Vec<String> = checks.iter().map(|k| k.message.clone()).collect();
            // A mark whose figures the bench did not give (it stopped early).
            for mark in &c.claimed {
                if !checks
                    .iter()
                    .any(|k| k.name == class_check_name("auto", mark))
                {
                    parts.push(format!("{mark} not measured"));
                }
            }
            format!("{claim}{}", parts.join("; "))
        }
    };
    Some(format!("classes: {line}"))
}

/// The writing steps' plan as auto prints it on stderr before the first of them writes:
/// per step what it writes and for how long, the journal room preserve mode needs (one
/// step's region at a time), the budgets.
pub fn plan_text(made: &PlanAnnounced) -> String {
    let plan = made.plan;
    let mut text = format!(
        "flashscope auto: the plan for {} (align, read-only, is done: {} of device time):\n",
        made.target,
        format_ns(made.spent_ns as f64)
    );
    let saving = |ns: Option<u64>| {
        ns.map_or(String::new(), |ns| {
            format!(" + {} saving and restoring", format_ns(ns as f64))
        })
    };
    let (sized, bench): (Vec<_>, Vec<_>) = plan.steps.iter().partition(|s| s.command != "bench");
    for s in sized {
        let max = s.max_bytes.unwrap_or_default();
        let t = s.typical_bytes.unwrap_or(max);
        text.push_str(&format!(
            "  {:<8} writes up to {}{} inside {}, about {}{}\n",
            s.command,
            format_bytes(max),
            if t < max {
                format!(" (typically {})", format_bytes(t))
            } else {
                String::new()
            },
            format_bytes(s.region_bytes),
            format_ns(s.estimated_ns as f64),
            saving(s.preserve_ns)
        ));
    }
    if !made.erase_known {
        text.push_str("  open-au, fat skipped: they need the erase block, and align was not confident about it\n");
    }
    if let Some(b) = bench.first() {
        text.push_str(&format!(
            "  bench    writes for {} inside the first {} (how many bytes depends on the card's speed), {} with its read tests{}\n",
            format_ns(made.bench_write_ns as f64),
            format_bytes(b.region_bytes),
            format_ns(b.estimated_ns as f64),
            saving(b.preserve_ns)
        ));
    }
    text.push_str(&format!(
        "  in all: typically {} written plus bench's, {}; journal: {}\n",
        format_bytes(plan.typical_bytes),
        made.time_text,
        match plan.journal_bytes {
            Some(j) => format!("room for up to {} (one step's region at a time; each journal is removed after its step)", format_bytes(j)),
            None if made.destructive => "none (--destructive: nothing is saved)".into(),
            None => "none (a simulated card)".into(),
        }
    ));
    text.push_str(&format!("  times {}\n", made.assumption));
    if made.write_budget.is_some() || made.time_budget_ns.is_some() {
        text.push_str(&format!(
            "  budgets: write {}, time {}; a step they no longer cover is skipped\n",
            made.write_budget.map_or("unbounded".into(), format_bytes),
            made.time_budget_ns
                .map_or("unbounded".into(), |t| format_ns(t as f64))
        ));
    }
    text
}
