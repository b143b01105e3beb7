//! Chart drawing: bars, lines and a heat map as inline SVG written with `maud`, so
//! every label and title is escaped like any other text, and every number is ours.
//!
//! Charts are drawn here rather than by a chart crate because each plotted value
//! must stay inspectable: every bar, point and heat-map cell is an SVG element with
//! `class="datum"`, its raw value in `data-value` and a `<title>` a reader sees on
//! hover or tap. Tests read those back and check them against the results.

use crate::units::Bytes;
use maud::{html, Markup};

const PALETTE: [&str; 8] = [
    "#3b6ea5", "#e07b39", "#5a9e4b", "#b04a7a", "#7a6fb0", "#8c7a2b", "#2a9d9f", "#c0392b",
];
const W: f64 = 720.0;

fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A coordinate as the SVG writes it: one decimal.
fn n1(v: f64) -> String {
    format!("{v:.1}")
}

/// A plotted value: raw number, and how a reader sees it.
#[derive(Debug, Clone)]
pub(super) struct Bar {
    pub(super) series: String,
    pub(super) value: f64,
    /// Shown beside the bar.
    pub(super) text: String,
    /// Shown on hover or tap (the `<title>`).
    pub(super) detail: String,
    pub(super) ci: Option<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub(super) struct Group {
    pub(super) label: String,
    pub(super) bars: Vec<Bar>,
}

fn figure(id: &str, caption: &str, svg: Markup, note: &str) -> Markup {
    html! {
        figure id=(id) {
            "\n" figcaption { (caption) }
            "\n" div.scroll { (svg) }
            "\n"
            @if !note.is_empty() { p.note { (note) } "\n" }
        }
        "\n"
    }
}

/// The opening of a chart's `<svg>` of `width` × `h`, around `body`.
fn svg(width: f64, h: f64, label: &str, body: Markup) -> Markup {
    html! {
        svg viewBox=(format!("0 0 {width:.0} {h:.0}")) width=(format!("{width:.0}")) height=(format!("{h:.0}"))
            role="img" aria-label=(label) { (body) }
    }
}

/// A colour key of the series, three to a row, from `y` down; and its height.
fn legend(series: &[String], y: f64) -> (Markup, f64) {
    if series.len() < 2 {
        return (html! {}, 0.0);
    }
    let cols = 3usize;
    let colw = (W - 20.0) / cols as f64;
    let at = |i: usize| (10.0 + (i % cols) as f64 * colw, y + (i / cols) as f64 * 18.0);
    let key = html! {
        @for (i, name) in series.iter().enumerate() {
            @let (x, yy) = at(i);
            rect x=(n1(x)) y=(n1(yy)) width="12" height="12" fill=(color(i)) {}
            text x=(n1(x + 17.0)) y=(n1(yy + 10.5)) font-size="12" { (name) }
        }
    };
    (key, series.len().div_ceil(cols) as f64 * 18.0 + 6.0)
}

/// Horizontal grouped bars: each group's label on its own line, its bars below, so
/// long suite names never get clipped on a narrow screen. `reference` draws a
/// dashed line at that value (1.0 for ratios).
pub(super) fn bar_chart(id: &str, caption: &str, note: &str, groups: &[Group], reference: Option<f64>) -> Markup {
    let mut series: Vec<String> = Vec::new();
    for b in groups.iter().flat_map(|g| &g.bars) {
        if !series.contains(&b.series) {
            series.push(b.series.clone());
        }
    }
    let max = groups
        .iter()
        .flat_map(|g| &g.bars)
        .map(|b| b.ci.map(|c| c.1).unwrap_or(b.value).max(b.value))
        .chain(reference)
        .fold(0.0f64, f64::max);
    let max = if max > 0.0 && max.is_finite() { max } else { 1.0 };
    let (x0, x1) = (10.0, W - 130.0);
    let scale = |v: f64| x0 + (v.max(0.0) / max) * (x1 - x0);
    let (leg, leg_h) = legend(&series, 6.0);
    let top = 8.0 + leg_h;
    let mut y = top;
    let mut rows: Vec<Markup> = Vec::new();
    for g in groups {
        rows.push(html! {
            text x=(n1(x0)) y=(n1(y + 11.0)) font-size="12" font-weight="600" { (g.label) }
        });
        y += 15.0;
        for b in &g.bars {
            let si = series.iter().position(|s| *s == b.series).unwrap_or(0);
            rows.push(bar(g, b, y, color(si), &scale, x1));
            y += 15.0;
        }
        y += 6.0;
    }
    let reference = reference.map(|r| {
        let x = n1(scale(r));
        let line = html! {
            line x1=(x) x2=(x) y1=(n1(top)) y2=(n1(y)) stroke="#555" stroke-dasharray="4 3" {}
            text x=(n1(scale(r) + 2.0)) y=(n1(y + 10.0)) font-size="10" fill="#555" { (r) }
        };
        y += 12.0;
        line
    });
    let body = html! { (leg) @for r in &rows { (r) } @if let Some(r) = reference { (r) } };
    figure(id, caption, svg(W, y + 4.0, caption, body), note)
}

/// One bar at height `y`: its datum rectangle, its interval whisker and its text.
fn bar(g: &Group, b: &Bar, y: f64, fill: &str, scale: &dyn Fn(f64) -> f64, x1: f64) -> Markup {
    let x0 = scale(0.0);
    let w = (scale(b.value) - x0).max(0.5);
    let title = format!("{} {}: {}", g.label, b.series, b.detail).replace("  ", " ");
    let whisker = b.ci.filter(|(lo, hi)| hi > lo);
    let text_x = (scale(b.ci.map(|c| c.1.max(b.value)).unwrap_or(b.value)) + 4.0).min(x1 + 4.0);
    html! {
        rect.datum x=(n1(x0)) y=(n1(y)) width=(n1(w)) height="13" fill=(fill)
            data-label=(g.label) data-series=(b.series) data-value=(b.value) { title { (title) } }
        @if let Some((lo, hi)) = whisker {
            line x1=(n1(scale(lo))) x2=(n1(scale(hi))) y1=(n1(y + 6.5)) y2=(n1(y + 6.5)) stroke="#222" stroke-width="1" {}
        }
        text x=(n1(text_x)) y=(n1(y + 10.5)) font-size="11" { (b.text) }
    }
}

/// One line of a line chart: (x, y, human text) points.
pub(super) struct Line {
    pub(super) name: String,
    pub(super) points: Vec<(f64, f64, String)>,
}

fn nice_ticks(max: f64) -> Vec<f64> {
    if max <= 0.0 || !max.is_finite() {
        return vec![0.0];
    }
    let raw = max / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    (0..=((max / step).ceil() as usize)).map(|i| i as f64 * step).collect()
}

/// The plot area of a line chart and its two scales.
struct Plot {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    xs: Vec<f64>,
    yticks: Vec<f64>,
    log_y: bool,
    sx: Box<dyn Fn(f64) -> f64>,
    sy: Box<dyn Fn(f64) -> f64>,
}

/// Log-x over the block sizes; log-y when the values span more than 30×.
fn plot(lines: &[Line]) -> Option<Plot> {
    let pts = || lines.iter().flat_map(|l| &l.points);
    let mut xs: Vec<f64> = pts().map(|p| p.0).filter(|x| *x > 0.0).collect();
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    xs.dedup();
    let ys: Vec<f64> = pts().map(|p| p.1).filter(|y| *y > 0.0 && y.is_finite()).collect();
    if xs.is_empty() || ys.is_empty() {
        return None;
    }
    let ymax = ys.iter().copied().fold(0.0, f64::max);
    let ymin = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let log_y = ymax / ymin > 30.0;
    let (left, right, top, h) = (70.0, W - 20.0, 12.0, 300.0);
    let bottom = top + h;
    let (lx0, lx1) = (xs[0].log10(), xs[xs.len() - 1].log10());
    let sx = move |x: f64| {
        if lx1 > lx0 {
            left + (x.log10() - lx0) / (lx1 - lx0) * (right - left)
        } else {
            (left + right) / 2.0
        }
    };
    let (yticks, sy): (Vec<f64>, Box<dyn Fn(f64) -> f64>) = if log_y {
        let (d0, d1) = (ymin.log10().floor(), ymax.log10().ceil());
        let ticks = (d0 as i32..=d1 as i32).map(|e| 10f64.powi(e)).collect();
        (
            ticks,
            Box::new(move |y: f64| bottom - (y.max(1e-300).log10() - d0) / (d1 - d0).max(1e-9) * h),
        )
    } else {
        let ticks = nice_ticks(ymax);
        let top_v = *ticks.last().unwrap_or(&ymax);
        let top_v = if top_v > 0.0 { top_v } else { 1.0 };
        (ticks, Box::new(move |y: f64| bottom - y / top_v * h))
    };
    Some(Plot {
        left,
        right,
        top,
        bottom,
        xs,
        yticks,
        log_y,
        sx: Box::new(sx),
        sy,
    })
}

/// The grid, the tick labels and the axes of a line chart.
fn axes(p: &Plot, fmt_y: &dyn Fn(f64) -> String) -> Markup {
    let (left, right, top, bottom) = (n1(p.left), n1(p.right), n1(p.top), n1(p.bottom));
    html! {
        @for t in &p.yticks {
            @let y = (p.sy)(*t);
            line x1=(left) x2=(right) y1=(n1(y)) y2=(n1(y)) stroke="#e4e7eb" {}
            text x=(n1(p.left - 4.0)) y=(n1(y + 3.5)) font-size="10" text-anchor="end" { (fmt_y(*t)) }
        }
        @for x in &p.xs {
            @let px = n1((p.sx)(*x));
            line x1=(px) x2=(px) y1=(top) y2=(bottom) stroke="#eef0f2" {}
            text x=(px) y=(n1(p.bottom + 14.0)) font-size="10" text-anchor="middle" { (Bytes(*x as u64)) }
        }
        line x1=(left) x2=(right) y1=(bottom) y2=(bottom) stroke="#333" {}
        line x1=(left) x2=(left) y1=(top) y2=(bottom) stroke="#333" {}
        text x=(n1((p.left + p.right) / 2.0)) y=(n1(p.bottom + 30.0)) font-size="11" text-anchor="middle" {
            "block size (log scale)"
        }
    }
}

/// One line of a line chart in colour `i`: its polyline and a datum per point.
fn series_line(p: &Plot, l: &Line, i: usize) -> Markup {
    let mut pts: Vec<&(f64, f64, String)> = l.points.iter().filter(|q| q.0 > 0.0 && q.1 > 0.0).collect();
    pts.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
    let path: Vec<String> = pts.iter().map(|q| format!("{:.1},{:.1}", (p.sx)(q.0), (p.sy)(q.1))).collect();
    html! {
        polyline fill="none" stroke=(color(i)) stroke-width="1.8" points=(path.join(" ")) {}
        @for q in &pts {
            @let size = Bytes(q.0 as u64).to_string();
            circle.datum cx=(n1((p.sx)(q.0))) cy=(n1((p.sy)(q.1))) r="3.2" fill=(color(i))
                data-label=(l.name) data-series=(size) data-x=(q.0) data-value=(q.1) {
                title { (l.name) " at " (size) ": " (q.2) }
            }
        }
    }
}

/// Throughput against block size: log-x, and log-y when values span more than 30×.
pub(super) fn line_chart(id: &str, caption: &str, note: &str, lines: &[Line], fmt_y: &dyn Fn(f64) -> String) -> Option<Markup> {
    let p = plot(lines)?;
    let names: Vec<String> = lines.iter().map(|l| l.name.clone()).collect();
    let (leg, leg_h) = if names.len() == 1 {
        legend(&[names[0].clone(), String::new()], p.bottom + 40.0)
    } else {
        legend(&names, p.bottom + 40.0)
    };
    let body = html! {
        (axes(&p, fmt_y))
        @for (i, l) in lines.iter().enumerate() { (series_line(&p, l, i)) }
        (leg)
    };
    let note = if p.log_y {
        format!("{note} Both axes are logarithmic.")
    } else {
        note.to_string()
    };
    Some(figure(id, caption, svg(W, p.bottom + 44.0 + leg_h, caption, body), note.trim()))
}

/// A heat map's cells: (row, column, value, text on hover).
pub(super) type Cells = [(usize, usize, f64, String)];

/// A cipher × MAC matrix, darker is faster.
pub(super) fn heat_map(id: &str, caption: &str, note: &str, rows: &[String], cols: &[String], cells: &Cells) -> Markup {
    let label_w = 200.0;
    let cw = ((W - label_w - 10.0) / cols.len().max(1) as f64).clamp(40.0, 110.0);
    let ch = 22.0;
    let head = 150.0;
    let width = (label_w + cw * cols.len() as f64 + 130.0).max(W);
    let max = cells.iter().map(|c| c.2).fold(0.0, f64::max);
    let min = cells.iter().map(|c| c.2).fold(f64::INFINITY, f64::min);
    let (cw_s, ch_s) = (n1(cw), n1(ch));
    let body = html! {
        @for (j, c) in cols.iter().enumerate() {
            @let x = n1(label_w + j as f64 * cw + cw / 2.0);
            text x=(x) y=(n1(head - 6.0)) font-size="11" transform=(format!("rotate(-45 {x} {})", n1(head - 6.0))) { (c) }
        }
        @for (i, r) in rows.iter().enumerate() {
            @let y = head + i as f64 * ch;
            text x=(n1(label_w - 6.0)) y=(n1(y + ch / 2.0 + 4.0)) font-size="11" text-anchor="end" { (r) }
            @for j in 0..cols.len() {
                rect x=(n1(label_w + j as f64 * cw)) y=(n1(y)) width=(cw_s) height=(ch_s) fill="#f3f4f6" stroke="#fff" {}
            }
        }
        @for (i, j, v, text) in cells {
            @let t = if max > min { (v - min) / (max - min) } else { 1.0 };
            @let (x, y) = (label_w + *j as f64 * cw, head + *i as f64 * ch);
            rect.datum x=(n1(x)) y=(n1(y)) width=(cw_s) height=(ch_s) fill=(heat(t)) stroke="#fff"
                data-label=(rows[*i]) data-series=(cols[*j]) data-value=(v) {
                title { (rows[*i]) " + " (cols[*j]) ": " (text) }
            }
            text x=(n1(x + cw / 2.0)) y=(n1(y + ch / 2.0 + 3.5)) font-size="10" text-anchor="middle"
                fill=(if t > 0.5 { "#fff" } else { "#111" }) { (short_rate(*v)) }
        }
    };
    let h = head + rows.len() as f64 * ch + 8.0;
    figure(id, caption, svg(width, h, caption, body), note)
}

/// A heat-map colour from pale (0) to deep blue (1).
fn heat(t: f64) -> String {
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    format!("#{:02x}{:02x}{:02x}", lerp(222.0, 8.0), lerp(235.0, 48.0), lerp(247.0, 107.0))
}

/// A throughput short enough for a heat-map cell.
fn short_rate(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.0}M", v / 1e6)
    } else {
        format!("{:.0}k", v / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks_cover_the_maximum() {
        let t = nice_ticks(4.64e9);
        assert!(*t.last().unwrap() >= 4.64e9);
        assert!(t.len() <= 7, "{t:?}");
    }

    #[test]
    fn chart_labels_and_titles_are_text_never_markup() {
        let hostile = "<script>alert(1)</script>\"><svg onload=alert(1)>";
        let bar = Bar {
            series: hostile.into(),
            value: 2.0,
            text: hostile.into(),
            detail: hostile.into(),
            ci: Some((1.0, 3.0)),
        };
        let groups = vec![Group {
            label: hostile.into(),
            bars: vec![bar],
        }];
        let out = bar_chart("c", hostile, hostile, &groups, Some(1.0)).into_string();
        assert!(!out.contains("<script") && !out.contains("<svg onload"), "{out}");
        assert!(out.contains("&lt;script&gt;") && out.contains("&quot;&gt;&lt;svg onload"), "{out}");
        let cells = vec![(0, 0, 1.0e9, hostile.to_string())];
        let out = heat_map("h", hostile, "", &[hostile.into()], &[hostile.into()], &cells).into_string();
        assert_eq!(out.matches("<svg").count(), 1, "{out}");
        assert!(!out.contains("<script"), "{out}");
    }
}
