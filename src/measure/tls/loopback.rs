//! Loopback: an in-process server on 127.0.0.1 and its clients, one library on
//! both ends (`--lib openssl`, the default), handshakes and bulk (bulk in
//! interleaved slices, `engine::sampler::interleave`). The plan (`LoopbackPlan`)
//! is every library's: `pairs.rs` runs the same subjects through library pairs.

use super::probe::{bulk_probe, durations, HandshakeProbe, Refusals, Server};
use super::wire::{self as wire, handshake_records, BULK_TRANSPORT};
use super::*;
use crate::backend::openssl::certs::{CertType, Identity};
use crate::backend::openssl::tls::{self as ssl, Protocol};
use crate::backend::tls::{ClientConfig, TlsLibrary};
use crate::error::UsageError;
use crate::measure::engine::sampler::{self, Rate, SamplerConfig};
use crate::measure::sink::Measurements;
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use crate::units::Seconds;
use anyhow::{anyhow, bail, Result};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// What the loopback run measures and how hard.
pub struct LoopbackPlan {
    pub items: Vec<Item>,
    /// Subjects that cannot run here, with the reason.
    pub skipped: Vec<(Kind, Subject, String)>,
    pub threads: usize,
    pub write_size: usize,
    pub volume: Option<u64>,
    pub verify: bool,
    pub timeout: Duration,
    pub budget: Seconds,
    pub certs: Vec<CertType>,
}

/// The suite a handshake subject uses for a key exchange and certificate: the
/// user's first fitting suite, or an AES-128 one (GCM where the protocol has it).
pub(super) fn handshake_suite<'a>(p: Protocol, kx: &str, cert: CertType, user: &'a [Suite], local: &'a [Suite]) -> Option<&'a Suite> {
    let fits = |s: &&Suite| s.kx == kx && s.fits_cert(cert) && s.au != "None" && p.can_negotiate(&s.min_protocol);
    if !user.is_empty() {
        return user.iter().find(fits);
    }
    let pool: Vec<&Suite> = local.iter().filter(fits).collect();
    pool.iter()
        .find(|s| s.openssl.contains("AES128-GCM-SHA256"))
        .or_else(|| pool.iter().find(|s| s.openssl.ends_with("AES128-SHA")))
        .or_else(|| pool.first())
        .copied()
}

/// What `tls` was asked to sweep, parsed.
struct Choices<'a> {
    a: &'a crate::options::TlsOptions,
    groups: Vec<&'static str>,
    certs: Vec<CertType>,
    local: Vec<Suite>,
    user: Vec<Suite>,
    directions: &'static [Direction],
}

impl Choices<'_> {
    /// The suites a protocol sweeps: the user's, or (TLS 1.2) the ECDHE suites of
    /// the first certificate's kind with encryption, or (TLS 1.3) all.
    fn for_protocol(&self, p: Protocol) -> Vec<Suite> {
        let base: Vec<Suite> = if self.user.is_empty() {
            let au = self.certs[0].au();
            self.local
                .iter()
                .filter(|s| {
                    if p == Protocol::Tls13 {
                        s.tls13()
                    } else {
                        s.kx == "ECDH" && s.au == au && s.enc != "None" && p.can_negotiate(&s.min_protocol)
                    }
                })
                .cloned()
                .collect()
        } else {
            self.user.clone()
        };
        base.into_iter().filter(|s| p.can_negotiate(&s.min_protocol)).collect()
    }

    fn groups_for(&self, s: &Suite) -> Vec<Option<&'static str>> {
        if s.kx == "RSA" {
            return vec![None];
        }
        self.groups.iter().map(|g| Some(*g)).filter(|g| s.fits_group(*g)).collect()
    }

    /// `--full-matrix`: every suite × certificate × group × work.
    fn full_matrix(&self, p: Protocol, suites: &[Suite], items: &mut Vec<Item>) {
        let mut works: Vec<Work> = Vec::new();
        if !self.a.no_handshakes {
            works.extend([Work::Handshake { resumed: false }, Work::Handshake { resumed: true }]);
        }
        if !self.a.no_bulk {
            works.extend(self.directions.iter().map(|d| Work::Bulk(*d)));
        }
        for s in suites {
            for &c in self.certs.iter().filter(|c| s.fits_cert(**c)) {
                for g in self.groups_for(s) {
                    for &work in &works {
                        items.push(Item {
                            protocol: p,
                            suite: s.clone(),
                            group: g,
                            cert: c,
                            work,
                        });
                    }
                }
            }
        }
    }

    /// Handshakes: group × certificate × key exchange, one suite each; then one
    /// resumed handshake (resumption skips Kx/Au in 1.2 tickets, the certificate
    /// in 1.3 PSK: once per protocol).
    fn handshakes(&self, p: Protocol, items: &mut Vec<Item>) {
        let kxs: &[&str] = if p == Protocol::Tls13 { &["any"] } else { &["ECDH", "DH", "RSA"] };
        let mut first: Option<Item> = None;
        for kx in kxs {
            for &c in &self.certs {
                let Some(s) = handshake_suite(p, kx, c, &self.user, &self.local) else {
                    continue;
                };
                for g in self.groups_for(s) {
                    let item = Item {
                        protocol: p,
                        suite: s.clone(),
                        group: g,
                        cert: c,
                        work: Work::Handshake { resumed: false },
                    };
                    first.get_or_insert_with(|| item.clone());
                    items.push(item);
                }
            }
        }
        if let Some(f) = first {
            items.push(Item {
                work: Work::Handshake { resumed: true },
                ..f
            });
        }
    }

    /// Bulk: every suite with one fixed key exchange and certificate.
    fn bulk(&self, p: Protocol, suites: &[Suite], plan: &mut LoopbackPlan) {
        for s in suites {
            let cert = self.certs.iter().copied().find(|c| s.fits_cert(*c));
            let group = self.groups_for(s).into_iter().next();
            match (cert, group) {
                (Some(cert), Some(group)) => {
                    for d in self.directions {
                        plan.items.push(Item {
                            protocol: p,
                            suite: s.clone(),
                            group,
                            cert,
                            work: Work::Bulk(*d),
                        });
                    }
                }
                _ => {
                    let why = if cert.is_none() {
                        format!("needs an {} certificate (not among --certs, or none can be generated)", s.au)
                    } else {
                        "no key-exchange group among --groups fits it".to_string()
                    };
                    plan.skipped.push((Kind::TlsBulk, suite_subject(p, s, plan.threads), why));
                }
            }
        }
    }
}

impl LoopbackPlan {
    pub fn new(a: &crate::options::TlsOptions, budget: Seconds) -> Result<LoopbackPlan> {
        let protocols = parse_protocols(&a.protocols, &[Protocol::Tls12, Protocol::Tls13])?;
        // Groups another library of the run has and this libssl lacks (rustls's
        // X25519MLKEM768 beside OpenSSL 3.0) are measured through that library.
        let also: Vec<String> = a
            .libraries
            .iter()
            .filter(|l| **l != crate::catalog::Library::DEFAULT)
            .filter_map(|l| super::libraries::library(*l).ok())
            .flat_map(|t| t.groups())
            .collect();
        let groups = parse_groups(&a.groups, &ssl::GROUPS, &also)?;
        let certs = parse_certs(&a.certs)?;
        let local = local_suites()?;
        let user = resolve_suites(&a.suites, &local)?;
        if let Some(s) = user.iter().find(|s| s.needs_credentials()) {
            return Err(UsageError::Invalid(format!(
                "{} needs a pre-shared key or SRP password; cipherbench cannot measure it",
                s.iana
            ))
            .into());
        }
        let mut plan = LoopbackPlan {
            items: Vec::new(),
            skipped: Vec::new(),
            threads: a.threads as usize,
            write_size: a.write_size.0 as usize,
            volume: a.bytes.map(|b| b.0),
            verify: a.verify,
            timeout: Duration::from_secs_f64(a.timeout.0),
            budget,
            certs: certs.clone(),
        };
        let choices = Choices {
            a,
            groups,
            certs,
            local,
            user,
            directions: if a.both_directions {
                &[Direction::Upload, Direction::Download]
            } else {
                &[Direction::Upload]
            },
        };
        for &p in &protocols {
            let suites = choices.for_protocol(p);
            if a.full_matrix {
                choices.full_matrix(p, &suites, &mut plan.items);
                continue;
            }
            if !a.no_handshakes {
                choices.handshakes(p, &mut plan.items);
            }
            if !a.no_bulk {
                choices.bulk(p, &suites, &mut plan);
            }
        }
        if plan.items.is_empty() && plan.skipped.is_empty() {
            return Err(UsageError::Invalid(
                "nothing to measure: the protocols, suites, groups and certificates given have no combination in common".into(),
            )
            .into());
        }
        Ok(plan)
    }

    pub fn settings(&self) -> serde_json::Value {
        json!({
            "mode": "loopback",
            "threads": self.threads,
            "write_size": self.write_size,
            "volume_bytes": self.volume,
            "verify": self.verify,
            "bulk_transport": BULK_TRANSPORT,
            "subjects": self.items.len(),
            "certs": self.certs.iter().map(|c| c.name()).collect::<Vec<_>>(),
            "budget_seconds": self.budget.0,
        })
    }

    /// The sampler for one subject's work, the budget shared among `n` runs.
    pub(crate) fn sampler(&self, work: Work, n: usize) -> SamplerConfig {
        // Each HelloRetryRequest subject (`hello_retries`) takes half a share.
        let n = n + hrr_items(self).len().div_ceil(2);
        let mut cfg = crate::measure::plans::share(Seconds(self.budget.0 * 0.9), n);
        match work {
            Work::Handshake { .. } => cfg.max_units = 100_000,
            Work::Bulk(_) => {
                if let Some(v) = self.volume {
                    // A fixed volume per sample: grow to it and no further.
                    cfg.max_units = (v / self.write_size as u64).max(1);
                    cfg.sample_time = Seconds(f64::MAX / 4.0);
                    cfg.min_samples = cfg.min_samples.min(5);
                }
            }
        }
        cfg
    }
}

// ---------------------------------------------------------------------------
// Loopback measurement

/// The first key share of the HelloRetryRequest subjects: what most clients
/// send first today.
pub(super) const HRR_FIRST_SHARE: &str = "X25519";

/// The subject op of a full handshake that needs a HelloRetryRequest.
pub const HRR_OP: &str = "hrr";

/// A hybrid post-quantum group (ML-KEM with a classic curve): the groups whose
/// HelloRetryRequest cost is measured.
pub(super) fn is_hybrid(group: &str) -> bool {
    let g = group.to_ascii_uppercase();
    g.contains("MLKEM") && !g.starts_with("MLKEM")
}

/// The items whose HelloRetryRequest cost is measured: the full TLS 1.3
/// handshakes over a hybrid group.
pub(super) fn hrr_items(plan: &LoopbackPlan) -> Vec<&Item> {
    plan.items
        .iter()
        .filter(|i| i.work == Work::Handshake { resumed: false } && i.protocol == Protocol::Tls13)
        .filter(|i| i.group.is_some_and(is_hybrid))
        .collect()
}

/// Full handshakes of `item` when the client's first key share is `first` and
/// the server accepts only the item's group: the server answers with a
/// HelloRetryRequest, and the client sends a second ClientHello with the group's
/// share. The records are the item's under op `hrr`; their ClientHello figure is
/// both ClientHellos, counted by a relay, which also proves the retry happened.
pub(super) fn measure_hrr(plan: &LoopbackPlan, item: &Item, first: &str, id: &Identity, lib: &dyn TlsLibrary) -> Result<Vec<ResultRecord>> {
    let server_side = item.selection();
    let mut client_side = item.selection();
    if item.group != Some(first) {
        client_side.groups.insert(0, first.to_string());
    }
    let server = Server::loopback(lib.server(&server_side, id)?, plan.threads, plan.timeout, false, Refusals::Fail)?;
    let client = lib.client(&client_side, false)?;
    let (hellos, bytes) = super::probe::client_hellos(&client, server.addr, plan.timeout)?;
    if hellos != 2 {
        bail!(
            "no HelloRetryRequest: the client sent {hellos} ClientHello(s) with {first} first against a server that accepts only {}",
            item.group.unwrap_or("-")
        );
    }
    let mut subject = item.subject(plan);
    subject.op = Some(HRR_OP.into());
    // Half a handshake subject's share: the retry is priced, not raced.
    let mut cfg = plan.sampler(item.work, plan.items.len());
    cfg.budget = Seconds(cfg.budget.0 / 2.0);
    let mut probes = (0..plan.threads)
        .map(|_| HandshakeProbe::new(&client, server.addr, None, plan.timeout, (false, true), |n| item.check(n)))
        .collect::<Result<Vec<_>>>()?;
    let m = sampler::measure(&mut probes, Rate::PerSecond, &cfg)?;
    let mut out = handshake_records(Kind::TlsHandshake, subject, &durations(&probes), &m);
    out[0].client_hello_bytes = Some(bytes);
    if let Some(e) = server.error() {
        bail!("the loopback server failed: {e}");
    }
    Ok(out)
}

/// Measures the HelloRetryRequest cost of every hybrid group's full TLS 1.3
/// handshake in `plan` ([`measure_hrr`], the client's first key share
/// [`HRR_FIRST_SHARE`]), after [`loopback`]: `tls` and the main job call it;
/// races and `check` do not (their subjects are the plan's own).
pub fn hello_retries(plan: &LoopbackPlan, session: &mut Measurements) -> Result<()> {
    let hrr = hrr_items(plan);
    if hrr.is_empty() {
        return Ok(());
    }
    let lib = super::libraries::library(crate::catalog::Library::DEFAULT)?;
    let mut ids = BTreeMap::new();
    session.progress_start(hrr.iter().map(|i| i.records().len()).sum::<usize>() as u64);
    for item in hrr {
        if crate::interrupt::requested() || crate::deadline::run_expired() {
            break;
        }
        session.progress_message(&format!("{} after a HelloRetryRequest ({HRR_FIRST_SHARE} first)", item.label()));
        let id = identity(&mut ids, item.cert)?;
        match measure_hrr(plan, item, HRR_FIRST_SHARE, id, &*lib) {
            Ok(records) => {
                for r in records {
                    session.record(r)?;
                }
            }
            Err(e) => {
                let mut s = item.subject(plan);
                s.op = Some(HRR_OP.into());
                session.record(ResultRecord::not_ok(
                    Kind::TlsHandshake,
                    s,
                    Metric::HandshakesPerSec,
                    Status::Failed,
                    format!("{e:#}"),
                ))?;
            }
        }
    }
    session.progress_finish();
    Ok(())
}

/// What the run's settings say about how bulk is measured (`bulk_slices`).
pub(crate) const BULK_SLICES: &str = "interleaved: rounds of one slice per bulk subject (A B C, A B C, ...), each slice a fresh connection (new TCP connection and full handshake, not timed) with a short untimed warm-up, then samples for the slice's length; every subject 3 rounds first (slices shrunk at small budgets), then the leaders of each protocol until their paired ratio puts one measurably ahead; each slice is one sample (its bytes over its wall time, its CPU per GB), so median, 95% interval, min, max and n are over slices; with fewer than 3 slices the interval is widened to cover every sample seen and at least +-10% of the median";

/// One bulk subject of `bulk_sliced`: its server stays up for all its slices.
pub(super) struct BulkSubject<'a> {
    pub(super) item: &'a Item,
    pub(super) direction: Direction,
    pub(super) client: Arc<dyn ClientConfig>,
    pub(super) server: Server,
    pub(super) cfg: SamplerConfig,
    /// Per slice: server CPU seconds and bytes of each sampled run.
    pub(super) server_cpu: Vec<Vec<(f64, f64)>>,
}

/// Measures the bulk items in interleaved slices (`sampler::interleave`): one
/// round after another, each subject a slice per round, every slice a fresh
/// connection (TCP connect and full handshake, checked, not timed) to the subject's
/// server. `progress` hears of every slice before it starts. Per item: `None` when
/// Ctrl-C came before its first slice, else its records or why it failed.
pub(super) fn bulk_sliced(
    plan: &LoopbackPlan,
    items: &[&Item],
    ids: &mut BTreeMap<CertType, Identity>,
    lib: &dyn TlsLibrary,
    mut progress: impl FnMut(&Item, &sampler::SliceSpec),
) -> Vec<Option<Result<Vec<ResultRecord>>>> {
    let mut out: Vec<Option<Result<Vec<ResultRecord>>>> = items.iter().map(|_| None).collect();
    let mut ready: Vec<(usize, BulkSubject)> = Vec::new();
    for (k, item) in items.iter().enumerate() {
        let Work::Bulk(direction) = item.work else {
            out[k] = Some(Err(anyhow!("not a bulk subject")));
            continue;
        };
        let setup = (|| -> Result<BulkSubject> {
            let selection = item.selection();
            let id = identity(ids, item.cert)?;
            let server = Server::loopback(lib.server(&selection, id)?, plan.threads, plan.timeout, true, Refusals::Fail)?;
            Ok(BulkSubject {
                item,
                direction,
                client: lib.client(&selection, false)?,
                server,
                cfg: plan.sampler(item.work, plan.items.len()),
                server_cpu: Vec::new(),
            })
        })();
        match setup {
            Ok(b) => ready.push((k, b)),
            Err(e) => out[k] = Some(Err(e)),
        }
    }
    let cfgs: Vec<SamplerConfig> = ready.iter().map(|(_, b)| b.cfg).collect();
    let classes: Vec<_> = ready.iter().map(|(_, b)| super::rounds::class(b.item)).collect();
    // Each slice's value is stored with its round (`ResultRecord::rounds`).
    let sweep = crate::measure::engine::rounds::Sweep::start(Kind::TlsBulk.name());
    let budget = Seconds(plan.kind_budgets().1);
    let measured = super::rounds::in_rounds(&cfgs, &classes, budget, |spec| {
        let b = &mut ready[spec.subject].1;
        progress(b.item, spec);
        let mut probes = (0..plan.threads)
            .map(|_| {
                let how = (b.direction, plan.write_size, plan.verify);
                bulk_probe(&*b.client, b.server.addr, plan.timeout, how, |n| b.item.check(n))
            })
            .collect::<Result<Vec<_>>>()?;
        let m = spec.measure(&mut probes, Rate::PerSecond)?;
        if !m.samples.is_empty() {
            b.server_cpu.push(wire::server_samples(&probes, m.samples.len()));
        }
        Ok(m)
    });
    for ((k, b), r) in ready.into_iter().zip(measured) {
        out[k] = match r {
            Ok(None) => None,
            Ok(Some(m)) => Some(match b.server.error() {
                Some(e) => Err(anyhow!("the loopback server failed: {e}")),
                None => Ok(wire::sliced_bulk_records(b.item.subject(plan), &m, &b.server_cpu, &sweep)),
            }),
            Err(e) => Some(Err(e)),
        };
    }
    out
}

/// Records one item's outcome: its records, or one failed record per metric.
pub(super) fn record_item(session: &mut Measurements, plan: &LoopbackPlan, item: &Item, r: Result<Vec<ResultRecord>>) -> Result<()> {
    match r {
        Ok(records) => {
            for r in records {
                session.record(r)?;
            }
        }
        Err(e) => record_failed(session, plan, item, &format!("{e:#}"))?,
    }
    Ok(())
}

/// Records every record of `item` (its figure and its companions) as failed for `reason`.
fn record_failed(session: &mut Measurements, plan: &LoopbackPlan, item: &Item, reason: &str) -> Result<()> {
    let subject = item.subject(plan);
    for (kind, metric, mode) in item.records() {
        let mut s = subject.clone();
        s.mode = mode.map(str::to_string);
        session.record(ResultRecord::not_ok(kind, s, metric, Status::Failed, reason))?;
    }
    Ok(())
}

/// Runs the loopback plan; results go to the session as they are made. Handshake
/// items are measured one after another; then the bulk items, in interleaved
/// slices (`bulk_sliced`).
pub fn loopback(plan: &LoopbackPlan, session: &mut Measurements) -> Result<()> {
    let from = session.results().len();
    warn_unreached(loopback_pass(plan, session)?);
    crate::measure::engine::noise::settle(session, &[Kind::TlsBulk, Kind::TlsHandshake], from)
}

/// How many bulk and handshake subjects a run recorded as skipped.
pub(super) type Unreached = (usize, usize);

/// Records each subject of `unreached` (items the run's deadline ended before
/// they got a slice) as skipped for want of time, unless the user stopped the
/// run (Ctrl-C keeps what was measured, nothing more); returns how many.
pub(super) fn record_unreached(session: &mut Measurements, plan: &LoopbackPlan, unreached: &[&Item]) -> Result<Unreached> {
    if unreached.is_empty() || crate::interrupt::by_user() {
        return Ok((0, 0));
    }
    let (mut bulk, mut hands) = (0, 0);
    for item in unreached {
        record_failed(session, plan, item, crate::model::BUDGET_SKIPPED)?;
        match item.work {
            Work::Bulk(_) => bulk += 1,
            _ => hands += 1,
        }
    }
    Ok((bulk, hands))
}

/// Says, once per run, what [`record_unreached`] recorded as skipped.
pub(super) fn warn_unreached((bulk, hands): Unreached) {
    if bulk + hands > 0 {
        crate::progress::warn(&format!(
            "tls: the budget was spent before {bulk} bulk subject(s) and {hands} handshake subject(s) were measured; they are recorded as skipped (raise --budget)"
        ));
    }
}

/// [`loopback`] before the run's noise is settled; returns what it recorded as
/// skipped ([`record_unreached`]).
pub(super) fn loopback_pass(plan: &LoopbackPlan, session: &mut Measurements) -> Result<Unreached> {
    let hrr = hrr_items(plan);
    let total: usize = plan.skipped.len()
        + plan
            .items
            .iter()
            .chain(hrr.iter().copied())
            .map(|i| i.records().len())
            .sum::<usize>();
    session.progress_start(total as u64);
    for (kind, subject, why) in &plan.skipped {
        let metric = if *kind == Kind::TlsBulk {
            Metric::BytesPerSec
        } else {
            Metric::HandshakesPerSec
        };
        session.record(ResultRecord::not_ok(
            *kind,
            subject.clone(),
            metric,
            Status::Unsupported,
            why.clone(),
        ))?;
    }
    let lib = super::libraries::library(crate::catalog::Library::DEFAULT)?;
    let mut ids = BTreeMap::new();
    let (bulk, handshakes): (Vec<&Item>, Vec<&Item>) = plan.items.iter().partition(|i| matches!(i.work, Work::Bulk(_)));
    // What the deadline did not reach is recorded as skipped, as the SSH sweep does.
    let mut unreached: Vec<&Item> = Vec::new();
    if !handshakes.is_empty() && !crate::interrupt::requested() && !crate::deadline::run_expired() {
        let results = {
            let s = &*session;
            super::rounds::handshake_rounds(plan, &handshakes, &mut ids, &*lib, |item, spec| {
                s.progress_message(&format!("{} (round {}/{})", item.label(), spec.index + 1, spec.of))
            })
        };
        for (item, r) in handshakes.iter().zip(results) {
            match r {
                Some(r) => record_item(session, plan, item, r)?,
                None => unreached.push(item),
            }
        }
    } else {
        unreached.extend(&handshakes);
    }
    if !bulk.is_empty() && !crate::interrupt::requested() && !crate::deadline::run_expired() {
        session.set_setting("bulk_slices", json!(BULK_SLICES));
        let results = {
            let s = &*session;
            bulk_sliced(plan, &bulk, &mut ids, &*lib, |item, spec| {
                s.progress_message(&format!("{} (round {}/{})", item.label(), spec.index + 1, spec.of))
            })
        };
        for (item, r) in bulk.iter().zip(results) {
            match r {
                Some(r) => record_item(session, plan, item, r)?,
                None => unreached.push(item),
            }
        }
    } else {
        unreached.extend(&bulk);
    }
    let skipped = record_unreached(session, plan, &unreached)?;
    session.progress_finish();
    Ok(skipped)
}

#[cfg(test)]
mod hrr_tests {
    use super::*;

    fn plan_with(item: Item) -> LoopbackPlan {
        LoopbackPlan {
            items: vec![item],
            skipped: Vec::new(),
            threads: 1,
            write_size: 4096,
            volume: None,
            verify: true,
            timeout: Duration::from_secs(5),
            budget: Seconds(0.4),
            certs: vec![CertType::EcdsaP256],
        }
    }

    /// A client whose first key share the server does not accept gets a
    /// HelloRetryRequest: two ClientHellos on the wire, the server's group in the
    /// end, and records under op `hrr`. Runs with classic groups (any OpenSSL 3);
    /// the hybrids take the same path in OpenSSL 3.5. A first share the server
    /// does accept sends one ClientHello, which fails the subject.
    #[test]
    fn a_hello_retry_request_is_measured_and_proven() {
        let local = local_suites().unwrap();
        let suite = local.iter().find(|s| s.iana == "TLS_AES_128_GCM_SHA256").unwrap().clone();
        let item = Item {
            protocol: Protocol::Tls13,
            suite,
            group: Some("P-256"),
            cert: CertType::EcdsaP256,
            work: Work::Handshake { resumed: false },
        };
        let plan = plan_with(item.clone());
        let mut ids = BTreeMap::new();
        ids.insert(CertType::EcdsaP256, Identity::generate(CertType::EcdsaP256).unwrap());
        let lib = crate::backend::openssl::library::Openssl;
        let full = super::super::rounds::handshake_rounds(&plan, &[&item], &mut ids, &lib, |_, _| {});
        let full = full.into_iter().next().unwrap().unwrap().unwrap();
        let full_hello = full[0].client_hello_bytes.unwrap();
        let id = &ids[&CertType::EcdsaP256];
        let records = measure_hrr(&plan, &item, "X25519", id, &lib).unwrap();
        assert_eq!(records[0].status, Status::Ok, "{:?}", records[0]);
        assert_eq!(records[0].subject.op.as_deref(), Some(HRR_OP));
        assert_eq!(records[0].subject.group.as_deref(), Some("P-256"));
        assert!(records[0].median.unwrap() > 0.0);
        // Both ClientHellos: more than the one of a plain handshake.
        let both = records[0].client_hello_bytes.unwrap();
        assert!(both > full_hello + 100, "{both} B against {full_hello} B");
        let e = measure_hrr(&plan, &item, "P-256", id, &lib).unwrap_err().to_string();
        assert!(e.contains("no HelloRetryRequest"), "{e}");
        assert!(is_hybrid("X25519MLKEM768") && is_hybrid("SecP384r1MLKEM1024"));
        assert!(!is_hybrid("MLKEM768") && !is_hybrid("X25519"));
        assert!(hrr_items(&plan).is_empty(), "P-256 is not a hybrid group");
    }
}
