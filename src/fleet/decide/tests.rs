//! Classes of hosts with known figures, which the decide tests share.

use super::*;
use crate::fleet::merge::{ClassAcc, Fig, SubjectAcc};
use crate::model::{Kind, Metric, ResultRecord, Subject, Summary};
use std::collections::HashMap;

fn prim(alg: &str) -> ResultRecord {
    let s = Summary {
        median: 1.0,
        mean: 1.0,
        min: 1.0,
        max: 1.0,
        ci95_low: 1.0,
        ci95_high: 1.0,
        samples: 10,
        cv: 0.01,
    };
    let subject = Subject {
        algorithm: Some(alg.into()),
        op: Some("encrypt".into()),
        bytes: Some(16384),
        library: Some("openssl".into()),
        ..Default::default()
    };
    ResultRecord::ok(Kind::Primitive, subject, Metric::BytesPerSec, &s, None)
}

/// A class whose hosts measured `algs` at `rate(alg, host)` (±2% intervals).
pub(super) fn class(name: &str, hosts: u32, first: u32, algs: &[&str], rate: impl Fn(&str, u32) -> f64) -> ClassAcc {
    let mut subjects = HashMap::new();
    for a in algs {
        let t = prim(a);
        let figs = (first..first + hosts)
            .map(|h| {
                let m = rate(a, h);
                Fig {
                    host: h,
                    median: m,
                    low: m * 0.98,
                    high: m * 1.02,
                }
            })
            .collect();
        subjects.insert(
            crate::fleet::merge::subject_key(&t),
            SubjectAcc {
                template: t,
                figs,
                samples: 10 * hosts as usize,
            },
        );
    }
    ClassAcc {
        key: ClassKey {
            arch: "x86_64".into(),
            cpu_model: name.into(),
            cpu_flags: vec![],
            libraries: [("openssl", "o"), ("gnutls", "g")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into(),
            openssh: "s".into(),
        },
        hosts: (first..first + hosts).collect(),
        subjects,
        capabilities: None,
    }
}
