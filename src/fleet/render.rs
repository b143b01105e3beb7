//! The fleet's outputs. The report is a list of [`Table`]s rendered by the same
//! table code as a single run's terminal, Markdown and HTML reports; `--json` is the
//! serde model; `--ansible-vars DIR` writes what deploy/ansible/apply.yml reads.
//!
//! Every string that came from an export or a file name is outside text: in the
//! tables it is escaped ([`shown`]) and bounded in length; in `--json` and the
//! Ansible variables serde_json writes it, with every character a terminal or a
//! YAML reader could take for a control or a line break escaped as `\uXXXX`.

use super::decide::{ClassReport, Lines};
use super::FleetReport;
use crate::options::{CommonOptions, FleetOptions};
use crate::recommend::{figure, list_title};
use crate::report::table::Table;
use crate::report::{self, html, markdown, terminal};
use crate::untrusted::{bounded, for_terminal, is_hostile, shown};
use anyhow::{Context, Result};
use serde_json::{json, Value};
use std::path::Path;

/// Outside text in a table: escaped, and at most a few hundred bytes.
fn ext(s: &str) -> String {
    shown(&bounded(s, 300)).into_owned()
}

/// Outside names in a table, joined.
fn ext_all(v: &[String], sep: &str) -> String {
    v.iter().map(|s| ext(s)).collect::<Vec<_>>().join(sep)
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// Config lines as notes: `target (location):` and each line indented.
fn line_notes(notes: &mut Vec<String>, lines: &[Lines]) {
    for l in lines {
        notes.push(format!("{} ({}):", l.target, l.location));
        for line in &l.lines {
            notes.push(format!("    {}", ext(line)));
        }
    }
}

/// The whole report as tables, in reading order.
pub fn tables(r: &FleetReport) -> Vec<Table> {
    let mut out = vec![overview(r)];
    out.extend(r.classes.iter().map(class_table));
    out.push(fleet_wide(r));
    out.push(findings(r));
    out
}

/// The classes, their hosts and outliers, and what could not be merged.
fn overview(r: &FleetReport) -> Table {
    let mut overview = Table {
        title: format!(
            "Fleet: {} host(s) merged in {} class(es) · policy {}",
            r.hosts_merged,
            r.classes.len(),
            r.policy
        ),
        header: ["class", "hosts", "hardware and libraries", "outliers"].map(String::from).to_vec(),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    for c in &r.classes {
        overview.rows.push(vec![
            c.id.clone(),
            c.hosts.len().to_string(),
            ext(&c.label),
            if c.outliers.is_empty() {
                "none".into()
            } else {
                c.outliers.iter().map(|o| ext(&o.host)).collect::<Vec<_>>().join(", ")
            },
        ]);
    }
    for p in &r.problems {
        overview
            .notes
            .push(format!("not merged ({}): {}", p.kind, shown(&bounded(&p.error, 600))));
    }
    overview
}

/// One class's answer, its hosts, its outliers and its lines.
fn class_table(c: &ClassReport) -> Table {
    let mut t = Table {
        title: format!("{} · {} host(s) · the answer", c.id, c.hosts.len()),
        header: ["list", "fastest (ties named)", "median", "spread across hosts"]
            .map(String::from)
            .to_vec(),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    for a in &c.answer {
        let spread = c
            .spread
            .iter()
            .find(|s| s.list == a.list)
            .map(|s| format!("{} – {} ({} hosts)", figure(&s.metric, s.min), figure(&s.metric, s.max), s.hosts))
            .unwrap_or_default();
        t.rows.push(vec![
            list_title(&a.list).to_string(),
            ext_all(&a.leaders, " = "),
            figure(&a.metric, a.median),
            spread,
        ]);
    }
    t.notes.push(format!("hosts: {}", ext_all(&c.hosts, ", ")));
    t.notes.push(ext(&c.label));
    for o in &c.outliers {
        t.notes.push(format!(
            "outlier: {} runs at {} of its class, slower beyond the intervals in {} of {} figures (throttled, a noisy neighbour or misconfigured?)",
            ext(&o.host),
            pct(o.relative_speed),
            o.slower_beyond_intervals,
            o.compared
        ));
    }
    if let Some(n) = &c.outlier_note {
        t.notes.push(format!("outliers: not looked for, {n}"));
    }
    for l in &c.unmeasured {
        t.notes.push(format!(
            "{}: {} (every option all its hosts offer that the policy accepts)",
            list_title(l),
            crate::recommend::choice::UNMEASURED_NOTE_END
        ));
    }
    line_notes(&mut t.notes, &c.lines);
    t
}

/// One config for every host, and what each class gives up for it.
fn fleet_wide(r: &FleetReport) -> Table {
    let mut f = Table {
        title: "Fleet-wide: one config for every host (options every class measured and the policy accepts, the worst class's throughput first; a list not every class measured: ordered by the policy)".into(),
        header: ["class", "list", "its own best", "fleet choice", "gives up"].map(String::from).to_vec(),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    for g in &r.fleet.gives_up {
        f.rows.push(vec![
            g.class.clone(),
            list_title(&g.list).to_string(),
            ext(&g.own_best),
            ext(&g.fleet_choice),
            if g.tied { "nothing measurable (tied)".into() } else { pct(g.loss) },
        ]);
    }
    f.notes.extend(r.fleet.notes.iter().map(|n| ext(n)));
    line_notes(&mut f.notes, &r.fleet.lines);
    f
}

/// Offered options the policy refuses, over the fleet's installed configurations.
fn findings(r: &FleetReport) -> Table {
    let mut t = Table {
        title: format!(
            "Installed configuration over the fleet: offered options policy {} refuses",
            r.policy
        ),
        header: ["hosts", "software", "offers", "level", "why"].map(String::from).to_vec(),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    for x in &r.findings {
        t.rows.push(vec![
            x.hosts.to_string(),
            ext(&x.software),
            ext(&x.name),
            ext(&x.level),
            ext(x.refusals.first().map(String::as_str).unwrap_or_default()),
        ]);
    }
    if r.findings.is_empty() {
        t.notes
            .push("none (or the exports carry no installed diff: runs before it existed, or no software found)".into());
    }
    t
}

pub fn terminal_text(r: &FleetReport) -> String {
    tables(r)
        .iter()
        .map(|t| terminal::render_table(t, terminal::term_width()))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn markdown_text(r: &FleetReport) -> String {
    let mut s = "# cipherbench fleet\n\n".to_string();
    for t in tables(r) {
        s.push_str(&markdown::render_table(&t));
    }
    s
}

pub fn html_text(r: &FleetReport) -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>cipherbench fleet</title>\n\
<style>body{font-family:sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse}\
td,th{border:1px solid #ccc;padding:.2em .5em}td.num{text-align:right}.note{margin:.2em 0;white-space:pre-wrap;font-family:monospace}</style>\n\
</head>\n<body>\n<h1>cipherbench fleet</h1>\n",
    );
    for t in tables(r) {
        s.push_str(&html::html_table(&t));
    }
    s.push_str("</body>\n</html>\n");
    s
}

/// serde_json's output with every character a terminal, a YAML reader or a
/// JavaScript parser could take for a control or a line break (DEL, C1 controls
/// such as NEL, U+2028/2029, bidi and invisible format characters) written as a
/// `\uXXXX` escape; with `ascii`, every non-ASCII character. The same JSON value.
/// serde_json already escapes what is below U+0020 inside strings, so a raw
/// newline or space here is the pretty-printer's, and is kept.
pub fn json_safe(json: &[u8], ascii: bool) -> Vec<u8> {
    let text = String::from_utf8_lossy(json);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\u{7f}' || (!c.is_ascii() && (ascii || is_hostile(c))) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out.into_bytes()
}

/// A string Ansible must never template (`{"__ansible_unsafe": ...}`, which
/// Ansible's JSON loader reads as an unsafe string): outside text such as a CPU
/// model holding `{{ lookup('pipe', ...) }}` stays text.
fn unsafe_text(s: &str) -> Value {
    json!({ "__ansible_unsafe": s })
}

/// The lines for `target`, or `None` when there is no directive among them.
fn lines_of(lines: &[Lines], target: &str) -> Option<Value> {
    let l = lines.iter().find(|l| l.target == target).map(|l| l.lines.as_slice()).unwrap_or(&[]);
    if l.iter().all(|x| x.trim().is_empty() || x.starts_with('#')) {
        return None;
    }
    Some(Value::Array(l.iter().map(|x| unsafe_text(x)).collect()))
}

/// `cipherbench_SCOPE_TARGET_lines` for every target apply.yml writes that has
/// lines. An empty answer is never written as `[]`: the key is left out (apply.yml
/// then leaves that software as it is, and says so), and `skipped` names it.
/// Returns how many keys were written.
fn with_lines(vars: &mut Value, scope: &str, lines: &[Lines], who: &str, skipped: &mut Vec<String>) -> usize {
    let mut written = 0;
    if let Value::Object(m) = vars {
        for t in crate::software::ansible() {
            let key = format!("cipherbench_{scope}_{t}_lines");
            match lines_of(lines, t) {
                Some(v) => {
                    m.insert(key, v);
                    written += 1;
                }
                None => skipped.push(format!(
                    "{who}: no {t} lines (nothing measured or known for them), {key} not written"
                )),
            }
        }
    }
    written
}

/// The vars files cipherbench writes carry this key with [`super::FLEET_SCHEMA`];
/// only such a file is ever replaced or removed.
const MARKER_KEY: &str = "cipherbench_fleet_schema";

/// Whether `path` is a vars file cipherbench wrote: a regular file (not a link)
/// of at most 1 MiB carrying our schema marker (as JSON, or as the YAML the old
/// writer made).
fn ours(path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return false };
    if !meta.is_file() || meta.len() > 1 << 20 {
        return false;
    }
    let Ok(text) = std::fs::read_to_string(path) else { return false };
    if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(&text) {
        return m.get(MARKER_KEY).and_then(Value::as_str) == Some(super::FLEET_SCHEMA);
    }
    text.lines()
        .any(|l| l.trim_end() == format!("{MARKER_KEY}: \"{}\"", super::FLEET_SCHEMA))
}

/// Writes `value` to `path` unless a file that is not ours is there (it is left
/// byte for byte unchanged and named); then removes the old `.yml` beside it if we
/// wrote it, so two files cannot disagree.
fn write_vars(path: &Path, value: &Value, refused: &mut Vec<String>) -> Result<()> {
    if std::fs::symlink_metadata(path).is_ok() && !ours(path) {
        refused.push(format!(
            "{}: exists and was not written by cipherbench fleet (no {MARKER_KEY}); left as it is",
            shown(&path.display().to_string())
        ));
        return Ok(());
    }
    let mut bytes = json_safe(&serde_json::to_vec_pretty(value)?, true);
    bytes.push(b'\n');
    report::write_output(path, &bytes)?;
    let old = path.with_extension("yml");
    if ours(&old) {
        std::fs::remove_file(&old).with_context(|| format!("cannot remove {}", old.display()))?;
    }
    Ok(())
}

/// group_vars/all.json (the fleet-wide lines) and host_vars/HOST.json (each host's
/// class lines), written by serde_json: Ansible reads `.json` vars files with its
/// JSON loader (and YAML is a superset of JSON). Only merged hosts get host_vars:
/// apply.yml skips any other host. Free text (the class label) and the lines are
/// marked unsafe, so Ansible never templates them. A host name is a file name
/// here; merge refused every name that is not a plain host name, and this checks
/// again.
///
/// Nothing is written when no host was merged; a list with no line is left out
/// (never `[]`) and named on stderr; when no class and not the fleet has a line
/// for any target, the files are still written (older lines must not stay) and
/// the run fails: there is nothing for apply.yml to apply.
pub fn ansible_vars(r: &FleetReport, dir: &Path) -> Result<()> {
    if r.hosts_merged == 0 || r.classes.is_empty() {
        return Err(crate::error::UsageError::Invalid(format!(
            "no host export could be merged: no Ansible variables written to {}",
            shown(&dir.display().to_string())
        ))
        .into());
    }
    let gv = dir.join("group_vars");
    let hv = dir.join("host_vars");
    for d in [&gv, &hv] {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let mut refused = Vec::new();
    let mut all = json!({
        MARKER_KEY: super::FLEET_SCHEMA,
        "cipherbench_policy": r.policy,
    });
    let mut skipped = Vec::new();
    let mut written = with_lines(&mut all, "fleet", &r.fleet.lines, "the fleet (group_vars/all.json)", &mut skipped);
    write_vars(&gv.join("all.json"), &all, &mut refused)?;
    for c in &r.classes {
        let who = format!("{} ({} host(s))", c.id, c.hosts.len());
        let mut class_skipped = Vec::new();
        let mut class_written = 0;
        for h in &c.hosts {
            if let Some(why) = super::merge::bad_host_name(h) {
                refused.push(format!("host {}: not a file name ({why})", shown(&bounded(h, 120))));
                continue;
            }
            let mut v = json!({
                MARKER_KEY: super::FLEET_SCHEMA,
                "cipherbench_class": c.id,
                "cipherbench_class_label": unsafe_text(&bounded(&c.label, 2048)),
            });
            class_skipped.clear();
            class_written = with_lines(&mut v, "class", &c.lines, &who, &mut class_skipped);
            write_vars(&hv.join(format!("{h}.json")), &v, &mut refused)?;
        }
        written += class_written;
        skipped.append(&mut class_skipped);
    }
    for s in &skipped {
        eprintln!("warning: {s}: apply.yml leaves that software as it is there");
    }
    if !skipped.is_empty() {
        eprintln!();
    }
    if !refused.is_empty() {
        return Err(crate::error::NotSaved(format!("Ansible variables not written: {}", refused.join("; "))).into());
    }
    if written == 0 {
        return Err(crate::error::Finding(format!(
            "no class and not the fleet has a line for {}: nothing for apply.yml to apply (the variables were written without lines)",
            crate::software::ansible().join(" or ")
        ))
        .into());
    }
    Ok(())
}

pub fn emit(r: &FleetReport, c: &CommonOptions, a: &FleetOptions) -> Result<()> {
    let json = || {
        serde_json::to_vec_pretty(r).map(|v| {
            let mut v = json_safe(&v, false);
            v.push(b'\n');
            v
        })
    };
    if c.json {
        report::print(&json()?)?;
    } else if !c.quiet {
        // Every outside value in the tables is escaped where it is put in; this is
        // the last guard, for one that was not.
        report::print(for_terminal(&terminal_text(r)).as_bytes())?;
    }
    if let Some(p) = &c.export_json {
        report::write_output(p, &json()?)?;
    }
    if let Some(p) = &c.export_markdown {
        report::write_output(p, markdown_text(r).as_bytes())?;
    }
    if let Some(p) = &a.export_html {
        report::write_output(p, html_text(r).as_bytes())?;
    }
    if let Some(d) = &a.ansible_vars {
        ansible_vars(r, d)?;
    }
    if c.export_csv.is_some() {
        eprintln!("warning: fleet has no CSV output; use --export-json or --export-markdown\n");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_what_a_terminal_or_yaml_would_take_for_a_control() {
        let v = json!({"k": "a\u{1b}b\u{7f}c\u{85}d\u{2028}e\u{202e}f é 東 😀"});
        let out = String::from_utf8(json_safe(&serde_json::to_vec_pretty(&v).unwrap(), false)).unwrap();
        assert!(!out.chars().any(|c| c != '\n' && is_hostile(c)), "{out}");
        assert!(out.contains("\\u001b") && out.contains("\\u007f") && out.contains("\\u0085") && out.contains("\\u2028"));
        assert!(out.contains("é 東 😀"), "readable text stays: {out}");
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), v);
        let ascii = String::from_utf8(json_safe(&serde_json::to_vec(&v).unwrap(), true)).unwrap();
        assert!(ascii.is_ascii() && ascii.contains("\\ud83d\\ude00"), "{ascii}");
        assert_eq!(serde_json::from_str::<Value>(&ascii).unwrap(), v);
    }

    #[test]
    fn a_vars_file_that_is_not_ours_is_left_unchanged_and_our_old_yml_goes() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("web1.json");
        std::fs::write(&theirs, "{\"ansible_user\": \"admin\"}\n").unwrap();
        let mut refused = Vec::new();
        write_vars(&theirs, &json!({MARKER_KEY: crate::fleet::FLEET_SCHEMA}), &mut refused).unwrap();
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "{\"ansible_user\": \"admin\"}\n");
        assert_eq!(refused.len(), 1, "{refused:?}");
        // Ours (the old YAML writer's, with its marker) is replaced by the JSON file.
        let old = dir.path().join("web2.yml");
        std::fs::write(
            &old,
            "# Written by cipherbench fleet: class-1.\ncipherbench_fleet_schema: \"cipherbench-fleet/1\"\n",
        )
        .unwrap();
        let someone_elses = dir.path().join("web3.yml");
        std::fs::write(&someone_elses, "ansible_port: 2222\n").unwrap();
        let mut refused = Vec::new();
        let v = json!({MARKER_KEY: crate::fleet::FLEET_SCHEMA, "cipherbench_class": "class-1"});
        write_vars(&dir.path().join("web2.json"), &v, &mut refused).unwrap();
        write_vars(&dir.path().join("web3.json"), &v, &mut refused).unwrap();
        assert!(refused.is_empty(), "{refused:?}");
        assert!(!old.exists(), "our old YAML file is removed");
        assert!(someone_elses.exists(), "a YAML file that is not ours stays");
        // A second run replaces our own JSON file.
        write_vars(&dir.path().join("web2.json"), &v, &mut refused).unwrap();
        assert!(refused.is_empty(), "{refused:?}");
    }
}
