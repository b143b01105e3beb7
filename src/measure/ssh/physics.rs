//! The SSH sweep's physics pass: on this machine, the primitives behind the
//! ciphers and MACs the sweep measures, timed apart from the sessions (much
//! tighter than a transfer), so that recommend can order what the transfers
//! leave tied.

use crate::measure::sink::Measurements;
use crate::units::Seconds;
use anyhow::Result;

/// The physics pass's time: this much per primitive (ten batches of 30 ms with
/// their set-up), at most a tenth of the run's budget, within these bounds in
/// seconds. Each primitive also gets
/// [`PHYSICS_MIN_BATCHES`] batches whatever they cost (`PrimitivePlan::min_batches`),
/// within [`PHYSICS_FLOOR_SHARE`] of the run:
/// a loaded core stretches a batch's wall time, and no allowed cipher may be
/// left without a figure the ranking can use.
const PHYSICS_PER_PRIMITIVE: f64 = 0.35;
const PHYSICS_MIN: f64 = 1.0;
const PHYSICS_MAX: f64 = 4.0;
const PHYSICS_MIN_BATCHES: usize = 5;
/// From this run budget on, [`PHYSICS_BATCHES`] each: the 95% interval of a
/// median of 10 or more batches leaves out the lowest and the highest, so one
/// burst of another process cannot tie two primitives 1.7x apart.
const PHYSICS_FULL_FROM: f64 = 30.0;
const PHYSICS_BATCHES: usize = 10;
/// The most of the run's budget the physics pass may take with its floor of
/// batches: the sessions need the rest (a 5 s budget on a loaded core would
/// otherwise measure primitives and skip every SSH subject).
const PHYSICS_FLOOR_SHARE: f64 = 0.25;

/// On this machine, the primitives behind the allowed ciphers and the first
/// allowed MAC (`aes128-gcm@openssh.com` → aes-128-gcm, a CTR cipher →
/// aes-128-ctr, an HMAC → hmac-sha256 ...) at 16 KiB, sealing only: much tighter
/// than SSH sessions, they may order what the transfers leave tied (the
/// primitives as evidence, said as such in the answer). Nothing for a remote
/// host, whose CPU is another machine's. Primitives the run already has an
/// orderable figure for (the main job's primitive pass) are not measured again;
/// a figure of too few batches is replaced by the new one. Only the allowed
/// ciphers and MACs the sweep will measure (`planned`), and nothing when fewer
/// than two ciphers are left to order.
pub fn physics(
    admitted: &crate::plan::Admitted,
    planned: (&[String], &[String]),
    run_budget: Seconds,
    measurements: &mut Measurements,
) -> Result<()> {
    let (ciphers, macs) = planned;
    let ciphers: Vec<&String> = admitted.ssh_ciphers.iter().filter(|c| ciphers.contains(c)).collect();
    if ciphers.len() < 2 {
        return Ok(());
    }
    let mut names: Vec<String> = Vec::new();
    let mac = admitted.ssh_macs.iter().find(|m| macs.contains(m)).map(String::as_str);
    for cipher in ciphers {
        if let Some((c, m)) = crate::catalog::ssh_primitives(cipher, mac) {
            names.extend(std::iter::once(c).chain(m));
        }
    }
    // In the policy's order, each once, without those already measured well.
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(n.clone()) && sealing(measurements.results(), n).is_none_or(|r| !orderable(r)));
    let prims: Vec<_> = names.iter().filter_map(|n| crate::catalog::lookup(n)).collect();
    if prims.is_empty() {
        return Ok(());
    }
    let per = prims.len() as f64 * PHYSICS_PER_PRIMITIVE;
    let budget = Seconds(per.min(run_budget.0 * 0.1).clamp(PHYSICS_MIN, PHYSICS_MAX));
    let lib = [crate::measure::primitive::Library::DEFAULT];
    // Sealing only: the cost per byte recommend compares is the encrypt (or MAC)
    // figure, so a decrypt pass would halve every other primitive's share.
    use crate::measure::primitive::Op;
    let sizes = [crate::units::Bytes(PHYSICS_BYTES)];
    let mut plan = crate::measure::plans::primitives_of_ops(&prims, &lib, &sizes, 1, budget, |op| op != Op::Decrypt);
    plan.min_batches = if run_budget.0 >= PHYSICS_FULL_FROM {
        PHYSICS_BATCHES
    } else {
        PHYSICS_MIN_BATCHES
    };
    // The floor may run past the pass's budget, but not into the sessions' time.
    let floor_for = budget.0.max(run_budget.0 * PHYSICS_FLOOR_SHARE);
    plan.floor_until = Some(std::time::Instant::now() + std::time::Duration::from_secs_f64(floor_for));
    // Measured apart, then each figure kept in the run: in place of a weaker
    // figure of the same subject, else as a new one.
    let mut pass = Measurements {
        settings: measurements.settings().clone(),
        progress: measurements.progress.take(),
        ..Default::default()
    };
    let measured = crate::measure::primitives(&plan, &mut pass);
    measurements.progress = pass.progress.take();
    measured?;
    measurements.fold_in(&pass.results, crate::measure::sink::Fold::Replace)?;
    if let Some(noise) = pass.settings.get("noise") {
        measurements.set_setting("noise", noise.clone());
    }
    Ok(())
}

/// The block size of the physics pass: a full SSH packet's worth.
const PHYSICS_BYTES: u64 = 16384;

/// The run's single-thread OpenSSL sealing record of primitive `name` at
/// [`PHYSICS_BYTES`], if any.
fn sealing<'a>(results: &'a [crate::model::ResultRecord], name: &str) -> Option<&'a crate::model::ResultRecord> {
    results.iter().find(|r| {
        r.kind == crate::model::Kind::Primitive
            && r.subject.algorithm.as_deref() == Some(name)
            && matches!(r.subject.op.as_deref(), Some("encrypt" | "mac"))
            && r.subject.bytes == Some(PHYSICS_BYTES)
            && r.subject.threads.unwrap_or(1) == 1
            && r.subject.library.as_deref().is_none_or(|l| l == "openssl")
    })
}

/// A figure the ranking can order by: measured, of enough batches.
fn orderable(r: &crate::model::ResultRecord) -> bool {
    r.status == crate::model::Status::Ok && r.summary().is_some_and(|s| s.can_be_ordered())
}
