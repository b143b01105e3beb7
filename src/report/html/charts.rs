//! The charts section: which results are charted and how (primitives by size,
//! file times, the decryption ÷ encryption ratio, the SSH matrix, TLS and the rest).
//! The drawing is in `svg.rs`.

use super::svg::{bar_chart, heat_map, line_chart, Bar, Group, Line};
use super::{metric_text, ok};
use crate::model::{Document, Kind, Metric, ResultRecord};
use crate::report::table::subject_label;
use crate::units::{Bytes, BytesPerSec, Seconds};
use maud::{html, Markup};
use serde_json::Value;

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

/// A decryption ÷ encryption ratio as a bar of the ratio chart.
fn ratio_bar(series: String, d: f64, e: f64) -> Bar {
    let ratio = d / e;
    Bar {
        series,
        value: ratio,
        text: format!("{ratio:.2}"),
        detail: format!("{ratio:.3} (decryption {} ÷ encryption {})", BytesPerSec(d), BytesPerSec(e)),
        ci: None,
    }
}

/// The label of a primitive's line: algorithm, and library and threads when they vary.
fn primitive_key(r: &ResultRecord, multi_lib: bool, multi_thread: bool) -> String {
    let mut s = r.subject.algorithm.clone().unwrap_or_default();
    if multi_lib {
        s.push_str(&format!(" ({})", r.subject.library.as_deref().unwrap_or("openssl")));
    }
    if multi_thread {
        s.push_str(&format!(" ×{}", r.subject.threads.unwrap_or(1)));
    }
    s
}

/// The figures of the charts section as they are made, with the ratio bars that
/// the primitive and file charts gather for one chart of their own.
#[derive(Default)]
struct Charts {
    figures: Vec<Markup>,
    ratios: Vec<Group>,
    charted: Vec<(Kind, Metric)>,
}

pub(super) fn charts_section(doc: &Document) -> Markup {
    let mut c = Charts::default();
    c.primitives(doc);
    c.files(doc);
    if !c.ratios.is_empty() {
        c.figures.push(bar_chart(
            "chart-enc-dec-ratio",
            "Encryption time ÷ decryption time",
            "Above 1: decryption is faster (CBC encryption cannot run in parallel; the study found about 2.4× for AES-CBC).",
            &c.ratios,
            Some(1.0),
        ));
    }
    c.ssh(doc);
    c.tls(doc);
    c.rest(doc);
    if c.figures.is_empty() {
        return html! {};
    }
    html! {
        section #charts { "\n" h2 { "Charts" } "\n" @for f in &c.figures { (f) } }
        "\n"
    }
}

impl Charts {
    /// Primitives: throughput at the largest size, then against block size.
    fn primitives(&mut self, doc: &Document) {
        let prim: Vec<&ResultRecord> = doc
            .results
            .iter()
            .filter(|r| r.kind == Kind::Primitive && r.metric == Metric::BytesPerSec && ok(r).is_some())
            .collect();
        if prim.is_empty() {
            return;
        }
        self.charted.push((Kind::Primitive, Metric::BytesPerSec));
        let multi_lib = prim.iter().any(|r| r.subject.library.as_deref().unwrap_or("openssl") != "openssl");
        let multi_thread = prim.iter().any(|r| r.subject.threads.unwrap_or(1) > 1);
        let key = |r: &ResultRecord| primitive_key(r, multi_lib, multi_thread);
        let largest = prim.iter().filter_map(|r| r.subject.bytes).max().unwrap_or(0);
        let mut groups = Vec::new();
        for r in prim.iter().filter(|r| r.subject.bytes == Some(largest)) {
            if let Some(b) = bar_of(r, r.subject.op.as_deref().unwrap_or("")) {
                push_bar(&mut groups, &key(r), b);
            }
        }
        self.figures.push(bar_chart(
            "chart-primitive-throughput",
            &format!("Primitive throughput at {} (higher is faster)", Bytes(largest)),
            "Bars are medians; the black whisker is the 95% interval.",
            &groups,
            None,
        ));
        let mut lines: Vec<Line> = Vec::new();
        for r in prim.iter().filter(|r| r.subject.op.as_deref() != Some("decrypt")) {
            let (Some(b), Some(v)) = (r.subject.bytes, ok(r)) else { continue };
            let (name, point) = (key(r), (b as f64, v, BytesPerSec(v).to_string()));
            match lines.iter_mut().find(|l| l.name == name) {
                Some(l) => l.points.push(point),
                None => lines.push(Line { name, points: vec![point] }),
            }
        }
        if lines.iter().any(|l| l.points.len() > 1) {
            self.figures.extend(line_chart(
                "chart-primitive-sizes",
                "Throughput against block size (encryption, digest or MAC)",
                "One line per algorithm; each point is a median.",
                &lines,
                &|v| BytesPerSec(v).to_string(),
            ));
        }
        for label in groups.iter().map(|g| g.label.clone()) {
            let find = |op: &str| {
                prim.iter()
                    .find(|r| r.subject.bytes == Some(largest) && r.subject.op.as_deref() == Some(op) && key(r) == label)
                    .and_then(|r| ok(r))
            };
            if let (Some(e), Some(d)) = (find("encrypt"), find("decrypt")) {
                if e > 0.0 {
                    push_bar(
                        &mut self.ratios,
                        &label,
                        ratio_bar(format!("primitive at {}", Bytes(largest)), d, e),
                    );
                }
            }
        }
    }

    /// Files: the study's histograms, encryption and decryption time per algorithm
    /// and mode, one chart per input (path, library, I/O mode, size).
    fn files(&mut self, doc: &Document) {
        let files: Vec<&ResultRecord> = doc
            .results
            .iter()
            .filter(|r| r.kind == Kind::File && r.metric == Metric::BytesPerSec && r.subject.path.is_some())
            .filter(|r| matches!(r.subject.op.as_deref(), Some("encrypt" | "decrypt")))
            .collect();
        if !files.is_empty() {
            self.charted.push((Kind::File, Metric::BytesPerSec));
        }
        let set_of = |r: &ResultRecord| {
            (
                r.subject.path.clone(),
                r.subject.library.clone(),
                r.subject.mode.clone(),
                r.subject.bytes,
            )
        };
        let mut sets = Vec::new();
        for r in &files {
            if !sets.contains(&set_of(r)) {
                sets.push(set_of(r));
            }
        }
        for (n, set) in sets.iter().enumerate() {
            let members: Vec<&ResultRecord> = files.iter().copied().filter(|r| set_of(r) == *set).collect();
            let what = format!(
                "{} ({}), {}, {} mode",
                set.0.as_deref().unwrap_or(""),
                Bytes(set.3.unwrap_or(0)),
                set.1.as_deref().unwrap_or(""),
                set.2.as_deref().unwrap_or("")
            );
            self.file_set(n, &what, set.3.unwrap_or(0) as f64, &members);
        }
    }

    /// One input's chart of seconds per pass, and its ratio bars.
    fn file_set(&mut self, n: usize, what: &str, size: f64, members: &[&ResultRecord]) {
        let mut groups = Vec::new();
        for r in members {
            let Some(v) = ok(r).filter(|v| *v > 0.0) else { continue };
            let secs = size / v;
            let ci = r
                .ci95_low
                .zip(r.ci95_high)
                .filter(|(lo, _)| *lo > 0.0)
                .map(|(lo, hi)| (size / hi, size / lo));
            let bar = Bar {
                series: r.subject.op.clone().unwrap_or_default(),
                value: secs,
                text: Seconds(secs).to_string(),
                detail: format!("{} per pass ({}), n={}", Seconds(secs), BytesPerSec(v), r.samples.unwrap_or(0)),
                ci,
            };
            push_bar(&mut groups, r.subject.algorithm.as_deref().unwrap_or(""), bar);
        }
        if !groups.is_empty() {
            self.figures.push(bar_chart(
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
                    push_bar(&mut self.ratios, alg, ratio_bar(format!("file {what}"), d, e));
                }
            }
        }
    }

    /// SSH: a cipher × MAC heat map per kex.
    fn ssh(&mut self, doc: &Document) {
        let ssh: Vec<&ResultRecord> = doc
            .results
            .iter()
            .filter(|r| r.kind == Kind::SshBulk && r.metric == Metric::BytesPerSec && ok(r).is_some())
            .collect();
        if ssh.is_empty() {
            return;
        }
        self.charted.push((Kind::SshBulk, Metric::BytesPerSec));
        let mut kexes: Vec<String> = ssh.iter().map(|r| r.subject.kex.clone().unwrap_or_default()).collect();
        kexes.sort();
        kexes.dedup();
        for (n, kex) in kexes.iter().enumerate() {
            let mut rows: Vec<String> = Vec::new();
            let mut cols: Vec<String> = Vec::new();
            let mut cells = Vec::new();
            for r in ssh.iter().filter(|r| r.subject.kex.clone().unwrap_or_default() == *kex) {
                let c = r.subject.cipher.clone().unwrap_or_default();
                let m = r.subject.mac.clone().unwrap_or_else(|| "(implicit)".into());
                let i = index_of(&mut rows, c);
                let j = index_of(&mut cols, m);
                if cells.iter().any(|(a, b, _, _)| (*a, *b) == (i, j)) {
                    continue;
                }
                let v = ok(r).unwrap_or(0.0);
                cells.push((i, j, v, with_ci(r, BytesPerSec(v).to_string())));
            }
            let of_kex = if kex.is_empty() { String::new() } else { format!(", kex {kex}") };
            self.figures.push(heat_map(
                &format!("chart-ssh-matrix-{n}"),
                &format!("SSH bulk throughput, cipher × MAC{of_kex} (darker is faster)"),
                "Cells: M = MB/s, G = GB/s (exact values on hover). AEAD ciphers carry their MAC (implicit). Grey: not measured or refused.",
                &rows,
                &cols,
                &cells,
            ));
        }
    }

    /// TLS bulk and handshakes.
    fn tls(&mut self, doc: &Document) {
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
            let (groups, common) = simple_groups(doc, kind, metric);
            if !groups.is_empty() {
                self.charted.push((kind, metric));
                self.figures.push(bar_chart(id, caption, &chart_note(&common), &groups, None));
            }
        }
    }

    /// Anything else measured (SSH handshakes, TLS latencies, CPU per GB ...).
    fn rest(&mut self, doc: &Document) {
        let mut rest: Vec<(Kind, Metric)> = Vec::new();
        for r in &doc.results {
            let k = (r.kind, r.metric);
            if r.metric != Metric::Accepted && ok(r).is_some() && !self.charted.contains(&k) && !rest.contains(&k) {
                rest.push(k);
            }
        }
        for (n, (kind, metric)) in rest.into_iter().enumerate() {
            let (groups, common) = simple_groups(doc, kind, metric);
            self.figures.push(bar_chart(
                &format!("chart-other-{n}"),
                &kind_metric_words(kind, metric),
                &chart_note(&common),
                &groups,
                None,
            ));
        }
    }
}

/// Where `v` is in `list`, added at the end when it is not there yet.
fn index_of(list: &mut Vec<String>, v: String) -> usize {
    match list.iter().position(|x| *x == v) {
        Some(i) => i,
        None => {
            list.push(v);
            list.len() - 1
        }
    }
}

/// A subject's fields as (key, text): sizes and threads in words.
fn subject_fields(r: &ResultRecord) -> Vec<(String, String)> {
    match serde_json::to_value(&r.subject) {
        Ok(Value::Object(o)) => o
            .into_iter()
            .map(|(k, v)| {
                let text = match (k.as_str(), v.as_u64()) {
                    ("bytes", Some(n)) => Bytes(n).to_string(),
                    ("threads", Some(1)) => "1 thread".to_string(),
                    ("threads", Some(n)) => format!("{n} threads"),
                    _ => v.as_str().map(String::from).unwrap_or_else(|| v.to_string()),
                };
                (k, text)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// One bar per result of a kind and metric, labelled by what differs between them
/// (`X25519 · rsa-2048`), with what they all share said once (`TLSv1.3 · openssl`).
fn simple_groups(doc: &Document, kind: Kind, metric: Metric) -> (Vec<Group>, String) {
    let results: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == kind && r.metric == metric && ok(r).is_some())
        .collect();
    let all: Vec<Vec<(String, String)>> = results.iter().map(|r| subject_fields(r)).collect();
    let same = |key: &str, value: &str| all.len() > 1 && all.iter().all(|f| f.iter().any(|(k, v)| k == key && v == value));
    let mut common: Vec<String> = Vec::new();
    if let Some(first) = all.first() {
        for (k, v) in first {
            // The OpenSSL name repeats the suite; a shared one is not worth a word.
            if same(k, v) && k != "openssl_name" && !common.contains(v) {
                common.push(v.clone());
            }
        }
    }
    let mut groups = Vec::new();
    for (r, f) in results.iter().zip(&all) {
        let Some(b) = bar_of(r, "median") else { continue };
        let varying: Vec<&str> = f
            .iter()
            // The OpenSSL name says the suite again.
            .filter(|(k, v)| {
                let repeats_suite = k == "openssl_name" && f.iter().any(|(k2, _)| k2 == "suite");
                !(same(k, v) || repeats_suite)
            })
            .map(|(_, v)| v.as_str())
            .collect();
        let label = if varying.is_empty() || all.len() < 2 {
            subject_label(r)
        } else {
            varying.join(" · ")
        };
        let label = if groups.iter().any(|g: &Group| g.label == label) {
            format!("{label} #{}", groups.len() + 1)
        } else {
            label
        };
        push_bar(&mut groups, &label, b);
    }
    (groups, common.join(" · "))
}

/// The note under a bar chart: how to read it, and what every bar shares.
fn chart_note(common: &str) -> String {
    let mut note = String::from("Bars are medians; the black whisker is the 95% interval.");
    if !common.is_empty() {
        note.push_str(&format!(" Every bar: {common}."));
    }
    note
}

/// A kind and metric in words, for a chart's caption.
fn kind_metric_words(kind: Kind, metric: Metric) -> String {
    let kind = kind.title();
    let (metric, better) = match metric {
        Metric::BytesPerSec => ("throughput", "higher is faster"),
        Metric::HandshakesPerSec => ("handshakes per second", "higher is faster"),
        Metric::OpsPerSec => ("operations per second", "higher is faster"),
        Metric::Seconds => ("time", "lower is faster"),
        Metric::Accepted => ("accepted", "1 is accepted"),
    };
    format!("{kind} {metric} ({better})")
}
