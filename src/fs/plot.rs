//! A small private SVG writer for the filesystem plots (line charts with optional log-2 x
//! axis, stacked panels over time, heatmaps with log axes). Output only: it never measures.
//! To be unified with the shared report plotting when that lands.

use std::fmt::Write;

/// One named line of (x, y) points.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One chart panel: axes, labels and series.
#[derive(Debug, Clone)]
pub struct Panel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// Plot x on a log-2 scale (file sizes).
    pub log2_x: bool,
    /// Plot y on a log-10 scale (rates spanning decades).
    pub log_y: bool,
    /// Dashed vertical lines at these x values, labelled (phase changes).
    pub markers: Vec<(f64, String)>,
    /// How to print an x tick value.
    pub x_format: fn(f64) -> String,
}

const COLOURS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A number with up to three significant digits.
pub fn short_number(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// "nice" tick step for a range.
fn nice_step(range: f64, ticks: f64) -> f64 {
    if range <= 0.0 || !range.is_finite() {
        return 1.0;
    }
    let raw = range / ticks;
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    let m = if n < 1.5 {
        1.0
    } else if n < 3.0 {
        2.0
    } else if n < 7.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Render panels stacked vertically into one SVG document.
pub fn render(panels: &[Panel]) -> String {
    let width = 820.0;
    let panel_h = 320.0;
    let height = panel_h * panels.len().max(1) as f64;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for (i, p) in panels.iter().enumerate() {
        draw_panel(&mut s, p, i as f64 * panel_h, width, panel_h);
    }
    s.push_str("</svg>\n");
    s
}

fn draw_panel(s: &mut String, p: &Panel, top: f64, width: f64, height: f64) {
    let (ml, mr, mt, mb) = (80.0, 170.0, 30.0, 50.0);
    let (x0, x1, y0, y1) = (ml, width - mr, top + height - mb, top + mt);
    let tx = |x: f64| if p.log2_x { x.log2() } else { x };
    let ty = |y: f64| if p.log_y { y.log10() } else { y };
    let usable = |(x, y): &(f64, f64)| {
        x.is_finite() && y.is_finite() && (!p.log2_x || *x > 0.0) && (!p.log_y || *y > 0.0)
    };
    let pts: Vec<(f64, f64)> = p
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(usable)
        .collect();
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" font-size="14" font-weight="bold">{}</text>"#,
        x0,
        top + 18.0,
        esc(&p.title)
    );
    if pts.is_empty() {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}">no data</text>"#,
            (x0 + x1) / 2.0,
            (y0 + y1) / 2.0
        );
        return;
    }
    let (mut xmin, mut xmax) = (f64::MAX, f64::MIN);
    let (mut ymin, mut ymax) = (f64::MAX, f64::MIN);
    for (x, y) in &pts {
        xmin = xmin.min(tx(*x));
        xmax = xmax.max(tx(*x));
        ymin = ymin.min(ty(*y));
        ymax = ymax.max(ty(*y));
    }
    if xmax <= xmin {
        xmax = xmin + 1.0;
    }
    // Y range and ticks: linear from 0 with a nice step, or whole decades on a log axis.
    let (ylo, yhi, yticks): (f64, f64, Vec<f64>) = if p.log_y {
        let lo = ymin.floor();
        let hi = ymax.ceil().max(lo + 1.0);
        let ticks = (lo as i64..=hi as i64).map(|e| e as f64).collect();
        (lo, hi, ticks)
    } else {
        let step = nice_step(ymax.max(1e-12), 5.0);
        let hi = (ymax.max(0.0) / step).ceil().max(1.0) * step;
        let n = (hi / step).round() as i64;
        (0.0, hi, (0..=n).map(|i| i as f64 * step).collect())
    };
    let sx = |x: f64| x0 + (tx(x) - xmin) / (xmax - xmin) * (x1 - x0);
    let sy_t = |t: f64| y0 - (t - ylo) / (yhi - ylo) * (y0 - y1);
    let sy = |y: f64| sy_t(ty(y));
    let _ = writeln!(
        s,
        r##"<rect x="{x0}" y="{y1}" width="{}" height="{}" fill="none" stroke="#444"/>"##,
        x1 - x0,
        y0 - y1
    );
    for t in yticks {
        let py = sy_t(t);
        let label = if p.log_y {
            short_number(10f64.powf(t))
        } else {
            short_number(t)
        };
        let _ = writeln!(
            s,
            r##"<line x1="{x0}" y1="{py:.1}" x2="{x1}" y2="{py:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{label}</text>"##,
            x0 - 6.0,
            py + 4.0,
        );
    }
    let xticks: Vec<f64> = if p.log2_x {
        let lo = xmin.floor() as i64;
        let hi = xmax.ceil() as i64;
        // At most about eight labels so they do not run into each other.
        let every = ((hi - lo) / 8 + 1).max(1);
        (lo..=hi)
            .filter(|e| (e - lo) % every == 0)
            .map(|e| 2f64.powi(e as i32))
            .filter(|v| tx(*v) >= xmin - 1e-9 && tx(*v) <= xmax + 1e-9)
            .collect()
    } else {
        let step = nice_step(xmax - xmin, 8.0);
        let mut v = (xmin / step).ceil() * step;
        let mut out = Vec::new();
        while v <= xmax + 1e-9 {
            out.push(v);
            v += step;
        }
        out
    };
    for x in xticks {
        let px = sx(x);
        let _ = writeln!(
            s,
            r##"<line x1="{px:.1}" y1="{y0}" x2="{px:.1}" y2="{}" stroke="#444"/><text x="{px:.1}" y="{}" text-anchor="middle">{}</text>"##,
            y0 + 5.0,
            y0 + 18.0,
            esc(&(p.x_format)(x))
        );
    }
    for (x, label) in &p.markers {
        if !x.is_finite() || tx(*x) < xmin || tx(*x) > xmax {
            continue;
        }
        let px = sx(*x);
        let _ = writeln!(
            s,
            r##"<line x1="{px:.1}" y1="{y0}" x2="{px:.1}" y2="{y1}" stroke="#888" stroke-dasharray="4,3"/>"##
        );
        if !label.is_empty() {
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{}" font-size="10" fill="#555" transform="rotate(-90 {:.1} {})" text-anchor="end">{}</text>"##,
                px + 10.0,
                y1 + 4.0,
                px + 10.0,
                y1 + 4.0,
                esc(label)
            );
        }
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (x0 + x1) / 2.0,
        y0 + 38.0,
        esc(&p.x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{}" text-anchor="middle" transform="rotate(-90 18 {})">{}</text>"#,
        (y0 + y1) / 2.0,
        (y0 + y1) / 2.0,
        esc(&p.y_label)
    );
    for (i, series) in p.series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let path: Vec<String> = series
            .points
            .iter()
            .filter(|pt| usable(pt))
            .map(|(x, y)| format!("{:.1},{:.1}", sx(*x), sy(*y)))
            .collect();
        if !path.is_empty() {
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#,
                path.join(" ")
            );
            if path.len() <= 40 {
                for pt in &path {
                    if let Some((cx, cy)) = pt.split_once(',') {
                        let _ =
                            writeln!(s, r#"<circle cx="{cx}" cy="{cy}" r="3" fill="{colour}"/>"#);
                    }
                }
            }
        }
        let ly = y1 + 14.0 + i as f64 * 18.0;
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            x1 + 12.0,
            x1 + 32.0,
            x1 + 38.0,
            ly + 4.0,
            esc(&series.name)
        );
    }
}

/// A heatmap: rows × columns of values (None = no cell), both axes in the given order
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
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
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
        for (ci, _) in columns.iter().enumerate() {
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
    let _ = writeln!(
        s,
        r#"<text x="14" y="{}" text-anchor="middle" transform="rotate(-90 14 {})">{}</text>"#,
        mt + cell_h * rows.len() as f64 / 2.0,
        mt + cell_h * rows.len() as f64 / 2.0,
        esc(y_label)
    );
    // Legend: log colour scale.
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

/// Dark blue (0) → yellow (1).
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
    use super::*;

    #[test]
    fn line_chart_is_svg_with_one_polyline_per_series() {
        let p = Panel {
            title: "a <b>".into(),
            x_label: "size".into(),
            y_label: "MiB/s".into(),
            series: vec![
                Series {
                    name: "write".into(),
                    points: vec![(1024.0, 1.0), (4096.0, 3.0), (16384.0, 9.0)],
                },
                Series {
                    name: "read".into(),
                    points: vec![(1024.0, 2.0), (16384.0, f64::NAN)],
                },
            ],
            log2_x: true,
            log_y: true,
            markers: vec![(2048.0, "phase".into())],
            x_format: |x| format!("{x}"),
        };
        let svg = render(&[p]);
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("a &lt;b&gt;"));
        assert!(svg.contains(">4096<"));
        // Log y: decades 1 and 10 as ticks; the marker is drawn and labelled.
        assert!(svg.contains(">1.00<") && svg.contains(">10.0<"), "{svg}");
        assert!(svg.contains("stroke-dasharray") && svg.contains(">phase<"));
    }

    #[test]
    fn empty_panel_says_no_data() {
        let p = Panel {
            title: "t".into(),
            x_label: String::new(),
            y_label: String::new(),
            series: vec![],
            log2_x: false,
            log_y: false,
            markers: vec![],
            x_format: |x| format!("{x}"),
        };
        assert!(render(&[p]).contains("no data"));
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
        assert!(svg.contains("#440154"));
        assert!(svg.contains("#fde725"));
    }
}
