//! `check`: the installed configuration against the policy and the measured best.

use super::{close, conclude, judged, open_store, outputs, policy, progress};
use crate::diff::{self, check::CheckReport};
use crate::error::UsageError;
use crate::measure::sink::Measurements;
use crate::measure::{named, tls};
use crate::options::{CheckOptions, CommonOptions};
use crate::report::{self, Outputs};
use crate::session::Session;
use crate::units::Seconds;
use anyhow::Result;
use serde_json::json;

/// The share of `check`'s budget for its first pass over every candidate; the
/// rest measures again the comparisons the first pass left open.
const CHECK_FIRST_PASS: f64 = 0.7;

/// With a local nginx, Apache, HAProxy, stunnel or NZBGet: the first pass's
/// share, and the most the throughput through two private instances of it takes
/// (`measure::tls::through::through_each`, `measure::tls::nzbget::through_nzbget_each`).
const CHECK_FIRST_PASS_THROUGH: f64 = 0.6;

const CHECK_THROUGH: f64 = 0.3;

/// What `check` judges by: the policy, the knowledge, and the configurations read.
struct Checked {
    policy: crate::judge::Policy,
    knowledge: crate::judge::Knowledge,
    currents: Vec<diff::Current>,
    notes: Vec<String>,
}

/// What the passes measured: the run's outcome, the recommendations and the diffs.
struct Passes {
    measured: Result<()>,
    outcome: crate::recommend::Outcome,
    diffs: Vec<diff::SoftwareDiff>,
}

/// `check`: the installed (or --config-from) configuration → what its usual peer
/// negotiates → that choice measured beside what the policy allows → recommend →
/// diff → one line per finding, exit 1 when there is one.
pub(super) fn check(c: &CommonOptions, a: &CheckOptions) -> Result<()> {
    let budget = c.budget.unwrap_or(Seconds(40.0));
    // Set first: the run's deadline bounds reading the configuration and every
    // tool that reads it, not only measuring.
    crate::deadline::set_run(std::time::Instant::now(), budget);
    let mut job = validate(c, a)?;
    let settings = json!({
        "budget_seconds": budget.0,
        "policy": job.policy.name,
        "min_gain": a.min_gain,
        "config_from": a.config_from,
        "software": job.currents.iter().map(|x| x.installed.software).collect::<Vec<_>>(),
    });
    let (session, mut measurements) = Session::start("check", settings, open_store(c)?, progress(c))?;
    let Passes { measured, outcome, diffs } = measure_passes(c, &mut job, &session, &mut measurements, budget)?;
    let mut judged = judged(Vec::new(), &outcome);
    measurements.set_setting("installed_diff", serde_json::to_value(&diffs)?);
    diff::annotate(&mut judged.recommendations, &diffs);
    let (doc, status, stored) = close(session, measurements, judged, &measured);
    let findings = diff::check::findings(&diffs, a.min_gain);
    let report = CheckReport {
        schema: "cipherbench-check/1",
        policy: job.policy.name.clone(),
        min_gain: a.min_gain,
        run_id: doc.run.id.clone(),
        findings,
        diffs,
        notes: job.notes,
    };
    show(c, a, &report)?;
    let mut emitted = report::emit(
        &doc,
        &Outputs {
            json: false,
            quiet: true,
            ..outputs(c)
        },
    );
    if let Some(p) = &a.export_prom {
        let prom = diff::check::prometheus(&report, chrono::Utc::now().timestamp());
        let written = report::write_output(p, prom.as_bytes());
        emitted = emitted.and(written);
    }
    exit(c, &report, conclude(&doc, status, measured, stored, emitted))
}

/// The policy, the knowledge and the configurations to check, read before
/// anything is measured; nothing readable is bad input.
fn validate(c: &CommonOptions, a: &CheckOptions) -> Result<Checked> {
    let policy = policy(c)?;
    let knowledge = crate::judge::Knowledge::builtin()?;
    let (installed, mut notes) = diff::read_installed(&c.targets, a.config_from.as_deref())?;
    let (currents, more) = diff::resolve_all(installed, &knowledge);
    notes.extend(more);
    if currents.is_empty() {
        return Err(UsageError::Invalid(format!(
            "nothing to check: no configuration could be read{}; give --config-from FILE",
            if notes.is_empty() {
                String::new()
            } else {
                format!(" ({})", notes.join("; "))
            }
        ))
        .into());
    }
    if let Some(p) = &a.export_prom {
        report::check_writable(p, "--export-prom")?;
    }
    Ok(Checked {
        policy,
        knowledge,
        currents,
        notes,
    })
}

/// Two passes: every candidate first, then what is left of the budget on the
/// comparisons the answer is about (now against recommended) that the first
/// pass could not call. A local nginx, Apache, HAProxy, stunnel or NZBGet: its
/// throughput change is measured through two private instances of it once the
/// recommendation is known (the second pass leaves it out).
fn measure_passes(
    c: &CommonOptions,
    job: &mut Checked,
    session: &Session,
    measurements: &mut Measurements,
    budget: Seconds,
) -> Result<Passes> {
    let Checked {
        policy,
        knowledge,
        currents,
        notes,
    } = job;
    let subjects = diff::subjects::with_candidates(currents, knowledge, policy);
    let t0 = std::time::Instant::now();
    let server = currents.iter().any(|x| diff::through::server_binary(x).is_some());
    let nzbget = currents.iter().any(|x| diff::through::nzbget_binary(x).is_some());
    let through = server || nzbget;
    let first = if through { CHECK_FIRST_PASS_THROUGH } else { CHECK_FIRST_PASS };
    let measured = named::measure(&subjects, measurements, Seconds(budget.0 * first));
    let targets: Vec<String> = currents.iter().map(|x| x.installed.software.to_string()).collect();
    // Pooled with the history as `recommend` pools it, so both give one answer.
    let snapshot = super::pool::pooled(c, &session.document(measurements));
    let outcome = crate::recommend::recommend(&snapshot, knowledge, policy, &crate::software::emitters(&targets));
    let mut diffs = diff::build_all(currents, &snapshot, &outcome, knowledge, policy);
    let left = (budget.0 - t0.elapsed().as_secs_f64()).min(budget.0 * CHECK_THROUGH);
    if through && measured.is_ok() && left >= 1.5 && !crate::interrupt::requested() {
        let t1 = std::time::Instant::now();
        if server {
            let share = if nzbget { left / 2.0 } else { left };
            let plans = diff::through::server_plans(currents, &diffs);
            notes.extend(tls::through::through_each(plans, measurements, Seconds(share)));
        }
        if nzbget && !crate::interrupt::requested() {
            let rest = left - t1.elapsed().as_secs_f64();
            let plans = diff::through::nzbget_plans(currents, &diffs);
            notes.extend(tls::nzbget::through_nzbget_each(plans, measurements, Seconds(rest)));
        }
        diffs = diff::build_all(
            currents,
            &super::pool::pooled(c, &session.document(measurements)),
            &outcome,
            knowledge,
            policy,
        );
    } else if through && measured.is_ok() && !crate::interrupt::requested() {
        notes.push(format!(
            "the throughput change was not measured through the real server: the budget left {:.1} s for it (raise --budget), so it is the loopback figure",
            left.max(0.0)
        ));
    }
    let passes = Passes { measured, outcome, diffs };
    let left = budget.0 - t0.elapsed().as_secs_f64();
    second_pass(c, job, &targets, session, measurements, passes, Seconds(left))
}

/// The comparisons the first pass left open, measured again with what is `left`
/// and pooled into the run's figures.
fn second_pass(
    c: &CommonOptions,
    job: &Checked,
    targets: &[String],
    session: &Session,
    measurements: &mut Measurements,
    first: Passes,
    left: Seconds,
) -> Result<Passes> {
    let again = diff::subjects::undecided(&first.diffs);
    let open = !again.tls_suites.is_empty() || !again.ssh_ciphers.is_empty();
    if !(open && first.measured.is_ok() && left.0 >= 2.0 && !crate::interrupt::requested()) {
        return Ok(first);
    }
    let mut scratch = crate::measure::sink::Measurements::pass(measurements.settings.clone(), progress(c));
    let measured = named::measure(&again, &mut scratch, left);
    let pooled = measurements.fold_in(&scratch.results, crate::measure::sink::Fold::Pool)?;
    measurements.set_setting(
        "second_pass",
        json!({"tls_suites": again.tls_suites, "ssh_ciphers": again.ssh_ciphers, "ssh_macs": again.ssh_macs,
               "seconds": left.0, "pooled": pooled}),
    );
    let snapshot = super::pool::pooled(c, &session.document(measurements));
    let outcome = crate::recommend::recommend(&snapshot, &job.knowledge, &job.policy, &crate::software::emitters(targets));
    let diffs = diff::build_all(&job.currents, &snapshot, &outcome, &job.knowledge, &job.policy);
    Ok(Passes { measured, outcome, diffs })
}

/// The findings on the terminal (grouped, or one a line with --verbose), or the
/// check document with --json.
fn show(c: &CommonOptions, a: &CheckOptions, report: &CheckReport) -> Result<()> {
    if c.json {
        return report::print(&serde_json::to_vec_pretty(report)?);
    }
    if c.quiet {
        return Ok(());
    }
    let mut text = diff::render::section(&report.diffs, &report.notes);
    text.push('\n');
    if report.findings.is_empty() {
        text.push_str(&format!(
            "check: no finding under policy {} (min gain {:.0} %)\n",
            report.policy,
            a.min_gain * 100.0
        ));
    }
    if a.verbose {
        for f in &report.findings {
            text.push_str(&format!("FINDING {}\n", f.message));
        }
    } else {
        text.push_str(&diff::check::grouped(&report.findings, &report.policy, 80));
    }
    if !report.findings.is_empty() {
        text.push_str(&diff::check::summary(&report.findings, a.verbose));
    }
    report::print_text(&report::terminal::fit(&text))
}

/// A measuring error or an interruption first; a finding (exit 1) before
/// outputs that could not be saved (exit 4, then reported on stderr).
fn exit(c: &CommonOptions, report: &CheckReport, concluded: Result<()>) -> Result<()> {
    if let Err(e) = &concluded {
        if report.findings.is_empty() || crate::error::exit_code(e) != crate::error::code::NOT_SAVED {
            return concluded;
        }
        eprintln!("cipherbench: error: {e:#}");
    }
    if !report.findings.is_empty() {
        // Exit 1 is `check`'s contract for findings (CI and monitoring read it), so it
        // does not depend on how other errors map to exit codes. Everything is
        // written and stored by now; nothing is left running.
        if !c.json {
            eprintln!("cipherbench: {}", diff::check::Findings(report.findings.len()));
        }
        use std::io::Write;
        let _ = std::io::stdout().flush();
        std::process::exit(1);
    }
    Ok(())
}
