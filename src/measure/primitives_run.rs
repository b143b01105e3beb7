//! The primitive plan's run: a known-answer test per algorithm, interleaved
//! batches across the subjects, a race for the close calls, then the run's noise.

use crate::measure::engine::sampler::{self, Measurement, Rate, SamplerConfig, Sliced};
use crate::measure::kat;
use crate::measure::plans::PrimitivePlan;
use crate::measure::primitive::{self, Availability, Fetched, PrimitiveProbe};
use crate::measure::sink::Measurements;
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use crate::units::Seconds;
use std::collections::HashMap;
use std::time::Instant;

/// Each (algorithm, library)'s known-answer test, done once: what to probe it
/// with, or why it cannot run.
pub(super) type Verified = HashMap<(&'static str, primitive::Library), Result<Fetched, String>>;

/// Bytes per second, or operations per second for ML-KEM and ML-DSA.
fn metric(item: &crate::measure::plans::PrimitiveItem) -> Metric {
    if item.primitive.class.per_operation() {
        Metric::OpsPerSec
    } else {
        Metric::BytesPerSec
    }
}

fn subject(item: &crate::measure::plans::PrimitiveItem, threads: usize) -> Subject {
    let bytes = (!item.primitive.class.per_operation()).then_some(item.bytes.0);
    Subject::primitive(item.primitive.name, item.op.as_str(), bytes, item.library.as_str(), threads)
}

/// The record of a subject measured in batches: the figure over the batches'
/// medians (`Sliced::from_batches`), its values kept for pooling.
fn record(m: &Sliced, subject: Subject, metric: Metric) -> ResultRecord {
    match m.headline() {
        Some(h) => {
            let mut r = ResultRecord::ok(Kind::Primitive, subject, metric, &h, m.cpu().as_ref()).with_values(m.headline_values());
            if m.combined.basis == sampler::Basis::Cpu {
                r.wall_median = m.wall().map(|w| w.median);
            }
            r
        }
        None => ResultRecord::not_ok(Kind::Primitive, subject, metric, Status::Failed, "no samples"),
    }
}

/// A primitive subject that passed its known-answer test and can be probed.
struct Runnable<'a> {
    item: &'a crate::measure::plans::PrimitiveItem,
    fetched: Fetched,
    /// Its record in the session, once measured.
    idx: Option<usize>,
    /// Its batches so far (a race adds to them).
    batches: Vec<Measurement>,
}

/// Runs a primitive plan: KAT each algorithm once, then measure every item in
/// batches interleaved across the items (rounds A B C, A B C, …, each batch on
/// freshly built contexts, `sampler::interleave`), then race the close calls with
/// what is left of the budget (more batches, pooled with the first ones), then
/// settle the run's noise (`crate::measure::engine::noise`). Results go to the session as they
/// are made.
pub fn primitives(plan: &PrimitivePlan, session: &mut Measurements) -> anyhow::Result<()> {
    let start = Instant::now();
    let from = session.results().len();
    let mut verified = Verified::new();
    let mut runnable: Vec<Runnable> = Vec::new();
    for item in &plan.items {
        let subj = subject(item, plan.threads);
        let why = match ready(item.primitive, item.library, &mut verified) {
            Ok(fetched) => match PrimitiveProbe::new(item.primitive, &fetched, item.op, item.bytes.0 as usize) {
                Ok(_) => {
                    runnable.push(Runnable {
                        item,
                        fetched,
                        idx: None,
                        batches: Vec::new(),
                    });
                    continue;
                }
                Err(e) => (Status::Unsupported, format!("{e:#}")),
            },
            Err(why) if why.contains("known-answer") => (Status::Failed, why),
            Err(why) => (Status::Unsupported, why),
        };
        session.record(ResultRecord::not_ok(Kind::Primitive, subj, metric(item), why.0, why.1))?;
    }
    let all: Vec<usize> = (0..runnable.len()).collect();
    batches(plan, session, &mut runnable, &all, plan.sampler)?;
    floor(plan, session, &mut runnable)?;
    race(plan, session, &mut runnable, start)?;
    crate::measure::engine::noise::settle(session, &[Kind::Primitive], from)
}

/// Measures the runnable subjects `which` in interleaved batches under `cfg`,
/// adding the batches to theirs and recording (or re-recording) their figures.
fn batches(
    plan: &PrimitivePlan,
    session: &mut Measurements,
    runnable: &mut [Runnable],
    which: &[usize],
    cfg: SamplerConfig,
) -> anyhow::Result<()> {
    // Batches short enough for several per subject: no connection to open, so a
    // batch need not be long; at least [`MIN_BATCH`], at most the default slice.
    let cfg = SamplerConfig {
        slice: Seconds((cfg.budget.0 / BATCHES as f64).clamp(MIN_BATCH, cfg.slice.0)),
        min_time: Seconds(0.0),
        ..cfg
    };
    let cfgs = vec![cfg; which.len()];
    session.progress_start(which.len() as u64);
    let out = {
        let runnable = &*runnable;
        let session = &*session;
        sampler::interleave(&cfgs, |spec| {
            let r = &runnable[which[spec.subject]];
            let (p, item) = (r.item.primitive, r.item);
            let size = if p.class.per_operation() {
                String::new()
            } else {
                format!(" {}", item.bytes)
            };
            session.progress_message(&format!(
                "{} {}{size} (batch {} of {})",
                p.name,
                item.op.as_str(),
                spec.index + 1,
                spec.of
            ));
            let mut probes = (0..plan.threads)
                .map(|_| PrimitiveProbe::new(p, &r.fetched, item.op, item.bytes.0 as usize))
                .collect::<anyhow::Result<Vec<_>>>()?;
            spec.measure(&mut probes, Rate::PerSecond)
        })
    };
    session.progress_finish();
    for (k, result) in which.iter().zip(out) {
        let r = &mut runnable[*k];
        let subj = subject(r.item, plan.threads);
        let metric = metric(r.item);
        let rec = match result {
            Ok(Some(sliced)) => {
                r.batches.extend(sliced.slices);
                match Sliced::from_batches(r.batches.clone()) {
                    Some(all) => record(&all, subj, metric),
                    None => continue,
                }
            }
            // No batch: interrupted, or the budget was spent first.
            Ok(None) if r.idx.is_some() || crate::interrupt::requested() => continue,
            Ok(None) => ResultRecord::not_ok(Kind::Primitive, subj, metric, Status::Failed, crate::model::BUDGET_SKIPPED),
            Err(_) if r.idx.is_some() => continue,
            Err(e) => ResultRecord::not_ok(Kind::Primitive, subj, metric, Status::Failed, format!("{e:#}")),
        };
        match r.idx {
            Some(i) => session.replace(i, rec)?,
            None => r.idx = Some(session.record(rec)?),
        }
    }
    Ok(())
}

/// Batches aimed for per subject (from 10 on, the 95% interval of the median
/// leaves out the lowest and highest batch: one burst of another process does not
/// widen it), and the shortest batch.
const BATCHES: usize = 10;
const MIN_BATCH: f64 = 0.03;

/// Gives leftover budget to subjects tied with the leader of their group (same
/// class, operation, size and thread count): more batches, pooled with theirs.
fn race(plan: &PrimitivePlan, session: &mut Measurements, runnable: &mut [Runnable], start: Instant) -> anyhow::Result<()> {
    let left = plan.budget.0 - start.elapsed().as_secs_f64();
    if left <= 0.05 || crate::interrupt::requested() || crate::deadline::run_expired() {
        return Ok(());
    }
    let racing = crate::measure::engine::race::contenders(session.results(), |r| {
        let p = primitive::lookup(r.subject.algorithm.as_deref()?)?;
        Some((
            p.class.label(),
            r.subject.op.clone(),
            r.subject.bytes,
            r.subject.threads,
            r.subject.library.clone(),
        ))
    });
    let which: Vec<usize> = racing
        .iter()
        .filter_map(|idx| runnable.iter().position(|r| r.idx == Some(*idx)))
        .collect();
    if which.is_empty() {
        return Ok(());
    }
    let extra = Seconds((left / which.len() as f64).min(plan.sampler.budget.0 * 2.0));
    batches(
        plan,
        session,
        runnable,
        &which,
        SamplerConfig {
            budget: extra,
            ..plan.sampler
        },
    )
}

/// Rounds of top-up batches for the subjects still short of `plan.min_batches`
/// (each slice may stop short again under load: a few rounds, not one).
const FLOOR_ROUNDS: usize = 4;

/// Gives the subjects with fewer than `plan.min_batches` batches more, beyond the
/// plan's budget (only `plan.floor_until`, the run's deadline and Ctrl-C stop
/// them): a loaded core
/// stretches each batch's wall time, so a share of the budget can end after two
/// batches, and a figure of fewer than three ties with everything.
fn floor(plan: &PrimitivePlan, session: &mut Measurements, runnable: &mut [Runnable]) -> anyhow::Result<()> {
    for _ in 0..FLOOR_ROUNDS {
        let late = plan.floor_until.is_some_and(|t| std::time::Instant::now() >= t);
        if late || crate::interrupt::requested() || crate::deadline::run_expired() {
            return Ok(());
        }
        let short: Vec<usize> = (0..runnable.len())
            .filter(|&k| runnable[k].batches.len() < plan.min_batches)
            .collect();
        let Some(most) = short.iter().map(|&k| plan.min_batches - runnable[k].batches.len()).max() else {
            return Ok(());
        };
        // Batches of the shortest length, as many as the most short subject lacks.
        let cfg = SamplerConfig {
            budget: Seconds(MIN_BATCH * most as f64),
            ..plan.sampler
        };
        batches(plan, session, runnable, &short, cfg)?;
    }
    Ok(())
}

/// Verifies (KAT) and fetches a primitive once, explaining why not when it cannot run.
pub(super) fn ready(p: &'static primitive::Primitive, lib: primitive::Library, cache: &mut Verified) -> Result<Fetched, String> {
    cache
        .entry((p.name, lib))
        .or_insert_with(|| match primitive::fetch_from(p, lib) {
            Availability::Available(f) => kat::check(p, &f).map(|_| f).map_err(|e| e.to_string()),
            Availability::Unavailable(why) => Err(why),
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use crate::measure::plans::primitives_of_ops;
    use crate::measure::primitive::{lookup, Library, Op};
    use crate::measure::sink::Measurements;
    use crate::units::{Bytes, Seconds};

    /// A budget far too small for one batch each still gives every subject
    /// `min_batches` batches (the SSH physics pass on a loaded core); without
    /// the floor, the same plan gives fewer.
    #[test]
    fn every_subject_gets_the_floor_of_batches() {
        let prims = [lookup("aes-128-gcm").unwrap(), lookup("hmac-sha256").unwrap()];
        let plan = |floor: usize| {
            let mut p = primitives_of_ops(&prims, &[Library::DEFAULT], &[Bytes(16384)], 1, Seconds(0.02), |op| {
                op != Op::Decrypt
            });
            p.min_batches = floor;
            p
        };
        let samples = |floor: usize| {
            let mut m = Measurements::new();
            super::primitives(&plan(floor), &mut m).unwrap();
            assert_eq!(m.results().len(), 2, "{:?}", m.results());
            m.results().iter().map(|r| r.samples.unwrap_or(0)).collect::<Vec<_>>()
        };
        assert!(samples(0).iter().any(|&n| n < 5), "{:?}", samples(0));
        assert!(samples(5).iter().all(|&n| n >= 5), "{:?}", samples(5));
        // The floor stops at `floor_until` (the sessions' time after it).
        let mut late = plan(5);
        late.floor_until = Some(std::time::Instant::now());
        let mut m = Measurements::new();
        super::primitives(&late, &mut m).unwrap();
        let n: Vec<_> = m.results().iter().map(|r| r.samples.unwrap_or(0)).collect();
        assert!(n.iter().any(|&n| n < 5), "{n:?}");
    }
}
