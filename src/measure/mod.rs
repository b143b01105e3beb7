//! Measurement kinds and the engine they share. Each kind provides candidates and
//! a probe; the sampler and statistics are shared.

pub mod engine;
pub mod file;
pub mod kat;
pub mod plans;
pub mod primitive;
pub mod sink;
pub mod ssh;
pub mod tls;

use crate::measure::plans::PrimitivePlan;
use crate::measure::sink::Sink;
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use crate::units::Seconds;
use engine::sampler::{self, Measurement, Rate, SamplerConfig, Sliced};
use primitive::{Availability, Fetched, PrimitiveProbe};
use std::collections::HashMap;
use std::time::Instant;

fn subject(item: &crate::measure::plans::PrimitiveItem, threads: usize) -> Subject {
    Subject {
        algorithm: Some(item.primitive.name.to_string()),
        op: Some(item.op.as_str().to_string()),
        bytes: Some(item.bytes.0),
        library: Some(item.library.as_str().to_string()),
        threads: Some(threads),
        ..Default::default()
    }
}

/// The record of a subject measured in batches: the figure over the batches'
/// medians (`Sliced::from_batches`), its values kept for pooling.
fn record(m: &Sliced, subject: Subject) -> ResultRecord {
    match m.headline() {
        Some(h) => {
            let mut r =
                ResultRecord::ok(Kind::Primitive, subject, Metric::BytesPerSec, &h, m.cpu().as_ref()).with_values(m.headline_values());
            if m.combined.basis == sampler::Basis::Cpu {
                r.wall_median = m.wall().map(|w| w.median);
            }
            r
        }
        None => ResultRecord::not_ok(Kind::Primitive, subject, Metric::BytesPerSec, Status::Failed, "no samples"),
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
/// settle the run's noise (`engine::noise`). Results go to the session as they
/// are made.
pub fn primitives(plan: &PrimitivePlan, session: &mut dyn Sink) -> anyhow::Result<()> {
    let start = Instant::now();
    let from = session.results().len();
    let mut verified: HashMap<(&'static str, primitive::Library), Result<Fetched, String>> = HashMap::new();
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
        session.record(ResultRecord::not_ok(Kind::Primitive, subj, Metric::BytesPerSec, why.0, why.1))?;
    }
    let all: Vec<usize> = (0..runnable.len()).collect();
    batches(plan, session, &mut runnable, &all, plan.sampler)?;
    race(plan, session, &mut runnable, start)?;
    engine::noise::settle(session, &[Kind::Primitive], from)
}

/// Measures the runnable subjects `which` in interleaved batches under `cfg`,
/// adding the batches to theirs and recording (or re-recording) their figures.
fn batches(
    plan: &PrimitivePlan,
    session: &mut dyn Sink,
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
            session.progress_message(&format!(
                "{} {} {} (batch {} of {})",
                p.name,
                item.op.as_str(),
                item.bytes,
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
        let rec = match result {
            Ok(Some(sliced)) => {
                r.batches.extend(sliced.slices);
                match Sliced::from_batches(r.batches.clone()) {
                    Some(all) => record(&all, subj),
                    None => continue,
                }
            }
            // No batch: interrupted, or the budget was spent first.
            Ok(None) if r.idx.is_some() || crate::interrupt::requested() => continue,
            Ok(None) => ResultRecord::not_ok(
                Kind::Primitive,
                subj,
                Metric::BytesPerSec,
                Status::Failed,
                "skipped: the budget was spent first (raise --budget)",
            ),
            Err(_) if r.idx.is_some() => continue,
            Err(e) => ResultRecord::not_ok(Kind::Primitive, subj, Metric::BytesPerSec, Status::Failed, format!("{e:#}")),
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
fn race(plan: &PrimitivePlan, session: &mut dyn Sink, runnable: &mut [Runnable], start: Instant) -> anyhow::Result<()> {
    let left = plan.budget.0 - start.elapsed().as_secs_f64();
    if left <= 0.05 || crate::interrupt::requested() || crate::deadline::run_expired() {
        return Ok(());
    }
    let racing = engine::race::contenders(session.results(), |r| {
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

/// Verifies (KAT) and fetches a primitive once, explaining why not when it cannot run.
fn ready(
    p: &'static primitive::Primitive,
    lib: primitive::Library,
    cache: &mut HashMap<(&'static str, primitive::Library), Result<Fetched, String>>,
) -> Result<Fetched, String> {
    cache
        .entry((p.name, lib))
        .or_insert_with(|| match primitive::fetch_from(p, lib) {
            Availability::Available(f) => kat::check(p, &f).map(|_| f).map_err(|e| e.to_string()),
            Availability::Unavailable(why) => Err(why),
        })
        .clone()
}

fn file_subject(p: &str, op: &str, input: &crate::measure::plans::FileInput, mode: file::IoMode, library: &str) -> Subject {
    Subject {
        algorithm: Some(p.to_string()),
        op: Some(op.to_string()),
        bytes: Some(input.size),
        library: Some(library.to_string()),
        path: Some(input.label.clone()),
        mode: Some(mode.as_str().to_string()),
        ..Default::default()
    }
}

/// Times one derivation of the file key from the password (PBKDF2), reported on
/// its own so that it is not mixed into the cipher figures.
struct Pbkdf2Probe {
    cipher: std::sync::Arc<openssl::cipher::Cipher>,
    password: String,
    iterations: usize,
}

impl sampler::Probe for Pbkdf2Probe {
    fn run(&mut self, units: u64) -> anyhow::Result<f64> {
        for _ in 0..units {
            std::hint::black_box(file::Keys::from_password(
                &self.cipher,
                &self.password,
                b"cbsalt01",
                self.iterations,
            )?);
        }
        Ok(units as f64)
    }
}

/// Runs the file plan: per input, per cipher (KAT first), encrypt and decrypt,
/// each a warm-up pass then `reps` verified passes; optionally the same with
/// `openssl enc` processes.
pub fn files(plan: &crate::measure::plans::FilePlan, session: &mut dyn Sink) -> anyhow::Result<()> {
    let mut cache = HashMap::new();
    let cfg = plan.sampler();
    let per_input = plan.primitives.len() * 2 * if plan.via_openssl_cli { 2 } else { 1 };
    session.progress_start((plan.inputs.len() * per_input + usize::from(plan.password.is_some())) as u64);
    let mut kdf_done = false;
    let mut left = plan.inputs.len() * per_input;
    let mut cut: Vec<String> = Vec::new();
    'inputs: for input in &plan.inputs {
        for &p in &plan.primitives {
            if crate::interrupt::requested() {
                break 'inputs;
            }
            let fetched = ready(p, primitive::Library::Openssl, &mut cache);
            let cipher = match &fetched {
                Ok(Fetched::Cipher(c)) => Some(c.clone()),
                _ => None,
            };
            // Keys: random, or PBKDF2 from the password (its cost timed once, apart).
            let keys = match (&cipher, &plan.password) {
                (Some(c), Some(pw)) => {
                    if !kdf_done {
                        kdf_done = true;
                        let mut probe = [Pbkdf2Probe {
                            cipher: c.clone(),
                            password: pw.clone(),
                            iterations: plan.pbkdf2_iterations,
                        }];
                        let m = sampler::measure(
                            &mut probe,
                            sampler::Rate::SecondsPer,
                            &SamplerConfig {
                                min_samples: 3,
                                max_samples: 3,
                                ..cfg
                            },
                        )?;
                        let subject = Subject {
                            algorithm: Some(format!("pbkdf2-hmac-sha256 ({} iterations)", plan.pbkdf2_iterations)),
                            op: Some("derive-key".into()),
                            library: Some("openssl".into()),
                            ..Default::default()
                        };
                        if let Some(w) = m.wall() {
                            session.record(ResultRecord::ok(Kind::File, subject, Metric::Seconds, &w, m.cpu().as_ref()))?;
                        }
                    }
                    Some(file::Keys::from_password(c, pw, b"cbsalt01", plan.pbkdf2_iterations)?)
                }
                (Some(c), None) => Some(file::Keys::random(c)),
                _ => None,
            };
            for op in [primitive::Op::Encrypt, primitive::Op::Decrypt] {
                if crate::interrupt::requested() {
                    break 'inputs;
                }
                session.progress_message(&format!("{} {} {}", p.name, op.as_str(), input.label));
                let subject = file_subject(p.name, op.as_str(), input, plan.mode, "openssl");
                let (Ok(fetched), Some(keys)) = (&fetched, &keys) else {
                    let why = fetched.clone().err().unwrap_or_default();
                    let status = if why.contains("known-answer") {
                        Status::Failed
                    } else {
                        Status::Unsupported
                    };
                    session.record(ResultRecord::not_ok(Kind::File, subject, Metric::BytesPerSec, status, why))?;
                    continue;
                };
                if input.size == 0 {
                    session.record(ResultRecord::not_ok(
                        Kind::File,
                        subject,
                        Metric::BytesPerSec,
                        Status::Unsupported,
                        "empty file: nothing to time",
                    ))?;
                    continue;
                }
                let probe = file::FileProbe::new(
                    p,
                    fetched,
                    op,
                    plan.mode,
                    &input.path,
                    input.sha256,
                    keys,
                    &plan.workdir,
                    plan.chunk,
                );
                left -= 1;
                if !measure_file_subject(session, subject, &cfg, probe, file_share(plan, left + 1), &mut cut)? {
                    break 'inputs;
                }
            }
            if plan.via_openssl_cli {
                for op in [primitive::Op::Encrypt, primitive::Op::Decrypt] {
                    if crate::interrupt::requested() {
                        break 'inputs;
                    }
                    session.progress_message(&format!("openssl enc {} {} {}", p.name, op.as_str(), input.label));
                    let subject = file_subject(p.name, op.as_str(), input, plan.mode, "openssl-cli");
                    let Some(keys) = &keys else {
                        session.record(ResultRecord::not_ok(
                            Kind::File,
                            subject,
                            Metric::BytesPerSec,
                            Status::Unsupported,
                            "not available in this OpenSSL",
                        ))?;
                        continue;
                    };
                    if !file::cli_supports(p) {
                        session.record(ResultRecord::not_ok(
                            Kind::File,
                            subject,
                            Metric::BytesPerSec,
                            Status::Unsupported,
                            "openssl enc does not support AEAD or XTS ciphers",
                        ))?;
                        continue;
                    }
                    let probe = file::CliProbe::new(p, op, plan.mode, &input.path, keys, &plan.workdir);
                    left -= 1;
                    if !measure_file_subject(session, subject, &cfg, probe, file_share(plan, left + 1), &mut cut)? {
                        break 'inputs;
                    }
                }
            }
        }
    }
    session.progress_finish();
    if let Some(b) = plan.budget {
        if !cut.is_empty() {
            eprintln!(
                "warning: --budget {:.0}s cut the run short; fewer repetitions than --reps {}: {}",
                b.0,
                plan.reps,
                cut.join("; ")
            );
            session.set_setting("budget_cut", serde_json::json!(cut));
            let measured = session.results().iter().any(|r| r.kind == Kind::File && r.status == Status::Ok);
            if !measured {
                anyhow::bail!(
                    "--budget {:.0}s: not one repetition fitted (one pass takes longer); give a larger --budget, a smaller file or fewer ciphers",
                    b.0
                );
            }
        }
    }
    Ok(())
}

/// Measures one file subject and records the outcome. Returns `false` when the run
/// must stop (Ctrl-C, the run's deadline). A full disk or read-only output ends
/// the run with an error: nothing after it could work.
///
/// With `share` (the subject's part of `--budget`), one repetition is taken
/// first, and only as many more as fit in the share; fewer than `--reps` is
/// added to `cut` for the warning.
fn measure_file_subject<P: sampler::Probe>(
    session: &mut dyn Sink,
    subject: Subject,
    cfg: &SamplerConfig,
    probe: anyhow::Result<P>,
    share: Option<f64>,
    cut: &mut Vec<String>,
) -> anyhow::Result<bool> {
    let label = format!(
        "{} {} {}",
        subject.algorithm.as_deref().unwrap_or(""),
        subject.op.as_deref().unwrap_or(""),
        subject.path.as_deref().unwrap_or("")
    );
    if share.is_some_and(|s| s <= 0.0) {
        cut.push(format!("{label}: not measured"));
        session.record(ResultRecord::not_ok(
            Kind::File,
            subject,
            Metric::BytesPerSec,
            Status::Failed,
            "not measured: --budget was spent",
        ))?;
        return Ok(true);
    }
    let outcome = probe.and_then(|p| {
        let mut probes = [p];
        let Some(share) = share else {
            return sampler::measure(&mut probes, Rate::PerSecond, cfg);
        };
        let t0 = Instant::now();
        let one = SamplerConfig {
            min_samples: 1,
            max_samples: 1,
            ..*cfg
        };
        let mut m = sampler::measure(&mut probes, Rate::PerSecond, &one)?;
        // Two passes so far (calibration and one repetition); more cost one
        // calibration pass again.
        let spent = t0.elapsed().as_secs_f64();
        let per_pass = spent / 2.0;
        let fit = if per_pass > 0.0 {
            ((share - spent) / per_pass - 1.0).floor().max(0.0) as usize
        } else {
            cfg.max_samples
        };
        let more = fit.min(cfg.max_samples.saturating_sub(1));
        if more > 0 && !crate::interrupt::requested() && !crate::deadline::run_expired() {
            let rest = SamplerConfig {
                min_samples: more,
                max_samples: more,
                ..*cfg
            };
            let m2 = sampler::measure(&mut probes, Rate::PerSecond, &rest)?;
            m.samples.extend(m2.samples);
        }
        if m.samples.len() < cfg.max_samples {
            cut.push(format!("{label}: {} of {} repetitions", m.samples.len(), cfg.max_samples));
        }
        Ok(m)
    });
    let record = match outcome {
        Ok(m) => match m.wall() {
            Some(w) => ResultRecord::ok(Kind::File, subject, Metric::BytesPerSec, &w, m.cpu().as_ref()),
            None => ResultRecord::not_ok(Kind::File, subject, Metric::BytesPerSec, Status::Failed, "no samples"),
        },
        Err(_) if crate::interrupt::requested() => return Ok(false),
        Err(_) if crate::deadline::run_expired() => {
            cut.push(format!("{label}: stopped at {}", crate::deadline::describe()));
            session.record(ResultRecord::not_ok(
                Kind::File,
                subject,
                Metric::BytesPerSec,
                Status::Failed,
                format!("not measured: stopped at {}", crate::deadline::describe()),
            ))?;
            return Ok(false);
        }
        Err(e) if is_io_fatal(&e) => return Err(e),
        Err(e) => ResultRecord::not_ok(Kind::File, subject, Metric::BytesPerSec, Status::Failed, format!("{e:#}")),
    };
    session.record(record)?;
    Ok(true)
}

/// The share of `--budget` the next file subject gets: what is left of it (it
/// counts from the start of the run, so generating and hashing inputs count;
/// a twentieth is kept for the report) over the subjects left. `None` without
/// a budget.
fn file_share(plan: &crate::measure::plans::FilePlan, left_subjects: usize) -> Option<f64> {
    let b = plan.budget?;
    let left = crate::deadline::run().left().as_secs_f64() - crate::deadline::grace(b).0 - 0.05 * b.0;
    Some(left / left_subjects.max(1) as f64)
}

/// Errors that mean the output directory is unusable (full, read-only).
fn is_io_fatal(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| matches!(io.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT) | Some(libc::EROFS)))
    })
}
