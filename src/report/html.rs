//! The HTML report: one self-contained file (inline CSS and inline SVG, nothing
//! fetched, no scripts) that reads on a phone and prints on paper.
//!
//! Charts are drawn here rather than by a chart crate because each plotted value
//! must stay inspectable: every bar, point and heat-map cell is an SVG element with
//! `class="datum"`, its raw value in `data-value` and a `<title>` a reader sees on
//! hover or tap. Tests read those back and check them against the results.

use super::table::{file_tables, kdf_lines, primitive_table, ssh_tables, subject_label, tls_tables, verdict_warnings, Table};
use crate::model::{Document, Kind, Metric, ResultRecord, Status};
use crate::units::{Bytes, BytesPerSec, Seconds};
use anyhow::{Context, Result};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Escapes text for HTML and SVG (element content and quoted attribute values).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Where the main job keeps its reports: beside the default history database,
/// `$XDG_DATA_HOME/cipherbench/reports/`.
pub fn reports_dir() -> PathBuf {
    let db = crate::store::default_path();
    db.parent().map(|p| p.join("reports")).unwrap_or_else(|| PathBuf::from("reports"))
}

/// Writes the HTML report of `doc` to `reports_dir()/<run id>.html` (atomically) and
/// returns the path.
pub fn write_report(doc: &Document) -> Result<PathBuf> {
    let dir = reports_dir();
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let safe: String = doc
        .run
        .id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(format!("{safe}.html"));
    super::write_output(&path, render(doc).as_bytes())?;
    Ok(path)
}

const CSS: &str = r#"
:root{--fg:#1b1f23;--muted:#57606a;--bg:#fff;--line:#d0d7de;--code:#f6f8fa}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1100px;padding:1rem;color:var(--fg);background:var(--bg)}
h1{font-size:1.35rem;margin:.2rem 0 .6rem}
h2{font-size:1.15rem;border-bottom:1px solid var(--line);padding-bottom:.2rem;margin-top:2rem}
h3{font-size:1rem;margin:1.2rem 0 .4rem}
.muted,.note{color:var(--muted);font-size:.85rem}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%}
table{border-collapse:collapse;font-size:.85rem;white-space:nowrap;margin:.3rem 0}
th,td{padding:.2rem .55rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--code)}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.wrap{white-space:normal;min-width:16rem}
figure{margin:1rem 0;break-inside:avoid}
figcaption{font-weight:600;margin-bottom:.3rem}
svg{max-width:100%;height:auto;display:block}
svg text{font-family:system-ui,sans-serif}
pre{overflow-x:auto;background:var(--code);padding:.6rem;border-radius:4px;font-size:.8rem}
.level{display:inline-block;padding:0 .4rem;border-radius:3px;font-size:.8rem;font-weight:600}
.level-recommended{background:#dafbe1;color:#116329}
.level-secure{background:#ddf4ff;color:#0a3069}
.level-weak{background:#fff8c5;color:#7d4e00}
.level-insecure{background:#ffebe9;color:#a40e26}
.level-unrated{background:#eaeef2;color:#424a53}
ul.reasons{margin:.1rem 0;padding-left:1.1rem}
dl.host{display:grid;grid-template-columns:max-content 1fr;gap:.15rem .8rem;margin:.4rem 0}
dl.host dt{color:var(--muted)}
dl.host dd{margin:0;overflow-wrap:anywhere}
@media (max-width:600px){body{font-size:14px;padding:.5rem}dl.host{grid-template-columns:1fr}dl.host dd{margin-bottom:.3rem}}
@media print{
body{max-width:none;font-size:10pt;padding:0}
.scroll{overflow:visible}
table{white-space:normal;font-size:8pt}
h2{break-after:avoid}
table,pre,figure,li{break-inside:avoid}
a{color:inherit}
a[href]::after{content:" <" attr(href) ">";font-size:7pt;color:#555}
}
"#;

/// The whole report.
pub fn render(doc: &Document) -> String {
    let mut s = String::new();
    let title = format!("cipherbench {} · run {}", doc.run.command, doc.run.id);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<meta name=\"generator\" content=\"cipherbench {}\">\n<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        esc(&title),
        CSS
    );
    let _ = writeln!(s, "<h1>{}</h1>", esc(&title));
    s.push_str(&host_section(doc));
    s.push_str(&charts_section(doc));
    s.push_str(&recommendations_section(doc));
    s.push_str(&verdicts_section(doc));
    s.push_str(&tables_section(doc));
    s.push_str(
        "<p class=\"note\">Made by cipherbench. Figures are medians of adaptive samples with distribution-free 95% intervals; \
results whose intervals overlap are tied, not ranked.</p>\n</body>\n</html>\n",
    );
    s
}

fn host_section(doc: &Document) -> String {
    let h = &doc.run.host;
    let mut s = String::from("<section id=\"host\">\n<h2>Machine</h2>\n<dl class=\"host\">\n");
    let mut item = |k: &str, v: &str| {
        let _ = writeln!(s, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
    };
    item("run", &doc.run.id);
    item("command", &doc.run.command);
    item("status", doc.run.status.as_str());
    item("started", &doc.run.started_at);
    if let Some(f) = &doc.run.finished_at {
        item("finished", f);
    }
    item("CPU", &format!("{} ({} cores)", h.cpu_model, h.cores));
    item(
        "crypto CPU flags",
        &if h.cpu_flags.is_empty() {
            "none".to_string()
        } else {
            h.cpu_flags.join(" ")
        },
    );
    item("architecture", &h.arch);
    item("kernel", &h.kernel);
    item("hostname", &h.hostname);
    for (lib, ver) in &doc.run.libraries {
        item(lib, ver);
    }
    s.push_str("</dl>\n");
    if !doc.run.settings.is_null() {
        let _ = writeln!(
            s,
            "<h3>Settings</h3>\n<pre>{}</pre>",
            esc(&serde_json::to_string_pretty(&doc.run.settings).unwrap_or_default())
        );
    }
    s.push_str("</section>\n");
    s
}

// ---------------------------------------------------------------- charts

const PALETTE: [&str; 8] = [
    "#3b6ea5", "#e07b39", "#5a9e4b", "#b04a7a", "#7a6fb0", "#8c7a2b", "#2a9d9f", "#c0392b",
];
const W: f64 = 720.0;

fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A plotted value: raw number, and how a reader sees it.
#[derive(Debug, Clone)]
struct Bar {
    series: String,
    value: f64,
    /// Shown beside the bar.
    text: String,
    /// Shown on hover or tap (the `<title>`).
    detail: String,
    ci: Option<(f64, f64)>,
}

#[derive(Debug, Clone)]
struct Group {
    label: String,
    bars: Vec<Bar>,
}

fn figure(id: &str, caption: &str, svg: &str, note: &str) -> String {
    let mut s = format!(
        "<figure id=\"{}\">\n<figcaption>{}</figcaption>\n<div class=\"scroll\">{svg}</div>\n",
        esc(id),
        esc(caption)
    );
    if !note.is_empty() {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", esc(note));
    }
    s.push_str("</figure>\n");
    s
}

fn legend(series: &[String], y: f64) -> (String, f64) {
    if series.len() < 2 {
        return (String::new(), 0.0);
    }
    let mut s = String::new();
    let cols = 3usize;
    let colw = (W - 20.0) / cols as f64;
    for (i, name) in series.iter().enumerate() {
        let x = 10.0 + (i % cols) as f64 * colw;
        let yy = y + (i / cols) as f64 * 18.0;
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\">{}</text>",
            yy,
            color(i),
            x + 17.0,
            yy + 10.5,
            esc(name)
        );
    }
    (s, series.len().div_ceil(cols) as f64 * 18.0 + 6.0)
}

fn svg_open(h: f64, label: &str) -> String {
    format!(
        "<svg viewBox=\"0 0 {W:.0} {h:.0}\" width=\"{W:.0}\" height=\"{h:.0}\" role=\"img\" aria-label=\"{}\">",
        esc(label)
    )
}

/// Horizontal grouped bars: each group's label on its own line, its bars below, so
/// long suite names never get clipped on a narrow screen. `reference` draws a
/// dashed line at that value (1.0 for ratios).
fn bar_chart(id: &str, caption: &str, note: &str, groups: &[Group], reference: Option<f64>) -> String {
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
    let mut body = String::new();
    let mut y = 8.0 + leg_h;
    for g in groups {
        let _ = write!(
            body,
            "<text x=\"{x0:.1}\" y=\"{:.1}\" font-size=\"12\" font-weight=\"600\">{}</text>",
            y + 11.0,
            esc(&g.label)
        );
        y += 15.0;
        for b in &g.bars {
            let si = series.iter().position(|s| *s == b.series).unwrap_or(0);
            let w = (scale(b.value) - x0).max(0.5);
            let _ = write!(
                body,
                "<rect class=\"datum\" x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"13\" fill=\"{}\" data-label=\"{}\" data-series=\"{}\" data-value=\"{}\"><title>{}</title></rect>",
                color(si),
                esc(&g.label),
                esc(&b.series),
                b.value,
                esc(&format!("{} {}: {}", g.label, b.series, b.detail).replace("  ", " "))
            );
            if let Some((lo, hi)) = b.ci {
                if hi > lo {
                    let _ = write!(
                        body,
                        "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#222\" stroke-width=\"1\"/>",
                        scale(lo),
                        scale(hi),
                        y + 6.5,
                        y + 6.5
                    );
                }
            }
            let _ = write!(
                body,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
                (scale(b.ci.map(|c| c.1.max(b.value)).unwrap_or(b.value)) + 4.0).min(x1 + 4.0),
                y + 10.5,
                esc(&b.text)
            );
            y += 15.0;
        }
        y += 6.0;
    }
    let top = 8.0 + leg_h;
    if let Some(r) = reference {
        let x = scale(r);
        let _ = write!(
            body,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top:.1}\" y2=\"{y:.1}\" stroke=\"#555\" stroke-dasharray=\"4 3\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"#555\">{r}</text>",
            x + 2.0,
            y + 10.0
        );
        y += 12.0;
    }
    let svg = format!("{}{leg}{body}</svg>", svg_open(y + 4.0, caption));
    figure(id, caption, &svg, note)
}

/// One line of a line chart: (x, y, human text) points.
struct Line {
    name: String,
    points: Vec<(f64, f64, String)>,
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

/// Throughput against block size: log-x, and log-y when values span more than 30×.
fn line_chart(id: &str, caption: &str, note: &str, lines: &[Line], fmt_y: &dyn Fn(f64) -> String) -> String {
    let pts = || lines.iter().flat_map(|l| &l.points);
    let mut xs: Vec<f64> = pts().map(|p| p.0).filter(|x| *x > 0.0).collect();
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    xs.dedup();
    let ys: Vec<f64> = pts().map(|p| p.1).filter(|y| *y > 0.0 && y.is_finite()).collect();
    if xs.is_empty() || ys.is_empty() {
        return String::new();
    }
    let ymax = ys.iter().copied().fold(0.0, f64::max);
    let ymin = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let log_y = ymax / ymin > 30.0;
    let (left, right, top, h) = (70.0, W - 20.0, 12.0, 300.0);
    let bottom = top + h;
    let (lx0, lx1) = (xs[0].log10(), xs[xs.len() - 1].log10());
    let sx = |x: f64| {
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
    let mut body = String::new();
    for t in &yticks {
        let y = sy(*t);
        let _ = write!(
            body,
            "<line x1=\"{left:.1}\" x2=\"{right:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#e4e7eb\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{}</text>",
            left - 4.0,
            y + 3.5,
            esc(&fmt_y(*t))
        );
    }
    for x in &xs {
        let px = sx(*x);
        let _ = write!(
            body,
            "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\" stroke=\"#eef0f2\"/><text x=\"{px:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\">{}</text>",
            bottom + 14.0,
            esc(&Bytes(*x as u64).to_string())
        );
    }
    let _ = write!(
        body,
        "<line x1=\"{left:.1}\" x2=\"{right:.1}\" y1=\"{bottom:.1}\" y2=\"{bottom:.1}\" stroke=\"#333\"/><line x1=\"{left:.1}\" x2=\"{left:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\" stroke=\"#333\"/>\
<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">block size (log scale)</text>",
        (left + right) / 2.0,
        bottom + 30.0
    );
    for (i, l) in lines.iter().enumerate() {
        let mut p: Vec<&(f64, f64, String)> = l.points.iter().filter(|p| p.0 > 0.0 && p.1 > 0.0).collect();
        p.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
        let path: Vec<String> = p.iter().map(|q| format!("{:.1},{:.1}", sx(q.0), sy(q.1))).collect();
        let _ = write!(
            body,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" points=\"{}\"/>",
            color(i),
            path.join(" ")
        );
        for q in p {
            let _ = write!(
                body,
                "<circle class=\"datum\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.2\" fill=\"{}\" data-label=\"{}\" data-series=\"{}\" data-x=\"{}\" data-value=\"{}\"><title>{}</title></circle>",
                sx(q.0),
                sy(q.1),
                color(i),
                esc(&l.name),
                esc(&Bytes(q.0 as u64).to_string()),
                q.0,
                q.1,
                esc(&format!("{} at {}: {}", l.name, Bytes(q.0 as u64), q.2))
            );
        }
    }
    let names: Vec<String> = lines.iter().map(|l| l.name.clone()).collect();
    let (leg, leg_h) = if names.len() == 1 {
        legend(&[names[0].clone(), String::new()], bottom + 40.0)
    } else {
        legend(&names, bottom + 40.0)
    };
    let svg = format!("{}{body}{leg}</svg>", svg_open(bottom + 44.0 + leg_h, caption));
    let note = if log_y {
        format!("{note} Both axes are logarithmic.")
    } else {
        note.to_string()
    };
    figure(id, caption, &svg, note.trim())
}

/// A cipher × MAC matrix, darker is faster.
fn heat_map(id: &str, caption: &str, note: &str, rows: &[String], cols: &[String], cells: &[(usize, usize, f64, String)]) -> String {
    let label_w = 200.0;
    let cw = ((W - label_w - 10.0) / cols.len().max(1) as f64).clamp(40.0, 110.0);
    let ch = 22.0;
    let head = 150.0;
    let width = (label_w + cw * cols.len() as f64 + 130.0).max(W);
    let max = cells.iter().map(|c| c.2).fold(0.0, f64::max);
    let min = cells.iter().map(|c| c.2).fold(f64::INFINITY, f64::min);
    let mut body = String::new();
    for (j, c) in cols.iter().enumerate() {
        let x = label_w + j as f64 * cw + cw / 2.0;
        let _ = write!(
            body,
            "<text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"11\" transform=\"rotate(-45 {x:.1} {:.1})\">{}</text>",
            head - 6.0,
            head - 6.0,
            esc(c)
        );
    }
    for (i, r) in rows.iter().enumerate() {
        let y = head + i as f64 * ch;
        let _ = write!(
            body,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
            label_w - 6.0,
            y + ch / 2.0 + 4.0,
            esc(r)
        );
        for j in 0..cols.len() {
            let x = label_w + j as f64 * cw;
            let _ = write!(
                body,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#f3f4f6\" stroke=\"#fff\"/>",
                cw, ch
            );
        }
    }
    for (i, j, v, text) in cells {
        let t = if max > min { (v - min) / (max - min) } else { 1.0 };
        // From pale to deep blue.
        let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
        let fill = format!("#{:02x}{:02x}{:02x}", lerp(222.0, 8.0), lerp(235.0, 48.0), lerp(247.0, 107.0));
        let fg = if t > 0.5 { "#fff" } else { "#111" };
        let (x, y) = (label_w + *j as f64 * cw, head + *i as f64 * ch);
        let _ = write!(
            body,
            "<rect class=\"datum\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{cw:.1}\" height=\"{ch:.1}\" fill=\"{fill}\" stroke=\"#fff\" data-label=\"{}\" data-series=\"{}\" data-value=\"{v}\"><title>{}</title></rect>\
<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\" fill=\"{fg}\">{}</text>",
            esc(&rows[*i]),
            esc(&cols[*j]),
            esc(&format!("{} + {}: {text}", rows[*i], cols[*j])),
            x + cw / 2.0,
            y + ch / 2.0 + 3.5,
            esc(&short_rate(*v))
        );
    }
    let h = head + rows.len() as f64 * ch + 8.0;
    let svg = format!(
        "<svg viewBox=\"0 0 {width:.0} {h:.0}\" width=\"{width:.0}\" height=\"{h:.0}\" role=\"img\" aria-label=\"{}\">{body}</svg>",
        esc(caption)
    );
    figure(id, caption, &svg, note)
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

/// A value in its metric's unit.
fn metric_text(metric: Metric, v: f64) -> String {
    match metric {
        Metric::BytesPerSec => BytesPerSec(v).to_string(),
        Metric::HandshakesPerSec => format!("{v:.0}/s"),
        Metric::Seconds => Seconds(v).to_string(),
        Metric::Accepted => (if v >= 1.0 { "accepted" } else { "refused" }).to_string(),
    }
}

fn with_ci(r: &ResultRecord, text: String) -> String {
    match (r.ci95_low, r.ci95_high, r.samples) {
        (Some(lo), Some(hi), Some(n)) => format!(
            "{text} (95% CI {} – {}, n={n})",
            metric_text(r.metric, lo),
            metric_text(r.metric, hi)
        ),
        _ => text,
    }
}

fn ok(r: &ResultRecord) -> Option<f64> {
    (r.status == Status::Ok).then_some(r.median?).filter(|v| v.is_finite())
}

/// A bar for a result plotted as measured.
fn bar_of(r: &ResultRecord, series: &str) -> Option<Bar> {
    let v = ok(r)?;
    Some(Bar {
        series: series.to_string(),
        value: v,
        text: metric_text(r.metric, v),
        detail: with_ci(r, metric_text(r.metric, v)),
        ci: r.ci95_low.zip(r.ci95_high),
    })
}

fn push_bar(groups: &mut Vec<Group>, label: &str, bar: Bar) {
    match groups.iter_mut().find(|g| g.label == label) {
        Some(g) => g.bars.push(bar),
        None => groups.push(Group {
            label: label.to_string(),
            bars: vec![bar],
        }),
    }
}

/// The label of a primitive's line: algorithm, and library and threads when they vary.
fn primitive_key(r: &ResultRecord, multi_lib: bool, multi_thread: bool) -> String {
    let mut s = r.subject.algorithm.clone().unwrap_or_default();
    if multi_lib {
        let _ = write!(s, " ({})", r.subject.library.as_deref().unwrap_or("openssl"));
    }
    if multi_thread {
        let _ = write!(s, " ×{}", r.subject.threads.unwrap_or(1));
    }
    s
}

fn charts_section(doc: &Document) -> String {
    let mut s = String::new();
    let mut ratio_groups: Vec<Group> = Vec::new();
    let mut charted: Vec<(Kind, Metric)> = Vec::new();

    // Primitives: throughput at the largest size, then against block size.
    let prim: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::Primitive && r.metric == Metric::BytesPerSec && ok(r).is_some())
        .collect();
    if !prim.is_empty() {
        charted.push((Kind::Primitive, Metric::BytesPerSec));
        let multi_lib = prim.iter().any(|r| r.subject.library.as_deref().unwrap_or("openssl") != "openssl");
        let multi_thread = prim.iter().any(|r| r.subject.threads.unwrap_or(1) > 1);
        let largest = prim.iter().filter_map(|r| r.subject.bytes).max().unwrap_or(0);
        let mut groups = Vec::new();
        for r in prim.iter().filter(|r| r.subject.bytes == Some(largest)) {
            if let Some(b) = bar_of(r, r.subject.op.as_deref().unwrap_or("")) {
                push_bar(&mut groups, &primitive_key(r, multi_lib, multi_thread), b);
            }
        }
        s.push_str(&bar_chart(
            "chart-primitive-throughput",
            &format!("Primitive throughput at {} (higher is faster)", Bytes(largest)),
            "Bars are medians; the black whisker is the 95% interval.",
            &groups,
            None,
        ));
        let mut lines: Vec<Line> = Vec::new();
        for r in prim.iter().filter(|r| r.subject.op.as_deref() != Some("decrypt")) {
            let (Some(b), Some(v)) = (r.subject.bytes, ok(r)) else { continue };
            let name = primitive_key(r, multi_lib, multi_thread);
            let point = (b as f64, v, BytesPerSec(v).to_string());
            match lines.iter_mut().find(|l| l.name == name) {
                Some(l) => l.points.push(point),
                None => lines.push(Line { name, points: vec![point] }),
            }
        }
        if lines.iter().any(|l| l.points.len() > 1) {
            s.push_str(&line_chart(
                "chart-primitive-sizes",
                "Throughput against block size (encryption, digest or MAC)",
                "One line per algorithm; each point is a median.",
                &lines,
                &|v| BytesPerSec(v).to_string(),
            ));
        }
        for key in groups.iter().map(|g| g.label.clone()) {
            let find = |op: &str| {
                prim.iter().find(|r| {
                    r.subject.bytes == Some(largest)
                        && r.subject.op.as_deref() == Some(op)
                        && primitive_key(r, multi_lib, multi_thread) == key
                })
            };
            if let (Some(e), Some(d)) = (find("encrypt").and_then(|r| ok(r)), find("decrypt").and_then(|r| ok(r))) {
                if e > 0.0 {
                    let ratio = d / e;
                    push_bar(
                        &mut ratio_groups,
                        &key,
                        Bar {
                            series: format!("primitive at {}", Bytes(largest)),
                            value: ratio,
                            text: format!("{ratio:.2}"),
                            detail: format!("{ratio:.3} (decryption {} ÷ encryption {})", BytesPerSec(d), BytesPerSec(e)),
                            ci: None,
                        },
                    );
                }
            }
        }
    }

    // Files: the study's histograms, encryption and decryption time per algorithm × mode.
    let files: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::File && r.metric == Metric::BytesPerSec && r.subject.path.is_some())
        .filter(|r| matches!(r.subject.op.as_deref(), Some("encrypt" | "decrypt")))
        .collect();
    if !files.is_empty() {
        charted.push((Kind::File, Metric::BytesPerSec));
    }
    // One chart per input: (path, library, I/O mode, size).
    type FileSet = (Option<String>, Option<String>, Option<String>, Option<u64>);
    let mut file_sets: Vec<FileSet> = Vec::new();
    for r in &files {
        let k = (
            r.subject.path.clone(),
            r.subject.library.clone(),
            r.subject.mode.clone(),
            r.subject.bytes,
        );
        if !file_sets.contains(&k) {
            file_sets.push(k);
        }
    }
    for (n, set) in file_sets.iter().enumerate() {
        let members: Vec<&&ResultRecord> = files
            .iter()
            .filter(|r| (&r.subject.path, &r.subject.library, &r.subject.mode, &r.subject.bytes) == (&set.0, &set.1, &set.2, &set.3))
            .collect();
        let size = set.3.unwrap_or(0) as f64;
        let mut groups = Vec::new();
        for r in &members {
            let Some(v) = ok(r).filter(|v| *v > 0.0) else { continue };
            let secs = size / v;
            let ci = r
                .ci95_low
                .zip(r.ci95_high)
                .filter(|(lo, _)| *lo > 0.0)
                .map(|(lo, hi)| (size / hi, size / lo));
            push_bar(
                &mut groups,
                r.subject.algorithm.as_deref().unwrap_or(""),
                Bar {
                    series: r.subject.op.clone().unwrap_or_default(),
                    value: secs,
                    text: Seconds(secs).to_string(),
                    detail: format!("{} per pass ({}), n={}", Seconds(secs), BytesPerSec(v), r.samples.unwrap_or(0)),
                    ci,
                },
            );
        }
        let what = format!(
            "{} ({}), {}, {} mode",
            set.0.as_deref().unwrap_or(""),
            Bytes(set.3.unwrap_or(0)),
            set.1.as_deref().unwrap_or(""),
            set.2.as_deref().unwrap_or("")
        );
        if !groups.is_empty() {
            s.push_str(&bar_chart(
                &format!("chart-file-{n}"),
                &format!("File encryption and decryption time: {what} (lower is faster)"),
                "Seconds per pass (median), as in the study's histograms.",
                &groups,
                None,
            ));
        }
        let mut algs: Vec<&str> = members.iter().filter_map(|r| r.subject.algorithm.as_deref()).collect();
        algs.dedup();
        for alg in algs {
            let find = |op: &str| {
                members
                    .iter()
                    .find(|r| r.subject.algorithm.as_deref() == Some(alg) && r.subject.op.as_deref() == Some(op))
                    .and_then(|r| ok(r))
            };
            if let (Some(e), Some(d)) = (find("encrypt"), find("decrypt")) {
                if e > 0.0 {
                    let ratio = d / e;
                    push_bar(
                        &mut ratio_groups,
                        alg,
                        Bar {
                            series: format!("file {what}"),
                            value: ratio,
                            text: format!("{ratio:.2}"),
                            detail: format!("{ratio:.3} (decryption {} ÷ encryption {})", BytesPerSec(d), BytesPerSec(e)),
                            ci: None,
                        },
                    );
                }
            }
        }
    }
    if !ratio_groups.is_empty() {
        s.push_str(&bar_chart(
            "chart-enc-dec-ratio",
            "Encryption time ÷ decryption time",
            "Above 1: decryption is faster (CBC encryption cannot run in parallel; the study found about 2.4× for AES-CBC).",
            &ratio_groups,
            Some(1.0),
        ));
    }

    // SSH: cipher × MAC heat map per kex.
    let ssh: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::SshBulk && r.metric == Metric::BytesPerSec && ok(r).is_some())
        .collect();
    if !ssh.is_empty() {
        charted.push((Kind::SshBulk, Metric::BytesPerSec));
        let mut kexes: Vec<String> = ssh.iter().map(|r| r.subject.kex.clone().unwrap_or_default()).collect();
        kexes.sort();
        kexes.dedup();
        for (n, kex) in kexes.iter().enumerate() {
            let of: Vec<&&ResultRecord> = ssh.iter().filter(|r| r.subject.kex.clone().unwrap_or_default() == *kex).collect();
            let mut rows: Vec<String> = Vec::new();
            let mut cols: Vec<String> = Vec::new();
            let mut cells = Vec::new();
            for r in &of {
                let c = r.subject.cipher.clone().unwrap_or_default();
                let m = r.subject.mac.clone().unwrap_or_else(|| "(implicit)".into());
                if !rows.contains(&c) {
                    rows.push(c.clone());
                }
                if !cols.contains(&m) {
                    cols.push(m.clone());
                }
                let (i, j) = (
                    rows.iter().position(|x| *x == c).unwrap_or(0),
                    cols.iter().position(|x| *x == m).unwrap_or(0),
                );
                if cells.iter().any(|(a, b, _, _)| (*a, *b) == (i, j)) {
                    continue;
                }
                let v = ok(r).unwrap_or(0.0);
                cells.push((i, j, v, with_ci(r, BytesPerSec(v).to_string())));
            }
            s.push_str(&heat_map(
                &format!("chart-ssh-matrix-{n}"),
                &format!(
                    "SSH bulk throughput, cipher × MAC{} (darker is faster)",
                    if kex.is_empty() { String::new() } else { format!(", kex {kex}") }
                ),
                "Cells: M = MB/s, G = GB/s (exact values on hover). AEAD ciphers carry their MAC (implicit). Grey: not measured or refused.",
                &rows,
                &cols,
                &cells,
            ));
        }
    }

    // TLS bulk and handshakes.
    for (kind, metric, id, caption) in [
        (
            Kind::TlsBulk,
            Metric::BytesPerSec,
            "chart-tls-bulk",
            "TLS bulk throughput per suite (higher is faster)",
        ),
        (
            Kind::TlsHandshake,
            Metric::HandshakesPerSec,
            "chart-tls-handshake",
            "TLS handshakes per second (higher is faster)",
        ),
    ] {
        let groups = simple_groups(doc, kind, metric);
        if !groups.is_empty() {
            charted.push((kind, metric));
            s.push_str(&bar_chart(
                id,
                caption,
                "Bars are medians; the black whisker is the 95% interval.",
                &groups,
                None,
            ));
        }
    }

    // Anything else measured (SSH handshakes, TLS latencies, CPU per GB ...).
    let mut rest: Vec<(Kind, Metric)> = Vec::new();
    for r in &doc.results {
        let k = (r.kind, r.metric);
        if r.metric != Metric::Accepted && ok(r).is_some() && !charted.contains(&k) && !rest.contains(&k) {
            rest.push(k);
        }
    }
    for (n, (kind, metric)) in rest.into_iter().enumerate() {
        let groups = simple_groups(doc, kind, metric);
        let kind_name = serde_json::to_value(kind)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let metric_name = serde_json::to_value(metric)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let better = if metric == Metric::Seconds { "lower" } else { "higher" };
        s.push_str(&bar_chart(
            &format!("chart-other-{n}"),
            &format!("{kind_name}: {metric_name} ({better} is better)"),
            "Bars are medians; the black whisker is the 95% interval.",
            &groups,
            None,
        ));
    }

    if s.is_empty() {
        return String::new();
    }
    format!("<section id=\"charts\">\n<h2>Charts</h2>\n{s}</section>\n")
}

/// One bar per result of a kind and metric, labelled by its subject.
fn simple_groups(doc: &Document, kind: Kind, metric: Metric) -> Vec<Group> {
    let mut groups = Vec::new();
    for r in doc.results.iter().filter(|r| r.kind == kind && r.metric == metric) {
        if let Some(b) = bar_of(r, "median") {
            let label = subject_label(r);
            let label = if groups.iter().any(|g: &Group| g.label == label) {
                format!("{label} #{}", groups.len() + 1)
            } else {
                label
            };
            push_bar(&mut groups, &label, b);
        }
    }
    groups
}

// ---------------------------------------------------------------- verdicts, config

fn level_badge(level: &str) -> String {
    let l = esc(level);
    format!("<span class=\"level level-{l}\">{l}</span>")
}

fn references(v: &Value) -> String {
    let refs: Vec<String> = v
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| {
                    let id = r["id"].as_str().unwrap_or("");
                    let title = r["title"].as_str().unwrap_or("");
                    match r["url"].as_str().filter(|u| u.starts_with("https://") || u.starts_with("http://")) {
                        Some(url) => format!("<a href=\"{}\" title=\"{}\">{}</a>", esc(url), esc(title), esc(id)),
                        None => format!("<span title=\"{}\">{}</span>", esc(title), esc(id)),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    if refs.is_empty() {
        String::new()
    } else {
        format!(" <span class=\"muted\">[{}]</span>", refs.join(", "))
    }
}

fn verdicts_section(doc: &Document) -> String {
    if doc.verdicts.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<section id=\"verdicts\">\n<h2>Security verdicts</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th>subject</th><th>kind</th><th>level</th><th>reasons and sources</th></tr></thead>\n<tbody>\n",
    );
    for v in &doc.verdicts {
        let name = v["subject"]["name"].as_str().unwrap_or("?");
        let domain = v["subject"]["domain"].as_str().unwrap_or("");
        let level = v["level"].as_str().unwrap_or("unrated");
        let mut reasons = String::from("<ul class=\"reasons\">");
        for r in v["reasons"].as_array().into_iter().flatten() {
            let _ = write!(
                reasons,
                "<li>{}{}</li>",
                esc(r["text"].as_str().unwrap_or("")),
                references(&r["references"])
            );
        }
        for o in v["opinions"].as_array().into_iter().flatten() {
            let _ = write!(
                reasons,
                "<li>{} rates it {}: {}{}</li>",
                esc(o["source"]["title"]
                    .as_str()
                    .or(o["source"]["id"].as_str())
                    .unwrap_or("another source")),
                esc(o["level"].as_str().unwrap_or("")),
                esc(o["reason"]["text"].as_str().unwrap_or("")),
                references(&o["reason"]["references"])
            );
        }
        if let Some(n) = v["note"].as_str() {
            let _ = write!(reasons, "<li>{}</li>", esc(n));
        }
        reasons.push_str("</ul>");
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"wrap\">{reasons}</td></tr>",
            esc(name),
            esc(domain),
            level_badge(level)
        );
    }
    s.push_str("</tbody></table></div>\n");
    let warnings = verdict_warnings(doc);
    if !warnings.is_empty() {
        s.push_str("<h3>Warnings</h3>\n<ul>\n");
        for w in warnings {
            let _ = writeln!(s, "<li>{}</li>", esc(&w));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</section>\n");
    s
}

fn recommendations_section(doc: &Document) -> String {
    if doc.recommendations.is_empty() {
        return String::new();
    }
    let mut s = String::from("<section id=\"recommendations\">\n<h2>Recommended configuration</h2>\n");
    let mut ranked_protocols: Vec<String> = Vec::new();
    for r in &doc.recommendations {
        let protocol = r["protocol"].as_str().unwrap_or("");
        if !ranked_protocols.iter().any(|p| p == protocol) {
            ranked_protocols.push(protocol.to_string());
            for ranking in r["rankings"].as_array().into_iter().flatten() {
                s.push_str(&ranking_table(ranking));
            }
        }
    }
    for r in &doc.recommendations {
        let _ = writeln!(
            s,
            "<h3>{} · {}</h3>\n<p class=\"muted\">{} · policy {}</p>",
            esc(r["target"].as_str().unwrap_or("")),
            esc(r["protocol"].as_str().unwrap_or("")),
            esc(r["location"].as_str().unwrap_or("")),
            esc(r["policy"].as_str().unwrap_or(""))
        );
        let lines: Vec<String> = r["lines"]
            .as_array()
            .map(|a| a.iter().filter_map(|l| l.as_str()).map(esc).collect())
            .unwrap_or_default();
        let _ = writeln!(s, "<pre class=\"config\"><code>{}</code></pre>", lines.join("\n"));
    }
    s.push_str("</section>\n");
    s
}

fn ranking_table(r: &Value) -> String {
    let list = r["list"].as_str().unwrap_or("");
    let metric = r["metric"].as_str().unwrap_or("");
    let ranked = r["ranked"].as_array().cloned().unwrap_or_default();
    if ranked.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "<h3>{} (fastest first)</h3>\n<div class=\"scroll\"><table>\n<thead><tr><th>rank</th><th>option</th><th>level</th><th>median</th><th>measured as</th></tr></thead><tbody>\n",
        esc(list)
    );
    for x in &ranked {
        let rank = x["rank"].as_u64().unwrap_or(0);
        let tied = if x["tied"].as_bool() == Some(true) { "=" } else { "" };
        let _ = writeln!(
            s,
            "<tr><td>{rank}{tied}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(x["name"].as_str().unwrap_or("")),
            level_badge(x["level"].as_str().unwrap_or("unrated")),
            esc(&x["median"]
                .as_f64()
                .map(|v| crate::recommend::figure(metric, v))
                .unwrap_or_default()),
            esc(x["basis"].as_str().unwrap_or(""))
        );
    }
    s.push_str("</tbody></table></div>\n");
    for (key, label) in [("fastest_refused", "fastest refused"), ("fastest_insecure", "fastest insecure")] {
        if let Some(f) = r[key].as_object() {
            let _ = writeln!(
                s,
                "<p class=\"note\">{label}: {} ({}) {}</p>",
                esc(f.get("name").and_then(|v| v.as_str()).unwrap_or("")),
                esc(f.get("level").and_then(|v| v.as_str()).unwrap_or("")),
                esc(&f
                    .get("median")
                    .and_then(|v| v.as_f64())
                    .map(|v| crate::recommend::figure(metric, v))
                    .unwrap_or_default())
            );
        }
    }
    s
}

// ---------------------------------------------------------------- tables

pub(crate) fn html_table(t: &Table) -> String {
    let mut s = format!("<h3>{}</h3>\n<div class=\"scroll\"><table>\n<thead><tr>", esc(&t.title));
    for h in &t.header {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for row in &t.rows {
        s.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let class = if i >= 2 { " class=\"num\"" } else { "" };
            let _ = write!(s, "<td{class}>{}</td>", esc(c));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
    for n in &t.notes {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", esc(n));
    }
    s
}

/// Every result, whatever its kind: the table no other view leaves out.
fn generic_table(doc: &Document) -> Table {
    let fmt = |r: &ResultRecord, v: Option<f64>| v.map(|v| metric_text(r.metric, v)).unwrap_or_default();
    let rows = doc
        .results
        .iter()
        .map(|r| {
            vec![
                serde_json::to_value(r.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                subject_label(r),
                serde_json::to_value(r.metric)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                match r.status {
                    Status::Ok => "ok".to_string(),
                    Status::Unsupported => format!("unsupported: {}", r.reason.clone().unwrap_or_default()),
                    Status::Failed => format!("failed: {}", r.reason.clone().unwrap_or_default()),
                },
                fmt(r, r.median),
                fmt(r, r.ci95_low),
                fmt(r, r.ci95_high),
                r.samples.map(|n| n.to_string()).unwrap_or_default(),
                r.cv.map(|c| format!("{:.1}%", c * 100.0)).unwrap_or_default(),
            ]
        })
        .collect();
    Table {
        title: "All results".into(),
        header: [
            "kind",
            "subject",
            "metric",
            "status",
            "median",
            "95% CI low",
            "95% CI high",
            "n",
            "CV",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec!["The same records as the JSON document's results[].".into()],
    }
}

fn tables_section(doc: &Document) -> String {
    let mut s = String::from("<section id=\"tables\">\n<h2>Results</h2>\n");
    if let Some(t) = primitive_table(doc) {
        s.push_str(&html_table(&t));
    }
    for t in file_tables(doc) {
        s.push_str(&html_table(&t));
    }
    let kdf = kdf_lines(doc);
    if !kdf.is_empty() {
        s.push_str("<ul>\n");
        for l in kdf {
            let _ = writeln!(s, "<li>{}</li>", esc(&l));
        }
        s.push_str("</ul>\n");
    }
    for t in tls_tables(doc) {
        s.push_str(&html_table(&t));
    }
    for t in ssh_tables(doc) {
        s.push_str(&html_table(&t));
    }
    if !doc.results.is_empty() {
        s.push_str(&html_table(&generic_table(doc)));
    }
    s.push_str("</section>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(esc("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }

    fn result(kind: Kind, metric: Metric, subject: crate::model::Subject, median: f64) -> ResultRecord {
        let mut r = ResultRecord::accepted(kind, subject, true, None);
        r.metric = metric;
        for v in [&mut r.median, &mut r.mean, &mut r.min, &mut r.max] {
            *v = Some(median);
        }
        r.ci95_low = Some(median * 0.9);
        r.ci95_high = Some(median * 1.1);
        r.samples = Some(5);
        r
    }

    fn doc(results: Vec<ResultRecord>) -> Document {
        let mut d: Document = serde_json::from_value(serde_json::json!({
            "schema": "cipherbench/1",
            "run": {"id": "r<1>", "started_at": "t", "status": "complete", "command": "ssh",
                    "host": {"cpu_model": "CPU \"<b>\"", "cores": 2, "cpu_flags": [], "kernel": "k", "arch": "x86_64", "hostname": "h&h"},
                    "libraries": {}, "settings": null},
            "results": []
        }))
        .unwrap();
        d.results = results;
        d
    }

    /// `data-value`s of the datum elements inside the figure with this id.
    fn values_in(html: &str, id: &str) -> Vec<f64> {
        let start = html.find(&format!("<figure id=\"{id}\"")).unwrap_or_else(|| panic!("no {id}"));
        let fig = &html[start..start + html[start..].find("</figure>").unwrap()];
        fig.split("class=\"datum\"")
            .skip(1)
            .map(|p| {
                let v = &p[p.find("data-value=\"").unwrap() + 12..];
                v[..v.find('"').unwrap()].parse().unwrap()
            })
            .collect()
    }

    #[test]
    fn ssh_matrix_and_tls_bars_carry_their_values_and_text_is_escaped() {
        use crate::model::Subject;
        let ssh = |c: &str, m: Option<&str>, v: f64| {
            let s = Subject {
                cipher: Some(c.into()),
                mac: m.map(String::from),
                kex: Some("curve25519-sha256".into()),
                ..Subject::default()
            };
            result(Kind::SshBulk, Metric::BytesPerSec, s, v)
        };
        let tls = |suite: &str, kind: Kind, metric: Metric, v: f64| {
            let s = Subject {
                protocol: Some("TLSv1.3".into()),
                suite: Some(suite.into()),
                ..Subject::default()
            };
            result(kind, metric, s, v)
        };
        let d = doc(vec![
            ssh("aes128-ctr", Some("hmac-sha2-256"), 4.0e8),
            ssh("aes128-ctr", Some("umac-64@openssh.com"), 5.0e8),
            ssh("aes128-gcm@openssh.com", None, 6.0e8),
            tls("TLS_AES_128_GCM_SHA256", Kind::TlsBulk, Metric::BytesPerSec, 2.0e9),
            tls("TLS_<AES>", Kind::TlsHandshake, Metric::HandshakesPerSec, 2350.0),
            tls("x", Kind::SshHandshake, Metric::Seconds, 0.05),
        ]);
        let html = render(&d);
        assert_eq!(values_in(&html, "chart-ssh-matrix-0"), vec![4.0e8, 5.0e8, 6.0e8]);
        assert!(html.contains("data-label=\"aes128-gcm@openssh.com\" data-series=\"(implicit)\""));
        assert_eq!(values_in(&html, "chart-tls-bulk"), vec![2.0e9]);
        assert_eq!(values_in(&html, "chart-tls-handshake"), vec![2350.0]);
        assert_eq!(values_in(&html, "chart-other-0"), vec![0.05]);
        assert!(html.contains("TLS_&lt;AES&gt;") && !html.contains("TLS_<AES>"));
        assert!(html.contains("CPU &quot;&lt;b&gt;&quot;") && html.contains("h&amp;h") && html.contains("r&lt;1&gt;"));
    }

    #[test]
    fn nice_ticks_cover_the_maximum() {
        let t = nice_ticks(4.64e9);
        assert!(*t.last().unwrap() >= 4.64e9);
        assert!(t.len() <= 7, "{t:?}");
    }
}
