//! Reading host exports one at a time into per-class summaries.
//!
//! Why this shape: a fleet is thousands of exports of ~0.5 MB each, mostly verdicts
//! and recommendations that every host repeats. Only `run` (to class the host) and
//! `results` (the figures) are kept; the rest is skipped while parsing. Each file is
//! parsed, folded into its class's accumulator and dropped, so memory holds the
//! per-class summaries (per subject: one 12-byte figure per host, for the pooled
//! median and the outlier test), never a whole document. Files are parsed by a few
//! worker threads over a bounded channel; the fold itself is single-threaded.
//!
//! A file that cannot be merged (truncated, not JSON, not a cipherbench export,
//! another schema) is an error that names it; the other files are still merged.

use crate::model::{Host, Kind, Metric, ResultRecord, Status, SCHEMA};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The part of a `cipherbench/1` export the merge reads.
#[derive(Deserialize)]
struct Export {
    schema: String,
    run: RunLite,
    results: Vec<ResultRecord>,
    #[serde(default)]
    #[allow(dead_code)]
    verdicts: serde::de::IgnoredAny,
    #[serde(default)]
    #[allow(dead_code)]
    recommendations: serde::de::IgnoredAny,
}

/// The part of `run` the merge reads, typed (no `serde_json::Value` per host: the
/// installed diff alone is hundreds of entries). Other fields are skipped.
#[derive(Deserialize)]
pub struct RunLite {
    pub host: Host,
    #[serde(default)]
    pub libraries: BTreeMap<String, String>,
    #[serde(default)]
    pub settings: SettingsLite,
}

#[derive(Deserialize, Default)]
pub struct SettingsLite {
    #[serde(default)]
    pub cpu_caps: Option<serde_json::Value>,
    #[serde(default)]
    pub openssh: Option<serde_json::Value>,
    #[serde(default)]
    pub installed_diff: Vec<DiffLite>,
}

#[derive(Deserialize)]
pub struct DiffLite {
    #[serde(default)]
    pub software: String,
    #[serde(default)]
    pub offered: Vec<OfferLite>,
}

#[derive(Deserialize)]
pub struct OfferLite {
    #[serde(default)]
    pub list: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub level: String,
    #[serde(default = "yes")]
    pub allowed: bool,
}

fn yes() -> bool {
    true
}

/// Just the schema, to say what a file that is not an export is.
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    schema: Option<serde_json::Value>,
}

/// A file (or host) that could not be merged, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    pub host: String,
    pub file: String,
    /// `truncated`, `not-json`, `foreign`, `schema`, `malformed`, `duplicate`,
    /// `unreadable`, `failed` or `unreachable`.
    pub kind: String,
    pub error: String,
}

/// What decides cipher speed on a host: the CPU, its speed-deciding flags (as the
/// run could use them: `--cpu-caps` masks are taken off) and the library versions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ClassKey {
    pub arch: String,
    pub cpu_model: String,
    pub cpu_flags: Vec<String>,
    pub openssl: String,
    pub gnutls: String,
    pub openssh: String,
}

impl ClassKey {
    pub fn label(&self) -> String {
        let flags = if self.cpu_flags.is_empty() {
            "no crypto flags".to_string()
        } else {
            self.cpu_flags.join(" ")
        };
        format!(
            "{} ({}) · {} · {} · GnuTLS {} · {}",
            self.cpu_model, self.arch, flags, self.openssl, self.gnutls, self.openssh
        )
    }
}

/// Flags that decide which cipher is fastest (the rest of the fingerprint, e.g.
/// ssse3, is implied by these on any CPU that matters).
fn deciding(flag: &str, arm: bool) -> bool {
    if arm {
        matches!(flag, "aes" | "pmull" | "sha2")
    } else {
        matches!(flag, "aes" | "pclmulqdq" | "vaes" | "vpclmulqdq" | "avx2" | "sha_ni") || flag.starts_with("avx512")
    }
}

/// Flags a `--cpu-caps` mask hides from libcrypto.
fn masked_by(cap: &str) -> &'static [&'static str] {
    match cap {
        "no-aesni" => &["aes", "pclmulqdq", "vaes", "vpclmulqdq", "pmull"],
        "no-pclmul" => &["pclmulqdq", "vpclmulqdq", "pmull"],
        "no-avx" => &[
            "avx",
            "avx2",
            "avx512f",
            "avx512dq",
            "avx512ifma",
            "avx512bw",
            "avx512vl",
            "vaes",
            "vpclmulqdq",
        ],
        "no-avx2" => &["avx2"],
        "no-avx512" => &["avx512f", "avx512dq", "avx512ifma", "avx512bw", "avx512vl"],
        "no-shani" => &["sha_ni", "sha1", "sha2", "sha512"],
        "no-ssse3" => &["ssse3"],
        _ => &[],
    }
}

/// The class of a run.
pub fn class_key(run: &RunLite) -> ClassKey {
    let h = &run.host;
    let arm = h.arch.starts_with("aarch64") || h.arch.starts_with("arm");
    let caps = run
        .settings
        .cpu_caps
        .as_ref()
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let hidden: Vec<&str> = caps.split(',').map(str::trim).flat_map(|c| masked_by(c).iter().copied()).collect();
    let mut flags: Vec<String> = h
        .cpu_flags
        .iter()
        .filter(|f| deciding(f, arm) && !hidden.contains(&f.as_str()))
        .cloned()
        .collect();
    flags.sort();
    flags.dedup();
    let lib = |n: &str| run.libraries.get(n).cloned().unwrap_or_else(|| "unknown".into());
    let openssh = run
        .settings
        .openssh
        .as_ref()
        .and_then(|v| v.as_str())
        .map(|v| v.split([',', ' ']).next().unwrap_or(v).to_string())
        .unwrap_or_else(|| "OpenSSH unknown".into());
    ClassKey {
        arch: h.arch.clone(),
        cpu_model: h.cpu_model.clone(),
        cpu_flags: flags,
        openssl: lib("openssl"),
        gnutls: lib("gnutls"),
        openssh,
    }
}

/// One host's figure for one subject (f32: the summaries are ±1% anyway).
#[derive(Debug, Clone, Copy)]
pub struct Fig {
    pub host: u32,
    pub median: f32,
    pub low: f32,
    pub high: f32,
}

/// Every host's figure for one subject of a class.
#[derive(Debug, Clone)]
pub struct SubjectAcc {
    /// The first host's record, for the subject's kind, fields and metric.
    pub template: ResultRecord,
    pub figs: Vec<Fig>,
    pub samples: usize,
}

/// A class being merged.
#[derive(Debug, Clone)]
pub struct ClassAcc {
    pub key: ClassKey,
    /// Host indices into [`Merged::hosts`].
    pub hosts: Vec<u32>,
    /// Subject key → figures.
    pub subjects: HashMap<String, SubjectAcc>,
}

/// Everything merged.
#[derive(Debug, Default)]
pub struct Merged {
    pub hosts: Vec<String>,
    pub classes: Vec<ClassAcc>,
    pub problems: Vec<Problem>,
    /// Class of each host (index into `classes`).
    pub class_of: Vec<usize>,
    /// Installed-configuration findings (from each run's `installed_diff`): what
    /// the installed software offers → how many hosts.
    pub findings: BTreeMap<Offer, usize>,
}

/// One option an installed program offers, as the run's installed diff saw it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Offer {
    pub software: String,
    pub list: String,
    pub name: String,
    pub level: String,
    /// Whether the host's own run policy allowed it (the fleet re-judges it).
    pub allowed_by_run: bool,
}

/// The options each installed program offers, from the run's settings.
fn offers(run: &RunLite) -> Vec<Offer> {
    let mut out = Vec::new();
    for d in &run.settings.installed_diff {
        for o in &d.offered {
            out.push(Offer {
                software: d.software.clone(),
                list: o.list.clone(),
                name: o.name.clone(),
                level: o.level.clone(),
                allowed_by_run: o.allowed,
            });
        }
    }
    out.sort();
    out.dedup();
    out
}

/// One export, parsed and reduced to what the fold needs.
struct Parsed {
    host: String,
    file: String,
    key: ClassKey,
    results: Vec<ResultRecord>,
    offers: Vec<Offer>,
}

/// The identity of a result across hosts: kind, subject fields and metric.
pub fn subject_key(r: &ResultRecord) -> String {
    let kind = serde_json::to_string(&r.kind).unwrap_or_default();
    let metric = serde_json::to_string(&r.metric).unwrap_or_default();
    let subject = serde_json::to_string(&r.subject).unwrap_or_default();
    format!("{kind}|{metric}|{subject}")
}

/// The host a file stands for: its name without `.json` (profile.yml writes
/// `results/HOST.json`; every host's own hostname may well be the same).
pub fn host_of(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    for ext in [".json", ".failed", ".unreachable"] {
        if let Some(stem) = name.strip_suffix(ext) {
            return stem.to_string();
        }
    }
    name
}

/// Expands directories into their `*.json` files and host markers, sorted.
pub fn expand(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<Problem>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for p in paths {
        if p.is_dir() {
            match std::fs::read_dir(p) {
                Ok(rd) => {
                    let mut v: Vec<PathBuf> = rd
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|f| {
                            let n = f.to_string_lossy();
                            f.is_file() && (n.ends_with(".json") || n.ends_with(".failed") || n.ends_with(".unreachable"))
                        })
                        .collect();
                    v.sort();
                    files.extend(v);
                }
                Err(e) => problems.push(Problem {
                    host: String::new(),
                    file: p.display().to_string(),
                    kind: "unreadable".into(),
                    error: format!("cannot list {}: {e}", p.display()),
                }),
            }
        } else {
            files.push(p.clone());
        }
    }
    (files, problems)
}

/// Reads one file: an export, or a profile.yml marker for a host that failed or
/// was unreachable.
fn read_one(path: &Path) -> Result<Parsed, Problem> {
    let host = host_of(path);
    let file = path.display().to_string();
    let problem = |kind: &str, error: String| Problem {
        host: host.clone(),
        file: file.clone(),
        kind: kind.to_string(),
        error,
    };
    let bytes = std::fs::read(path).map_err(|e| problem("unreadable", format!("cannot read {file}: {e}")))?;
    for marker in ["failed", "unreachable"] {
        if file.ends_with(&format!(".{marker}")) {
            let why = String::from_utf8_lossy(&bytes).trim().to_string();
            let why = if why.is_empty() {
                format!("host {marker} (see the play recap)")
            } else {
                why
            };
            return Err(problem(marker, format!("{host}: {why}")));
        }
    }
    match serde_json::from_slice::<Export>(&bytes) {
        Ok(e) if e.schema == SCHEMA => Ok(Parsed {
            key: class_key(&e.run),
            offers: offers(&e.run),
            host,
            file,
            results: e.results,
        }),
        Ok(e) => Err(problem(
            "schema",
            format!("{file}: schema {:?}, but this cipherbench merges {SCHEMA}", e.schema),
        )),
        Err(e) if e.is_eof() => Err(problem(
            "truncated",
            format!(
                "{file}: truncated: the JSON ends early (line {}, column {}); was the fetch cut off?",
                e.line(),
                e.column()
            ),
        )),
        Err(e) if e.is_syntax() => Err(problem("not-json", format!("{file}: not a cipherbench export: not JSON ({e})"))),
        Err(e) => match serde_json::from_slice::<Probe>(&bytes).ok().and_then(|p| p.schema) {
            Some(serde_json::Value::String(s)) if s == SCHEMA => {
                Err(problem("malformed", format!("{file}: malformed {SCHEMA} export: {e}")))
            }
            Some(serde_json::Value::String(s)) if s.starts_with("cipherbench/") => Err(problem(
                "schema",
                format!("{file}: schema {s:?}, but this cipherbench merges {SCHEMA}"),
            )),
            _ => Err(problem(
                "foreign",
                format!("{file}: not a cipherbench export (no \"schema\": \"{SCHEMA}\"; another program's JSON?)"),
            )),
        },
    }
}

impl Merged {
    fn fold(&mut self, p: Parsed) {
        if self.hosts.contains(&p.host) {
            self.problems.push(Problem {
                host: p.host.clone(),
                file: p.file,
                kind: "duplicate".into(),
                error: format!("host {} appears twice; the first export was kept", p.host),
            });
            return;
        }
        let h = self.hosts.len() as u32;
        self.hosts.push(p.host);
        for o in p.offers {
            *self.findings.entry(o).or_insert(0) += 1;
        }
        let ci = match self.classes.iter().position(|c| c.key == p.key) {
            Some(i) => i,
            None => {
                self.classes.push(ClassAcc {
                    key: p.key,
                    hosts: Vec::new(),
                    subjects: HashMap::new(),
                });
                self.classes.len() - 1
            }
        };
        self.class_of.push(ci);
        let class = &mut self.classes[ci];
        class.hosts.push(h);
        for r in p.results {
            let (Status::Ok, Some(m)) = (r.status, r.median) else { continue };
            let low = r.ci95_low.unwrap_or(m);
            let high = r.ci95_high.unwrap_or(m);
            let samples = r.samples.unwrap_or(1);
            let key = subject_key(&r);
            let acc = class.subjects.entry(key).or_insert_with(|| SubjectAcc {
                template: r,
                figs: Vec::new(),
                samples: 0,
            });
            acc.samples += samples;
            acc.figs.push(Fig {
                host: h,
                median: m as f32,
                low: low as f32,
                high: high as f32,
            });
        }
    }
}

/// Merges `files` one at a time (a few parser threads, one fold), with a progress
/// bar on a terminal. Files are folded as they are parsed: the fold does not depend
/// on their order (pooled medians, sorted outputs), and nothing waits in memory for
/// a slower file. A host named twice is found before parsing: the first file (in
/// the order given) is kept.
pub fn merge(files: &[PathBuf], progress: &mut crate::report::progress::Progress) -> Merged {
    let mut merged = Merged::default();
    let mut seen: HashMap<String, &PathBuf> = HashMap::new();
    let mut todo: Vec<&PathBuf> = Vec::new();
    for f in files {
        let host = host_of(f);
        let marker = f.to_string_lossy().ends_with(".failed") || f.to_string_lossy().ends_with(".unreachable");
        if marker {
            todo.push(f);
            continue;
        }
        match seen.get(&host) {
            Some(first) => merged.problems.push(Problem {
                host: host.clone(),
                file: f.display().to_string(),
                kind: "duplicate".into(),
                error: format!("host {host} appears twice; {} was merged, {} was not", first.display(), f.display()),
            }),
            None => {
                seen.insert(host, f);
                todo.push(f);
            }
        }
    }
    progress.start(todo.len() as u64);
    progress.message("merging host exports");
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).clamp(1, 4);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Parsed, Problem>>(workers * 2);
    std::thread::scope(|s| {
        for _ in 0..workers {
            let tx = tx.clone();
            let next = &next;
            let todo = &todo;
            s.spawn(move || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(f) = todo.get(i) else { break };
                if tx.send(read_one(f)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for r in rx {
            match r {
                Ok(p) => merged.fold(p),
                Err(p) => merged.problems.push(p),
            }
            progress.inc();
        }
    });
    progress.finish();
    merged.problems.sort_by(|a, b| a.file.cmp(&b.file));
    merged
}

/// Whether a larger figure is better for this metric.
pub fn higher_is_better(metric: Metric) -> bool {
    !matches!(metric, Metric::Seconds)
}

/// Subjects that say something about speed (feature checks do not).
pub fn is_speed(kind: Kind, metric: Metric) -> bool {
    metric != Metric::Accepted && kind != Kind::SshAccept && kind != Kind::TlsAccept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(flags: &[&str], settings: serde_json::Value) -> RunLite {
        serde_json::from_value(serde_json::json!({
            "id": "t", "started_at": "2026-01-01T00:00:00Z", "status": "complete", "command": "run",
            "host": {"cpu_model": "AMD EPYC", "cores": 2, "cpu_flags": flags, "kernel": "k", "arch": "x86_64", "hostname": "vm"},
            "libraries": {"openssl": "OpenSSL 3.0.19", "gnutls": "3.7.9"}, "settings": settings,
        }))
        .unwrap()
    }

    #[test]
    fn classes_use_the_flags_the_run_could_use() {
        let all = ["aes", "pclmulqdq", "ssse3", "avx", "avx2", "vaes", "vpclmulqdq", "sha_ni"];
        let plain = class_key(&run(&all, serde_json::json!({"openssh": "OpenSSH_9.2p1 Debian-2, OpenSSL 3.0.19"})));
        assert_eq!(
            plain.cpu_flags,
            ["aes", "avx2", "pclmulqdq", "sha_ni", "vaes", "vpclmulqdq"],
            "ssse3/avx do not decide"
        );
        assert_eq!(plain.openssh, "OpenSSH_9.2p1");
        let masked = class_key(&run(&all, serde_json::json!({"cpu_caps": "no-aesni"})));
        assert_eq!(masked.cpu_flags, ["avx2", "sha_ni"]);
        assert_ne!(plain, masked);
        // The same hardware and libraries are one class whatever the hostname.
        assert_eq!(
            plain.label(),
            class_key(&run(&all, serde_json::json!({"openssh": "OpenSSH_9.2p1"}))).label()
        );
    }

    #[test]
    fn results_fold_into_their_class_and_failed_ones_are_skipped() {
        let rec = |median: Option<f64>| ResultRecord {
            median,
            ci95_low: median.map(|m| m * 0.9),
            ci95_high: median.map(|m| m * 1.1),
            samples: Some(5),
            ..ResultRecord::not_ok(Kind::Primitive, Default::default(), Metric::BytesPerSec, Status::Ok, "")
        };
        let mut m = Merged::default();
        for (h, flags) in [("a", &["aes"][..]), ("b", &["aes"][..]), ("c", &[][..])] {
            m.fold(Parsed {
                host: h.into(),
                file: format!("{h}.json"),
                key: class_key(&run(flags, serde_json::json!({}))),
                results: vec![rec(Some(1.0e9)), rec(None)],
                offers: vec![],
            });
        }
        m.fold(Parsed {
            host: "a".into(),
            file: "again/a.json".into(),
            key: class_key(&run(&[], serde_json::json!({}))),
            results: vec![],
            offers: vec![],
        });
        assert_eq!(m.classes.len(), 2);
        assert_eq!(m.classes[0].hosts, [0, 1]);
        assert_eq!(m.classes[0].subjects.len(), 1);
        assert_eq!(m.classes[0].subjects.values().next().unwrap().figs.len(), 2);
        assert_eq!(m.problems.len(), 1);
        assert_eq!(m.problems[0].kind, "duplicate");
    }
}
