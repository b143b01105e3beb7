//! `cipherbench tls`: real handshakes and bulk transfers over real TCP sockets,
//! with the system libssl on both ends.
//!
//! - Loopback (the default): an in-process server (one worker thread per client
//!   thread) on 127.0.0.1, certificates generated at start. Handshakes sweep
//!   group × certificate × key exchange (Kx/Au are paid once per handshake); bulk
//!   sweeps the suites with one fixed key exchange and certificate (Enc/Mac are paid
//!   per byte). `--full-matrix` runs the cross product. Handshake and bulk
//!   subjects are measured in interleaved slices (A B C, A B C, …), each a fresh
//!   connection, so that their intervals hold between runs and not only inside
//!   one connection, and each slice keeps its round's key (`rounds::in_rounds`).
//! - Remote (`--connect`): which protocols, suites and groups the server accepts
//!   (one suite per handshake), its preference order, handshake rates per accepted
//!   suite and, with `--http-get`, HTTP/1.1 download speed per accepted suite.
//!
//! Every probe checks what was negotiated before it is timed, and the bulk probe can
//! check a SHA-256 of every byte on the far side (`--verify`).
//!
//! One concern per file: [`probe`] (the server, handshake and bulk probes, over
//! any `backend::tls::TlsLibrary`), [`loopback`], [`rounds`] (loopback subjects
//! in rounds: every one first, then the leaders), [`pairs`] (library pairs and
//! `--priority` on loopback), [`remote`] (`--connect`, and its `--priority`
//! walk), [`http`], [`wire`] (the bulk protocol every library speaks), [`serve`]
//! (`--serve`) and [`libraries`] (each `--lib` name's library); this file holds
//! what they share (suites, names, subjects, the negotiated-parameters check).
//! No file here names a library: each is a `TlsLibrary` from the registry
//! (`backend::libraries`), and a library's own configuration text (GnuTLS's
//! priority string) is its to check and walk (`TlsLibrary::native_suites`).

mod http;
pub mod libraries;
mod loopback;
pub mod nzbget;
pub mod pairs;
mod probe;
mod remote;
mod rounds;
pub mod serve;
#[cfg(test)]
mod tests;
pub mod through;
pub mod wire;

use http::*;
pub use loopback::*;
pub use remote::*;
pub use wire::Direction;

use crate::backend::openssl::certs::{CertType, Identity};
use crate::backend::openssl::tls::{self as ssl, is_ffdhe, is_mlkem, ConnectError, Protocol};
use crate::backend::tls::{Negotiated, SelectedSuite, Selection};
use crate::error::UsageError;
use crate::model::{Kind, Metric, Subject};
use anyhow::{anyhow, bail, Result};
use std::collections::BTreeMap;
use std::time::Duration;

/// A suite as the local libssl knows it: the one description of a suite that
/// `list tls` shows and the TLS passes measure (`openssl ciphers -V -stdname`).
pub use crate::discover::openssl::TlsSuiteInfo as Suite;

impl Suite {
    pub fn tls13(&self) -> bool {
        self.min_protocol == "TLSv1.3"
    }
    /// Its names, for a library's selection.
    pub fn name(&self) -> SelectedSuite {
        SelectedSuite {
            iana: self.iana.clone(),
            openssl: self.openssl.clone(),
            tls13: self.tls13(),
        }
    }
    /// PSK and SRP suites need credentials a benchmark does not have.
    pub(super) fn needs_credentials(&self) -> bool {
        self.kx.contains("PSK") || self.kx == "SRP" || self.au == "PSK" || self.au == "SRP"
    }
    pub(super) fn fits_cert(&self, c: CertType) -> bool {
        self.tls13() || self.au == c.au() || self.au == "None"
    }
    pub(super) fn fits_group(&self, g: Option<&str>) -> bool {
        match (self.kx.as_str(), g) {
            ("any", Some(_)) => true,
            ("ECDH", Some(g)) => !is_ffdhe(g) && !is_mlkem(g),
            ("DH", Some(g)) => is_ffdhe(g),
            ("RSA", None) => true,
            _ => false,
        }
    }
}

/// Every suite the local libssl can offer (`openssl ciphers -V -stdname`).
pub fn local_suites() -> Result<Vec<Suite>> {
    crate::discover::openssl::tls_suites()
}

/// Resolves IANA or OpenSSL names, case-insensitively, with suggestions for typos.
pub fn resolve_suites(names: &[String], local: &[Suite]) -> Result<Vec<Suite>, UsageError> {
    let mut out: Vec<Suite> = Vec::new();
    for n in names {
        let found = local
            .iter()
            .find(|s| s.iana.eq_ignore_ascii_case(n) || s.openssl.eq_ignore_ascii_case(n));
        match found {
            Some(s) if !out.contains(s) => out.push(s.clone()),
            Some(_) => {}
            None => {
                if let Some(k) = crate::catalog::tls_suite_name(n).map(|s| s.iana.clone()) {
                    return Err(UsageError::Invalid(format!(
                        "TLS suite '{n}' ({k}) is not in this build of OpenSSL ({}); `cipherbench list tls` shows what it has",
                        crate::backend::openssl::runtime_version()
                    )));
                }
                let mut known: Vec<String> = Vec::new();
                for s in local {
                    known.push(s.iana.to_ascii_lowercase());
                    known.push(s.openssl.to_ascii_lowercase());
                }
                let sugg = crate::error::closest(n, known.iter().map(String::as_str));
                let sugg = sugg
                    .iter()
                    .filter_map(|l| {
                        local.iter().find_map(|s| {
                            if s.iana.eq_ignore_ascii_case(l) {
                                Some(s.iana.clone())
                            } else if s.openssl.eq_ignore_ascii_case(l) {
                                Some(s.openssl.clone())
                            } else {
                                None
                            }
                        })
                    })
                    .collect();
                return Err(UsageError::Unknown {
                    what: "TLS suite",
                    given: n.clone(),
                    suggestions: sugg,
                });
            }
        }
    }
    Ok(out)
}

pub(crate) fn parse_protocols(names: &[String], default: &[Protocol]) -> Result<Vec<Protocol>, UsageError> {
    if names.is_empty() {
        return Ok(default.to_vec());
    }
    let mut out = Vec::new();
    for n in names {
        let p = Protocol::parse(n).ok_or_else(|| UsageError::unknown("TLS protocol", n, ["1.0", "1.1", "1.2", "1.3"]))?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

/// The groups asked for, canonical; with none, those of `candidates` this libssl
/// accepts (discovered at run time), or another library of the run (`also`, as
/// `TlsLibrary::groups` spells them). An unknown name, or one no library of the
/// run has, is bad input with the closest names they have.
pub(super) fn parse_groups(names: &[String], candidates: &[&'static str], also: &[String]) -> Result<Vec<&'static str>, UsageError> {
    let mut supported = ssl::supported_groups(candidates);
    for &c in candidates {
        if !supported.contains(&c) && also.iter().any(|g| g == c) {
            supported.push(c);
        }
    }
    if names.is_empty() {
        return Ok(supported);
    }
    let known = supported.iter().map(|g| g.to_ascii_lowercase()).collect::<Vec<_>>();
    let mut out = Vec::new();
    for n in names {
        let g = supported
            .iter()
            .copied()
            .find(|g| crate::aliases::same(g, n))
            .ok_or_else(|| UsageError::unknown("group", n, known.iter().map(String::as_str)))?;
        if !out.contains(&g) {
            out.push(g);
        }
    }
    Ok(out)
}

pub(crate) fn parse_certs(names: &[String]) -> Result<Vec<CertType>, UsageError> {
    if names.is_empty() {
        return Ok(CertType::ALL.to_vec());
    }
    let mut out = Vec::new();
    for n in names {
        let c = CertType::parse(n).ok_or_else(|| UsageError::unknown("certificate type", n, CertType::ALL.map(CertType::name)))?;
        if !out.contains(&c) {
            out.push(c);
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// The loopback plan

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    Handshake { resumed: bool },
    Bulk(Direction),
}

/// One loopback subject.
#[derive(Debug, Clone)]
pub struct Item {
    pub protocol: Protocol,
    pub suite: Suite,
    pub group: Option<&'static str>,
    pub cert: CertType,
    pub work: Work,
}

pub(super) fn kex_label(group: Option<&str>) -> &'static str {
    match group {
        Some(g) if is_ffdhe(g) => "DHE",
        Some(_) => "ECDHE",
        None => "RSA",
    }
}

impl Item {
    /// What both ends offer for this subject: its protocol, suite and group.
    pub(crate) fn selection(&self) -> Selection {
        let mut groups: Vec<String> = self.group.iter().map(|g| g.to_string()).collect();
        // TLS 1.2 serves an ECDSA certificate only when its curve is among the
        // client's groups; listing it second keeps the measured group first.
        let curve = match self.cert {
            CertType::EcdsaP256 => Some("P-256"),
            CertType::EcdsaP384 => Some("P-384"),
            _ => None,
        };
        if let (Some(g), Some(c), false) = (self.group, curve, self.suite.tls13()) {
            if g != c {
                groups.push(c.to_string());
            }
        }
        Selection {
            protocol: Some(self.protocol),
            suites: vec![self.suite.name()],
            groups,
            native: None,
        }
    }

    /// Fails unless a connection negotiated what this subject asks for.
    pub(crate) fn check(&self, got: &Negotiated) -> Result<()> {
        check_negotiated((self.protocol, &self.suite.iana, self.group), (&got.0, &got.1, got.2.as_deref()))
    }

    pub fn subject(&self, plan: &LoopbackPlan) -> Subject {
        let mut s = suite_subject(self.protocol, &self.suite, plan.threads);
        s.group = self.group.map(str::to_string);
        s.cert = Some(self.cert.name().to_string());
        s.kex = Some(kex_label(self.group).to_string());
        match self.work {
            Work::Handshake { resumed } => s.op = Some(if resumed { "resumed" } else { "full" }.into()),
            Work::Bulk(d) => {
                s.op = Some(d.label().into());
                s.bytes = Some(plan.write_size as u64);
            }
        }
        s
    }

    pub(crate) fn label(&self) -> String {
        let what = match self.work {
            Work::Handshake { resumed: false } => "handshake".to_string(),
            Work::Handshake { resumed: true } => "resumed handshake".to_string(),
            Work::Bulk(d) => format!("bulk {}", d.label()),
        };
        format!(
            "{} {} {} {} {what}",
            self.protocol.label(),
            self.suite.iana,
            self.group.unwrap_or("-"),
            self.cert.name()
        )
    }

    /// The records this item produces, for failures and progress.
    pub(crate) fn records(&self) -> Vec<(Kind, Metric, Option<&'static str>)> {
        match self.work {
            Work::Handshake { .. } => vec![
                (Kind::TlsHandshake, Metric::HandshakesPerSec, None),
                (Kind::TlsHandshake, Metric::Seconds, Some("latency")),
            ],
            Work::Bulk(_) => vec![
                (Kind::TlsBulk, Metric::BytesPerSec, None),
                (Kind::TlsBulk, Metric::Seconds, Some("client-cpu-per-gb")),
                (Kind::TlsBulk, Metric::Seconds, Some("server-cpu-per-gb")),
            ],
        }
    }
}

pub(crate) fn suite_subject(p: Protocol, suite: &Suite, threads: usize) -> Subject {
    Subject {
        protocol: Some(p.label().to_string()),
        suite: Some(suite.iana.clone()),
        openssl_name: Some(suite.openssl.clone()),
        library: Some("openssl".into()),
        threads: Some(threads),
        ..Default::default()
    }
}

/// Fails unless the connection negotiated the protocol, suite and (when libssl
/// reports it) group that were asked for.
pub(crate) fn check_negotiated(want: (Protocol, &str, Option<&str>), got: (&str, &str, Option<&str>)) -> Result<()> {
    let group_ok = match (want.2, got.2) {
        (Some(w), Some(g)) => w == g,
        _ => true,
    };
    if got.0 != want.0.label() || got.1 != want.1 || !group_ok {
        bail!(
            "asked for {} {} {} but negotiated {} {} {}",
            want.0.label(),
            want.1,
            want.2.unwrap_or("-"),
            got.0,
            got.1,
            got.2.unwrap_or("-")
        );
    }
    Ok(())
}

pub(crate) fn identity(ids: &mut BTreeMap<CertType, Identity>, c: CertType) -> Result<&Identity> {
    if let std::collections::btree_map::Entry::Vacant(e) = ids.entry(c) {
        e.insert(generate_interruptibly(c)?);
    }
    Ok(&ids[&c])
}

/// [`Identity::generate`] on a thread of its own, waited for in slices: an RSA-3072
/// key can take seconds on a loaded machine, past Ctrl-C's watchdog (which would
/// end the run without closing its history row). On Ctrl-C the run stops and the
/// thread is left to finish.
fn generate_interruptibly(c: CertType) -> Result<Identity> {
    use std::sync::mpsc::RecvTimeoutError;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(Identity::generate(c)));
    loop {
        match rx.recv_timeout(crate::deadline::SLICE) {
            Ok(id) => return id,
            Err(RecvTimeoutError::Timeout) if crate::interrupt::by_user() => return Err(crate::error::Interrupted { kept: 0 }.into()),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => bail!("generating a {} key: its thread ended with no key", c.name()),
        }
    }
}

/// The first offer to a remote server failed: why, naming the server. Used by the
/// OpenSSL and the GnuTLS remote probes alike; `rejected` words a refusal of the
/// offer, which differs by library.
pub(crate) fn unreachable(t: &str, e: ConnectError, timeout: Duration, rejected: impl FnOnce(String) -> String) -> anyhow::Error {
    match e {
        ConnectError::Tcp(e) => anyhow!("cannot connect to {t}: {e}"),
        ConnectError::NotTls(e) => anyhow!("{t} does not speak TLS: {e}"),
        e @ ConnectError::Stalled { bytes: Some(0), .. } => {
            anyhow!("{t} {e} (not TLS, or TLS only after a STARTTLS command?)")
        }
        ConnectError::Stalled { bytes: None, .. } => anyhow!(
            "{t} accepted the connection but did not finish a TLS handshake within {:.1} s",
            timeout.as_secs_f64()
        ),
        e @ (ConnectError::Stalled { .. } | ConnectError::Deadline { .. }) => anyhow!("{t} {e}"),
        ConnectError::Interrupted => crate::error::Interrupted { kept: 0 }.into(),
        ConnectError::Rejected(e) => anyhow!("{}", rejected(e)),
    }
}

/// One handshake of either library (a handshake probe's own timed step).
pub(crate) trait OneHandshake {
    fn handshake_once(&mut self) -> Result<()>;
}

/// `units` handshakes as one sample: the part of a handshake probe both libraries
/// share.
pub(crate) fn handshakes<H: OneHandshake>(h: &mut H, units: u64) -> Result<f64> {
    for _ in 0..units {
        h.handshake_once()?;
    }
    Ok(units as f64)
}

// ---------------------------------------------------------------------------
// The order of spending

/// Where a refused suite or group comes among the refused (lower first): the
/// likeliest fastest, which is what the "fastest refused, for comparison" line
/// shows. A guess from the name; it orders measuring, never a figure.
fn likely_fast(name: &str) -> u8 {
    let n = name.to_ascii_uppercase().replace('-', "_");
    if n.contains("AES_128_GCM") || n.contains("X448") {
        0
    } else if n.contains("AES_256_GCM") || n.starts_with("P_") || n.starts_with("SECP") {
        1
    } else if n.contains("AES") || n.contains("CHACHA") {
        2
    } else {
        3
    }
}

impl LoopbackPlan {
    /// The suites (IANA names), groups and certificate types this plan's items
    /// use: what app asks the policy about (`plan::Admitted`).
    pub fn names(&self) -> (Vec<String>, Vec<String>, Vec<String>) {
        let (mut suites, mut groups, mut certs) = (Vec::new(), Vec::new(), Vec::new());
        let add = |v: &mut Vec<String>, n: &str| {
            if !v.iter().any(|x| x == n) {
                v.push(n.to_string());
            }
        };
        for i in &self.items {
            add(&mut suites, &i.suite.iana);
            if let Some(g) = i.group {
                add(&mut groups, g);
            }
            add(&mut certs, i.cert.name());
        }
        (suites, groups, certs)
    }

    /// The plan split by what the policy allows: its items whose suite, group
    /// and certificate it allows (in the plan's order), and of the others, per
    /// protocol, kind of work and what is refused, only the likeliest fastest,
    /// which the "fastest refused, for comparison" line needs. The budget is
    /// split by items, as the sampler shares it, the refused part at most 15%.
    pub fn by_policy(&self, a: &crate::plan::Admitted) -> (LoopbackPlan, LoopbackPlan) {
        use crate::plan::Admitted;
        // What an item's policy refuses: 0 nothing, 1 its suite, 2 its group, 3 its certificate.
        let refused = |i: &Item| -> u8 {
            if Admitted::rank(&a.tls_suites, &i.suite.iana).is_none() && Admitted::rank(&a.tls_suites, &i.suite.openssl).is_none() {
                1
            } else if i.group.is_some_and(|g| Admitted::rank(&a.groups, g).is_none()) {
                2
            } else if Admitted::rank(&a.certs, i.cert.name()).is_none() {
                3
            } else {
                0
            }
        };
        let (ok, mut out): (Vec<Item>, Vec<Item>) = self.items.iter().cloned().partition(|i| refused(i) == 0);
        out.sort_by_key(|i| likely_fast(&format!("{} {}", i.group.unwrap_or(""), i.suite.iana)));
        let cap = a.refused_cap.unwrap_or(usize::MAX);
        let mut kept: Vec<Item> = Vec::new();
        for i in out {
            let same = |k: &&Item| {
                k.protocol == i.protocol && std::mem::discriminant(&k.work) == std::mem::discriminant(&i.work) && refused(k) == refused(&i)
            };
            if kept.iter().filter(same).count() < cap {
                kept.push(i);
            }
        }
        // The refused get an item's share each, at most 15% of the budget (as SSH's).
        let total = (ok.len() + kept.len()).max(1) as f64;
        let refused_share = (kept.len() as f64 / total).min(if ok.is_empty() { 1.0 } else { 0.15 });
        let part = |items: Vec<Item>, skipped: Vec<(Kind, Subject, String)>, share: f64| LoopbackPlan {
            budget: crate::units::Seconds(self.budget.0 * share),
            items,
            skipped,
            threads: self.threads,
            write_size: self.write_size,
            volume: self.volume,
            verify: self.verify,
            timeout: self.timeout,
            certs: self.certs.clone(),
        };
        (
            part(ok, self.skipped.clone(), 1.0 - refused_share),
            part(kept, Vec::new(), refused_share),
        )
    }
}

/// [`loopback`] in the order of spending: with what the policy allows known,
/// its subjects first, then the refused ones the comparison needs, while the
/// run's time lasts; the run's noise is settled over both.
pub fn loopback_policy_first(
    plan: &LoopbackPlan,
    admitted: Option<&crate::plan::Admitted>,
    session: &mut crate::measure::sink::Measurements,
) -> Result<()> {
    let Some(a) = admitted else {
        return loopback(plan, session);
    };
    let from = session.results().len();
    let (ok, mut refused) = plan.by_policy(a);
    let mut skipped = (0, 0);
    if !ok.items.is_empty() || !ok.skipped.is_empty() {
        skipped = loopback_pass(&ok, session)?;
    }
    // The refused get what is left of their share once the allowed are done:
    // nothing when the allowed used the run's budget.
    if let Some(left) = crate::deadline::budget_left() {
        refused.budget = crate::units::Seconds(refused.budget.0.min(left.0));
    }
    let more = if !refused.items.is_empty() && refused.budget.0 > 0.0 && !crate::interrupt::requested() && !crate::deadline::run_expired() {
        loopback_pass(&refused, session)?
    } else {
        loopback::record_unreached(session, &refused, &refused.items.iter().collect::<Vec<_>>())?
    };
    loopback::warn_unreached((skipped.0 + more.0, skipped.1 + more.1));
    crate::measure::engine::noise::settle(session, &[Kind::TlsBulk, Kind::TlsHandshake], from)
}

#[cfg(test)]
mod spending_tests {
    use super::*;
    use crate::plan::Admitted;
    use crate::units::Seconds;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// Allowed subjects first with their share of the budget; of the refused,
    /// one per protocol, kind of work and refused axis, the likeliest fastest.
    #[test]
    fn allowed_first_and_one_refused_of_each_kind() {
        let plan = LoopbackPlan::new(&crate::options::TlsOptions::default(), Seconds(10.0)).unwrap();
        let (suites, groups, certs) = plan.names();
        assert!(suites.iter().any(|s| s == "TLS_AES_128_GCM_SHA256"), "{suites:?}");
        assert!(!groups.is_empty() && !certs.is_empty());
        // The group the TLS 1.3 bulk items run over: libssl's first default key
        // share (X25519; X25519MLKEM768 from OpenSSL 3.5).
        let bulk_group = plan
            .items
            .iter()
            .find(|i| i.protocol == Protocol::Tls13 && matches!(i.work, Work::Bulk(_)))
            .and_then(|i| i.group)
            .unwrap();
        let a = Admitted {
            tls_suites: strings(&["TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"]),
            groups: strings(&[bulk_group]),
            certs: strings(&["ecdsa-p256", "rsa-2048"]),
            refused_cap: Some(1),
            ..Admitted::default()
        };
        let (ok, refused) = plan.by_policy(&a);
        assert!(!ok.items.is_empty() && !refused.items.is_empty());
        for i in &ok.items {
            assert!(a.tls_suites.contains(&i.suite.iana), "{}", i.label());
            assert!(i.group.is_none_or(|g| g == bulk_group), "{}", i.label());
            assert!(a.certs.iter().any(|c| c == i.cert.name()), "{}", i.label());
        }
        let key = |i: &Item| (i.protocol, std::mem::discriminant(&i.work));
        for i in &refused.items {
            let what = |k: &Item| {
                let suite = !a.tls_suites.contains(&k.suite.iana);
                let group = k.group.is_some_and(|g| g != bulk_group);
                (suite, !suite && group)
            };
            let same = refused.items.iter().filter(|k| key(k) == key(i) && what(k) == what(i)).count();
            assert_eq!(same, 1, "{}", i.label());
        }
        // The refused TLS 1.3 bulk suite is the likeliest fastest: AES-128-GCM.
        let bulk13 = refused
            .items
            .iter()
            .find(|i| i.protocol == Protocol::Tls13 && matches!(i.work, Work::Bulk(_)))
            .unwrap();
        assert_eq!(bulk13.suite.iana, "TLS_AES_128_GCM_SHA256");
        assert!((ok.budget.0 + refused.budget.0 - 10.0).abs() < 1e-9);
        assert!(refused.budget.0 <= 1.5 + 1e-9 && refused.budget.0 > 0.0, "{:?}", refused.budget);
        // Nothing refused: one plan, the whole budget.
        let (s, g, c) = plan.names();
        let all = Admitted {
            tls_suites: s,
            groups: g,
            certs: c,
            ..Admitted::default()
        };
        let (ok, refused) = plan.by_policy(&all);
        assert_eq!((ok.items.len(), refused.items.len()), (plan.items.len(), 0));
        assert_eq!(ok.budget, Seconds(10.0));
    }
}
