//! The fleet's export reader against one hostile host: any figure of any of its
//! results set to NaN, ±Infinity, 0, a negative number or 1e38–1e308 (written as
//! an export would carry it: NaN and the infinities as the JSON text a broken
//! writer makes). The merge must not panic, must refuse that host by name, and
//! every other host's answer (its class's lines, leaders and rankings, and the
//! fleet-wide lines) must be what it is without that host.

use super::*;
use crate::model::{Kind, Metric, ResultRecord, Subject, Summary, SCHEMA};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::OnceLock;

const HOSTS: [&str; 4] = ["web1", "web2", "web3", "edge1"];
const ALGS: [&str; 3] = ["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"];

fn knowledge() -> &'static crate::judge::Knowledge {
    static K: OnceLock<crate::judge::Knowledge> = OnceLock::new();
    K.get_or_init(|| crate::judge::Knowledge::builtin().unwrap())
}

/// A host's export: web1–3 share a CPU with AES instructions, edge1 has none.
fn export(host: usize) -> Value {
    let aes = host < 3;
    let results: Vec<Value> = ALGS
        .iter()
        .map(|alg| {
            let base: f64 = match (aes, *alg) {
                (true, "aes-128-gcm") => 5.0e9,
                (true, "aes-256-gcm") => 4.2e9,
                (true, _) => 2.9e9,
                (false, "chacha20-poly1305") => 2.4e9,
                (false, _) => 0.4e9,
            };
            let m = base * (1.0 + 0.004 * host as f64);
            let s = Summary {
                median: m,
                mean: m,
                min: m * 0.97,
                max: m * 1.03,
                ci95_low: m * 0.99,
                ci95_high: m * 1.01,
                samples: 12,
                cv: 0.01,
            };
            let subject = Subject {
                algorithm: Some(alg.to_string()),
                op: Some("encrypt".into()),
                bytes: Some(16384),
                library: Some("openssl".into()),
                ..Default::default()
            };
            let mut r = ResultRecord::ok(Kind::Primitive, subject, Metric::BytesPerSec, &s, Some(&s));
            r.wall_median = Some(m * 0.98);
            serde_json::to_value(r).unwrap()
        })
        .collect();
    let flags: &[&str] = if aes { &["aes", "pclmulqdq", "avx2"] } else { &["avx2"] };
    json!({"schema": SCHEMA, "run": {"id": format!("run-{host}"), "started_at": "2026-01-01T00:00:00Z",
        "status": "complete", "command": "run",
        "host": {"cpu_model": if aes { "EPYC" } else { "Atom" }, "cores": 2, "cpu_flags": flags,
                 "kernel": "k", "arch": "x86_64", "hostname": "vm"},
        "libraries": {"openssl": "OpenSSL 3.0.19", "gnutls": "3.7.9"}},
        "results": results})
}

/// Where a hostile figure goes in one result, and whether 0 is impossible there
/// (a CPU time per login of 0 is not: the server's clock ticks are 10 ms; nor a
/// coefficient of variation of 0).
const FIELDS: [(&str, bool); 15] = [
    ("median", true),
    ("mean", true),
    ("min", true),
    ("max", true),
    ("ci95_low", true),
    ("ci95_high", true),
    ("cpu_median", true),
    ("wall_median", true),
    ("p95", true),
    ("rounds", true),
    ("cv", false),
    ("handshake_cpu.client.mean", false),
    ("handshake_cpu.client.ci95_low", false),
    ("handshake_cpu.server.ci95_high", false),
    ("handshake_cpu.total.mean", false),
];

const MARK: &str = "@@hostile@@";

/// Puts the marker where `field` says.
fn plant(r: &mut Value, field: &str) {
    let m = Value::String(MARK.into());
    if field == "rounds" {
        r["rounds"] = json!([{"round": "r#1", "value": 1.0e9}, {"round": "r#2", "value": m}]);
    } else if let Some(rest) = field.strip_prefix("handshake_cpu.") {
        let (end, key) = rest.split_once('.').unwrap();
        let mut f = json!({"mean": 0.002, "ci95_low": 0.001, "ci95_high": 0.003, "samples": 8});
        f[key] = m;
        r["handshake_cpu"] = json!({"method": "test"});
        r["handshake_cpu"][end] = f;
    } else {
        r[field] = m;
    }
}

/// The hostile value as export text.
#[derive(Debug, Clone)]
enum Hostile {
    NaN,
    Inf,
    NegInf,
    Zero,
    Negative(f64),
    Huge(f64),
}

impl Hostile {
    fn text(&self) -> String {
        match self {
            Hostile::NaN => "NaN".into(),
            Hostile::Inf => "1e999".into(),
            Hostile::NegInf => "-1e999".into(),
            Hostile::Zero => "0".into(),
            Hostile::Negative(v) | Hostile::Huge(v) => format!("{v:e}"),
        }
    }
}

fn hostile() -> impl Strategy<Value = Hostile> {
    prop_oneof![
        Just(Hostile::NaN),
        Just(Hostile::Inf),
        Just(Hostile::NegInf),
        Just(Hostile::Zero),
        (-300.0f64..308.0).prop_map(|e| Hostile::Negative(-(10f64.powf(e)))),
        (38.0f64..308.0).prop_map(|e| Hostile::Huge(10f64.powf(e))),
    ]
}

fn build_of(files: &[PathBuf]) -> FleetReport {
    let policy = crate::judge::Policy::builtin("intermediate").unwrap();
    let targets: Vec<String> = crate::software::ansible().iter().map(|s| s.to_string()).collect();
    build(
        files,
        64 << 20,
        knowledge(),
        &policy,
        &targets,
        &mut crate::progress::Progress::new(true),
    )
}

/// What a host is told: its class's lines, leaders and rankings.
fn answer_of(r: &FleetReport, host: &str) -> Value {
    let class = r.classes.iter().find(|c| c.hosts.iter().any(|h| h == host)).expect("merged");
    json!({"lines": class.lines, "answer": class.answer, "rankings": class.rankings})
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn one_hostile_figure_refuses_its_host_by_name_and_changes_no_other_answer(
        victim in 0..HOSTS.len(),
        record in 0..ALGS.len(),
        field in 0..FIELDS.len(),
        value in hostile(),
    ) {
        let (field, zero_refused) = FIELDS[field];
        prop_assume!(zero_refused || !matches!(value, Hostile::Zero));
        let dir = tempfile::tempdir().unwrap();
        let mut all = Vec::new();
        let mut others = Vec::new();
        for (i, h) in HOSTS.iter().enumerate() {
            let mut doc = export(i);
            if i == victim {
                plant(&mut doc["results"][record], field);
            }
            let text = doc.to_string().replace(&format!("\"{MARK}\""), &value.text());
            let path = dir.path().join(format!("{h}.json"));
            std::fs::write(&path, text).unwrap();
            all.push(path.clone());
            if i != victim {
                others.push(path);
            }
        }
        let with = build_of(&all);
        let without = build_of(&others);
        let name = HOSTS[victim];
        let refused: Vec<&crate::fleet::merge::Problem> = with.problems.iter().filter(|p| p.host == name).collect();
        prop_assert_eq!(refused.len(), 1, "{} is refused by name: {:?}", name, with.problems);
        prop_assert!(refused[0].error.contains(name), "{:?}", refused[0]);
        if matches!(value, Hostile::Zero | Hostile::Negative(_) | Hostile::Huge(_)) {
            prop_assert_eq!(refused[0].kind.as_str(), "implausible", "{:?}", refused[0]);
        }
        prop_assert_eq!(with.hosts_merged, HOSTS.len() - 1);
        prop_assert!(!with.host_classes.contains_key(name));
        prop_assert_eq!(with.problems.len(), 1, "{:?}", with.problems);
        for h in HOSTS.iter().filter(|h| **h != name) {
            prop_assert_eq!(answer_of(&with, h), answer_of(&without, h), "{}", h);
        }
        prop_assert_eq!(
            serde_json::to_value(&with.fleet.lines).unwrap(),
            serde_json::to_value(&without.fleet.lines).unwrap()
        );
        // And the answer is not empty: every class has lines.
        for c in &with.classes {
            prop_assert!(c.lines.iter().any(|l| !l.lines.is_empty()), "{}: no lines", c.id);
        }
    }
}

/// The case that emptied a class: every figure of one host of three at 1e308
/// (4e38 is enough for an f32). That host is refused, the class keeps its lines.
#[test]
fn a_host_whose_figures_overflow_an_f32_is_refused_and_its_class_keeps_its_lines() {
    for huge in ["1e308", "4e38"] {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for (i, h) in HOSTS.iter().enumerate() {
            let mut doc = export(i);
            if i == 2 {
                for r in doc["results"].as_array_mut().unwrap() {
                    for f in ["median", "mean", "min", "max", "ci95_low", "ci95_high", "cpu_median", "wall_median"] {
                        r[f] = MARK.into();
                    }
                }
            }
            let path = dir.path().join(format!("{h}.json"));
            std::fs::write(&path, doc.to_string().replace(&format!("\"{MARK}\""), huge)).unwrap();
            files.push(path);
        }
        let r = build_of(&files);
        assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
        assert_eq!((r.problems[0].host.as_str(), r.problems[0].kind.as_str()), ("web3", "implausible"));
        assert!(r.problems[0].error.contains("median is"), "{}", r.problems[0].error);
        for c in &r.classes {
            for l in &c.lines {
                assert!(!l.lines.is_empty(), "{} {}: empty", c.id, l.target);
            }
            assert!(!c.lines.is_empty(), "{}: no lines", c.id);
        }
    }
}
