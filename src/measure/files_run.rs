//! The file plan's run: per input, per cipher (KAT first), encrypt and decrypt
//! through the library, then optionally through `openssl enc` processes, each
//! subject within its share of `--budget`.

use crate::measure::engine::sampler::{self, Measurement, Rate, SamplerConfig};
use crate::measure::file;
use crate::measure::plans::{FileInput, FilePlan};
use crate::measure::primitive::{self, Fetched, Primitive};
use crate::measure::primitives_run::{ready, Verified};
use crate::measure::sink::Measurements;
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use std::time::Instant;

/// The password's salt for the file keys.
const SALT: &[u8] = b"cbsalt01";

/// Runs the file plan: per input, per cipher (KAT first), encrypt and decrypt,
/// each a warm-up pass then `reps` verified passes; optionally the same with
/// `openssl enc` processes.
pub fn files(plan: &FilePlan, session: &mut Measurements) -> anyhow::Result<()> {
    let mut run = FilesRun::new(plan);
    session.progress_start((run.left + usize::from(plan.password.is_some())) as u64);
    'inputs: for input in &plan.inputs {
        for &p in &plan.primitives {
            if crate::interrupt::requested() || !run.cipher(session, input, p)? {
                break 'inputs;
            }
        }
    }
    session.progress_finish();
    report_cut(plan, session, &run.cut)
}

/// What the file run carries from one subject to the next.
struct FilesRun<'a> {
    plan: &'a FilePlan,
    cfg: SamplerConfig,
    cache: Verified,
    kdf_done: bool,
    /// Subjects still to measure (their budget shares).
    left: usize,
    /// Subjects `--budget` cut short, for the warning.
    cut: Vec<String>,
}

impl<'a> FilesRun<'a> {
    fn new(plan: &'a FilePlan) -> FilesRun<'a> {
        let per_input = plan.primitives.len() * 2 * if plan.via_openssl_cli { 2 } else { 1 };
        FilesRun {
            plan,
            cfg: plan.sampler(),
            cache: Verified::new(),
            kdf_done: false,
            left: plan.inputs.len() * per_input,
            cut: Vec::new(),
        }
    }

    /// One cipher on one input: its keys, the library's passes, then `openssl
    /// enc`'s. `false` when the run must stop.
    fn cipher(&mut self, session: &mut Measurements, input: &FileInput, p: &'static Primitive) -> anyhow::Result<bool> {
        let fetched = ready(p, primitive::Library::DEFAULT, &mut self.cache);
        let keys = self.keys(session, &fetched)?;
        Ok(self.library_passes(session, input, p, &fetched, keys.as_ref())?
            && (!self.plan.via_openssl_cli || self.cli_passes(session, input, p, keys.as_ref())?))
    }

    /// Keys: random, or PBKDF2 from the password (its cost timed once, apart).
    fn keys(&mut self, session: &mut Measurements, fetched: &Result<Fetched, String>) -> anyhow::Result<Option<file::Keys>> {
        let Some(c) = fetched.as_ref().ok().and_then(crate::backend::openssl::primitives::cipher) else {
            return Ok(None);
        };
        let c = &c;
        let Some(pw) = &self.plan.password else {
            return Ok(Some(file::Keys::random(c)));
        };
        if !self.kdf_done {
            self.kdf_done = true;
            self.time_kdf(session, c, pw)?;
        }
        Ok(Some(file::Keys::from_password(c, pw, SALT, self.plan.pbkdf2_iterations)?))
    }

    /// Times one key derivation (three samples) and records it as its own result.
    fn time_kdf(&self, session: &mut Measurements, c: &std::sync::Arc<openssl::cipher::Cipher>, pw: &str) -> anyhow::Result<()> {
        let mut probe = [Pbkdf2Probe {
            cipher: c.clone(),
            password: pw.to_string(),
            iterations: self.plan.pbkdf2_iterations,
        }];
        let three = SamplerConfig {
            min_samples: 3,
            max_samples: 3,
            ..self.cfg
        };
        let m = sampler::measure(&mut probe, Rate::SecondsPer, &three)?;
        let subject = Subject {
            algorithm: Some(format!("pbkdf2-hmac-sha256 ({} iterations)", self.plan.pbkdf2_iterations)),
            op: Some("derive-key".into()),
            library: Some("openssl".into()),
            ..Default::default()
        };
        if let Some(w) = m.wall() {
            session.record(ResultRecord::ok(Kind::File, subject, Metric::Seconds, &w, m.cpu().as_ref()))?;
        }
        Ok(())
    }

    /// Encrypt and decrypt through the library. `false` when the run must stop.
    fn library_passes(
        &mut self,
        session: &mut Measurements,
        input: &FileInput,
        p: &'static Primitive,
        fetched: &Result<Fetched, String>,
        keys: Option<&file::Keys>,
    ) -> anyhow::Result<bool> {
        let plan = self.plan;
        self.passes(session, input, p, ("openssl", ""), |op| {
            let (Ok(fetched), Some(keys)) = (fetched, keys) else {
                let why = fetched.clone().err().unwrap_or_default();
                let status = if why.contains("known-answer") {
                    Status::Failed
                } else {
                    Status::Unsupported
                };
                return Err((status, why));
            };
            if input.size == 0 {
                return Err((Status::Unsupported, "empty file: nothing to time".into()));
            }
            Ok(file::FileProbe::new(
                p,
                fetched,
                op,
                plan.mode,
                &input.path,
                input.sha256,
                keys,
                &plan.workdir,
                plan.chunk,
            ))
        })
    }

    /// Encrypt and decrypt with `openssl enc` processes. `false` when the run must stop.
    fn cli_passes(
        &mut self,
        session: &mut Measurements,
        input: &FileInput,
        p: &'static Primitive,
        keys: Option<&file::Keys>,
    ) -> anyhow::Result<bool> {
        let plan = self.plan;
        self.passes(session, input, p, ("openssl-cli", "openssl enc "), |op| {
            let Some(keys) = keys else {
                return Err((Status::Unsupported, "not available in this OpenSSL".into()));
            };
            if !file::cli_supports(p) {
                return Err((Status::Unsupported, "openssl enc does not support AEAD or XTS ciphers".into()));
            }
            Ok(file::CliProbe::new(p, op, plan.mode, &input.path, keys, &plan.workdir))
        })
    }

    /// Encrypt, then decrypt, `input` with `p` through one way of running it
    /// (`how`: the subject's library and the progress line's prefix). `probe` makes
    /// the operation's probe, or says why the subject is recorded unmeasured (its
    /// status and why). The probe's own type is measured: nothing is added inside
    /// the timed region. `false` when the run must stop.
    fn passes<P: sampler::Probe>(
        &mut self,
        session: &mut Measurements,
        input: &FileInput,
        p: &'static Primitive,
        how: (&str, &str),
        probe: impl Fn(primitive::Op) -> Result<anyhow::Result<P>, (Status, String)>,
    ) -> anyhow::Result<bool> {
        let (library, prefix) = how;
        for op in [primitive::Op::Encrypt, primitive::Op::Decrypt] {
            if crate::interrupt::requested() {
                return Ok(false);
            }
            session.progress_message(&format!("{prefix}{} {} {}", p.name, op.as_str(), input.label));
            let subject = file_subject(p.name, op.as_str(), input, self.plan.mode, library);
            match probe(op) {
                Err((status, why)) => {
                    session.record(ResultRecord::not_ok(Kind::File, subject, Metric::BytesPerSec, status, why))?;
                }
                Ok(probe) => {
                    if !self.measure(session, subject, probe)? {
                        return Ok(false);
                    }
                }
            }
        }
        Ok(true)
    }

    /// Measures one subject within its share of what is left.
    fn measure<P: sampler::Probe>(
        &mut self,
        session: &mut Measurements,
        subject: Subject,
        probe: anyhow::Result<P>,
    ) -> anyhow::Result<bool> {
        self.left -= 1;
        let share = file_share(self.plan, self.left + 1);
        measure_file_subject(session, subject, &self.cfg, probe, share, &mut self.cut)
    }
}

/// With `--budget`, warns about (and stores) the subjects it cut short; fails
/// when not one repetition fitted.
fn report_cut(plan: &FilePlan, session: &mut Measurements, cut: &[String]) -> anyhow::Result<()> {
    let Some(b) = plan.budget else {
        return Ok(());
    };
    if cut.is_empty() {
        return Ok(());
    }
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
    Ok(())
}

fn file_subject(p: &str, op: &str, input: &FileInput, mode: file::IoMode, library: &str) -> Subject {
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
            std::hint::black_box(file::Keys::from_password(&self.cipher, &self.password, SALT, self.iterations)?);
        }
        Ok(units as f64)
    }
}

/// Measures one file subject and records the outcome. Returns `false` when the run
/// must stop (Ctrl-C, the run's deadline). A full disk or read-only output ends
/// the run with an error: nothing after it could work.
///
/// With `share` (the subject's part of `--budget`), one repetition is taken
/// first, and only as many more as fit in the share; fewer than `--reps` is
/// added to `cut` for the warning.
fn measure_file_subject<P: sampler::Probe>(
    session: &mut Measurements,
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
        let why = "not measured: --budget was spent";
        session.record(ResultRecord::not_ok(Kind::File, subject, Metric::BytesPerSec, Status::Failed, why))?;
        return Ok(true);
    }
    let outcome = probe.and_then(|p| {
        let mut probes = [p];
        match share {
            None => sampler::measure(&mut probes, Rate::PerSecond, cfg),
            Some(share) => within_share(&mut probes, cfg, share, &label, cut),
        }
    });
    let record = match outcome {
        Ok(m) => match m.wall() {
            Some(w) => ResultRecord::ok(Kind::File, subject, Metric::BytesPerSec, &w, m.cpu().as_ref()),
            None => ResultRecord::not_ok(Kind::File, subject, Metric::BytesPerSec, Status::Failed, "no samples"),
        },
        Err(_) if crate::interrupt::requested() => return Ok(false),
        Err(_) if crate::deadline::run_expired() => {
            cut.push(format!("{label}: stopped at {}", crate::deadline::describe()));
            let why = format!("not measured: stopped at {}", crate::deadline::describe());
            session.record(ResultRecord::not_ok(Kind::File, subject, Metric::BytesPerSec, Status::Failed, why))?;
            return Ok(false);
        }
        Err(e) if is_io_fatal(&e) => return Err(e),
        Err(e) => ResultRecord::not_ok(Kind::File, subject, Metric::BytesPerSec, Status::Failed, format!("{e:#}")),
    };
    session.record(record)?;
    Ok(true)
}

/// One repetition, then as many more as fit in `share` (seconds); fewer than
/// the configured repetitions is added to `cut`.
fn within_share<P: sampler::Probe>(
    probes: &mut [P],
    cfg: &SamplerConfig,
    share: f64,
    label: &str,
    cut: &mut Vec<String>,
) -> anyhow::Result<Measurement> {
    let t0 = Instant::now();
    let one = SamplerConfig {
        min_samples: 1,
        max_samples: 1,
        ..*cfg
    };
    let mut m = sampler::measure(probes, Rate::PerSecond, &one)?;
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
        let m2 = sampler::measure(probes, Rate::PerSecond, &rest)?;
        m.samples.extend(m2.samples);
    }
    if m.samples.len() < cfg.max_samples {
        cut.push(format!("{label}: {} of {} repetitions", m.samples.len(), cfg.max_samples));
    }
    Ok(m)
}

/// The share of `--budget` the next file subject gets: what is left of it (it
/// counts from the start of the run, so generating and hashing inputs count;
/// a twentieth is kept for the report) over the subjects left. `None` without
/// a budget.
fn file_share(plan: &FilePlan, left_subjects: usize) -> Option<f64> {
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
