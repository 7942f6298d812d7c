//! When a part reaches its wear limit, projected from its own readings over time (issue
//! 47 point 4): each `health` run is a reading of the used life as a band (eMMC reports
//! 10 % steps, SMART a whole percent), and a steady rate is what every band allows.
//!
//! The method is interval arithmetic, not a fit: with readings `lo_i <= used(t_i) <= hi_i`
//! and a steady rate `r`, every pair `i < j` bounds it,
//! `(lo_j - hi_i) / (t_j - t_i) <= r <= (hi_j - lo_i) / (t_j - t_i)`; the tightest of those
//! bounds is the rate range, and the time to the limit runs from the remaining life's
//! smallest part at the fastest rate to its largest part at the slowest. A band that has not
//! moved leaves the slowest rate at zero: then only a lower bound on the time is stated.
//! Readings no steady rate fits (the workload changed, the part was replaced) are said so,
//! never averaged into a figure.

use serde::{Deserialize, Serialize};

/// Seconds in a day.
const DAY_S: f64 = 86_400.0;

/// The least time between the first and the last reading a projection is made from: the
/// readings of one day mostly repeat one band, and a rate over minutes says nothing.
pub const MIN_SPAN_S: u64 = 86_400;

/// One reading of the used life: at `at_s` (Unix seconds), between `lo` and `hi` percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub at_s: u64,
    pub lo: f64,
    pub hi: f64,
}

/// The projection of one memory area (eMMC type A or B, or a drive's rated life).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct WearProjection {
    /// What wears: "type B memory", "rated life".
    pub area: String,
    /// The limit projected to (`--max-wear`), percent used.
    pub limit_percent: f64,
    /// How many readings (stored runs and this one) it is made from.
    pub readings: usize,
    /// When the first of them was taken (RFC 3339 UTC).
    pub since: String,
    /// The steady rates every reading allows, percent of the life a day.
    pub rate_min_percent_per_day: f64,
    pub rate_max_percent_per_day: f64,
    /// Days from the last reading until the limit: at least this many.
    pub days_min: f64,
    /// At most this many; absent when the readings allow a rate of zero (the band has not
    /// moved), so no upper bound can be given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub days_max: Option<f64>,
}

/// What the readings of one area give.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Projected(WearProjection),
    /// The last reading is at or past the limit already (the verdict says so).
    Reached,
    /// No projection, and why.
    Inconclusive(String),
}

/// Project when `area`, read as `readings` (any order; the last in time is now), reaches
/// `limit` percent used.
pub fn project(area: &str, readings: &[Reading], limit: f64) -> Outcome {
    let mut r: Vec<Reading> = readings
        .iter()
        .copied()
        .filter(|x| x.lo.is_finite() && x.hi.is_finite() && x.lo <= x.hi)
        .collect();
    r.sort_by_key(|x| x.at_s);
    let Some(last) = r.last().copied() else {
        return Outcome::Inconclusive(format!("no reading of the {area}"));
    };
    if last.lo >= limit {
        return Outcome::Reached;
    }
    let first = r[0];
    if r.len() < 2 {
        return Outcome::Inconclusive(format!(
            "one reading of the {area} (this run's): a projection needs readings at least a day apart, and each health run is kept in the run history, so run health again later"
        ));
    }
    let span = last.at_s - first.at_s;
    if span < MIN_SPAN_S {
        return Outcome::Inconclusive(format!(
            "the {} readings of the {area} span {:.1} hours: a projection needs at least a day between the first and the last",
            r.len(),
            span as f64 / 3_600.0
        ));
    }
    let (mut rate_min, mut rate_max) = (0.0f64, f64::INFINITY);
    for (i, a) in r.iter().enumerate() {
        for b in &r[i + 1..] {
            if b.at_s == a.at_s {
                continue;
            }
            let days = (b.at_s - a.at_s) as f64 / DAY_S;
            rate_min = rate_min.max((b.lo - a.hi) / days);
            rate_max = rate_max.min((b.hi - a.lo) / days);
        }
    }
    if rate_max < 0.0 || rate_min > rate_max {
        return Outcome::Inconclusive(format!(
            "the {} readings of the {area} since {} fit no steady rate (a later band below an earlier one, or a jump the others do not allow): the workload changed or the part was replaced",
            r.len(),
            crate::vocab::units::format_rfc3339_utc(first.at_s)
        ));
    }
    if !rate_max.is_finite() || rate_max <= 0.0 {
        return Outcome::Inconclusive(format!(
            "the readings of the {area} allow no rate above zero"
        ));
    }
    let days_min = (limit - last.hi).max(0.0) / rate_max;
    let days_max = (rate_min > 0.0).then(|| (limit - last.lo) / rate_min);
    Outcome::Projected(WearProjection {
        area: area.to_string(),
        limit_percent: limit,
        readings: r.len(),
        since: crate::vocab::units::format_rfc3339_utc(first.at_s),
        rate_min_percent_per_day: rate_min,
        rate_max_percent_per_day: rate_max,
        days_min,
        days_max,
    })
}

impl WearProjection {
    /// The projection in one sentence, its figures with their meaning.
    pub fn sentence(&self) -> String {
        let when = match self.days_max {
            Some(max) => format!("in {} to {}", days(self.days_min), days(max)),
            None => format!(
                "in at least {} (no upper bound: the readings allow a rate of zero, the band has not moved far enough)",
                days(self.days_min)
            ),
        };
        format!(
            "the {} reaches the {} % limit {when}, at the steady rate its {} readings since {} allow ({:.3}-{:.3} % a day); a projection assumes the workload stays as it was",
            self.area,
            self.limit_percent,
            self.readings,
            self.since,
            self.rate_min_percent_per_day,
            self.rate_max_percent_per_day
        )
    }
}

/// A number of days in words: days up to two months, then months, then years.
fn days(d: f64) -> String {
    if d < 61.0 {
        format!("{:.0} days", d.floor())
    } else if d < 730.0 {
        format!("{:.0} months", (d / 30.44).floor())
    } else {
        format!("{:.1} years", (d / 365.25 * 10.0).floor() / 10.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: u64 = 86_400;

    fn band(day: u64, lo: f64, hi: f64) -> Reading {
        Reading {
            at_s: 1_700_000_000 + day * D,
            lo,
            hi,
        }
    }

    fn projected(o: Outcome) -> WearProjection {
        match o {
            Outcome::Projected(p) => p,
            other => panic!("no projection: {other:?}"),
        }
    }

    #[test]
    fn emmc_bands_give_the_interval_every_band_allows() {
        // 10-20 % on day 0, 20-30 % on day 100, 30-40 % on day 200.
        let p = projected(project(
            "type B memory",
            &[
                band(0, 10.0, 20.0),
                band(100, 20.0, 30.0),
                band(200, 30.0, 40.0),
            ],
            80.0,
        ));
        // Pairs: (0,100): 0..0.2; (100,200): 0..0.2; (0,200): 0.05..0.15.
        assert!((p.rate_min_percent_per_day - 0.05).abs() < 1e-12);
        assert!((p.rate_max_percent_per_day - 0.15).abs() < 1e-12);
        // Remaining 40..50 %: at least 40/0.15 = 266.7 days, at most 50/0.05 = 1000.
        assert!((p.days_min - 40.0 / 0.15).abs() < 1e-9);
        assert!((p.days_max.unwrap() - 1000.0).abs() < 1e-9);
        assert_eq!(p.readings, 3);
        // Any steady wear inside every band reaches the limit inside the interval.
        for (u0, rate) in [
            (15.0, 0.1),
            (19.0, 0.06),
            (11.0, 0.14),
            (10.0, 0.15),
            (20.0, 0.05),
        ] {
            for (day, lo, hi) in [(0.0, 10.0, 20.0), (100.0, 20.0, 30.0), (200.0, 30.0, 40.0)] {
                let used = u0 + rate * day;
                assert!(
                    (lo..=hi).contains(&used),
                    "{u0} + {rate}/day is outside a band"
                );
            }
            let days = (80.0 - (u0 + rate * 200.0)) / rate;
            assert!(
                p.days_min - 1e-9 <= days && days <= p.days_max.unwrap() + 1e-9,
                "{u0} + {rate}/day reaches 80 % in {days} days, outside {p:?}"
            );
        }
    }

    #[test]
    fn an_unmoved_band_gives_only_a_lower_bound() {
        let p = projected(project(
            "type A memory",
            &[band(0, 0.0, 10.0), band(30, 0.0, 10.0)],
            80.0,
        ));
        assert_eq!(p.rate_min_percent_per_day, 0.0);
        assert!((p.days_min - 70.0 / (10.0 / 30.0)).abs() < 1e-9);
        assert_eq!(p.days_max, None);
        assert!(p.sentence().contains("no upper bound"), "{}", p.sentence());
    }

    #[test]
    fn too_few_or_too_close_readings_are_inconclusive_with_the_reason() {
        match project("rated life", &[band(0, 5.0, 6.0)], 80.0) {
            Outcome::Inconclusive(why) => assert!(why.contains("one reading"), "{why}"),
            o => panic!("{o:?}"),
        }
        let close = [
            band(0, 5.0, 6.0),
            Reading {
                at_s: 1_700_000_000 + 3_600,
                lo: 6.0,
                hi: 7.0,
            },
        ];
        match project("rated life", &close, 80.0) {
            Outcome::Inconclusive(why) => assert!(why.contains("1.0 hours"), "{why}"),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn readings_no_steady_rate_fits_are_said_so() {
        // A band going down (a replaced part), and a jump the other pairs forbid.
        for r in [
            vec![band(0, 30.0, 40.0), band(50, 10.0, 20.0)],
            vec![
                band(0, 10.0, 11.0),
                band(100, 11.0, 12.0),
                band(101, 50.0, 51.0),
            ],
        ] {
            match project("rated life", &r, 80.0) {
                Outcome::Inconclusive(why) => assert!(why.contains("no steady rate"), "{why}"),
                o => panic!("{r:?}: {o:?}"),
            }
        }
    }

    #[test]
    fn a_reading_at_the_limit_is_reached() {
        assert_eq!(
            project(
                "rated life",
                &[band(0, 50.0, 51.0), band(9, 80.0, 81.0)],
                80.0
            ),
            Outcome::Reached
        );
    }

    #[test]
    fn durations_read_as_days_months_or_years() {
        assert_eq!(days(12.7), "12 days");
        assert_eq!(days(400.0), "13 months");
        assert_eq!(days(1000.0), "2.7 years");
    }
}
