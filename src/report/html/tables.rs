//! The verdicts with their reasons and sources, the rankings, and every result
//! table, as HTML tables.

use super::{level_badge, list_heading, metric_text};
use crate::model::{Document, RankingRecord, ResultRecord, SourceRecord, Status, VerdictRecord};
use crate::report::table::{subject_label, tables, verdict_warnings, Block, Table};
use maud::{html, Markup};

/// A reason's references: links when they are web addresses, else their ids.
fn references(refs: &[SourceRecord]) -> Markup {
    if refs.is_empty() {
        return html! {};
    }
    html! {
        " "
        span.muted {
            "["
            @for (i, r) in refs.iter().enumerate() {
                @if i > 0 { ", " }
                @let id = r.id.as_deref().unwrap_or("");
                @let title = r.title.as_deref().unwrap_or("");
                @match r.url.as_deref().filter(|u| u.starts_with("https://") || u.starts_with("http://")) {
                    Some(url) => a href=(url) title=(title) { (id) },
                    None => span title=(title) { (id) },
                }
            }
            "]"
        }
    }
}

/// One verdict's reasons, other sources' opinions and note, as a list.
fn reasons(v: &VerdictRecord) -> Markup {
    html! {
        ul.reasons {
            @for r in &v.reasons {
                li { (r.text) (references(&r.references)) }
            }
            @for o in &v.opinions {
                li {
                    (o.source.title.as_deref().or(o.source.id.as_deref()).unwrap_or("another source"))
                    " rates it " (o.level) ": "
                    (o.reason.text)
                    (references(&o.reason.references))
                }
            }
            @if let Some(n) = &v.note { li { (n) } }
        }
    }
}

pub(super) fn verdicts_section(doc: &Document) -> Markup {
    if doc.verdicts.is_empty() {
        return html! {};
    }
    let warnings = verdict_warnings(doc);
    html! {
        section #verdicts {
            "\n" h2 { "Security verdicts, with reasons" } "\n"
            div.scroll {
                table {
                    "\n"
                    thead { tr { th { "option" } th { "kind" } th { "level" } th { "reasons and sources" } } }
                    "\n"
                    tbody {
                        "\n"
                        @for v in &doc.verdicts {
                            tr {
                                td { (v.subject.name) }
                                td { (v.subject.domain.replace(['-', '_'], " ")) }
                                td { (level_badge(&v.level)) }
                                td.wrap { (reasons(v)) }
                            }
                            "\n"
                        }
                    }
                }
            }
            "\n"
            @if !warnings.is_empty() {
                h3 { "Warnings" } "\n"
                ul { "\n" @for w in &warnings { li { (w) } "\n" } }
                "\n"
            }
        }
        "\n"
    }
}

/// A ranking, fastest first, with the fastest options the policy keeps out.
fn ranking_table(r: &RankingRecord) -> Markup {
    if r.ranked.is_empty() {
        return html! {};
    }
    let figure = |v: f64| crate::recommend::figure(&r.metric, v);
    html! {
        h3 { (list_heading(&r.list)) ", fastest first" } "\n"
        div.scroll {
            table {
                "\n"
                thead { tr { th { "rank" } th { "option" } th { "level" } th { "median" } th { "measured as" } } }
                tbody {
                    "\n"
                    @for x in &r.ranked {
                        tr {
                            td { (x.rank) @if x.tied { "=" } }
                            td { (x.name) }
                            td { (level_badge(&x.level)) }
                            td.num { (figure(x.median)) }
                            td { (x.basis) }
                        }
                        "\n"
                    }
                }
            }
        }
        "\n"
        @for (f, label) in [(&r.fastest_refused, "fastest refused"), (&r.fastest_insecure, "fastest insecure")] {
            @if let Some(f) = f {
                p.note {
                    (label) ": " (f.name)
                    " (" (f.level) ") "
                    (figure(f.median))
                }
                "\n"
            }
        }
    }
}

fn table_markup(t: &Table) -> Markup {
    html! {
        h3 { (t.title) } "\n"
        div.scroll {
            table {
                "\n"
                thead { tr { @for h in &t.header { th { (h) } } } }
                "\n"
                tbody {
                    "\n"
                    @for row in &t.rows {
                        tr {
                            @for (i, c) in row.iter().enumerate() {
                                @if i >= 2 { td.num { (c) } } @else { td { (c) } }
                            }
                        }
                        "\n"
                    }
                }
            }
        }
        "\n"
        @for n in &t.notes { p.note { (n) } "\n" }
    }
}

/// A table of cells as HTML (a heading, the table, its notes), for other pages too.
pub(crate) fn html_table(t: &Table) -> String {
    super::finish(table_markup(t))
}

/// A kind or metric's name as the JSON document writes it.
fn json_name<T: serde::Serialize>(v: T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// Every result, whatever its kind: the table no other view leaves out.
fn generic_table(doc: &Document) -> Table {
    let fmt = |r: &ResultRecord, v: Option<f64>| v.map(|v| metric_text(r.metric, v)).unwrap_or_default();
    let rows = doc
        .results
        .iter()
        .map(|r| {
            vec![
                json_name(r.kind),
                subject_label(r),
                json_name(r.metric),
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

pub(super) fn tables_section(doc: &Document) -> Markup {
    let mut rankings: Vec<&RankingRecord> = Vec::new();
    for ranking in doc.recommendations.iter().flat_map(|r| &r.rankings) {
        if !rankings.iter().any(|x| x.list == ranking.list) {
            rankings.push(ranking);
        }
    }
    // Key-derivation lines in a row make one list.
    let mut blocks: Vec<Result<Table, Vec<String>>> = Vec::new();
    for b in tables(doc) {
        match (b, blocks.last_mut()) {
            (Block::Table(t), _) => blocks.push(Ok(t)),
            (Block::Line(l), Some(Err(lines))) => lines.push(l),
            (Block::Line(l), _) => blocks.push(Err(vec![l])),
        }
    }
    if !doc.results.is_empty() {
        blocks.push(Ok(generic_table(doc)));
    }
    html! {
        section #tables {
            "\n" h2 { "Detailed results" } "\n"
            @for r in &rankings { (ranking_table(r)) }
            @for b in &blocks {
                @match b {
                    Ok(t) => (table_markup(t)),
                    Err(lines) => { ul { "\n" @for l in lines { li { (l) } "\n" } } "\n" },
                }
            }
        }
        "\n"
    }
}
