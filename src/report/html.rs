//! The HTML report: one self-contained file (inline CSS and inline SVG, nothing
//! fetched, no scripts) that reads on a phone and prints on paper.
//!
//! Every element is written by `maud`'s `html!`, which escapes every spliced value
//! (`&`, `<`, `>`, `"`): text from outside (an export, a peer, a library) cannot
//! become markup, whichever function writes it. The only unescaped text is the
//! style sheet, a constant of ours. The finished page then passes through
//! [`finish`], which escapes control and invisible format characters the way the
//! terminal does, so none reaches the file raw.
//!
//! The charts are in `html/charts.rs` (drawn by `html/svg.rs`), the verdicts and
//! tables in `html/tables.rs`.

mod charts;
mod svg;
mod tables;
#[cfg(test)]
mod tests;

pub(crate) use tables::html_table;

use crate::model::{Document, Kind, Metric, Now, RankedRecord, RankingRecord, RecommendationRecord, ResultRecord, Status};
use crate::units::{Bytes, BytesPerSec, Seconds};
use anyhow::Result;
use maud::{html, Markup, PreEscaped, DOCTYPE};
use serde_json::Value;
use std::path::PathBuf;

/// The style sheet: ours, constant, and the one text written unescaped (escaping
/// would break its quotes and `>` selectors inside `<style>`).
const CSS: &str = include_str!("html/report.css");

/// Where the main job keeps its reports: beside the default history database,
/// `$XDG_DATA_HOME/cipherbench/reports/`, made 0700 when missing and checked to
/// be private like the history's folder (`store::default_dir`).
pub fn reports_dir() -> Result<PathBuf, crate::error::UsageError> {
    crate::store::default_dir(&["reports"], true)
}

/// Writes the HTML report of `doc` to `reports_dir()/<run id>.html` (atomically) and
/// returns the path.
pub fn write_report(doc: &Document) -> Result<PathBuf> {
    let dir = reports_dir()?;
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

/// Markup as the text of a file. Escaped markup holds outside text as it came, so a
/// control or invisible format character (ESC, CR, NEL, U+2028, a bidi override) in
/// it comes out as `\x1b` or `\u{202e}`, as on a terminal. Line feeds and tabs stay:
/// they are only white space to HTML, and a config file's diff keeps its indents.
pub(crate) fn finish(m: Markup) -> String {
    let text = m.into_string();
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for (j, part) in line.split('\t').enumerate() {
            if j > 0 {
                out.push('\t');
            }
            out.push_str(&crate::untrusted::shown(part));
        }
    }
    out
}

/// The whole report, answer first: what to use (with ties named), what changing
/// would gain, the lines to paste; then the charts, the verdicts with their reasons
/// and every table; the machine and the settings last, folded away.
pub fn render(doc: &Document) -> String {
    let title = format!("cipherbench {} · {} · run {}", doc.run.command, doc.run.host.hostname, doc.run.id);
    let page = html! {
        (DOCTYPE) "\n"
        html lang="en" {
            "\n"
            head {
                "\n" meta charset="utf-8";
                "\n" meta name="viewport" content="width=device-width, initial-scale=1";
                "\n" meta name="generator" content=(format!("cipherbench {}", env!("CARGO_PKG_VERSION")));
                "\n" title { (title) }
                "\n" style { (PreEscaped(CSS)) }
                "\n"
            }
            "\n"
            body {
                "\n"
                (top(doc))
                (answer_section(doc))
                (gain_section(doc))
                (config_section(doc))
                (charts::charts_section(doc))
                (tables::verdicts_section(doc))
                (tables::tables_section(doc))
                (machine_section(doc))
                p.note {
                    "Made by cipherbench. Figures are medians of adaptive samples with distribution-free 95% intervals; \
    results whose intervals overlap are tied, not ranked."
                }
                "\n"
            }
            "\n"
        }
        "\n"
    };
    finish(page)
}

/// A ranking list's name as a heading ("TLS 1.3 cipher suites", not `tls13_suites`).
pub fn list_heading(list: &str) -> String {
    match list {
        "tls13_suites" => "TLS 1.3 cipher suites".into(),
        "tls12_suites" => "TLS 1.2 cipher suites".into(),
        "groups" => "TLS key exchange groups".into(),
        "ssh_ciphers" => "SSH ciphers".into(),
        "ssh_macs" => "SSH MACs".into(),
        "ssh_kex" => "SSH key exchange".into(),
        "ssh_hostkeys" => "SSH host keys".into(),
        other => {
            let t = crate::recommend::list_title(other);
            if t == other {
                words(other)
            } else {
                t.to_string()
            }
        }
    }
}

/// A config target's name as a heading ("sshd (server)", not `sshd`).
pub fn target_heading(target: &str) -> String {
    match target {
        "sshd" => "sshd (server)".into(),
        "ssh" => "ssh (client)".into(),
        "nginx" => "nginx (web server)".into(),
        "apache" => "Apache httpd (mod_ssl)".into(),
        "haproxy" => "HAProxy".into(),
        "stunnel" => "stunnel".into(),
        "curl" => "curl (client)".into(),
        "nzbget" => "NZBGet".into(),
        "openssl" => "OpenSSL (system-wide openssl.cnf)".into(),
        "gnutls" => "GnuTLS (priority string)".into(),
        other => other.to_string(),
    }
}

/// `snake_case` or `kebab-case` as words ("budget seconds").
fn words(key: &str) -> String {
    let w = key.replace(['_', '-'], " ");
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => w,
    }
}

/// The crypto CPU flags in words: AES-NI matters most, so it is named.
fn cpu_text(h: &crate::model::Host) -> String {
    let flags = if h.cpu_flags.is_empty() {
        "no crypto instructions".to_string()
    } else if h.cpu_flags.iter().any(|f| f == "aes") {
        "AES instructions".to_string()
    } else {
        "no AES instructions".to_string()
    };
    format!("{}, {} cores, {flags}", h.cpu_model, h.cores)
}

/// The title and one line on where the numbers come from.
fn top(doc: &Document) -> Markup {
    let h = &doc.run.host;
    let policy = doc
        .run
        .settings
        .get("policy")
        .and_then(|v| v.as_str())
        .or_else(|| doc.recommendations.first().map(|r| r.policy.as_str()).filter(|p| !p.is_empty()));
    let libs = super::library_versions(doc);
    let started = doc.run.started_at.replace('T', " ");
    let started = started.trim_end_matches('Z').split('.').next().unwrap_or("");
    let status = match doc.run.status {
        crate::model::RunStatus::Complete => None,
        other => Some(other.as_str()),
    };
    let heading = if doc.recommendations.is_empty() {
        format!("cipherbench {} on {}", doc.run.command, h.hostname)
    } else {
        format!("Fastest secure choices on {}", h.hostname)
    };
    html! {
        header {
            "\n"
            h1 { (heading) @if let Some(s) = status { " " span.level.level-weak { (s) } } }
            "\n"
            p.muted {
                (cpu_text(h))
                @if !libs.is_empty() { " · " (libs.join(", ")) }
                @if let Some(p) = policy { " · policy " b { (p) } }
                " · " (started) " UTC"
            }
            "\n"
        }
        "\n"
    }
}

/// An algorithm name as code that may break after its `_`, `-` and `@` on a phone.
fn code_name(name: &str) -> Markup {
    html! {
        code {
            @for c in name.chars() {
                (c)
                @if matches!(c, '_' | '-' | '@' | ',') { wbr; }
            }
        }
    }
}

/// Names said to be equally good: `a = b = c`, each as code.
fn equals(names: &[String]) -> Markup {
    html! {
        @for (i, n) in names.iter().enumerate() {
            @if i > 0 { " " span.eq { "=" } " " }
            (code_name(n))
        }
    }
}

/// One answer row: what is answered, the choice, and its figure (`ties` when more than one).
fn pick_row(what: &str, choice: Markup, figure: &str, ties: usize) -> Markup {
    html! {
        div.pick {
            div.what { (what) }
            div.choice { (choice) }
            div.fig { (figure) @if ties > 1 { span.tie { (ties) " tied" } } }
        }
        "\n"
    }
}

/// A security level as a coloured badge. The class is one of ours whatever the
/// document says: a level we do not know is styled as unrated (and shown as given).
fn level_badge(level: &str) -> Markup {
    let class = match level {
        "recommended" | "secure" | "weak" | "insecure" => level,
        _ => "unrated",
    };
    html! { span class=(format!("level level-{class}")) { (level) } }
}

/// What the policy costs in a ranking: the fastest refused and the fastest insecure
/// option, with how much faster they would be.
fn pick_costs(ranking: &RankingRecord, first: &RankedRecord) -> Vec<Markup> {
    let mut notes = Vec::new();
    let refused = ranking.fastest_refused.as_ref();
    for (f, what) in [(refused, "refused by the policy"), (ranking.fastest_insecure.as_ref(), "insecure")] {
        let Some(f) = f else { continue };
        if what == "insecure" && refused.is_some_and(|r| r.name == f.name) {
            continue;
        }
        let (o, b) = (f.median, first.median);
        let speedup = (o > 0.0 && b > 0.0).then(|| if ranking.higher_is_better { o / b } else { b / o });
        let gain = match speedup {
            _ if f.tied_with_best => "no measurable gain".to_string(),
            Some(x) if x >= 1.0 => format!("{:.0}% faster", (x - 1.0) * 100.0),
            Some(x) => format!("{:.0}% slower anyway", (1.0 - x) * 100.0),
            None => String::new(),
        };
        notes.push(html! { "Fastest " (what) ": " (code_name(&f.name)) " " (level_badge(&f.level)) " " (gain) });
    }
    notes
}

/// One ranking list's best choice, as the answer shows it.
fn pick(ranking: &RankingRecord) -> Option<Markup> {
    let heading = list_heading(&ranking.list);
    let best: Vec<&RankedRecord> = ranking.ranked.iter().filter(|x| x.rank == 1).collect();
    let Some(first) = best.first() else {
        let choice = html! { "not measured in this run (raise " code.nb { "--budget" } ")" };
        return (!ranking.unmeasured.is_empty()).then(|| pick_row(&heading, choice, "", 0));
    };
    let raw: Vec<&str> = best.iter().map(|x| x.name.as_str()).collect();
    let names = super::answer::group_auth(&raw);
    let figure = crate::recommend::figure(&ranking.metric, first.median);
    let costs = pick_costs(ranking, first);
    let choice = html! {
        (equals(&names))
        @if !costs.is_empty() {
            div.cost { @for (i, c) in costs.iter().enumerate() { @if i > 0 { br; } (c) } }
        }
    };
    Some(pick_row(&heading, choice, &figure, best.len()))
}

/// The answer: the fastest choice per protocol that passes the policy, ties named.
/// A run without rankings (`speed`, `file`) answers with its fastest primitives.
fn answer_section(doc: &Document) -> Markup {
    let mut picks: Vec<Markup> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for ranking in doc.recommendations.iter().flat_map(|r| &r.rankings) {
        if seen.contains(&ranking.list.as_str()) {
            continue;
        }
        seen.push(&ranking.list);
        picks.extend(pick(ranking));
    }
    if picks.is_empty() {
        for f in super::table::fastest(doc) {
            let mut names = vec![f.algorithm.clone()];
            names.extend(f.tied_with.iter().cloned());
            let what = format!("{} at {}", words(f.category), Bytes(f.bytes));
            picks.push(pick_row(&what, equals(&names), &BytesPerSec(f.median).to_string(), names.len()));
        }
    }
    if picks.is_empty() {
        picks = file_picks(doc);
    }
    if picks.is_empty() {
        return html! {
            section #answer {
                "\n" h2 { "The answer" }
                "\n" p { "This run has nothing to rank: its figures are in the tables below." }
                "\n"
            }
            "\n"
        };
    }
    let times = doc.recommendations.iter().flat_map(|r| &r.rankings).any(|x| !x.higher_is_better);
    html! {
        section #answer {
            "\n" h2 { "The answer" }
            "\n" div.picks { "\n" @for p in &picks { (p) } }
            "\n" (missing_ssh(doc))
            p.note {
                "Tied means the 95% intervals overlap: the measurements cannot tell them apart, so any of them is as fast here."
                @if times { " Handshake figures are times: lower is better." }
            }
            "\n"
        }
        "\n"
    }
}

/// The main job measures SSH too: say so when none of it made the answer.
fn missing_ssh(doc: &Document) -> Markup {
    if doc.run.command != "run" || doc.recommendations.is_empty() || doc.recommendations.iter().any(|r| r.protocol == "ssh") {
        return html! {};
    }
    let why = doc.run.settings["ssh"]
        .as_str()
        .filter(|s| s.starts_with("SSH skipped"))
        .map(String::from)
        .unwrap_or_else(|| "SSH: the budget ran out before any SSH result (raise `--budget`)".into());
    html! { p.note { (inline_code(&why)) } "\n" }
}

/// The judge's level for an option, by name or alias (case-insensitive).
fn level_of<'a>(doc: &'a Document, name: &str) -> Option<&'a str> {
    doc.verdicts
        .iter()
        .find(|v| v.names(name))
        .map(|v| v.level.as_str())
        .filter(|l| !l.is_empty())
}

/// (path, I/O mode, size, operation): a file run's inputs, one answer each.
type Input = (Option<String>, Option<String>, Option<u64>, Option<String>);

fn input_of(r: &ResultRecord) -> Input {
    (
        r.subject.path.clone(),
        r.subject.mode.clone(),
        r.subject.bytes,
        r.subject.op.clone(),
    )
}

/// A file run's answer: per input and operation, the fastest cipher and those tied
/// with it (their 95% intervals overlap the fastest one's).
fn file_picks(doc: &Document) -> Vec<Markup> {
    let files: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::File && r.metric == Metric::BytesPerSec && ok(r).is_some())
        .filter(|r| matches!(r.subject.op.as_deref(), Some("encrypt" | "decrypt")))
        .collect();
    let mut keys: Vec<Input> = Vec::new();
    for r in &files {
        let k = input_of(r);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.iter()
        .filter_map(|k| {
            let set: Vec<&ResultRecord> = files.iter().copied().filter(|r| input_of(r) == *k).collect();
            file_pick(doc, k, &set)
        })
        .collect()
}

/// The answer for one input of a file run: the fastest cipher the judge accepts.
fn file_pick(doc: &Document, input: &Input, set: &[&ResultRecord]) -> Option<Markup> {
    let (path, mode, bytes, op) = input;
    let by_speed = |a: &&ResultRecord, b: &&ResultRecord| ok(a).partial_cmp(&ok(b)).unwrap_or(std::cmp::Ordering::Equal);
    let fastest_any = set.iter().copied().max_by(by_speed);
    // Only what the judge does not call weak or insecure can be the answer.
    let acceptable = |r: &ResultRecord| {
        !matches!(
            level_of(doc, r.subject.algorithm.as_deref().unwrap_or("")),
            Some("weak" | "insecure")
        )
    };
    let best = set.iter().copied().filter(|r| acceptable(r)).max_by(by_speed)?;
    let rejected = fastest_any.filter(|f| !acceptable(f) && ok(f) > ok(best));
    let low = best.ci95_low.unwrap_or(f64::INFINITY);
    let mut tied: Vec<&ResultRecord> = set
        .iter()
        .copied()
        .filter(|r| acceptable(r) && r.ci95_high.is_some_and(|h| h >= low))
        .collect();
    tied.sort_by(|a, b| ok(b).partial_cmp(&ok(a)).unwrap_or(std::cmp::Ordering::Equal));
    let names: Vec<String> = tied.iter().map(|r| r.subject.algorithm.clone().unwrap_or_default()).collect();
    let name = path
        .as_deref()
        .map(|p| {
            std::path::Path::new(p)
                .file_name()
                .map_or(p.to_string(), |f| f.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let what = format!(
        "File {} · {name} ({}, {} mode)",
        op.as_deref().unwrap_or(""),
        Bytes(bytes.unwrap_or(0)),
        mode.as_deref().unwrap_or("")
    );
    let choice = html! {
        (equals(&names))
        @if let Some(f) = rejected {
            @let alg = f.subject.algorithm.as_deref().unwrap_or("");
            div.cost {
                "Fastest of all: " (code_name(alg)) " " (level_badge(level_of(doc, alg).unwrap_or("unrated")))
                " " (BytesPerSec(ok(f).unwrap_or(0.0)))
            }
        }
    };
    let figure = BytesPerSec(ok(best).unwrap_or(0.0)).to_string();
    Some(pick_row(&what, choice, &figure, names.len()))
}

/// A two-column table of (label, text) rows.
fn kv_table(rows: &[(String, String)]) -> Markup {
    html! {
        table.kv {
            tbody {
                "\n"
                @for (k, v) in rows { tr { th { (k) } td { (v) } } "\n" }
            }
        }
        "\n"
    }
}

/// What changing would gain: the before/after of the configuration installed here,
/// when the run measured one (`recommendations[].now`, `gain` and `diff`). A run
/// without one says so, so the section is always where a reader looks for it.
fn gain_section(doc: &Document) -> Markup {
    if doc.recommendations.is_empty() {
        return html! {};
    }
    let with_diff: Vec<&RecommendationRecord> = doc.recommendations.iter().filter(|r| r.annotated()).collect();
    html! {
        section #gain {
            "\n" h2 { "What changing would gain" } "\n"
            @if with_diff.is_empty() {
                p.muted {
                    "This run did not read a configuration installed here, so it has no before and after: \
    the lines below are what to use, measured against the other options."
                }
                "\n"
            }
            @for r in &with_diff { (gain_of(doc, r)) }
        }
        "\n"
    }
}

/// One target's before and after, and the change as a unified diff.
fn gain_of(doc: &Document, r: &RecommendationRecord) -> Markup {
    // What the recommendation negotiates with the same peer, when the diff says.
    let negotiated = doc.run.settings["installed_diff"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["software"] == r.target.as_str())
        .and_then(|d| negotiated_label(&d["recommended"]));
    let lists = |m: &std::collections::BTreeMap<String, Vec<String>>| {
        m.iter()
            .map(|(k, v)| format!("{}: {}", words(k).to_lowercase(), v.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let now = r.now.as_ref().and_then(Option::as_ref).map(|n| match n {
        Now::Label(t) => t.clone(),
        Now::Lists(m) => lists(m),
    });
    let recommended = negotiated.unwrap_or_else(|| lists(&r.choice));
    let rows: Vec<(String, String)> = [("Now", now), ("Recommended", Some(recommended)), ("Gain", r.gain.clone())]
        .into_iter()
        .filter_map(|(k, v)| Some((k.to_string(), v?)))
        .collect();
    html! {
        div.diff {
            "\n" h3 { (target_heading(&r.target)) } "\n"
            (kv_table(&rows))
            @if let Some(diff) = &r.diff {
                pre.config.udiff {
                    code {
                        @for l in diff {
                            @let class = match l.chars().next() {
                                Some('+') if !l.starts_with("+++") => "add",
                                Some('-') if !l.starts_with("---") => "del",
                                _ => "ctx",
                            };
                            span class=(class) { (l) } "\n"
                        }
                    }
                }
                "\n"
            }
        }
        "\n"
    }
}

/// A negotiated choice in one line, as the diff's terminal view writes it:
/// `TLSv1.3 TLS_AES_128_GCM_SHA256 over x25519`, or cipher, MAC, kex and host key.
fn negotiated_label(v: &Value) -> Option<String> {
    let text = |k: &str| v[k].as_str();
    match text("protocol")? {
        "tls" => Some(format!(
            "{} {}{}",
            text("version")?,
            text("suite")?,
            text("group").map(|g| format!(" over {g}")).unwrap_or_default()
        )),
        "ssh" => Some(format!(
            "{} {} · {} · {}",
            text("cipher")?,
            text("mac").unwrap_or("(implicit MAC)"),
            text("kex")?,
            text("hostkey")?
        )),
        _ => None,
    }
}

/// The lines to paste, one copy-friendly block per target (a tap selects the block).
fn config_section(doc: &Document) -> Markup {
    if doc.recommendations.is_empty() {
        return html! {};
    }
    html! {
        section #config {
            "\n" h2 { "Config lines" } "\n"
            @for r in &doc.recommendations {
                @if !r.lines.is_empty() {
                    h3 { (target_heading(&r.target)) }
                    "\n" p.where { (inline_code(&r.location)) }
                    "\n" pre.config { code { (r.lines.join("\n")) } }
                    "\n"
                }
            }
        }
        "\n"
    }
}

/// Text with its `backticked` parts as code.
fn inline_code(text: &str) -> Markup {
    html! {
        @for (i, part) in text.split('`').enumerate() {
            @if i % 2 == 1 { code.nb { (part) } } @else { (part) }
        }
    }
}

/// A settings value in words: no braces, no quotes.
fn plain(v: &Value) -> String {
    match v {
        Value::Null => "—".into(),
        Value::Bool(b) => (if *b { "yes" } else { "no" }).into(),
        Value::Number(n) => n.to_string(),
        Value::String(t) => t.clone(),
        Value::Array(a) => a.iter().map(plain).collect::<Vec<_>>().join(", "),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| format!("{}: {}", words(k).to_lowercase(), plain(v)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Settings flattened into (label, text) rows: nested objects become "Race › seconds".
fn settings_rows(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                // `budget_seconds: 90` reads "Budget: 90 s".
                let (k, x) = match (k.strip_suffix("_seconds"), x.as_f64()) {
                    (Some(stem), Some(v)) => (stem.to_string(), Value::String(format!("{v} s"))),
                    _ => (k.clone(), x.clone()),
                };
                let label = if prefix.is_empty() {
                    words(&k)
                } else {
                    format!("{prefix} › {}", k.replace(['_', '-'], " "))
                };
                settings_rows(&label, &x, out);
            }
        }
        Value::Array(a) if a.iter().any(|x| x.is_object()) => {
            for x in a {
                out.push((prefix.to_string(), plain(x)));
            }
        }
        other => out.push((prefix.to_string(), plain(other))),
    }
}

/// The machine: run, host and libraries as (label, text) rows.
fn machine_rows(doc: &Document) -> Vec<(String, String)> {
    let h = &doc.run.host;
    let mut rows: Vec<(String, String)> = vec![
        ("Run".into(), doc.run.id.clone()),
        ("Command".into(), format!("cipherbench {}", doc.run.command)),
        ("Status".into(), doc.run.status.as_str().into()),
        ("Started".into(), doc.run.started_at.clone()),
    ];
    if let Some(f) = &doc.run.finished_at {
        rows.push(("Finished".into(), f.clone()));
    }
    rows.push(("CPU".into(), format!("{} ({} cores)", h.cpu_model, h.cores)));
    rows.push((
        "Crypto CPU flags".into(),
        if h.cpu_flags.is_empty() {
            "none".into()
        } else {
            h.cpu_flags.join(" ")
        },
    ));
    rows.push(("Architecture".into(), h.arch.clone()));
    rows.push(("Kernel".into(), h.kernel.clone()));
    rows.push(("Hostname".into(), h.hostname.clone()));
    for (lib, ver) in &doc.run.libraries {
        let name = match lib.as_str() {
            "openssl" => "OpenSSL".to_string(),
            "gnutls" => "GnuTLS".to_string(),
            "openssh" => "OpenSSH".to_string(),
            "openssl-legacy-provider" => "OpenSSL legacy provider".to_string(),
            other => other.replace(['_', '-'], " "),
        };
        rows.push((name, ver.clone()));
    }
    rows
}

/// The machine and the run's settings, folded away at the end: a two-column table.
fn machine_section(doc: &Document) -> Markup {
    let mut set = Vec::new();
    if let Some(o) = doc.run.settings.as_object() {
        // The installed configuration's diff is shown under "What changing would gain".
        let shown: serde_json::Map<String, Value> = o
            .iter()
            .filter(|(k, _)| k.as_str() != "installed_diff")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        settings_rows("", &Value::Object(shown), &mut set);
    }
    html! {
        details #machine {
            "\n" summary { "Machine and settings" }
            "\n" h3 { "Machine" } "\n"
            (kv_table(&machine_rows(doc)))
            @if !set.is_empty() {
                h3 { "Settings" } "\n"
                (kv_table(&set))
            }
        }
        "\n"
    }
}

/// A value in its metric's unit.
fn metric_text(metric: Metric, v: f64) -> String {
    match metric {
        Metric::BytesPerSec => BytesPerSec(v).to_string(),
        Metric::HandshakesPerSec | Metric::OpsPerSec => format!("{v:.0}/s"),
        Metric::Seconds => Seconds(v).to_string(),
        Metric::Accepted => (if v >= 1.0 { "accepted" } else { "refused" }).to_string(),
    }
}

/// A result's median, when it was measured and is a number.
fn ok(r: &ResultRecord) -> Option<f64> {
    (r.status == Status::Ok).then_some(r.median?).filter(|v| v.is_finite())
}
