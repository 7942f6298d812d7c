//! A small hand-written SVG chart: line and scatter series, linear or log-2 x axis, axis
//! labels with units, a legend and labelled vertical markers. No dependencies, so any
//! command can draw its plot:
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

use crate::units::{format_bytes, format_ns};

/// How tick labels are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisFormat {
    /// Plain numbers.
    Plain,
    /// Byte counts with binary units (4 KiB, 2 MiB).
    Bytes,
    /// Nanoseconds shown as ns, µs, ms or s.
    Nanoseconds,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Line,
    Points,
}

#[derive(Debug, Clone)]
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
    style: Style,
}

/// A chart under construction; `to_svg` renders it.
#[derive(Debug, Clone)]
pub struct Chart {
    title: String,
    x_label: String,
    y_label: String,
    log2_x: bool,
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

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
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

impl Chart {
    /// An empty chart with a title and axis labels (put the unit in the label or use
    /// `x_format` / `y_format`).
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Self {
        Chart {
            title: title.to_string(),
            x_label: x_label.to_string(),
            y_label: y_label.to_string(),
            log2_x: false,
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

    /// A series drawn as a line with dots, in x order.
    pub fn series(mut self, name: &str, points: Vec<(f64, f64)>) -> Self {
        let mut points = points;
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        self.series.push(Series {
            name: name.to_string(),
            points,
            style: Style::Line,
        });
        self
    }

    /// A series drawn as dots only.
    pub fn scatter(mut self, name: &str, points: Vec<(f64, f64)>) -> Self {
        self.series.push(Series {
            name: name.to_string(),
            points,
            style: Style::Points,
        });
        self
    }

    /// A labelled vertical line at `x` (e.g. an inferred boundary).
    pub fn marker(mut self, x: f64, label: &str) -> Self {
        self.markers.push((x, label.to_string()));
        self
    }

    fn xt(&self, x: f64) -> Option<f64> {
        if !x.is_finite() {
            return None;
        }
        if self.log2_x {
            (x > 0.0).then(|| x.log2())
        } else {
            Some(x)
        }
    }

    /// Render as a standalone SVG document.
    pub fn to_svg(&self) -> String {
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
            .flat_map(|s| s.points.iter())
            .filter_map(|&(x, y)| Some((self.xt(x)?, y)).filter(|p| p.1.is_finite()))
            .collect();
        let mut xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
        xs.extend(self.markers.iter().filter_map(|m| self.xt(m.0)));
        let (mut x0, mut x1) = xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, &x| {
            (a.0.min(x), a.1.max(x))
        });
        let (mut y0, mut y1) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| {
            (a.0.min(p.1), a.1.max(p.1))
        });
        if !x0.is_finite() {
            (x0, x1) = (0.0, 1.0);
        }
        if !y0.is_finite() {
            (y0, y1) = (0.0, 1.0);
        }
        if self.y_zero {
            y0 = y0.min(0.0);
        }
        if x1 - x0 < 1e-12 {
            x0 -= 1.0;
            x1 += 1.0;
        }
        if y1 - y0 < 1e-12 {
            y1 = y0 + 1.0;
        }
        let pad = (y1 - y0) * 0.05;
        y1 += pad;
        if y0 < 0.0 || !self.y_zero {
            y0 -= pad;
        }
        let sx = |x: f64| ml + (x - x0) / (x1 - x0) * pw;
        let sy = |y: f64| mt + ph - (y - y0) / (y1 - y0) * ph;

        let mut s = String::new();
        s.push_str(&format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n"
        ));
        s.push_str(&format!(
            "<rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n<text x=\"{}\" y=\"28\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">{}</text>\n",
            ml + pw / 2.0,
            esc(&self.title)
        ));
        // Grid and ticks.
        let yticks = linear_ticks(y0, y1);
        for t in &yticks {
            let y = sy(*t);
            s.push_str(&format!(
                "<line x1=\"{ml}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#e0e0e0\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
                ml + pw,
                ml - 6.0,
                y + 4.0,
                esc(&fmt(*t, self.y_format))
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
        if y0 < 0.0 {
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
            "<text x=\"18\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {:.1})\">{}</text>\n",
            mt + ph / 2.0,
            mt + ph / 2.0,
            esc(&self.y_label)
        ));
        // Markers.
        for (x, label) in &self.markers {
            if let Some(xv) = self.xt(*x) {
                let px = sx(xv);
                s.push_str(&format!(
                    "<line x1=\"{px:.1}\" y1=\"{mt}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"#333\">{}</text>\n",
                    mt + ph,
                    px + 4.0,
                    mt + 14.0,
                    esc(label)
                ));
            }
        }
        // Series.
        for (i, se) in self.series.iter().enumerate() {
            let c = COLORS[i % COLORS.len()];
            let p: Vec<(f64, f64)> = se
                .points
                .iter()
                .filter_map(|&(x, y)| Some((sx(self.xt(x)?), sy(y))).filter(|_| y.is_finite()))
                .collect();
            if se.style == Style::Line && p.len() > 1 {
                let d: Vec<String> = p.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
                s.push_str(&format!(
                    "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"1.8\" points=\"{}\"/>\n",
                    d.join(" ")
                ));
            }
            let r = if se.style == Style::Points { 2.6 } else { 3.0 };
            for (x, y) in &p {
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
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
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
