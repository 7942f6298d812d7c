//! `auto`'s policy: which writing steps run, how the whole run's `--write-budget` and
//! `--time-budget` are shared between them, what is skipped and why, and what the plan
//! adds up to. The CLI (`cli::auto`) turns arguments into the steps' parameters, runs
//! them and renders; it decides none of this.

use crate::report::results::{AutoPlan, PlannedStep, SkippedStep};
use crate::report::{Body, Document};
use crate::target::write::WriteIntent;
use crate::units::{format_bytes, format_ns};

/// The most auto's write-cache test writes: enough to see a small cache end, bounded so
/// auto stays short (`flashscope slc` goes further).
pub const SLC_BYTES: u64 = 256 << 20;
/// The least it can measure with: four intervals of 1 MiB.
pub const SLC_MIN_BYTES: u64 = 4 << 20;
/// Device time the short bench needs (`bench --quick`).
pub const BENCH_NS: u64 = 15_000_000_000;
/// The least the short bench writes to give a write figure: one queue of its first test
/// (eight 1 MiB writes).
pub const BENCH_BYTES: u64 = 8 << 20;
/// Why open-au and fat do not run without a confident erase block size.
pub const NEEDS_ERASE: &str = "it needs the erase block, and align was not confident about it";

/// What is left of the run's budgets for one step (`None`: unbounded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Allowance {
    pub write_bytes: Option<u64>,
    pub time_ns: Option<u64>,
}

/// The run's budgets and what the steps spent of them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pipeline {
    /// The whole run's write budget in bytes and time budget in device ns.
    pub write: Option<u64>,
    pub time_ns: Option<u64>,
    pub spent_bytes: u64,
    pub spent_ns: u64,
    /// Steps not run and why.
    pub skipped: Vec<SkippedStep>,
}

impl Pipeline {
    /// A run with these budgets, nothing spent.
    pub fn new(write: Option<u64>, time_ns: Option<u64>) -> Self {
        Pipeline {
            write,
            time_ns,
            ..Pipeline::default()
        }
    }

    /// Count a finished step's writes and device time.
    pub fn spend(&mut self, step: &Document) {
        self.spent_bytes += step.bytes_written;
        // align reports its wall time as elapsed_ns and its device time apart.
        self.spent_ns += match &step.body {
            Body::Align(a) => a.parameters.device_elapsed_ns,
            _ => step.elapsed_ns,
        };
    }

    /// Record a step that does not run.
    pub fn skip(&mut self, step: &str, why: impl Into<String>) {
        self.skipped.push(SkippedStep {
            command: step.to_string(),
            why: why.into(),
        });
    }

    /// Why `step` was skipped, if it was.
    pub fn skipped_why(&self, step: &str) -> Option<&str> {
        self.skipped
            .iter()
            .find(|s| s.command == step)
            .map(|s| s.why.as_str())
    }

    /// The budgets a writing step gets (what is left), or `None` when it does not run: a
    /// read-only run, or a budget spent (recorded in `skipped`). `needs_bytes`, `needs_ns`:
    /// the least the step can give a figure with (open-au: one erase block).
    pub fn admit(
        &mut self,
        writes: bool,
        step: &str,
        needs_bytes: u64,
        needs_ns: u64,
    ) -> Option<Allowance> {
        if !writes {
            return None;
        }
        let left_bytes = self.write.map(|w| w.saturating_sub(self.spent_bytes));
        let left_ns = self.time_ns.map(|t| t.saturating_sub(self.spent_ns));
        let spent =
            |what: &str, total: String, left: u64, needs: u64, show: &dyn Fn(u64) -> String| {
                if left == 0 {
                    format!("the {what} budget of {total} was spent")
                } else {
                    format!(
                    "the {what} budget of {total} was nearly spent ({} left, it needs at least {})",
                    show(left),
                    show(needs)
                )
                }
            };
        let why = match (self.write, left_bytes, self.time_ns, left_ns) {
            (Some(w), Some(l), ..) if l == 0 || l < needs_bytes => Some(spent(
                "write",
                format_bytes(w),
                l,
                needs_bytes,
                &format_bytes,
            )),
            (.., Some(t), Some(l)) if l == 0 || l < needs_ns => {
                Some(spent("time", format_ns(t as f64), l, needs_ns, &|n| {
                    format_ns(n as f64)
                }))
            }
            _ => None,
        };
        if let Some(why) = why {
            self.skip(step, why);
            return None;
        }
        Some(Allowance {
            write_bytes: left_bytes,
            time_ns: left_ns,
        })
    }
}

/// The plan of a writing run from what each step would write (`intents`, in order) and
/// the bench's region and device time: the totals on top of the device time already
/// spent (`spent_ns`, align's), and the journal room preserve mode needs (`journaled`:
/// false on a simulated card or with `--destructive`).
pub fn plan(
    intents: &[WriteIntent],
    bench: (&WriteIntent, u64),
    spent_ns: u64,
    journaled: bool,
) -> AutoPlan {
    let (bench_intent, bench_ns) = bench;
    let mut steps = Vec::new();
    let (mut typical, mut time_ns) = (0u64, spent_ns);
    for i in intents {
        let t = i.typical_bytes.unwrap_or(i.max_bytes);
        typical = typical.saturating_add(t);
        time_ns = time_ns.saturating_add(i.estimated_ns);
        steps.push(PlannedStep {
            command: i.command.to_string(),
            max_bytes: Some(i.max_bytes),
            typical_bytes: Some(t),
            region_bytes: i.region.1,
            estimated_ns: i.estimated_ns,
        });
    }
    time_ns = time_ns.saturating_add(bench_ns);
    steps.push(PlannedStep {
        command: "bench".to_string(),
        max_bytes: None,
        typical_bytes: None,
        region_bytes: bench_intent.region.1,
        estimated_ns: bench_ns,
    });
    let journal_bytes = journaled.then(|| {
        intents
            .iter()
            .chain([bench_intent])
            .map(|i| i.region.1)
            .max()
            .unwrap_or(0)
    });
    AutoPlan {
        steps,
        typical_bytes: typical,
        estimated_ns: time_ns,
        journal_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spent_budget_skips_the_step_and_says_which_budget() {
        let mut p = Pipeline::new(Some(10 << 20), None);
        assert_eq!(
            p.admit(true, "open-au", 4 << 20, 0),
            Some(Allowance {
                write_bytes: Some(10 << 20),
                time_ns: None
            })
        );
        p.spent_bytes = 8 << 20;
        assert_eq!(p.admit(true, "fat", 4 << 20, 0), None);
        let why = p.skipped_why("fat").unwrap();
        assert!(
            why.contains("write budget of 10 MiB was nearly spent"),
            "{why}"
        );
        assert!(why.contains("2 MiB left"), "{why}");
        p.spent_bytes = 10 << 20;
        assert_eq!(p.admit(true, "slc", 0, 0), None);
        assert!(p.skipped_why("slc").unwrap().ends_with("was spent"));
        // A read-only run admits nothing and skips nothing.
        let mut r = Pipeline::new(None, None);
        assert_eq!(r.admit(false, "probe", 0, 0), None);
        assert!(r.skipped.is_empty());
    }

    #[test]
    fn the_time_budget_counts_device_time() {
        let mut p = Pipeline::new(None, Some(20_000_000_000));
        p.spent_ns = 10_000_000_000;
        assert_eq!(p.admit(true, "bench", 0, BENCH_NS), None);
        assert!(p.skipped_why("bench").unwrap().contains("time budget"));
        assert!(p.admit(true, "slc", SLC_MIN_BYTES, 0).is_some());
    }

    #[test]
    fn the_plan_adds_up_the_steps_and_journals_the_largest_region() {
        let step = |command, max, typical, region, ns| WriteIntent {
            command,
            region: (0, region),
            max_bytes: max,
            typical_bytes: typical,
            estimated_ns: ns,
            ..WriteIntent::default()
        };
        let intents = [
            step("probe", 100, Some(40), 1000, 5),
            step("slc", 50, None, 3000, 7),
        ];
        let bench = step("bench", 0, None, 2000, 0);
        let p = plan(&intents, (&bench, 11), 3, true);
        assert_eq!(p.typical_bytes, 90);
        assert_eq!(p.estimated_ns, 3 + 5 + 7 + 11);
        assert_eq!(p.journal_bytes, Some(3000));
        assert_eq!(p.steps.len(), 3);
        assert_eq!(p.steps[2].max_bytes, None);
        assert_eq!(plan(&intents, (&bench, 11), 3, false).journal_bytes, None);
    }
}
