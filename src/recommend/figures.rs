//! The figure each option is ranked by, read from the document: TLS suites from
//! `tls-bulk` records or their primitives, SSH logins from `ssh-handshake` CPU.

use super::rank::{serial, Measured};
use crate::judge::{Knowledge, TlsSuite};
use crate::model::{Document, Kind, Metric, ResultRecord, Status, Summary};

/// TLS records carry at most 16 KiB, so that is the size primitives are read at.
const TLS_RECORD: u64 = 16384;

/// The primitives a suite's bytes go through: its cipher (or AEAD) and, when not
/// AEAD, its HMAC. `None` when the catalogue cannot measure them.
pub fn suite_primitives(s: &TlsSuite) -> Option<(String, Option<String>)> {
    let bits = s.enc_bits;
    let cipher = match s.enc.as_str() {
        "AESGCM" => format!("aes-{bits}-gcm"),
        "AESCCM" | "AESCCM8" => format!("aes-{bits}-ccm"),
        "ARIAGCM" => format!("aria-{bits}-gcm"),
        "CHACHA20/POLY1305" => "chacha20-poly1305".to_string(),
        "AES" => format!("aes-{bits}-cbc"),
        "Camellia" => format!("camellia-{bits}-cbc"),
        "3DES" => "des-ede3-cbc".to_string(),
        "DES" => "des-cbc".to_string(),
        "RC4" => "rc4".to_string(),
        "RC2" => "rc2-cbc".to_string(),
        "IDEA" => "idea-cbc".to_string(),
        "SEED" => "seed-cbc".to_string(),
        _ => return None,
    };
    let mac = match s.mac.as_str() {
        "AEAD" => None,
        "SHA1" => Some("hmac-sha1".to_string()),
        "SHA256" => Some("hmac-sha256".to_string()),
        "MD5" => Some("hmac-md5".to_string()),
        _ => return None,
    };
    Some((cipher, mac))
}

/// The `primitive` record [`primitive_rate`] takes for `name`: encrypt, or the
/// MAC/digest op, one thread, OpenSSL's when it has one, at the TLS record size
/// when measured, else the largest size below it, else the largest.
pub(super) fn primitive_record<'a>(doc: &'a Document, name: &str) -> Option<&'a ResultRecord> {
    let ok = |r: &&ResultRecord| r.status == Status::Ok && r.subject.algorithm.as_deref().is_some_and(|a| a.eq_ignore_ascii_case(name));
    let single = |r: &&ResultRecord| r.subject.threads.unwrap_or(1) == 1;
    let op = |r: &&ResultRecord| matches!(r.subject.op.as_deref(), Some("encrypt" | "mac" | "digest") | None);
    let mut prims: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::Primitive && r.metric == Metric::BytesPerSec)
        .filter(ok)
        .filter(single)
        .filter(op)
        .collect();
    // The servers configured here use OpenSSL: its figures win over another library's.
    if prims.iter().any(|r| r.subject.library.as_deref().is_none_or(|l| l == "openssl")) {
        prims.retain(|r| r.subject.library.as_deref().is_none_or(|l| l == "openssl"));
    }
    let size = |r: &ResultRecord| r.subject.bytes.unwrap_or(0);
    prims
        .iter()
        .filter(|r| size(r) <= TLS_RECORD)
        .max_by_key(|r| size(r))
        .or_else(|| prims.iter().max_by_key(|r| size(r)))
        .copied()
}

/// The primitives of `doc` (a run pooled with its history) whose records the
/// ranking takes pool at least `evidence::SETTLED_RUNS` runs.
pub(super) fn settled(doc: &Document) -> super::evidence::Settled {
    let names: std::collections::BTreeSet<String> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::Primitive)
        .filter_map(|r| r.subject.algorithm.as_deref())
        .map(str::to_ascii_lowercase)
        .collect();
    let pooled = |n: &String| primitive_record(doc, n).is_some_and(|r| r.pooled_runs >= super::evidence::SETTLED_RUNS);
    super::evidence::Settled(names.into_iter().filter(pooled).collect())
}

/// The throughput of one primitive in `doc`: `primitive` results (encrypt, or the
/// MAC/digest op) at the TLS record size when measured, else the largest size below
/// it, else the largest; failing that, `file` encryption.
pub(super) fn primitive_rate(doc: &Document, name: &str) -> Option<Measured> {
    if let Some(r) = primitive_record(doc, name) {
        return Some(Measured {
            summary: r.summary()?,
            basis: format!(
                "{name} {} at {} B",
                r.subject.op.as_deref().unwrap_or(""),
                r.subject.bytes.unwrap_or(0)
            ),
        });
    }
    let ok = |r: &&ResultRecord| r.status == Status::Ok && r.subject.algorithm.as_deref().is_some_and(|a| a.eq_ignore_ascii_case(name));
    // `file` results: seconds for a file of `bytes`, turned into a rate.
    let f = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::File && r.subject.op.as_deref() == Some("encrypt"))
        .filter(ok)
        .filter(|r| r.metric == Metric::Seconds && r.subject.bytes.unwrap_or(0) > 0)
        .max_by_key(|r| r.subject.bytes)?;
    let s = f.summary()?;
    let b = f.subject.bytes? as f64;
    let rate = |x: f64| if x > 0.0 { b / x } else { 0.0 };
    Some(Measured {
        summary: Summary {
            median: rate(s.median),
            mean: rate(s.mean),
            min: rate(s.max),
            max: rate(s.min),
            ci95_low: rate(s.ci95_high),
            ci95_high: rate(s.ci95_low),
            samples: s.samples,
            cv: s.cv,
        },
        basis: format!("file {name} encrypt, {} B", f.subject.bytes?),
    })
}

/// The best ok result among `records` (highest, or lowest when `lower`).
pub(super) fn best<'a>(records: impl Iterator<Item = &'a ResultRecord>, lower: bool) -> Option<&'a ResultRecord> {
    records.filter(|r| r.status == Status::Ok && r.median.is_some()).max_by(|a, b| {
        let o = a.median.partial_cmp(&b.median).unwrap_or(std::cmp::Ordering::Equal);
        if lower {
            o.reverse()
        } else {
            o
        }
    })
}

/// The figure for a TLS suite: its own `tls-bulk` result; else, when the run
/// measured TLS bulk at all, the suite of the same protocol with the same Enc and
/// Mac (bulk cost does not depend on Kx/Au, which loopback fixes), so that one
/// ranking never mixes wire figures with bare primitive figures; else its
/// primitives.
pub(super) fn suite_rate_with(doc: &Document, k: &Knowledge, s: &TlsSuite) -> Option<Measured> {
    if let Some((r, sibling)) = suite_bulk_record(doc, k, s) {
        return Some(Measured {
            summary: r.summary()?,
            basis: if sibling {
                format!("{} (same Enc and Mac)", r.basis())
            } else {
                r.basis()
            },
        });
    }
    if doc.results.iter().any(|r| ranked_bulk(r) && r.status == Status::Ok) {
        // TLS was measured (a subject the budget skipped was not), but not this
        // Enc+Mac: leave it unmeasured rather than rank a bare primitive figure
        // against figures over the wire.
        return None;
    }
    suite_rate(doc, s)
}

/// The round values (`ResultRecord::rounds`) of the `tls-bulk` record behind a
/// suite's figure ([`suite_rate_with`]): its own, or its same-Enc-and-Mac
/// sibling's; empty when the figure is not a wire figure measured in rounds.
pub(super) fn suite_rounds(doc: &Document, k: &Knowledge, s: &TlsSuite) -> Vec<crate::model::RoundValue> {
    suite_bulk_record(doc, k, s).map(|(r, _)| r.rounds.clone()).unwrap_or_default()
}

/// The `tls-bulk` record a suite is ranked by: its own (`false`), else the
/// suite of the same protocol with the same Enc and Mac (`true`).
fn suite_bulk_record<'a>(doc: &'a Document, k: &Knowledge, s: &TlsSuite) -> Option<(&'a ResultRecord, bool)> {
    if let Some(r) = best(doc.results.iter().filter(|r| ranked_bulk(r) && named(r, s)), false) {
        if r.summary().is_some() {
            return Some((r, false));
        }
    }
    let same_bulk =
        doc.results.iter().filter(|r| ranked_bulk(r)).filter(|r| {
            r.subject.suite.as_deref().and_then(|n| k.tls_suite(n)).is_some_and(|t| {
                t.is_tls13() == s.is_tls13() && suite_primitives(t).is_some() && suite_primitives(t) == suite_primitives(s)
            })
        });
    best(same_bulk, false).filter(|r| r.summary().is_some()).map(|r| (r, true))
}

/// Whether a record names the suite (IANA, alias or OpenSSL name).
fn named(r: &ResultRecord, s: &TlsSuite) -> bool {
    [&r.subject.suite, &r.subject.openssl_name]
        .into_iter()
        .flatten()
        .any(|n| crate::aliases::same(n, &s.iana) || s.openssl.as_deref().is_some_and(|o| o.eq_ignore_ascii_case(n)))
}

/// A TLS bulk throughput record the ranking may use: not one measured through a
/// private server (`model::THROUGH_NGINX`, `model::through_mode`), which is a whole
/// server's figure for the diff, not a suite's record throughput.
fn ranked_bulk(r: &ResultRecord) -> bool {
    r.kind == Kind::TlsBulk && r.metric == Metric::BytesPerSec && crate::model::through_software(r.subject.mode.as_deref()).is_none()
}

/// The figure for a TLS suite: its own `tls-bulk` result, else its primitives.
pub(super) fn suite_rate(doc: &Document, s: &TlsSuite) -> Option<Measured> {
    let bulk = doc.results.iter().filter(|r| ranked_bulk(r));
    if let Some(r) = best(bulk.filter(|r| named(r, s)), false) {
        return Some(Measured {
            summary: r.summary()?,
            basis: r.basis(),
        });
    }
    suite_primitive_rate(doc, s)
}

/// The figure for a TLS suite from its primitives alone.
fn suite_primitive_rate(doc: &Document, s: &TlsSuite) -> Option<Measured> {
    let (cipher, mac) = suite_primitives(s)?;
    let c = primitive_rate(doc, &cipher)?;
    match mac {
        None => Some(c),
        Some(m) => {
            // A measured CBC+HMAC record primitive (aes-128-cbc-hmac-sha1) is the suite's
            // real record cost; otherwise the cipher and the HMAC one after the other.
            if let Some(stitched) = primitive_rate(doc, &format!("{cipher}-{m}")) {
                return Some(stitched);
            }
            let m = primitive_rate(doc, &m)?;
            Some(Measured {
                summary: serial(&c.summary, &m.summary),
                basis: format!("{} + {}", c.basis, m.basis),
            })
        }
    }
}

/// A suite's cost per byte from the primitives of the same run, named by them
/// (`aes-128-gcm`, `aes-128-cbc + hmac-sha1`), beside a figure over the wire
/// (see `evidence`): `None` when its own figure is not a wire figure, or its
/// primitives were not measured.
pub(super) fn suite_physics(doc: &Document, s: &TlsSuite, own: Option<&Measured>) -> Option<Measured> {
    if !own.is_some_and(|m| m.basis.starts_with(Kind::TlsBulk.name())) {
        return None;
    }
    let (cipher, mac) = suite_primitives(s)?;
    let m = suite_primitive_rate(doc, s)?;
    Some(Measured {
        summary: m.summary,
        basis: mac.map(|m| format!("{cipher} + {m}")).unwrap_or(cipher),
    })
}

/// An SSH cipher-and-MAC pair's cost per byte from the primitives of the same
/// run, named by them; `None` when one of them was not measured.
pub(super) fn ssh_physics(doc: &Document, cipher: &str, mac: Option<&str>) -> Option<Measured> {
    let (c, m) = crate::catalog::ssh_primitives(cipher, mac)?;
    let cr = primitive_rate(doc, &c)?;
    match m {
        None => Some(Measured {
            summary: cr.summary,
            basis: c,
        }),
        Some(m) => {
            let mr = primitive_rate(doc, &m)?;
            Some(Measured {
                summary: serial(&cr.summary, &mr.summary),
                basis: format!("{c} + {m}"),
            })
        }
    }
}

/// The figure of one `ssh-handshake` record as the ranking sees it: CPU per login
/// (both ends when the server was observable, else the client's), else wall time.
pub(super) fn handshake_figure(r: &ResultRecord, by: HandshakeMetric) -> Option<Measured> {
    let wall = r.summary()?;
    let ms = |x: f64| format!("{:.2}", x * 1e3);
    let fig = |f: &crate::model::CpuFigure| {
        if f.samples < 2 {
            format!("{} ms (one login, no interval)", ms(f.mean))
        } else {
            format!("{} ms [{}–{}]", ms(f.mean), ms(f.ci95_low), ms(f.ci95_high))
        }
    };
    let cpu = r.handshake_cpu.as_ref();
    let pick = match by {
        HandshakeMetric::Total => cpu.and_then(|c| c.total),
        HandshakeMetric::Client => cpu.and_then(|c| c.client),
        HandshakeMetric::Wall => None,
    };
    let Some(f) = pick else {
        return (by == HandshakeMetric::Wall).then(|| Measured {
            summary: wall,
            basis: format!("{}, wall time per login", r.basis()),
        });
    };
    let mut parts = Vec::new();
    if let Some(c) = cpu.and_then(|c| c.client.as_ref()) {
        parts.push(format!("client {}", fig(c)));
    }
    if let Some(sv) = cpu.and_then(|c| c.server.as_ref()) {
        parts.push(format!("server {}", fig(sv)));
    }
    parts.push(format!("wall {:.1} ms", wall.median * 1e3));
    Some(Measured {
        summary: Summary {
            median: f.mean,
            mean: f.mean,
            min: f.ci95_low,
            max: f.ci95_high,
            ci95_low: f.ci95_low,
            ci95_high: f.ci95_high,
            samples: f.samples,
            cv: 0.0,
        },
        basis: format!("{}: CPU per login {}", r.basis(), parts.join(", ")),
    })
}

/// What SSH kex and host keys are ranked by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HandshakeMetric {
    /// Client + server CPU per login (the private sshd).
    Total,
    /// The client's CPU per login (a remote server).
    Client,
    /// Wall time per login (documents from before CPU was recorded).
    Wall,
}

impl HandshakeMetric {
    pub(super) fn of(records: &[&ResultRecord]) -> HandshakeMetric {
        let all = |f: fn(&crate::model::HandshakeCpu) -> bool| {
            !records.is_empty() && records.iter().all(|r| r.handshake_cpu.as_ref().is_some_and(f))
        };
        if all(|c| c.total.is_some()) {
            HandshakeMetric::Total
        } else if all(|c| c.client.is_some()) {
            HandshakeMetric::Client
        } else {
            HandshakeMetric::Wall
        }
    }
    pub(super) fn name(self) -> &'static str {
        match self {
            HandshakeMetric::Total => "cpu_seconds",
            HandshakeMetric::Client => "client_cpu_seconds",
            HandshakeMetric::Wall => "seconds",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::{Knowledge, Policy};
    use crate::recommend::tests::{doc, prim};

    /// Once TLS bulk was measured, suites use wire figures only: a suite with the
    /// same Enc+Mac stands in (loopback fixes Kx/Au), and a bare primitive never
    /// ranks against figures over the wire.
    #[test]
    fn tls_bulk_figures_are_not_mixed_with_primitive_figures() {
        let k = Knowledge::builtin().unwrap();
        let mut wire = prim("aes-128-gcm", "encrypt", 16384, 1.0e9);
        wire["kind"] = "tls-bulk".into();
        wire["subject"] = serde_json::json!({"protocol": "TLSv1.2", "suite": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "bytes": 16384});
        let d = doc(serde_json::json!([wire, prim("aes-256-gcm", "encrypt", 16384, 4.0e9)]));
        let ecdsa = suite_rate_with(&d, &k, k.tls_suite("ECDHE-ECDSA-AES128-GCM-SHA256").unwrap()).unwrap();
        assert_eq!(ecdsa.summary.median, 1.0e9);
        assert!(ecdsa.basis.contains("same Enc and Mac"), "{}", ecdsa.basis);
        assert!(suite_rate_with(&d, &k, k.tls_suite("ECDHE-RSA-AES256-GCM-SHA384").unwrap()).is_none());
        // Without any TLS bulk result, primitives are the figure.
        let p = doc(serde_json::json!([prim("aes-256-gcm", "encrypt", 16384, 4.0e9)]));
        assert!(suite_rate_with(&p, &k, k.tls_suite("ECDHE-RSA-AES256-GCM-SHA384").unwrap()).is_some());
        // Nor with only TLS bulk subjects the budget skipped: nothing was measured over the wire.
        let mut skipped = serde_json::json!({"kind": "tls-bulk", "metric": "bytes_per_sec", "status": "failed",
            "reason": crate::model::BUDGET_SKIPPED,
            "subject": {"protocol": "TLSv1.2", "suite": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}});
        skipped["unit"] = wire["unit"].clone();
        let s = doc(serde_json::json!([skipped, prim("aes-256-gcm", "encrypt", 16384, 4.0e9)]));
        let m = suite_rate_with(&s, &k, k.tls_suite("ECDHE-RSA-AES256-GCM-SHA384").unwrap());
        assert_eq!(m.map(|m| m.summary.median), Some(4.0e9));
    }

    /// A figure measured through a private nginx is a web server's, for the diff:
    /// it never stands for a suite in the ranking, neither its own nor a twin's.
    #[test]
    fn figures_through_nginx_stay_out_of_the_ranking() {
        let k = Knowledge::builtin().unwrap();
        let bulk = |suite: &str, mode: Option<&str>, median: f64| {
            let mut r = prim("aes-128-gcm", "encrypt", 16384, median);
            r["kind"] = "tls-bulk".into();
            r["subject"] = serde_json::json!({"protocol": "TLSv1.2", "suite": suite, "bytes": 16384, "mode": mode});
            r
        };
        let d = doc(serde_json::json!([
            bulk("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", None, 1.0e9),
            bulk("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", Some(crate::model::THROUGH_NGINX), 3.0e9),
            bulk("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", Some(crate::model::THROUGH_NGINX), 2.0e9)
        ]));
        let own = suite_rate_with(&d, &k, k.tls_suite("ECDHE-RSA-AES128-GCM-SHA256").unwrap()).unwrap();
        assert_eq!(own.summary.median, 1.0e9, "{}", own.basis);
        // Measured only through nginx: unmeasured for the ranking.
        assert!(suite_rate_with(&d, &k, k.tls_suite("ECDHE-RSA-AES256-GCM-SHA384").unwrap()).is_none());
        // Only through-nginx figures: no wire figure, so primitives would stand in.
        let only = doc(serde_json::json!([bulk(
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            Some(crate::model::THROUGH_NGINX),
            3.0e9
        )]));
        assert!(suite_rate_with(&only, &k, k.tls_suite("ECDHE-RSA-AES128-GCM-SHA256").unwrap()).is_none_or(|m| m.summary.median != 3.0e9));
    }

    #[test]
    fn suites_are_measured_at_the_record_size_and_cbc_pays_cipher_then_mac() {
        let k = Knowledge::builtin().unwrap();
        let d = doc(serde_json::json!([
            prim("aes-128-gcm", "encrypt", 1024, 1.0e9),
            prim("aes-128-gcm", "encrypt", 16384, 4.0e9),
            prim("aes-128-gcm", "encrypt", 65536, 9.0e9),
            prim("aes-128-gcm", "decrypt", 16384, 8.0e9),
            prim("aes-128-cbc", "encrypt", 16384, 1.0e9),
            prim("hmac-sha1", "mac", 16384, 1.0e9),
        ]));
        let gcm = suite_rate(&d, k.tls_suite("TLS_AES_128_GCM_SHA256").unwrap()).unwrap();
        assert_eq!(gcm.summary.median, 4.0e9, "{}", gcm.basis);
        let cbc = suite_rate(&d, k.tls_suite("ECDHE-RSA-AES128-SHA").unwrap()).unwrap();
        assert!((cbc.summary.median - 0.5e9).abs() < 1.0, "{}", cbc.summary.median);
        assert!(suite_rate(&d, k.tls_suite("TLS_CHACHA20_POLY1305_SHA256").unwrap()).is_none());
        let p = Policy::builtin("intermediate").unwrap();
        let out = crate::recommend::recommend(&d, &k, &p, &crate::software::emitters(&["openssl".to_string()]));
        assert_eq!(out.recommendations.len(), 1, "only TLS was measured, for one target");
        let r = &out.recommendations[0];
        // The measured suite first; the others the policy allows follow, unmeasured,
        // in the policy's order (never dropped for lack of measurement).
        assert_eq!(
            r.choice["tls13_suites"],
            ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"]
        );
        // The CBC suite is refused by intermediate and slower anyway.
        let r12 = r.rankings.iter().find(|x| x.list == "tls12_suites").unwrap();
        assert!(r12.ranked.iter().all(|x| x.name.contains("AES_128_GCM")), "{:?}", r12.ranked);
    }
}
