//! Reading host exports one at a time into per-class summaries.
//!
//! Why this shape: a fleet is thousands of exports of ~0.5 MB each, mostly verdicts
//! and recommendations that every host repeats. Only `run` (to class the host) and
//! `results` (the figures) are kept; the rest is skipped while parsing. Each file is
//! parsed, folded into its class's accumulator and dropped, so memory holds the
//! per-class summaries (per subject: one 32-byte figure per host, for the pooled
//! median and the outlier test), never a whole document. Files are parsed by a few
//! worker threads over a bounded channel; the fold itself is single-threaded.
//!
//! A file that cannot be merged (truncated, not JSON, not a cipherbench export,
//! another schema, larger than the limit, unreadable, a symlink loop, a name that
//! cannot be an inventory host, the same run as another file) is a [`Problem`] that
//! names it; the other files are still merged.
//!
//! Every export is hostile input (a host writes its own): its size is checked on
//! the open file before a byte is read, reading streams through a cap of the limit
//! plus one byte, and the lists it holds are bounded in length, so a file of any
//! size costs the same memory. Files are folded in the order given (a small window
//! of files parsed ahead), so which of two duplicates is kept never depends on
//! thread timing.

use crate::model::{Host, Kind, Metric, ResultRecord, Status, SCHEMA};
use serde::{Deserialize, Deserializer, Serialize};
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

mod files;
pub use files::{bad_host_name, expand, host_of};
use files::{is_marker, read_one};

/// The default `--max-export-size`: a main job's export is about 0.5 MB.
pub const DEFAULT_MAX_EXPORT: u64 = 64 << 20;

/// At most this many results, installed-diff entries or offered options per export
/// (a main job has a few hundred): a small file of tiny records must not become
/// gigabytes of parsed records.
pub const MAX_LIST: usize = 100_000;

/// Longer CPU models and version strings are cut to this many bytes; results and
/// offered options with longer names are not merged (no algorithm name is).
pub const MAX_NAME: usize = 256;

/// A JSON array of at most [`MAX_LIST`] elements.
fn bounded_list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct V<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "a list of at most {MAX_LIST} entries")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut out = Vec::new();
            while let Some(x) = seq.next_element()? {
                if out.len() == MAX_LIST {
                    return Err(serde::de::Error::custom(format!("more than {MAX_LIST} entries in one list")));
                }
                out.push(x);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(V(std::marker::PhantomData))
}

/// The part of a `cipherbench/1` export the merge reads.
#[derive(Deserialize)]
struct Export {
    schema: String,
    run: RunLite,
    #[serde(deserialize_with = "bounded_list")]
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
    /// The run's id: the same run under two file names is one host.
    #[serde(default)]
    pub id: String,
    pub host: Host,
    #[serde(default)]
    pub libraries: BTreeMap<String, String>,
    #[serde(default)]
    pub settings: SettingsLite,
    /// What the host's software could be configured with (`run.capabilities`).
    #[serde(default)]
    pub capabilities: crate::model::Capabilities,
}

#[derive(Deserialize, Default)]
pub struct SettingsLite {
    #[serde(default)]
    pub cpu_caps: Option<serde_json::Value>,
    #[serde(default)]
    pub openssh: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "bounded_list")]
    pub installed_diff: Vec<DiffLite>,
}

#[derive(Deserialize)]
pub struct DiffLite {
    #[serde(default)]
    pub software: String,
    #[serde(default, deserialize_with = "bounded_list")]
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
    /// `truncated`, `not-json`, `foreign`, `schema`, `malformed`, `implausible` (a
    /// figure that is not finite, positive and physically possible:
    /// `crate::plausible`), `duplicate` (a
    /// host name or a run id seen before), `too-large`, `bad-name` (a name that
    /// cannot be an inventory host), `unreadable` (missing, a symlink loop, not a
    /// regular file, no permission), `failed` or `unreachable`.
    pub kind: String,
    pub error: String,
}

/// What decides cipher speed on a host: the CPU, its speed-deciding flags (as the
/// run could use them: `--cpu-caps` masks are taken off) and the library versions:
/// each of the machine's own libraries in the registry (`backend::libraries`; one
/// built into cipherbench is the same on every host), by its `--lib` name
/// (`openssl`, `gnutls`: flattened into the key's JSON), and OpenSSH.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ClassKey {
    pub arch: String,
    pub cpu_model: String,
    pub cpu_flags: Vec<String>,
    #[serde(flatten)]
    pub libraries: BTreeMap<String, String>,
    pub openssh: String,
}

impl ClassKey {
    pub fn label(&self) -> String {
        let flags = if self.cpu_flags.is_empty() {
            "no crypto flags".to_string()
        } else {
            self.cpu_flags.join(" ")
        };
        let mut parts = vec![format!("{} ({})", self.cpu_model, self.arch), flags];
        for e in machine_libraries() {
            let v = self.libraries.get(e.name).map_or("unknown", String::as_str);
            parts.push(crate::backend::libraries::shown_version(e, v));
        }
        parts.push(self.openssh.clone());
        parts.join(" · ")
    }
}

/// The registered libraries that are the machine's own, in the registry's order.
fn machine_libraries() -> impl Iterator<Item = &'static crate::backend::libraries::Entry> {
    crate::backend::libraries::ALL.iter().copied().filter(|e| !e.built_in)
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
    // No CPU model or version string is longer than a line: a longer one (outside
    // text) is cut, so a host cannot make every class key megabytes long.
    let cut = |s: &str| crate::untrusted::bounded(s, MAX_NAME).into_owned();
    ClassKey {
        arch: cut(&h.arch),
        cpu_model: cut(&h.cpu_model),
        cpu_flags: flags,
        libraries: machine_libraries().map(|e| (e.name.to_string(), cut(&lib(e.name)))).collect(),
        openssh: cut(&openssh),
    }
}

/// One host's figure for one subject, as the export has it (f64, like every figure:
/// an f32 overflows at 3.4e38, and the reader's bounds, `crate::plausible`, are
/// stated in f64).
#[derive(Debug, Clone, Copy)]
pub struct Fig {
    pub host: u32,
    pub median: f64,
    pub low: f64,
    pub high: f64,
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
    /// What every host of the class can be configured with (fleet/caps.rs).
    pub capabilities: Option<crate::model::Capabilities>,
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
    /// Run id → the host and file it was merged as.
    pub runs: HashMap<String, (String, String)>,
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
            if [&d.software, &o.list, &o.name, &o.level].iter().any(|s| s.len() > MAX_NAME) {
                continue;
            }
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
    run_id: String,
    key: ClassKey,
    results: Vec<ResultRecord>,
    offers: Vec<Offer>,
    capabilities: crate::model::Capabilities,
}

/// The identity of a result across hosts: kind, subject fields and metric.
pub fn subject_key(r: &ResultRecord) -> String {
    let kind = serde_json::to_string(&r.kind).unwrap_or_default();
    let metric = serde_json::to_string(&r.metric).unwrap_or_default();
    let subject = serde_json::to_string(&r.subject).unwrap_or_default();
    format!("{kind}|{metric}|{subject}")
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
        if !p.run_id.is_empty() {
            if let Some((host, file)) = self.runs.get(&p.run_id) {
                self.problems.push(Problem {
                    host: p.host.clone(),
                    file: p.file.clone(),
                    kind: "duplicate".into(),
                    error: format!(
                        "{} holds run {}, the same run as {file} (host {host}): one run under two names, counted once, as {host}",
                        p.file, p.run_id
                    ),
                });
                return;
            }
            self.runs.insert(p.run_id.clone(), (p.host.clone(), p.file.clone()));
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
                    capabilities: None,
                });
                self.classes.len() - 1
            }
        };
        self.class_of.push(ci);
        let class = &mut self.classes[ci];
        class.hosts.push(h);
        class.capabilities = Some(super::caps::fold(class.capabilities.take(), p.capabilities));
        for r in p.results {
            let (Status::Ok, Some(m)) = (r.status, r.median) else { continue };
            let low = r.ci95_low.unwrap_or(m);
            let high = r.ci95_high.unwrap_or(m);
            let samples = r.samples.unwrap_or(1);
            let key = subject_key(&r);
            if key.len() > 8 * MAX_NAME {
                continue;
            }
            let acc = class.subjects.entry(key).or_insert_with(|| SubjectAcc {
                template: r,
                figs: Vec::new(),
                samples: 0,
            });
            acc.samples = acc.samples.saturating_add(samples);
            acc.figs.push(Fig {
                host: h,
                median: m,
                low,
                high,
            });
        }
    }
}

/// Merges `files` (each at most `limit` bytes) with a few parser threads and one
/// fold, with a progress bar on a terminal. Files are folded in the order given:
/// the parsers work at most a small window ahead of the fold, so memory holds a
/// few parsed files, never all of them, and which of two duplicates is kept (the
/// first) does not depend on which thread was faster. A host named twice, or a
/// name that cannot be an inventory host, is found before parsing.
pub fn merge(files: &[PathBuf], limit: u64, progress: &mut crate::progress::Progress) -> Merged {
    use std::sync::{Condvar, Mutex};
    let mut merged = Merged::default();
    let todo = screen(files, &mut merged.problems);
    progress.start(todo.len() as u64);
    progress.message("merging host exports");
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).clamp(1, 4);
    let window = workers * 2;
    // (next file to parse, files folded): a parser waits while it is a window ahead.
    let state = Mutex::new((0usize, 0usize));
    let moved = Condvar::new();
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Result<Parsed, Problem>)>(window);
    std::thread::scope(|s| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (state, moved, todo) = (&state, &moved, &todo);
            s.spawn(move || loop {
                let i = {
                    let mut g = state.lock().unwrap_or_else(|e| e.into_inner());
                    while g.0 < todo.len() && g.0 >= g.1 + window {
                        g = moved.wait(g).unwrap_or_else(|e| e.into_inner());
                    }
                    if g.0 >= todo.len() {
                        break;
                    }
                    g.0 += 1;
                    g.0 - 1
                };
                if tx.send((i, read_one(todo[i], limit))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut ahead: BTreeMap<usize, Result<Parsed, Problem>> = BTreeMap::new();
        let mut folded = 0;
        for (i, r) in rx {
            ahead.insert(i, r);
            while let Some(r) = ahead.remove(&folded) {
                match r {
                    Ok(p) => merged.fold(p),
                    Err(p) => merged.problems.push(p),
                }
                folded += 1;
                progress.inc();
            }
            state.lock().unwrap_or_else(|e| e.into_inner()).1 = folded;
            moved.notify_all();
        }
    });
    progress.finish();
    merged.problems.sort_by(|a, b| a.file.cmp(&b.file));
    merged
}

/// The files to read, in order: each host once (a second file for a host is a
/// problem, as is a name that cannot be an inventory host); markers always.
fn screen<'a>(files: &'a [PathBuf], problems: &mut Vec<Problem>) -> Vec<&'a PathBuf> {
    let mut seen: HashMap<String, &PathBuf> = HashMap::new();
    let mut todo: Vec<&PathBuf> = Vec::new();
    for f in files {
        let host = host_of(f);
        if let Some(why) = bad_host_name(&host) {
            problems.push(Problem {
                host: String::new(),
                file: f.display().to_string(),
                kind: "bad-name".into(),
                error: format!(
                    "{}: {:?} cannot be an inventory host name ({why}); not merged",
                    f.display(),
                    crate::untrusted::bounded(&host, 120)
                ),
            });
            continue;
        }
        if is_marker(f) {
            todo.push(f);
            continue;
        }
        match seen.get(&host) {
            Some(first) => problems.push(Problem {
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
    todo
}

/// Whether a larger figure is better for this metric.
pub fn higher_is_better(metric: Metric) -> bool {
    !matches!(metric, Metric::Seconds)
}

/// Subjects that say something about speed (feature checks do not).
pub fn is_speed(kind: Kind, metric: Metric) -> bool {
    metric != Metric::Accepted && kind.is_speed()
}

#[cfg(test)]
mod tests {
    use super::files::*;
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
        // The machine's libraries from the registry, each by its title; rustls,
        // built into cipherbench, is no part of a class.
        assert!(
            plain.label().ends_with(" · OpenSSL 3.0.19 · GnuTLS 3.7.9 · OpenSSH_9.2p1"),
            "{}",
            plain.label()
        );
        let json = serde_json::to_value(&plain).unwrap();
        assert_eq!(
            (&json["openssl"], &json["gnutls"]),
            (&"OpenSSL 3.0.19".into(), &"3.7.9".into()),
            "{json}"
        );
        assert!(json.get("rustls").is_none() && json.get("libraries").is_none(), "{json}");
        let masked = class_key(&run(&all, serde_json::json!({"cpu_caps": "no-aesni"})));
        assert_eq!(masked.cpu_flags, ["avx2", "sha_ni"]);
        assert_ne!(plain, masked);
        // The same hardware and libraries are one class whatever the hostname.
        assert_eq!(
            plain.label(),
            class_key(&run(&all, serde_json::json!({"openssh": "OpenSSH_9.2p1"}))).label()
        );
    }

    /// An aarch64 run as the aux vector reports the CPU (issue 39).
    fn arm_run(flags: &[&str], settings: serde_json::Value) -> RunLite {
        let mut r = run(flags, settings);
        r.host.arch = "aarch64".into();
        r.host.cpu_model = "Cortex-A72".into();
        r
    }

    #[test]
    fn aarch64_runs_with_and_without_aes_and_pmull_are_different_classes() {
        let base = ["fp", "asimd", "evtstrm", "crc32", "cpuid", "sha1", "sha2"];
        let crypto: Vec<&str> = base.iter().copied().chain(["aes", "pmull"]).collect();
        let with = class_key(&arm_run(&crypto, serde_json::json!({})));
        let without = class_key(&arm_run(&base, serde_json::json!({})));
        assert_eq!(with.cpu_flags, ["aes", "pmull", "sha2"], "ARM's deciding flags");
        assert_eq!(without.cpu_flags, ["sha2"]);
        assert_ne!(with, without, "a CPU without ARMv8 AES/PMULL is a class of its own");
        assert_ne!(with.label(), without.label());
        // AES alone (PMULL missing: GHASH without it) decides too.
        let aes_only = class_key(&arm_run(&["asimd", "aes", "sha2"], serde_json::json!({})));
        assert_ne!(aes_only, with);
        assert_ne!(aes_only, without);
        // --cpu-caps no-aesni on a CPU with the extensions (OPENSSL_armcap without AES
        // and PMULL) measures the class of one without them.
        let masked = class_key(&arm_run(&crypto, serde_json::json!({"cpu_caps": "no-aesni"})));
        assert_eq!(masked, without);
        // And an x86 run with the same flag names is never an ARM class.
        let x86 = class_key(&run(&["aes", "sha2"], serde_json::json!({})));
        assert_ne!(x86.arch, with.arch);
        assert_eq!(x86.cpu_flags, ["aes"], "sha2 is not an x86 flag that decides");
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
                run_id: format!("run-{h}"),
                key: class_key(&run(flags, serde_json::json!({}))),
                results: vec![rec(Some(1.0e9)), rec(None)],
                offers: vec![],
                capabilities: Default::default(),
            });
        }
        m.fold(Parsed {
            host: "a".into(),
            file: "again/a.json".into(),
            run_id: "run-again".into(),
            key: class_key(&run(&[], serde_json::json!({}))),
            results: vec![],
            offers: vec![],
            capabilities: Default::default(),
        });
        assert_eq!(m.classes.len(), 2);
        assert_eq!(m.classes[0].hosts, [0, 1]);
        assert_eq!(m.classes[0].subjects.len(), 1);
        assert_eq!(m.classes[0].subjects.values().next().unwrap().figs.len(), 2);
        assert_eq!(m.problems.len(), 1);
        assert_eq!(m.problems[0].kind, "duplicate");
    }
    #[test]
    fn host_names_that_cannot_be_file_names_are_refused() {
        for ok in ["web1", "web1.example.net", "127.0.0.2", "2001:db8::1", "host_01-a"] {
            assert_eq!(bad_host_name(ok), None, "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            ".hidden",
            "-v",
            "a..b",
            "a/b",
            "../x",
            "a\\b",
            "a b",
            "a\nb",
            "a\x1bb",
            "a\u{85}b",
            "a\u{2028}b",
            "<script>",
            "{{x}}",
            "é",
        ] {
            assert!(bad_host_name(bad).is_some(), "{bad:?}");
        }
        assert!(bad_host_name(&"a".repeat(254)).is_some());
    }

    #[test]
    fn a_file_over_the_limit_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.json");
        std::fs::File::create(&big).unwrap().set_len(3 << 30).unwrap();
        let p = read_one(&big, 1 << 20).err().expect("refused");
        assert_eq!(p.kind, "too-large");
        assert!(p.error.contains("big.json") && p.error.contains("1 MiB"), "{}", p.error);
        // A file that is a little too long for the cap is refused while it streams.
        let over = Cell::new(false);
        let mut r = Capped::new(&b"0123456789"[..], 4, &over);
        let mut out = Vec::new();
        assert!(r.read_to_end(&mut out).is_err());
        assert!(over.get());
        let over = Cell::new(false);
        let mut out = Vec::new();
        Capped::new(&b"0123"[..], 4, &over).read_to_end(&mut out).unwrap();
        assert_eq!((out.as_slice(), over.get()), (&b"0123"[..], false));
    }

    #[test]
    fn an_export_larger_than_the_buffer_streams_and_parses() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("web1.json");
        let doc = serde_json::json!({"schema": SCHEMA, "run": {"id": "r",
            "host": {"cpu_model": "m", "cores": 1, "cpu_flags": [], "kernel": "k".repeat(5 << 20), "arch": "x86_64", "hostname": "h"}},
            "results": []});
        std::fs::write(&f, doc.to_string()).unwrap();
        let p = read_one(&f, 64 << 20).unwrap_or_else(|p| panic!("{p:?}"));
        assert_eq!((p.host.as_str(), p.run_id.as_str()), ("web1", "r"));
        assert_eq!(read_one(&f, 5 << 20).err().map(|p| p.kind), Some("too-large".into()));
        std::fs::write(&f, &doc.to_string()[..(5 << 20) + 100]).unwrap();
        assert_eq!(read_one(&f, 64 << 20).err().map(|p| p.kind), Some("truncated".into()));
    }

    #[test]
    fn lists_longer_than_the_bound_are_refused() {
        #[derive(Deserialize)]
        struct L {
            #[serde(deserialize_with = "bounded_list")]
            v: Vec<u8>,
        }
        let ok = format!("{{\"v\": [{}]}}", vec!["1"; MAX_LIST].join(","));
        assert_eq!(serde_json::from_str::<L>(&ok).unwrap().v.len(), MAX_LIST);
        let long = format!("{{\"v\": [{}]}}", vec!["1"; MAX_LIST + 1].join(","));
        assert!(serde_json::from_str::<L>(&long).is_err());
    }

    #[test]
    fn the_same_run_under_two_names_is_merged_once_and_the_first_in_order_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let doc = |id: &str| {
            serde_json::json!({"schema": SCHEMA, "run": {"id": id,
                "host": {"cpu_model": "m", "cores": 1, "cpu_flags": [], "kernel": "k", "arch": "x86_64", "hostname": "h"}},
                "results": []})
            .to_string()
        };
        let mut files = Vec::new();
        for (name, id) in [("a", "r1"), ("b", "r2"), ("c", "r1"), ("d", "r3"), ("e", "r1")] {
            let f = dir.path().join(format!("{name}.json"));
            std::fs::write(&f, doc(id)).unwrap();
            files.push(f);
        }
        for _ in 0..5 {
            let m = merge(&files, 1 << 20, &mut crate::progress::Progress::new(true));
            assert_eq!(m.hosts, ["a", "b", "d"]);
            let dups: Vec<&str> = m.problems.iter().map(|p| p.host.as_str()).collect();
            assert_eq!(dups, ["c", "e"]);
            assert!(m.problems.iter().all(|p| p.kind == "duplicate" && p.error.contains("a.json")));
        }
    }
}
