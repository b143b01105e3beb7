//! Tables and summaries built once from a document and rendered by the terminal,
//! Markdown and HTML alike: [`tables`] is every result table in reading order.

mod file;
mod primitive;
mod ssh;
mod tls;

use crate::model::{Document, Kind, ResultRecord};

pub use super::cells::{throughput_cell, Table};
pub use crate::model::subject_label;
pub use primitive::fastest;

/// One piece of the result tables: a table, or a line of its own (key derivation).
pub enum Block {
    Table(Table),
    Line(String),
}

/// Every result table of a document, in the order each report shows them:
/// primitives, the file study, key derivation, TLS, SSH.
pub fn tables(doc: &Document) -> Vec<Block> {
    let mut out: Vec<Block> = primitive::primitive_table(doc).into_iter().map(Block::Table).collect();
    out.extend(primitive::pq_table(doc).into_iter().map(Block::Table));
    out.extend(file::file_tables(doc).into_iter().map(Block::Table));
    out.extend(kdf_lines(doc).into_iter().map(Block::Line));
    out.extend(tls::tls_tables(doc).into_iter().chain(ssh::ssh_tables(doc)).map(Block::Table));
    out
}

fn threads_of(r: &ResultRecord) -> usize {
    r.subject.threads.unwrap_or(1)
}

fn library_of(r: &ResultRecord) -> &str {
    r.subject.library.as_deref().unwrap_or("openssl")
}

/// The verdict stored for an algorithm: level and first reason, with references.
pub fn verdict_line(doc: &Document, algorithm: &str) -> Option<(String, String)> {
    let v = doc.verdicts.iter().find(|v| v.subject.name.eq_ignore_ascii_case(algorithm))?;
    if v.level.is_empty() {
        return None;
    }
    let reason = v.reasons.first().map(|r| {
        let refs: Vec<&str> = r.references.iter().filter_map(|x| x.id.as_deref()).collect();
        if refs.is_empty() {
            r.text.clone()
        } else {
            format!("{} [{}]", r.text, refs.join(", "))
        }
    });
    Some((v.level.clone(), reason.unwrap_or_default()))
}

/// Warnings for measured algorithms the knowledge base rates below `secure`.
pub fn verdict_warnings(doc: &Document) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for r in &doc.results {
        let Some(a) = r.subject.algorithm.as_deref() else { continue };
        if seen.contains(&a) {
            continue;
        }
        seen.push(a);
        if let Some((level, reason)) = verdict_line(doc, a) {
            if matches!(level.as_str(), "weak" | "insecure" | "unrated") {
                out.push(format!("{a} is {level}: {reason}"));
            }
        }
    }
    out
}

/// Key-derivation timings (`--password`), one line each.
fn kdf_lines(doc: &Document) -> Vec<String> {
    doc.results
        .iter()
        .filter(|r| r.kind == Kind::File && r.subject.op.as_deref() == Some("derive-key"))
        .filter_map(|r| {
            Some(format!(
                "key derivation {}: {:.3} s per key (median of {})",
                r.subject.algorithm.as_deref()?,
                r.median?,
                r.samples?
            ))
        })
        .collect()
}
