//! The fleet's outputs. The report is a list of [`Table`]s rendered by the same
//! table code as a single run's terminal, Markdown and HTML reports; `--json` is the
//! serde model; `--ansible-vars DIR` writes what deploy/ansible/apply.yml reads.

use super::decide::Lines;
use super::FleetReport;
use crate::cli::{Common, FleetArgs};
use crate::recommend::{figure, list_title};
use crate::report::table::Table;
use crate::report::{self, html, markdown, terminal};
use anyhow::{Context, Result};
use std::path::Path;

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// The whole report as tables, in reading order.
pub fn tables(r: &FleetReport) -> Vec<Table> {
    let mut out = Vec::new();
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
            c.label.clone(),
            if c.outliers.is_empty() {
                "none".into()
            } else {
                c.outliers.iter().map(|o| o.host.clone()).collect::<Vec<_>>().join(", ")
            },
        ]);
    }
    for p in &r.problems {
        overview.notes.push(format!("not merged ({}): {}", p.kind, p.error));
    }
    out.push(overview);
    for c in &r.classes {
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
                a.leaders.join(" = "),
                figure(&a.metric, a.median),
                spread,
            ]);
        }
        t.notes.push(format!("hosts: {}", c.hosts.join(", ")));
        t.notes.push(c.label.clone());
        for o in &c.outliers {
            t.notes.push(format!(
                "outlier: {} runs at {} of its class, slower beyond the intervals in {} of {} figures (throttled, a noisy neighbour or misconfigured?)",
                o.host,
                pct(o.relative_speed),
                o.slower_beyond_intervals,
                o.compared
            ));
        }
        if let Some(n) = &c.outlier_note {
            t.notes.push(format!("outliers: not looked for, {n}"));
        }
        for l in &c.lines {
            t.notes.push(format!("{} ({}):", l.target, l.location));
            for line in &l.lines {
                t.notes.push(format!("    {line}"));
            }
        }
        out.push(t);
    }
    let mut f = Table {
        title: "Fleet-wide: one config for every host (options every class measured and the policy accepts, the worst class's throughput first)".into(),
        header: ["class", "list", "its own best", "fleet choice", "gives up"].map(String::from).to_vec(),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    for g in &r.fleet.gives_up {
        f.rows.push(vec![
            g.class.clone(),
            list_title(&g.list).to_string(),
            g.own_best.clone(),
            g.fleet_choice.clone(),
            if g.tied { "nothing measurable (tied)".into() } else { pct(g.loss) },
        ]);
    }
    f.notes.extend(r.fleet.notes.iter().cloned());
    for l in &r.fleet.lines {
        f.notes.push(format!("{} ({}):", l.target, l.location));
        for line in &l.lines {
            f.notes.push(format!("    {line}"));
        }
    }
    out.push(f);
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
            x.software.clone(),
            x.name.clone(),
            x.level.clone(),
            x.refusals.first().cloned().unwrap_or_default(),
        ]);
    }
    if r.findings.is_empty() {
        t.notes
            .push("none (or the exports carry no installed diff: runs before it existed, or no software found)".into());
    }
    out.push(t);
    out
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

/// A YAML double-quoted scalar (JSON string escapes are valid YAML).
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn yaml_lines(out: &mut String, prefix: &str, lines: &[Lines]) {
    for target in ["sshd", "nginx"] {
        let l = lines.iter().find(|l| l.target == target).map(|l| l.lines.as_slice()).unwrap_or(&[]);
        if l.is_empty() {
            out.push_str(&format!("{prefix}_{target}_lines: []\n"));
        } else {
            out.push_str(&format!("{prefix}_{target}_lines:\n"));
            for line in l {
                out.push_str(&format!("  - {}\n", q(line)));
            }
        }
    }
}

/// group_vars/all.yml (the fleet-wide lines) and host_vars/HOST.yml (each host's
/// class lines). Only merged hosts get host_vars: apply.yml skips any other host.
pub fn ansible_vars(r: &FleetReport, dir: &Path) -> Result<()> {
    let gv = dir.join("group_vars");
    let hv = dir.join("host_vars");
    for d in [&gv, &hv] {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let mut all = format!(
        "# Written by cipherbench fleet: the fleet-wide config (options every class measured and policy {} accepts).\n\
cipherbench_fleet_schema: {}\ncipherbench_policy: {}\n",
        r.policy,
        q(super::FLEET_SCHEMA),
        q(&r.policy)
    );
    yaml_lines(&mut all, "cipherbench_fleet", &r.fleet.lines);
    report::write_output(&gv.join("all.yml"), all.as_bytes())?;
    for c in &r.classes {
        for h in &c.hosts {
            let mut s = format!(
                "# Written by cipherbench fleet: {} ({}).\ncipherbench_fleet_schema: {}\ncipherbench_class: {}\ncipherbench_class_label: {}\n",
                c.id,
                c.label,
                q(super::FLEET_SCHEMA),
                q(&c.id),
                q(&c.label)
            );
            yaml_lines(&mut s, "cipherbench_class", &c.lines);
            report::write_output(&hv.join(format!("{h}.yml")), s.as_bytes())?;
        }
    }
    Ok(())
}

pub fn emit(r: &FleetReport, c: &Common, a: &FleetArgs) -> Result<()> {
    let json = || {
        serde_json::to_vec_pretty(r).map(|mut v| {
            v.push(b'\n');
            v
        })
    };
    if c.json {
        report::print(&json()?)?;
    } else if !c.quiet {
        report::print(terminal_text(r).as_bytes())?;
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
