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
:root{--fg:#1b1f23;--muted:#57606a;--bg:#fff;--line:#d0d7de;--code:#f6f8fa;--accent:#0969da}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1100px;padding:1rem;color:var(--fg);background:var(--bg);overflow-wrap:break-word}
header h1{font-size:1.3rem;margin:.1rem 0 .2rem}
header p{margin:0 0 .4rem}
h2{font-size:1.15rem;border-bottom:1px solid var(--line);padding-bottom:.2rem;margin:1.6rem 0 .6rem}
#answer h2{margin-top:.6rem}
h3{font-size:1rem;margin:1.1rem 0 .3rem}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em;overflow-wrap:anywhere}
.muted,.note,.where{color:var(--muted);font-size:.85rem}
.where{margin:.1rem 0 .3rem}
.picks{display:grid;grid-template-columns:minmax(9rem,13rem) 1fr max-content;border-top:1px solid var(--line)}
.pick{display:contents}
.pick>div{padding:.45rem .5rem;border-bottom:1px solid var(--line)}
.what{font-weight:600}
.choice code{background:var(--code);padding:0 .2rem;border-radius:3px}
.eq{color:var(--muted)}
.fig{text-align:right;font-variant-numeric:tabular-nums;font-weight:600;white-space:nowrap}
.tie{display:block;font-weight:400;font-size:.8rem;color:var(--muted)}
.cost{font-size:.8rem;color:var(--muted);margin-top:.25rem}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%}
table{border-collapse:collapse;font-size:.85rem;white-space:nowrap;margin:.3rem 0}
th,td{padding:.2rem .55rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--code)}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.wrap{white-space:normal;min-width:16rem}
table.kv{white-space:normal;width:100%;table-layout:fixed}
table.kv th{width:32%;font-weight:600}
table.kv td{overflow-wrap:anywhere}
figure{margin:1rem 0;break-inside:avoid}
figcaption{font-weight:600;margin-bottom:.3rem}
svg{max-width:100%;height:auto;display:block}
.scroll>svg{min-width:540px}
svg text{font-family:system-ui,sans-serif}
pre{background:var(--code);padding:.6rem;border-radius:4px;font-size:.8rem;margin:.2rem 0 .8rem}
pre.config{white-space:pre-wrap;overflow-wrap:anywhere;border-left:3px solid var(--accent)}
pre.config code{user-select:all;-webkit-user-select:all;font-size:1em}
.udiff .add{color:#116329;background:#dafbe1}
.udiff .del{color:#a40e26;background:#ffebe9}
.level{display:inline-block;padding:0 .4rem;border-radius:3px;font-size:.8rem;font-weight:600}
.level-recommended{background:#dafbe1;color:#116329}
.level-secure{background:#ddf4ff;color:#0a3069}
.level-weak{background:#fff8c5;color:#7d4e00}
.level-insecure{background:#ffebe9;color:#a40e26}
.level-unrated{background:#eaeef2;color:#424a53}
ul.reasons{margin:.1rem 0;padding-left:1.1rem}
details{margin:1.6rem 0;border:1px solid var(--line);border-radius:4px;padding:.3rem .7rem}
summary{font-weight:600;cursor:pointer;padding:.2rem 0}
@media (max-width:640px){
body{font-size:14px;padding:.6rem}
header h1{font-size:1.15rem}
.picks{grid-template-columns:1fr max-content}
.what{grid-column:1/-1;border-bottom:0!important;padding-bottom:0!important}
table.kv th{width:40%}
#verdicts .scroll{overflow:visible}
#verdicts table,#verdicts tbody,#verdicts tr{display:block;white-space:normal}
#verdicts thead{display:none}
#verdicts tr{border-bottom:1px solid var(--line);padding:.3rem 0}
#verdicts td{display:inline-block;border:0;padding:.1rem .4rem .1rem 0;max-width:100%;overflow-wrap:anywhere}
#verdicts td.wrap{display:block;min-width:0}
}
@media print{
body{max-width:none;font-size:10pt;padding:0}
.scroll{overflow:visible}
table{white-space:normal;font-size:8pt}
h2,h3{break-after:avoid}
table,pre,figure,li,.pick>div{break-inside:avoid}
details{border:0;padding:0}
details::details-content{content-visibility:visible;display:block}
a{color:inherit}
a[href]::after{content:" <" attr(href) ">";font-size:7pt;color:#555}
}
"#;

/// The whole report, answer first: what to use (with ties named), what changing
/// would gain, the lines to paste; then the charts, the verdicts with their reasons
/// and every table; the machine and the settings last, folded away.
pub fn render(doc: &Document) -> String {
    let mut s = String::new();
    let title = format!("cipherbench {} · {} · run {}", doc.run.command, doc.run.host.hostname, doc.run.id);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<meta name=\"generator\" content=\"cipherbench {}\">\n<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        esc(&title),
        CSS
    );
    s.push_str(&top(doc));
    s.push_str(&answer_section(doc));
    s.push_str(&gain_section(doc));
    s.push_str(&config_section(doc));
    s.push_str(&charts_section(doc));
    s.push_str(&verdicts_section(doc));
    s.push_str(&tables_section(doc));
    s.push_str(&machine_section(doc));
    s.push_str(
        "<p class=\"note\">Made by cipherbench. Figures are medians of adaptive samples with distribution-free 95% intervals; \
results whose intervals overlap are tied, not ranked.</p>\n</body>\n</html>\n",
    );
    s
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
fn top(doc: &Document) -> String {
    let h = &doc.run.host;
    let policy = doc
        .run
        .settings
        .get("policy")
        .and_then(|v| v.as_str())
        .or_else(|| doc.recommendations.first().and_then(|r| r["policy"].as_str()));
    let mut libs: Vec<String> = Vec::new();
    if let Some(v) = doc.run.libraries.get("openssl") {
        libs.push(v.clone());
    }
    if let Some(v) = doc.run.libraries.get("gnutls").filter(|g| !g.starts_with("unavailable")) {
        libs.push(format!("GnuTLS {v}"));
    }
    if let Some(v) = doc.run.settings.get("openssh_version").and_then(|v| v.as_str()) {
        libs.push(v.to_string());
    }
    let mut line = vec![esc(&cpu_text(h))];
    if !libs.is_empty() {
        line.push(esc(&libs.join(", ")));
    }
    if let Some(p) = policy {
        line.push(format!("policy <b>{}</b>", esc(p)));
    }
    let started = doc.run.started_at.replace('T', " ");
    let started = started.trim_end_matches('Z').split('.').next().unwrap_or("");
    line.push(format!("{} UTC", esc(started)));
    let status = match doc.run.status {
        crate::model::RunStatus::Complete => String::new(),
        other => format!(" <span class=\"level level-weak\">{}</span>", esc(other.as_str())),
    };
    let heading = if doc.recommendations.is_empty() {
        format!("cipherbench {} on {}", doc.run.command, h.hostname)
    } else {
        format!("Fastest secure choices on {}", h.hostname)
    };
    format!(
        "<header>\n<h1>{}{status}</h1>\n<p class=\"muted\">{}</p>\n</header>\n",
        esc(&heading),
        line.join(" · ")
    )
}

/// An algorithm name as code that may break after its `_`, `-` and `@` on a phone.
fn code_name(name: &str) -> String {
    let mut s = String::from("<code>");
    for c in name.chars() {
        s.push_str(&esc(&c.to_string()));
        if matches!(c, '_' | '-' | '@' | ',') {
            s.push_str("<wbr>");
        }
    }
    s.push_str("</code>");
    s
}

/// One ranking list's best choice, as the answer shows it.
fn pick(ranking: &Value) -> Option<String> {
    let metric = ranking["metric"].as_str().unwrap_or("");
    let ranked = ranking["ranked"].as_array()?;
    let best: Vec<&Value> = ranked.iter().filter(|x| x["rank"].as_u64() == Some(1)).collect();
    let Some(first) = best.first() else {
        let unmeasured = ranking["unmeasured"].as_array().map_or(0, Vec::len);
        return (unmeasured > 0).then(|| {
            format!(
                "<div class=\"pick\"><div class=\"what\">{}</div><div class=\"choice\">not measured in this run (raise --budget)</div><div class=\"fig\"></div></div>\n",
                esc(&list_heading(ranking["list"].as_str().unwrap_or("")))
            )
        });
    };
    let raw: Vec<&str> = best.iter().map(|x| x["name"].as_str().unwrap_or("")).collect();
    let names: Vec<String> = super::answer::group_auth(&raw).iter().map(|n| code_name(n)).collect();
    let figure = first["median"]
        .as_f64()
        .map(|v| crate::recommend::figure(metric, v))
        .unwrap_or_default();
    let tie = if best.len() > 1 {
        format!("<span class=\"tie\">{} tied</span>", best.len())
    } else {
        String::new()
    };
    let mut notes: Vec<String> = Vec::new();
    for (key, what) in [("fastest_refused", "refused by the policy"), ("fastest_insecure", "insecure")] {
        let Some(f) = ranking[key].as_object() else { continue };
        let name = f.get("name").and_then(|v| v.as_str()).unwrap_or("");
        if key == "fastest_insecure" && ranking["fastest_refused"]["name"].as_str() == Some(name) {
            continue;
        }
        let level = f.get("level").and_then(|v| v.as_str()).unwrap_or("");
        let higher = ranking["higher_is_better"].as_bool() != Some(false);
        let speedup = match (f.get("median").and_then(|v| v.as_f64()), first["median"].as_f64()) {
            (Some(o), Some(b)) if o > 0.0 && b > 0.0 => Some(if higher { o / b } else { b / o }),
            _ => None,
        };
        let gain = match speedup {
            _ if f.get("tied_with_best").and_then(|v| v.as_bool()) == Some(true) => "no measurable gain".to_string(),
            Some(x) if x >= 1.0 => format!("{:.0}% faster", (x - 1.0) * 100.0),
            Some(x) => format!("{:.0}% slower anyway", (1.0 - x) * 100.0),
            None => String::new(),
        };
        notes.push(format!("Fastest {what}: {} {} {}", code_name(name), level_badge(level), esc(&gain)));
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!("<div class=\"cost\">{}</div>", notes.join("<br>"))
    };
    Some(format!(
        "<div class=\"pick\"><div class=\"what\">{}</div><div class=\"choice\">{}{notes}</div><div class=\"fig\">{}{tie}</div></div>\n",
        esc(&list_heading(ranking["list"].as_str().unwrap_or(""))),
        names.join(" <span class=\"eq\">=</span> "),
        esc(&figure)
    ))
}

/// The answer: the fastest choice per protocol that passes the policy, ties named.
/// A run without rankings (`speed`, `file`) answers with its fastest primitives.
fn answer_section(doc: &Document) -> String {
    let mut picks = String::new();
    let mut seen: Vec<String> = Vec::new();
    for r in &doc.recommendations {
        for ranking in r["rankings"].as_array().into_iter().flatten() {
            let list = ranking["list"].as_str().unwrap_or("").to_string();
            if seen.contains(&list) {
                continue;
            }
            seen.push(list);
            if let Some(p) = pick(ranking) {
                picks.push_str(&p);
            }
        }
    }
    if picks.is_empty() {
        for f in super::table::fastest(doc) {
            let mut names = vec![code_name(&f.algorithm)];
            names.extend(f.tied_with.iter().map(|t| code_name(t)));
            let tie = if f.tied_with.is_empty() {
                String::new()
            } else {
                format!("<span class=\"tie\">{} tied</span>", names.len())
            };
            let _ = writeln!(
                picks,
                "<div class=\"pick\"><div class=\"what\">{} at {}</div><div class=\"choice\">{}</div><div class=\"fig\">{}{tie}</div></div>",
                esc(&words(f.category)),
                Bytes(f.bytes),
                names.join(" <span class=\"eq\">=</span> "),
                esc(&BytesPerSec(f.median).to_string())
            );
        }
    }
    if picks.is_empty() {
        picks.push_str(&file_picks(doc));
    }
    // The main job measures SSH too: say so when none of it made the answer.
    let mut missing = String::new();
    if doc.run.command == "run" && !doc.recommendations.is_empty() && !doc.recommendations.iter().any(|r| r["protocol"] == "ssh") {
        let why = doc.run.settings["ssh"]
            .as_str()
            .filter(|s| s.starts_with("SSH skipped"))
            .map(String::from)
            .unwrap_or_else(|| "SSH: the budget ran out before any SSH result (raise --budget)".into());
        let _ = writeln!(missing, "<p class=\"note\">{}</p>", esc(&why));
    }
    if picks.is_empty() {
        return "<section id=\"answer\">\n<h2>The answer</h2>\n<p>This run has nothing to rank: its figures are in the tables below.</p>\n</section>\n".into();
    }
    let times = if doc.recommendations.iter().any(|r| {
        r["rankings"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x["higher_is_better"].as_bool() == Some(false)))
    }) {
        " Handshake figures are times: lower is better."
    } else {
        ""
    };
    format!(
        "<section id=\"answer\">\n<h2>The answer</h2>\n<div class=\"picks\">\n{picks}</div>\n{missing}\
<p class=\"note\">Tied means the 95% intervals overlap: the measurements cannot tell them apart, so any of them is as fast here.{times}</p>\n</section>\n"
    )
}

/// The judge's level for an option, by name or alias (case-insensitive).
fn level_of<'a>(doc: &'a Document, name: &str) -> Option<&'a str> {
    doc.verdicts
        .iter()
        .find(|v| {
            let s = &v["subject"];
            s["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(name))
                || s["aliases"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x.as_str().is_some_and(|n| n.eq_ignore_ascii_case(name))))
        })
        .and_then(|v| v["level"].as_str())
}

/// A file run's answer: per input and operation, the fastest cipher and those tied
/// with it (their 95% intervals overlap the fastest one's).
fn file_picks(doc: &Document) -> String {
    let files: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::File && r.metric == Metric::BytesPerSec && ok(r).is_some())
        .filter(|r| matches!(r.subject.op.as_deref(), Some("encrypt" | "decrypt")))
        .collect();
    // (path, I/O mode, size, operation): one answer each.
    type Input = (Option<String>, Option<String>, Option<u64>, Option<String>);
    let mut keys: Vec<Input> = Vec::new();
    for r in &files {
        let k = (
            r.subject.path.clone(),
            r.subject.mode.clone(),
            r.subject.bytes,
            r.subject.op.clone(),
        );
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut s = String::new();
    for (path, mode, bytes, op) in keys {
        let set: Vec<&ResultRecord> = files
            .iter()
            .copied()
            .filter(|r| (&r.subject.path, &r.subject.mode, &r.subject.bytes, &r.subject.op) == (&path, &mode, &bytes, &op))
            .collect();
        let by_speed = |a: &&ResultRecord, b: &&ResultRecord| ok(a).partial_cmp(&ok(b)).unwrap_or(std::cmp::Ordering::Equal);
        let fastest_any = set.iter().copied().max_by(by_speed);
        // Only what the judge does not call weak or insecure can be the answer.
        let acceptable = |r: &ResultRecord| {
            !matches!(
                level_of(doc, r.subject.algorithm.as_deref().unwrap_or("")),
                Some("weak" | "insecure")
            )
        };
        let Some(best) = set.iter().copied().filter(|r| acceptable(r)).max_by(by_speed) else {
            continue;
        };
        let rejected = fastest_any.filter(|f| !acceptable(f) && ok(f) > ok(best)).map(|f| {
            let alg = f.subject.algorithm.as_deref().unwrap_or("");
            format!(
                "<div class=\"cost\">Fastest of all: {} {} {}</div>",
                code_name(alg),
                level_badge(level_of(doc, alg).unwrap_or("unrated")),
                esc(&BytesPerSec(ok(f).unwrap_or(0.0)).to_string())
            )
        });
        let low = best.ci95_low.unwrap_or(f64::INFINITY);
        let mut tied: Vec<&ResultRecord> = set
            .iter()
            .copied()
            .filter(|r| acceptable(r) && r.ci95_high.is_some_and(|h| h >= low))
            .collect();
        tied.sort_by(|a, b| ok(b).partial_cmp(&ok(a)).unwrap_or(std::cmp::Ordering::Equal));
        let names: Vec<String> = tied
            .iter()
            .map(|r| code_name(r.subject.algorithm.as_deref().unwrap_or("")))
            .collect();
        let tie = if names.len() > 1 {
            format!("<span class=\"tie\">{} tied</span>", names.len())
        } else {
            String::new()
        };
        let name = path
            .as_deref()
            .map(|p| {
                std::path::Path::new(p)
                    .file_name()
                    .map_or(p.to_string(), |f| f.to_string_lossy().into_owned())
            })
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "<div class=\"pick\"><div class=\"what\">File {} · {name} ({}, {} mode)</div><div class=\"choice\">{}{}</div><div class=\"fig\">{}{tie}</div></div>",
            esc(op.as_deref().unwrap_or("")),
            Bytes(bytes.unwrap_or(0)),
            esc(mode.as_deref().unwrap_or("")),
            names.join(" <span class=\"eq\">=</span> "),
            rejected.unwrap_or_default(),
            esc(&BytesPerSec(ok(best).unwrap_or(0.0)).to_string())
        );
    }
    s
}

/// What changing would gain: the before/after of the configuration installed here,
/// when the run measured one (`recommendations[].now`, `gain` and `diff`). A run
/// without one says so, so the section is always where a reader looks for it.
fn gain_section(doc: &Document) -> String {
    let with_diff: Vec<&Value> = doc
        .recommendations
        .iter()
        .filter(|r| !r["now"].is_null() || !r["diff"].is_null() || !r["gain"].is_null())
        .collect();
    if doc.recommendations.is_empty() {
        return String::new();
    }
    let mut s = String::from("<section id=\"gain\">\n<h2>What changing would gain</h2>\n");
    if with_diff.is_empty() {
        s.push_str(
            "<p class=\"muted\">This run did not read a configuration installed here, so it has no before and after: \
the lines below are what to use, measured against the other options.</p>\n",
        );
    }
    for r in with_diff {
        let _ = writeln!(
            s,
            "<div class=\"diff\">\n<h3>{}</h3>",
            esc(&target_heading(r["target"].as_str().unwrap_or("")))
        );
        s.push_str("<table class=\"kv\"><tbody>\n");
        let row = |k: &str, v: &Value| -> String {
            if v.is_null() {
                String::new()
            } else {
                format!("<tr><th>{}</th><td>{}</td></tr>\n", esc(k), esc(&plain(v)))
            }
        };
        s.push_str(&row("Now", &r["now"]));
        // What the recommendation negotiates with the same peer, when the diff says.
        let negotiated = doc.run.settings["installed_diff"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|d| d["software"] == r["target"])
            .and_then(|d| negotiated_label(&d["recommended"]));
        match negotiated {
            Some(label) => s.push_str(&row("Recommended", &Value::String(label))),
            None => s.push_str(&row("Recommended", &r["choice"])),
        }
        s.push_str(&row("Gain", &r["gain"]));
        s.push_str("</tbody></table>\n");
        if let Some(lines) = r["diff"].as_array() {
            s.push_str("<pre class=\"config udiff\"><code>");
            for l in lines.iter().filter_map(|l| l.as_str()) {
                let class = match l.chars().next() {
                    Some('+') if !l.starts_with("+++") => "add",
                    Some('-') if !l.starts_with("---") => "del",
                    _ => "ctx",
                };
                let _ = writeln!(s, "<span class=\"{class}\">{}</span>", esc(l));
            }
            s.push_str("</code></pre>\n");
        }
        s.push_str("</div>\n");
    }
    s.push_str("</section>\n");
    s
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
fn config_section(doc: &Document) -> String {
    if doc.recommendations.is_empty() {
        return String::new();
    }
    let mut s = String::from("<section id=\"config\">\n<h2>Config lines</h2>\n");
    for r in &doc.recommendations {
        let lines: Vec<String> = r["lines"]
            .as_array()
            .map(|a| a.iter().filter_map(|l| l.as_str()).map(esc).collect())
            .unwrap_or_default();
        if lines.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            "<h3>{}</h3>\n<p class=\"where\">{}</p>\n<pre class=\"config\"><code>{}</code></pre>",
            esc(&target_heading(r["target"].as_str().unwrap_or(""))),
            inline_code(r["location"].as_str().unwrap_or("")),
            lines.join("\n")
        );
    }
    s.push_str("</section>\n");
    s
}

/// Text with its `backticked` parts as code, escaped.
fn inline_code(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{}</code>", esc(part))
            } else {
                esc(part)
            }
        })
        .collect()
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

/// The machine and the run's settings, folded away at the end: a two-column table.
fn machine_section(doc: &Document) -> String {
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
    let table = |rows: &[(String, String)]| {
        let mut t = String::from("<table class=\"kv\"><tbody>\n");
        for (k, v) in rows {
            let _ = writeln!(t, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
        }
        t.push_str("</tbody></table>\n");
        t
    };
    let mut s = String::from("<details id=\"machine\">\n<summary>Machine and settings</summary>\n<h3>Machine</h3>\n");
    s.push_str(&table(&rows));
    if !set.is_empty() {
        s.push_str("<h3>Settings</h3>\n");
        s.push_str(&table(&set));
    }
    s.push_str("</details>\n");
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
        let (groups, common) = simple_groups(doc, kind, metric);
        if !groups.is_empty() {
            charted.push((kind, metric));
            s.push_str(&bar_chart(id, caption, &chart_note(&common), &groups, None));
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
        let (groups, common) = simple_groups(doc, kind, metric);
        s.push_str(&bar_chart(
            &format!("chart-other-{n}"),
            &kind_metric_words(kind, metric),
            &chart_note(&common),
            &groups,
            None,
        ));
    }

    if s.is_empty() {
        return String::new();
    }
    format!("<section id=\"charts\">\n<h2>Charts</h2>\n{s}</section>\n")
}

/// One bar per result of a kind and metric, labelled by what differs between them
/// (`X25519 · rsa-2048`), with what they all share said once (`TLSv1.3 · openssl`).
fn simple_groups(doc: &Document, kind: Kind, metric: Metric) -> (Vec<Group>, String) {
    let results: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == kind && r.metric == metric && ok(r).is_some())
        .collect();
    let fields = |r: &ResultRecord| -> Vec<(String, String)> {
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
    };
    let all: Vec<Vec<(String, String)>> = results.iter().map(|r| fields(r)).collect();
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
    let kind = match kind {
        Kind::Primitive => "Primitive",
        Kind::File => "File",
        Kind::TlsBulk => "TLS bulk",
        Kind::TlsHandshake => "TLS handshake",
        Kind::TlsAccept => "TLS acceptance",
        Kind::SshBulk => "SSH bulk",
        Kind::SshHandshake => "SSH handshake",
        Kind::SshAccept => "SSH acceptance",
    };
    let (metric, better) = match metric {
        Metric::BytesPerSec => ("throughput", "higher is faster"),
        Metric::HandshakesPerSec => ("handshakes per second", "higher is faster"),
        Metric::Seconds => ("time", "lower is faster"),
        Metric::Accepted => ("accepted", "1 is accepted"),
    };
    format!("{kind} {metric} ({better})")
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
        "<section id=\"verdicts\">\n<h2>Security verdicts, with reasons</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th>option</th><th>kind</th><th>level</th><th>reasons and sources</th></tr></thead>\n<tbody>\n",
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
            esc(&domain.replace(['-', '_'], " ")),
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

fn ranking_table(r: &Value) -> String {
    let list = r["list"].as_str().unwrap_or("");
    let metric = r["metric"].as_str().unwrap_or("");
    let ranked = r["ranked"].as_array().cloned().unwrap_or_default();
    if ranked.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "<h3>{}, fastest first</h3>\n<div class=\"scroll\"><table>\n<thead><tr><th>rank</th><th>option</th><th>level</th><th>median</th><th>measured as</th></tr></thead><tbody>\n",
        esc(&list_heading(list))
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
    let mut s = String::from("<section id=\"tables\">\n<h2>Detailed results</h2>\n");
    let mut seen: Vec<&str> = Vec::new();
    for r in &doc.recommendations {
        for ranking in r["rankings"].as_array().into_iter().flatten() {
            let list = ranking["list"].as_str().unwrap_or("");
            if !seen.contains(&list) {
                seen.push(list);
                s.push_str(&ranking_table(ranking));
            }
        }
    }
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
        assert_eq!(inline_code("then `sshd -t` <b>"), "then <code>sshd -t</code> &lt;b&gt;");
    }

    #[test]
    fn settings_read_as_words_never_as_json() {
        let settings = serde_json::json!({
            "budget_seconds": 90.0,
            "targets": ["nginx", "sshd"],
            "race": {"seconds": 4.5, "contests": [{"list": "tls13_suites", "contenders": ["A", "B"]}]}
        });
        let mut rows = Vec::new();
        settings_rows("", &settings, &mut rows);
        let text: Vec<String> = rows.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        assert_eq!(
            text,
            [
                "Budget = 90 s",
                "Targets = nginx, sshd",
                "Race › seconds = 4.5",
                "Race › contests = list: tls13_suites; contenders: A, B",
            ]
        );
        assert!(rows.iter().all(|(k, v)| !(k.contains('{') || v.contains('{') || v.contains('"'))));
    }

    #[test]
    fn the_answer_names_ties_and_the_cost_of_safety_in_words() {
        let ranking = serde_json::json!({
            "list": "tls13_suites", "metric": "bytes_per_sec", "higher_is_better": true,
            "ranked": [
                {"name": "TLS_AES_128_GCM_SHA256", "rank": 1, "tied": true, "level": "recommended", "median": 1.0e9},
                {"name": "TLS_AES_256_GCM_SHA384", "rank": 1, "tied": true, "level": "recommended", "median": 0.9e9},
                {"name": "TLS_AES_128_CCM_SHA256", "rank": 3, "tied": false, "level": "secure", "median": 0.5e9}
            ],
            "fastest_refused": {"name": "TLS_AES_128_CCM_8_SHA256", "level": "weak", "median": 1.2e9, "tied_with_best": false}
        });
        let html = pick(&ranking).unwrap();
        assert!(html.contains(">TLS 1.3 cipher suites<"), "{html}");
        assert!(html.contains("2 tied") && html.contains("TLS_<wbr>AES_<wbr>256_<wbr>GCM"), "{html}");
        assert!(!html.contains("CCM_<wbr>SHA256"), "rank 3 is not an answer: {html}");
        assert!(html.contains("20% faster") && html.contains("level-weak"), "{html}");
        assert!(html.contains("1.00 GB/s"), "{html}");
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
    fn the_gain_section_shows_a_before_and_after_when_the_run_has_one() {
        let mut d = doc(vec![]);
        d.recommendations = vec![serde_json::json!({
            "protocol": "ssh", "target": "sshd", "location": "/etc/ssh/sshd_config", "policy": "intermediate",
            "choice": {"ssh_ciphers": ["aes128-gcm@openssh.com"]},
            "lines": ["Ciphers aes128-gcm@openssh.com"],
            "rankings": []
        })];
        let none = gain_section(&d);
        assert!(none.contains("id=\"gain\"") && none.contains("no before and after"), "{none}");
        d.recommendations[0]["now"] = serde_json::json!({"ssh_ciphers": ["aes128-cbc"]});
        d.recommendations[0]["gain"] = serde_json::json!("+38% throughput (95% CI +20% to +55%)");
        d.recommendations[0]["diff"] = serde_json::json!([
            "--- sshd_config",
            "+++ sshd_config",
            "-Ciphers aes128-cbc",
            "+Ciphers aes128-gcm@openssh.com"
        ]);
        d.run.settings = serde_json::json!({"installed_diff": [{"software": "sshd", "recommended":
            {"protocol": "ssh", "cipher": "aes128-gcm@openssh.com", "mac": null, "kex": "curve25519-sha256", "hostkey": "ssh-ed25519"}}]});
        let html = gain_section(&d);
        assert!(html.contains(">sshd (server)<"), "{html}");
        assert!(
            html.contains("<th>Recommended</th><td>aes128-gcm@openssh.com (implicit MAC) · curve25519-sha256 · ssh-ed25519</td>"),
            "{html}"
        );
        assert!(html.contains("<th>Now</th><td>ssh ciphers: aes128-cbc</td>"), "{html}");
        assert!(html.contains("<th>Gain</th><td>+38% throughput"), "{html}");
        assert!(html.contains("<span class=\"del\">-Ciphers aes128-cbc</span>"), "{html}");
        assert!(
            html.contains("<span class=\"add\">+Ciphers aes128-gcm@openssh.com</span>"),
            "{html}"
        );
        assert!(html.contains("<span class=\"ctx\">--- sshd_config</span>"), "{html}");
    }

    #[test]
    fn a_file_run_answers_with_the_fastest_cipher_the_judge_accepts() {
        use crate::model::Subject;
        let file = |alg: &str, v: f64| {
            let s = Subject {
                algorithm: Some(alg.into()),
                op: Some("encrypt".into()),
                path: Some("/tmp/big.iso".into()),
                mode: Some("memory".into()),
                bytes: Some(1 << 20),
                ..Subject::default()
            };
            result(Kind::File, Metric::BytesPerSec, s, v)
        };
        let mut d = doc(vec![file("aes-256-ecb", 9.0e9), file("aes-256-ctr", 7.0e9), file("des-cbc", 0.1e9)]);
        d.verdicts = vec![
            serde_json::json!({"subject": {"domain": "primitive", "name": "aes-256-ecb"}, "level": "insecure", "reasons": []}),
            serde_json::json!({"subject": {"domain": "primitive", "name": "AES-256-CTR"}, "level": "secure", "reasons": []}),
        ];
        let html = file_picks(&d);
        let choice = &html[html.find("class=\"choice\"").unwrap()..];
        assert!(choice.starts_with("class=\"choice\"><code>aes-<wbr>256-<wbr>ctr</code>"), "{html}");
        assert!(
            html.contains("Fastest of all: <code>aes-<wbr>256-<wbr>ecb</code>") && html.contains("level-insecure"),
            "{html}"
        );
        assert!(
            html.contains("7.00 GB/s") && html.contains("big.iso (1 MiB, memory mode)"),
            "{html}"
        );
    }

    #[test]
    fn nice_ticks_cover_the_maximum() {
        let t = nice_ticks(4.64e9);
        assert!(*t.last().unwrap() >= 4.64e9);
        assert!(t.len() <= 7, "{t:?}");
    }
}
