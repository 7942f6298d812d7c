//! The one SVG writer: line and scatter charts (linear or log-2 x axis, linear or log-10 y
//! axis, axis labels with units, a legend, labelled vertical markers), charts stacked into
//! one picture ([`stack`]) and heatmaps ([`heatmap`]). Hand-written, no dependencies, so
//! any command can draw its plot; output only, it never measures:
//!
//! ```
//! use flashscope::report::svg::{Chart, AxisFormat};
//! let svg = Chart::new("align", "alignment", "boundary cost")
//!     .log2_x()
//!     .x_format(AxisFormat::Bytes)
//!     .y_format(AxisFormat::Nanoseconds)
//!     .series("1 KiB reads", vec![(2048.0, 3e4), (4096.0, 3.5e4), (16384.0, 8e4)])
//!     .marker(16384.0, "page 16 KiB")
//!     .to_svg();
//! assert!(svg.starts_with("<svg"));
//! ```

use crate::vocab::units::{format_bytes, format_ns, short_number};
use std::fmt::Write;

/// How tick labels are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisFormat {
    /// Plain numbers.
    Plain,
    /// Byte counts with binary units (4 KiB, 2 MiB).
    Bytes,
    /// Nanoseconds shown as ns, µs, ms or s.
    Nanoseconds,
    /// Up to three significant digits (rates, ratios).
    Short,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Line,
    Points,
    /// Dots with a vertical bar from each point's low to high (an interval).
    Whiskers,
}

#[derive(Debug, Clone)]
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
    style: Style,
    /// Per point, the (low, high) of its whisker (`Style::Whiskers` only).
    spans: Vec<(f64, f64)>,
}

/// A chart under construction; `to_svg` renders it.
#[derive(Debug, Clone)]
pub struct Chart {
    title: String,
    x_label: String,
    y_label: String,
    log2_x: bool,
    log_y: bool,
    x_range: Option<(f64, f64)>,
    x_format: AxisFormat,
    y_format: AxisFormat,
    series: Vec<Series>,
    markers: Vec<(f64, String)>,
    width: f64,
    height: f64,
    y_zero: bool,
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// Text made safe for XML and HTML text and double- or single-quoted attributes.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

use escape as esc;

/// A line series keeps at most this many points: a chart is under a thousand pixels
/// wide, and the per-second values a document may hold (4 Mi) would draw a 50 MB SVG
/// (issue 44.9).
pub const MAX_LINE_POINTS: usize = 4096;

/// `points` (in x order) with at most [`MAX_LINE_POINTS`]: each run of consecutive points
/// keeps its lowest and its highest, in x order, so dips and peaks still show.
fn thinned(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if points.len() <= MAX_LINE_POINTS {
        return points;
    }
    let per = points.len().div_ceil(MAX_LINE_POINTS / 2);
    let mut out = Vec::with_capacity(MAX_LINE_POINTS);
    for run in points.chunks(per) {
        let lo = run.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1));
        let hi = run.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            if lo.0 <= hi.0 {
                out.extend([lo, hi]);
            } else {
                out.extend([hi, lo]);
            }
        }
    }
    out
}

fn fmt(v: f64, f: AxisFormat) -> String {
    match f {
        AxisFormat::Plain => {
            if v.abs() >= 1e5 || (v != 0.0 && v.abs() < 1e-2) {
                format!("{v:.2e}")
            } else if v.fract() == 0.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        }
        AxisFormat::Bytes => {
            if v >= 0.0 {
                format_bytes(v.round() as u64)
            } else {
                format!("-{}", format_bytes((-v).round() as u64))
            }
        }
        AxisFormat::Nanoseconds => format_ns(v),
        // Below 0.01 three significant digits would print 0.00 (log axes reach there).
        AxisFormat::Short if v != 0.0 && v.abs() < 0.01 => format!("{v:.0e}"),
        AxisFormat::Short => short_number(v),
    }
}

/// "Nice" linear ticks covering [lo, hi].
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 8.0)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut v = Vec::new();
    while t <= hi + step * 1e-9 && v.len() < 20 {
        v.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    v
}

/// Points in x order, points of equal x in the order given (a stable sort): the one sort
/// of chart points, compiled once.
pub(crate) fn sort_by_x(points: &mut [(f64, f64)]) {
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
}

impl Chart {
    /// An empty chart with a title and axis labels (put the unit in the label or use
    /// `x_format` / `y_format`).
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Self {
        Chart {
            title: title.to_string(),
            x_label: x_label.to_string(),
            y_label: y_label.to_string(),
            log2_x: false,
            log_y: false,
            x_range: None,
            x_format: AxisFormat::Plain,
            y_format: AxisFormat::Plain,
            series: Vec::new(),
            markers: Vec::new(),
            width: 900.0,
            height: 520.0,
            y_zero: true,
        }
    }

    /// Use a log-2 x axis (values must be positive; others are dropped).
    pub fn log2_x(mut self) -> Self {
        self.log2_x = true;
        self
    }

    /// Use a log-10 y axis with a tick at each decade (values must be positive; others
    /// are dropped), for rates spanning decades.
    pub fn log_y(mut self) -> Self {
        self.log_y = true;
        self
    }

    /// Fix the x axis to [lo, hi] instead of fitting the data, so stacked charts share
    /// one axis; what falls outside is not drawn.
    pub fn x_range(mut self, lo: f64, hi: f64) -> Self {
        self.x_range = Some((lo, hi));
        self
    }

    pub fn x_format(mut self, f: AxisFormat) -> Self {
        self.x_format = f;
        self
    }

    pub fn y_format(mut self, f: AxisFormat) -> Self {
        self.y_format = f;
        self
    }

    /// Whether the y axis must include zero (default true); false zooms to the data, as a
    /// scatter of read times wants.
    pub fn y_zero(mut self, include: bool) -> Self {
        self.y_zero = include;
        self
    }

    /// Canvas size in pixels.
    pub fn size(mut self, width: f64, height: f64) -> Self {
        self.width = width.max(200.0);
        self.height = height.max(150.0);
        self
    }

    /// A series drawn as a line with dots, in x order; at most [`MAX_LINE_POINTS`] of
    /// them ([`thinned`]).
    pub fn series(mut self, name: &str, points: Vec<(f64, f64)>) -> Self {
        let mut points = points;
        sort_by_x(&mut points);
        let points = thinned(points);
        self.series.push(Series {
            name: name.to_string(),
            points,
            style: Style::Line,
            spans: Vec::new(),
        });
        self
    }

    /// A series drawn as dots only.
    pub fn scatter(mut self, name: &str, points: Vec<(f64, f64)>) -> Self {
        self.series.push(Series {
            name: name.to_string(),
            points,
            style: Style::Points,
            spans: Vec::new(),
        });
        self
    }

    /// Dots at (x, y), each with a vertical whisker from low to high (an estimate and its
    /// interval), given as (x, y, low, high).
    pub fn whiskers(mut self, name: &str, points: Vec<(f64, f64, f64, f64)>) -> Self {
        self.series.push(Series {
            name: name.to_string(),
            points: points.iter().map(|p| (p.0, p.1)).collect(),
            style: Style::Whiskers,
            spans: points.iter().map(|p| (p.2, p.3)).collect(),
        });
        self
    }

    /// A labelled vertical line at `x` (e.g. an inferred boundary).
    pub fn marker(mut self, x: f64, label: &str) -> Self {
        self.markers.push((x, label.to_string()));
        self
    }

    fn xt(&self, x: f64) -> Option<f64> {
        let outside = self.x_range.is_some_and(|(lo, hi)| x < lo || x > hi);
        if !x.is_finite() || outside {
            return None;
        }
        if self.log2_x {
            (x > 0.0).then(|| x.log2())
        } else {
            Some(x)
        }
    }

    fn yt(&self, y: f64) -> Option<f64> {
        if !y.is_finite() {
            return None;
        }
        if self.log_y {
            (y > 0.0).then(|| y.log10())
        } else {
            Some(y)
        }
    }

    /// Render as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let mut s = open_svg(self.width, self.height, 12);
        self.draw(&mut s);
        s.push_str("</svg>\n");
        s
    }

    /// Draw the chart's elements (without the document around them) at the origin.
    fn draw(&self, s: &mut String) {
        let (w, h) = (self.width, self.height);
        let (ml, mr, mt, mb) = (90.0, 30.0, 50.0, 70.0);
        let legend_w = if self.series.len() > 1 || !self.series.is_empty() {
            190.0
        } else {
            0.0
        };
        let pw = w - ml - mr - legend_w;
        let ph = h - mt - mb;
        let pts: Vec<(f64, f64)> = self
            .series
            .iter()
            .flat_map(|s| {
                let ends = s
                    .points
                    .iter()
                    .zip(&s.spans)
                    .flat_map(|(p, w)| [(p.0, w.0), (p.0, w.1)]);
                s.points.iter().copied().chain(ends)
            })
            .filter_map(|(x, y)| Some((self.xt(x)?, self.yt(y)?)))
            .collect();
        let mut xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
        xs.extend(self.markers.iter().filter_map(|m| self.xt(m.0)));
        let (mut x0, mut x1) = match self.x_range {
            Some((lo, hi)) => (
                self.xt(lo).unwrap_or(f64::INFINITY),
                self.xt(hi).unwrap_or(f64::NEG_INFINITY),
            ),
            None => xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, &x| {
                (a.0.min(x), a.1.max(x))
            }),
        };
        let (mut y0, mut y1) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| {
            (a.0.min(p.1), a.1.max(p.1))
        });
        if !x0.is_finite() {
            (x0, x1) = (0.0, 1.0);
        }
        if !y0.is_finite() {
            (y0, y1) = (0.0, 1.0);
        }
        if self.y_zero && !self.log_y {
            y0 = y0.min(0.0);
        }
        if x1 - x0 < 1e-12 {
            x0 -= 1.0;
            x1 += 1.0;
        }
        if y1 - y0 < 1e-12 {
            y1 = y0 + 1.0;
        }
        if self.log_y {
            // Whole decades, so every tick is a power of ten.
            y0 = y0.floor();
            y1 = y1.ceil().max(y0 + 1.0);
        } else {
            let pad = (y1 - y0) * 0.05;
            y1 += pad;
            if y0 < 0.0 || !self.y_zero {
                y0 -= pad;
            }
        }
        let sx = |x: f64| ml + (x - x0) / (x1 - x0) * pw;
        let sy = |y: f64| mt + ph - (y - y0) / (y1 - y0) * ph;

        s.push_str(&format!(
            "<rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n<text x=\"{}\" y=\"28\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">{}</text>\n",
            ml + pw / 2.0,
            esc(&self.title)
        ));
        // Grid and ticks.
        let yticks: Vec<(f64, f64)> = if self.log_y {
            let (a, b) = (y0 as i64, y1 as i64);
            (a..=b).map(|e| (e as f64, 10f64.powi(e as i32))).collect()
        } else {
            linear_ticks(y0, y1).into_iter().map(|t| (t, t)).collect()
        };
        for (pos, val) in &yticks {
            let y = sy(*pos);
            s.push_str(&format!(
                "<line x1=\"{ml}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#e0e0e0\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
                ml + pw,
                ml - 6.0,
                y + 4.0,
                esc(&fmt(*val, self.y_format))
            ));
        }
        let xticks: Vec<(f64, f64)> = if self.log2_x {
            let (a, b) = (x0.ceil() as i64, x1.floor() as i64);
            let every = ((b - a) / 12 + 1).max(1);
            (a..=b)
                .filter(|e| (e - a) % every == 0)
                .map(|e| (e as f64, 2f64.powi(e as i32)))
                .collect()
        } else {
            linear_ticks(x0, x1).into_iter().map(|t| (t, t)).collect()
        };
        for (pos, val) in &xticks {
            let x = sx(*pos);
            s.push_str(&format!(
                "<line x1=\"{x:.1}\" y1=\"{mt}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#f0f0f0\"/>\n<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"end\" transform=\"rotate(-35 {x:.1} {:.1})\">{}</text>\n",
                mt + ph,
                mt + ph + 16.0,
                mt + ph + 16.0,
                esc(&fmt(*val, self.x_format))
            ));
        }
        // Zero line when negatives are shown.
        if y0 < 0.0 && !self.log_y {
            let y = sy(0.0);
            s.push_str(&format!(
                "<line x1=\"{ml}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#888\"/>\n",
                ml + pw
            ));
        }
        // Axes and labels.
        s.push_str(&format!(
            "<rect x=\"{ml}\" y=\"{mt}\" width=\"{pw:.1}\" height=\"{ph:.1}\" fill=\"none\" stroke=\"#333\"/>\n"
        ));
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}{}</text>\n",
            ml + pw / 2.0,
            h - 12.0,
            esc(&self.x_label),
            if self.log2_x { " (log scale)" } else { "" }
        ));
        s.push_str(&format!(
            "<text x=\"18\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {:.1})\">{}{}</text>\n",
            mt + ph / 2.0,
            mt + ph / 2.0,
            esc(&self.y_label),
            if self.log_y { " (log scale)" } else { "" }
        ));
        // Markers.
        for (x, label) in &self.markers {
            if let Some(xv) = self.xt(*x) {
                let px = sx(xv);
                s.push_str(&format!(
                    "<line x1=\"{px:.1}\" y1=\"{mt}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>\n",
                    mt + ph,
                ));
                if !label.is_empty() {
                    // Upright along the line, so close markers do not overprint.
                    let (lx, ly) = (px + 11.0, mt + 4.0);
                    s.push_str(&format!(
                        "<text x=\"{lx:.1}\" y=\"{ly:.1}\" font-size=\"11\" fill=\"#333\" text-anchor=\"end\" transform=\"rotate(-90 {lx:.1} {ly:.1})\">{}</text>\n",
                        esc(label)
                    ));
                }
            }
        }
        // Series.
        for (i, se) in self.series.iter().enumerate() {
            let c = COLORS[i % COLORS.len()];
            let p: Vec<(f64, f64)> = se
                .points
                .iter()
                .filter_map(|&(x, y)| Some((sx(self.xt(x)?), sy(self.yt(y)?))))
                .collect();
            if se.style == Style::Line && p.len() > 1 {
                let d: Vec<String> = p.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
                s.push_str(&format!(
                    "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"1.8\" points=\"{}\"/>\n",
                    d.join(" ")
                ));
            }
            if se.style == Style::Whiskers {
                for (&(x, _), &(lo, hi)) in se.points.iter().zip(&se.spans) {
                    let (Some(x), Some(lo), Some(hi)) = (self.xt(x), self.yt(lo), self.yt(hi))
                    else {
                        continue;
                    };
                    let (x, lo, hi) = (sx(x), sy(lo), sy(hi));
                    s.push_str(&format!(
                        "<path d=\"M{x:.1},{lo:.1}V{hi:.1}M{:.1},{lo:.1}H{:.1}M{:.1},{hi:.1}H{:.1}\" stroke=\"{c}\" stroke-width=\"1.8\" fill=\"none\"/>\n",
                        x - 6.0,
                        x + 6.0,
                        x - 6.0,
                        x + 6.0
                    ));
                }
            }
            let r = if se.style == Style::Line { 3.0 } else { 2.6 };
            // Dots on a line only while they can be told apart (not on a long timeline).
            let dots = se.style != Style::Line || p.len() <= 60;
            for (x, y) in p.iter().filter(|_| dots) {
                s.push_str(&format!(
                    "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r}\" fill=\"{c}\"/>\n"
                ));
            }
            // Legend entry.
            let lx = ml + pw + 16.0;
            let ly = mt + 10.0 + 20.0 * i as f64;
            s.push_str(&format!(
                "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"14\" height=\"4\" fill=\"{c}\"/>\n<text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
                ly - 4.0,
                lx + 20.0,
                ly + 2.0,
                esc(&se.name)
            ));
        }
    }
}

fn open_svg(width: f64, height: f64, font_size: u32) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"{font_size}\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    )
}

/// Charts stacked top to bottom in one SVG document (panels sharing a time axis, say).
pub fn stack(charts: &[Chart]) -> String {
    let width = charts.iter().map(|c| c.width).fold(200.0, f64::max);
    let height: f64 = charts.iter().map(|c| c.height).sum::<f64>().max(150.0);
    let mut s = open_svg(width, height, 12);
    let mut top = 0.0;
    for c in charts {
        let _ = writeln!(s, "<g transform=\"translate(0 {top})\">");
        c.draw(&mut s);
        s.push_str("</g>\n");
        top += c.height;
    }
    s.push_str("</svg>\n");
    s
}

/// A heatmap: rows × columns of values (`None`: no cell), both axes in the given order
/// (powers of two, hence log axes), colour on a log scale with a legend.
pub fn heatmap(
    title: &str,
    x_label: &str,
    y_label: &str,
    columns: &[String],
    rows: &[String],
    values: &[Vec<Option<f64>>],
    value_format: fn(f64) -> String,
) -> String {
    let cell_w = 64.0;
    let cell_h = 26.0;
    let (ml, mt) = (100.0, 50.0);
    let width = ml + cell_w * columns.len().max(1) as f64 + 40.0;
    let height = mt + cell_h * rows.len().max(1) as f64 + 110.0;
    let finite: Vec<f64> = values
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let lo = finite.iter().copied().fold(f64::MAX, f64::min).max(1e-12);
    let hi = finite.iter().copied().fold(0.0, f64::max).max(lo);
    let frac = |v: f64| {
        if hi <= lo {
            0.5
        } else {
            ((v.ln() - lo.ln()) / (hi.ln() - lo.ln())).clamp(0.0, 1.0)
        }
    };
    let mut s = open_svg(width, height, 11);
    let _ = writeln!(
        s,
        r#"<text x="{ml}" y="20" font-size="14" font-weight="bold">{}</text>"#,
        esc(title)
    );
    for (ri, row) in rows.iter().enumerate() {
        let y = mt + ri as f64 * cell_h;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
            ml - 6.0,
            y + cell_h / 2.0 + 4.0,
            esc(row)
        );
        for ci in 0..columns.len() {
            let x = ml + ci as f64 * cell_w;
            if let Some(Some(v)) = values.get(ri).and_then(|r| r.get(ci)) {
                let f = frac(*v);
                let text_colour = if f > 0.6 { "black" } else { "white" };
                let _ = writeln!(
                    s,
                    r##"<rect x="{x}" y="{y}" width="{cell_w}" height="{cell_h}" fill="{}" stroke="#fff"/><text x="{}" y="{}" text-anchor="middle" fill="{text_colour}" font-size="9">{}</text>"##,
                    ramp(f),
                    x + cell_w / 2.0,
                    y + cell_h / 2.0 + 3.0,
                    esc(&value_format(*v))
                );
            }
        }
    }
    let yb = mt + cell_h * rows.len() as f64;
    for (ci, col) in columns.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            ml + ci as f64 * cell_w + cell_w / 2.0,
            yb + 16.0,
            esc(col)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        ml + cell_w * columns.len() as f64 / 2.0,
        yb + 36.0,
        esc(x_label)
    );
    let mid = mt + cell_h * rows.len() as f64 / 2.0;
    let _ = writeln!(
        s,
        r#"<text x="14" y="{mid}" text-anchor="middle" transform="rotate(-90 14 {mid})">{}</text>"#,
        esc(y_label)
    );
    // Legend: the log colour scale.
    let ly = yb + 56.0;
    for i in 0..20 {
        let _ = writeln!(
            s,
            r#"<rect x="{}" y="{ly}" width="12" height="12" fill="{}"/>"#,
            ml + i as f64 * 12.0,
            ramp(i as f64 / 19.0)
        );
    }
    if !finite.is_empty() {
        let _ = writeln!(
            s,
            r#"<text x="{ml}" y="{}">{}</text><text x="{}" y="{}" text-anchor="end">{} (log colour scale)</text>"#,
            ly + 28.0,
            esc(&value_format(lo)),
            ml + 240.0,
            ly + 28.0,
            esc(&value_format(hi))
        );
    }
    s.push_str("</svg>\n");
    s
}

/// One cell of a [`grid`]: what it means and its colour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub label: &'static str,
    pub colour: &'static str,
}

impl Cell {
    pub const fn new(label: &'static str, colour: &'static str) -> Self {
        Cell { label, colour }
    }
}

/// A map of categorical cells, `columns` to a row, with a legend of each class and its
/// count (a surface map: the address space left to right, top to bottom).
pub fn grid(
    title: &str,
    subtitle: &str,
    columns: usize,
    cells: &[Cell],
    legend: &[(Cell, usize)],
) -> String {
    let columns = columns.max(1);
    let rows = cells.len().div_ceil(columns).max(1);
    let side = 12.0;
    let (ml, mt) = (20.0, 56.0);
    let width = (ml * 2.0 + side * columns as f64).max(560.0);
    let height = mt + side * rows as f64 + 30.0 + 20.0 * legend.len() as f64;
    let mut s = open_svg(width, height, 12);
    let _ = writeln!(
        s,
        r##"<text x="{ml}" y="22" font-size="16" font-weight="bold">{}</text><text x="{ml}" y="42" font-size="11" fill="#333">{}</text>"##,
        esc(title),
        esc(subtitle)
    );
    for (i, c) in cells.iter().enumerate() {
        let _ = writeln!(
            s,
            r##"<rect x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#fff" stroke-width="1"><title>{}</title></rect>"##,
            ml + side * (i % columns) as f64,
            mt + side * (i / columns) as f64,
            side,
            side,
            c.colour,
            esc(c.label)
        );
    }
    let top = mt + side * rows as f64 + 24.0;
    for (i, (c, n)) in legend.iter().enumerate() {
        let y = top + 20.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<rect x="{ml}" y="{}" width="14" height="14" fill="{}"/><text x="{}" y="{}">{}: {n} cells</text>"#,
            y - 11.0,
            c.colour,
            ml + 22.0,
            y,
            esc(c.label)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Dark blue (0) to yellow (1), perceptually even (viridis' end points).
fn ramp(f: f64) -> String {
    let stops = [
        (0.0, (68.0, 1.0, 84.0)),
        (0.33, (49.0, 104.0, 142.0)),
        (0.66, (53.0, 183.0, 121.0)),
        (1.0, (253.0, 231.0, 37.0)),
    ];
    let f = if f.is_finite() {
        f.clamp(0.0, 1.0)
    } else {
        0.0
    };
    for w in stops.windows(2) {
        let (a, ca) = w[0];
        let (b, cb) = w[1];
        if f <= b {
            let t = (f - a) / (b - a);
            let c = |x: f64, y: f64| (x + (y - x) * t).round() as u8;
            return format!(
                "#{:02x}{:02x}{:02x}",
                c(ca.0, cb.0),
                c(ca.1, cb.1),
                c(ca.2, cb.2)
            );
        }
    }
    "#fde725".into()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_long_line_series_is_thinned_keeping_its_dips_and_peaks() {
        let points: Vec<(f64, f64)> = (0..1_000_000)
            .map(|i| {
                (
                    i as f64,
                    if i == 777_777 {
                        0.5
                    } else if i == 3 {
                        9.0
                    } else {
                        2.0
                    },
                )
            })
            .collect();
        let c = super::Chart::new("t", "x", "y").series("s", points);
        let kept = &c.series[0].points;
        assert!(kept.len() <= super::MAX_LINE_POINTS, "{}", kept.len());
        assert!(kept.iter().any(|p| p.1 == 0.5) && kept.iter().any(|p| p.1 == 9.0));
        assert!(kept.windows(2).all(|w| w[0].0 <= w[1].0), "in x order");
        let few = super::Chart::new("t", "x", "y").series("s", vec![(2.0, 1.0), (1.0, 3.0)]);
        assert_eq!(few.series[0].points, vec![(1.0, 3.0), (2.0, 1.0)]);
    }

    use super::*;

    #[test]
    fn chart_has_series_markers_labels_and_negative_values() {
        let svg = Chart::new("align <test>", "alignment", "diff")
            .log2_x()
            .x_format(AxisFormat::Bytes)
            .y_format(AxisFormat::Nanoseconds)
            .series(
                "1 KiB",
                vec![(2048.0, -3000.0), (4096.0, 5000.0), (4194304.0, 3e5)],
            )
            .series("4 KiB", vec![(8192.0, 1000.0), (16384.0, 4e4)])
            .marker(4194304.0, "erase block 4 MiB")
            .to_svg();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("align &lt;test&gt;"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("erase block 4 MiB"));
        assert!(svg.contains("4 MiB</text>"), "x ticks in bytes");
        assert!(svg.contains("µs"), "y ticks with a unit");
        assert!(svg.contains("(log scale)"));
    }

    #[test]
    fn y_axis_can_zoom_to_the_data() {
        let pts = vec![(1.0, 43e6), (2.0, 46e6)];
        let zoomed = Chart::new("t", "x", "y")
            .y_format(AxisFormat::Nanoseconds)
            .y_zero(false)
            .scatter("s", pts.clone())
            .to_svg();
        assert!(!zoomed.contains(">0 ns<"), "{zoomed}");
        let full = Chart::new("t", "x", "y")
            .y_format(AxisFormat::Nanoseconds)
            .scatter("s", pts)
            .to_svg();
        assert!(full.contains(">0 ns<"));
    }

    #[test]
    fn log_y_ticks_are_decades_and_drop_non_positive_values() {
        let svg = Chart::new("t", "size", "MiB/s")
            .log2_x()
            .log_y()
            .y_format(AxisFormat::Short)
            .series("w", vec![(1024.0, 1.5), (4096.0, 30.0), (16384.0, 0.0)])
            .to_svg();
        assert!(svg.contains(">1.00<") && svg.contains(">10.0<") && svg.contains(">100<"));
        let small = Chart::new("t", "s", "MiB/s")
            .log_y()
            .y_format(AxisFormat::Short)
            .series("w", vec![(1.0, 0.002), (2.0, 0.5)])
            .to_svg();
        assert!(
            small.contains(">1e-3<") && !small.contains(">0.00<"),
            "{small}"
        );
        assert_eq!(svg.matches("<circle").count(), 2, "{svg}");
    }

    #[test]
    fn stacked_charts_are_one_document_with_a_group_each() {
        let a = Chart::new("a", "t", "y").series("one", vec![(0.0, 1.0), (1.0, 2.0)]);
        let b = Chart::new("b", "t", "y")
            .x_range(0.0, 1.0)
            .marker(0.5, "")
            .series("two", vec![(0.5, 1.0), (2.0, 1.0)]);
        let svg = stack(&[a, b]);
        assert_eq!(svg.matches("<svg").count(), 1);
        assert_eq!(svg.matches("<g transform").count(), 2);
        assert!(svg.contains("height=\"1040\""), "two 520-pixel charts");
        assert!(svg.contains("stroke-dasharray"));
        assert_eq!(
            svg.matches("<circle").count(),
            3,
            "the point beyond x_range is dropped"
        );
    }

    #[test]
    fn heatmap_draws_each_present_cell() {
        let svg = heatmap(
            "write",
            "record",
            "file",
            &["4K".into(), "8K".into()],
            &["8K".into(), "16K".into()],
            &[vec![Some(1.0), Some(10.0)], vec![Some(100.0), None]],
            |v| format!("{v}"),
        );
        assert_eq!(svg.matches("font-size=\"9\"").count(), 3);
        assert!(svg.contains("#440154") && svg.contains("#fde725"));
        assert!(svg.contains("log colour scale"));
    }

    #[test]
    fn empty_and_degenerate_charts_do_not_panic() {
        let svg = Chart::new("t", "x", "y").to_svg();
        assert!(svg.contains("</svg>"));
        let svg = Chart::new("t", "x", "y")
            .log2_x()
            .scatter("s", vec![(0.0, f64::NAN), (-1.0, 2.0), (1.0, 1.0)])
            .to_svg();
        assert_eq!(svg.matches("<circle").count(), 1);
    }
}
