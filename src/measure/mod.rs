//! Measurement kinds and the engine they share. Each kind provides candidates and
//! a probe; the sampler and statistics are shared.

pub mod kat;
pub mod primitive;
pub mod sampler;
pub mod stats;

use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use crate::plan::{contenders, PrimitivePlan};
use crate::session::Session;
use crate::units::Seconds;
use primitive::{Availability, Fetched, PrimitiveProbe};
use sampler::{Measurement, Rate};
use std::collections::HashMap;
use std::time::Instant;

fn subject(item: &crate::plan::PrimitiveItem, threads: usize) -> Subject {
    Subject {
        algorithm: Some(item.primitive.name.to_string()),
        op: Some(item.op.as_str().to_string()),
        bytes: Some(item.bytes.0),
        library: Some("openssl".to_string()),
        threads: Some(threads),
        ..Default::default()
    }
}

fn record(m: &Measurement, subject: Subject) -> ResultRecord {
    match m.wall() {
        Some(w) => ResultRecord::ok(Kind::Primitive, subject, Metric::BytesPerSec, &w, m.cpu().as_ref()),
        None => ResultRecord::not_ok(Kind::Primitive, subject, Metric::BytesPerSec, Status::Failed, "no samples"),
    }
}

/// Runs a primitive plan: KAT each algorithm once, then sample every item, then
/// race the close calls with what is left of the budget. Results go to the session
/// as they are made.
pub fn primitives(plan: &PrimitivePlan, session: &mut Session) -> anyhow::Result<()> {
    let start = Instant::now();
    let mut verified: HashMap<&'static str, Result<Fetched, String>> = HashMap::new();
    // Live probes and measurements, kept for racing.
    let mut live: Vec<(usize, Vec<PrimitiveProbe>, Measurement)> = Vec::new();
    session.progress_start(plan.items.len() as u64);
    for item in &plan.items {
        if crate::interrupt::requested() {
            break;
        }
        let p = item.primitive;
        session.progress_message(&format!("{} {} {}", p.name, item.op.as_str(), item.bytes));
        let subj = subject(item, plan.threads);
        let ready = verified
            .entry(p.name)
            .or_insert_with(|| match primitive::fetch(p) {
                Availability::Available(f) => kat::check(p, &f).map(|_| f).map_err(|e| e.to_string()),
                Availability::Unavailable(why) => Err(why),
            })
            .clone();
        let fetched = match ready {
            Ok(f) => f,
            Err(why) => {
                let status = if why.contains("known-answer") {
                    Status::Failed
                } else {
                    Status::Unsupported
                };
                session.record(ResultRecord::not_ok(Kind::Primitive, subj, Metric::BytesPerSec, status, why))?;
                continue;
            }
        };
        let probes: anyhow::Result<Vec<PrimitiveProbe>> = (0..plan.threads)
            .map(|_| PrimitiveProbe::new(p, &fetched, item.op, item.bytes.0 as usize))
            .collect();
        let mut probes = match probes {
            Ok(ps) => ps,
            Err(e) => {
                session.record(ResultRecord::not_ok(
                    Kind::Primitive,
                    subj,
                    Metric::BytesPerSec,
                    Status::Unsupported,
                    format!("{e:#}"),
                ))?;
                continue;
            }
        };
        match sampler::measure(&mut probes, Rate::PerSecond, &plan.sampler) {
            Ok(m) => {
                let idx = session.record(record(&m, subj))?;
                live.push((idx, probes, m));
            }
            Err(e) => {
                session.record(ResultRecord::not_ok(
                    Kind::Primitive,
                    subj,
                    Metric::BytesPerSec,
                    Status::Failed,
                    format!("{e:#}"),
                ))?;
            }
        }
    }
    session.progress_finish();
    race(plan, session, &mut live, start)
}

/// Gives leftover budget to subjects tied with the leader of their group
/// (same class, operation, size and thread count).
fn race(
    plan: &PrimitivePlan,
    session: &mut Session,
    live: &mut [(usize, Vec<PrimitiveProbe>, Measurement)],
    start: Instant,
) -> anyhow::Result<()> {
    let left = plan.budget.0 - start.elapsed().as_secs_f64();
    if left <= 0.05 || crate::interrupt::requested() {
        return Ok(());
    }
    let racing = contenders(session.results(), |r| {
        let p = primitive::lookup(r.subject.algorithm.as_deref()?)?;
        Some((p.class.label(), r.subject.op.clone(), r.subject.bytes, r.subject.threads))
    });
    if racing.is_empty() {
        return Ok(());
    }
    let extra = Seconds((left / racing.len() as f64).min(plan.sampler.budget.0 * 2.0));
    for idx in racing {
        if crate::interrupt::requested() {
            break;
        }
        if let Some((_, probes, m)) = live.iter_mut().find(|(i, _, _)| *i == idx) {
            sampler::refine(probes, m, &plan.sampler, extra)?;
            let subj = session.results()[idx].subject.clone();
            session.replace(idx, record(m, subj))?;
        }
    }
    Ok(())
}
