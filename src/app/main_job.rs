//! The main job (`cipherbench`, `run`): validate → discover → plan → measure the
//! first pass → race the ties → judge → recommend → the answer, history and report.

use super::{close, conclude, masked, open_store, outputs, policy, progress};
use crate::discover;
use crate::error::UsageError;
use crate::measure::plans;
use crate::measure::sink::Measurements;
use crate::measure::{self, primitive};
use crate::options::{CommonOptions, RunOptions, TlsOptions};
use crate::report::{self, Outputs};
use crate::session::Session;
use crate::units::Seconds;
use anyhow::Result;
use serde_json::json;

/// `run`: the main job, with `--cpu-caps` re-executed under the masking variable
/// (as `speed` does). The mask is kept in the settings so that `fleet` can class
/// the host by what the run could really use.
pub(super) fn run(c: &CommonOptions, a: &RunOptions) -> Result<()> {
    run_main(c, masked(a.cpu_caps.as_deref())?)
}

/// The main job: profile this machine within `--budget` (default 90 s) and answer
/// which cipher it should use. discover → plan → measure (primitives, TLS on
/// loopback, SSH on a private sshd when installed, the installed choice, the race)
/// → judge → recommend → the installed diff → the answer, history and an HTML
/// report. Each stage takes the values of the ones before it; measuring fills the
/// run's `Measurements`, which the session only watches, writing each result to
/// the history as it comes (so Ctrl-C keeps them).
pub(super) fn run_main(c: &CommonOptions, extra_settings: serde_json::Value) -> Result<()> {
    let job = validate_main(c)?;
    crate::deadline::set_run(std::time::Instant::now(), job.budget);
    let mut phases = Phases::default();
    let found = discover_main();
    let (session, mut measurements) = start_main(c, &job, &found, extra_settings)?;
    let after = after_measuring(job.budget, phases.mark("discovered"));
    crate::deadline::keep_for_after(after);
    let plan = plan_main(&job, &found, after);
    let mut measured = measure_main(c, &job, &found, &plan, (&session, &mut measurements), &mut phases);
    phases.mark("measured");
    let verdicts = crate::judge::primitive_verdicts(&measurements.results);
    // The history is evidence: this run pooled with the same machine's earlier runs.
    let evidence = super::pool::pooled(c, &session.document(&measurements));
    let outcome = crate::recommend::recommend(&evidence, &job.knowledge, &job.policy, &crate::software::emitters(&job.targets));
    phases.mark("recommended");
    measure_through(&job, &plan, &outcome, &mut measured, (&session, &mut measurements));
    phases.mark("measured_through");
    let (judged, closing) = answer_main(c, &job, verdicts, &outcome, &measured, (&session, &mut measurements));
    phases.mark("validated");
    measurements.set_setting("phases_seconds", phases.json());
    let note = measured.ssh_skipped.take().or(found.ssh_note);
    let run = (session, measurements);
    report_and_store(c, run, judged, &job, &outcome, note.as_deref(), measured.status, &closing)
}

/// What the run's document keeps of the judge and recommend stages, with the
/// installed configurations' diffs (their `installed_diff` setting, and `now`,
/// `gain`, `diff` in the recommendations) and each target's own parser's word on
/// its lines; and the closing text (the diffs, the parsers).
fn answer_main(
    c: &CommonOptions,
    job: &MainJob,
    verdicts: Vec<crate::model::VerdictRecord>,
    outcome: &crate::recommend::Outcome,
    measured: &Measured,
    (session, measurements): (&Session, &mut Measurements),
) -> (crate::session::Judged, String) {
    let (currents, notes) = &measured.installed;
    let doc = session.document(measurements);
    let (diffs, closing) = crate::diff::section(currents, notes, &doc, outcome, &job.knowledge, &job.policy);
    measurements.set_setting("installed_diff", serde_json::to_value(&diffs).unwrap_or_default());
    let mut judged = super::judged(verdicts, outcome);
    crate::diff::annotate(&mut judged.recommendations, &diffs);
    let checked = super::validate::validate(&mut judged.recommendations, c.no_validate);
    let closing = match (closing.is_empty(), checked.is_empty()) {
        (_, true) => closing,
        (true, false) => checked,
        (false, false) => format!("{}\n\n{checked}", closing.trim_end()),
    };
    (judged, closing)
}

/// The main job's plan. It shares out what start-up (discovery, the knowledge
/// base, the history) left of the budget: the deadline counts from the process's
/// start. Kept back from the plan for what follows measuring (reading the
/// installed configuration, judging, the report): a plan that spends the whole
/// budget runs into the deadline on a loaded machine.
fn plan_main(job: &MainJob, found: &Found, after: f64) -> crate::plan::MainPlan {
    let budget = crate::deadline::budget_left().map_or(job.budget, |l| Seconds(l.0.min(job.budget.0)));
    crate::plan::main_job(Seconds((budget.0 - after).max(budget.0 * 0.5)), found.usable())
}

/// Seconds kept back from measuring for what follows it: 0.5 s + 5% of the
/// budget, or five times what discovery took where that is more (capped at a
/// quarter of the budget). What follows measuring (recommending, the installed
/// diff, each target's parser, the report) starts the installed tools as
/// discovery did, so a machine that runs them many times slower gets time in
/// proportion and still ends within its budget and grace. An emulated arm64 root
/// (qemu-user): discovery 3.0-3.3 s against 0.1-0.3 s native, and 13 s after
/// measuring (recommend 5.1 s, the diff and parsers 7.0 s, the report 0.9 s)
/// against 0.6 s.
fn after_measuring(budget: Seconds, discovered: f64) -> f64 {
    let native = 0.5 + 0.05 * budget.0;
    native.max((5.0 * discovered).min(0.25 * budget.0))
}

/// What the main job measured besides its results (those are in the run's
/// `Measurements`, written to the history as they came): how measuring ended, the installed configurations and what was
/// kept back for the throughput through private server instances (nginx, Apache,
/// HAProxy, stunnel).
struct Measured {
    status: Result<()>,
    /// Why SSH was left out although it is installed (too little budget left).
    ssh_skipped: Option<String>,
    /// The installed configurations read, and notes on what could not be.
    installed: (Vec<crate::diff::Current>, Vec<String>),
    /// Seconds kept for measuring a local server's throughput through private instances.
    through: f64,
    t0: std::time::Instant,
}

/// The measuring stage: the first pass, the installed choice when the run has not
/// measured it yet (so that "now" is a subject of the run), then the race over
/// what is still tied.
fn measure_main(c: &CommonOptions, job: &MainJob, found: &Found, plan: &crate::plan::MainPlan, run: Run, phases: &mut Phases) -> Measured {
    let (session, measurements) = run;
    let t0 = std::time::Instant::now();
    // The installed configurations first: their tools (`nginx -T`, `sshd -T` …)
    // run within the run's deadline, which a loaded first pass can bring close.
    let mut installed = crate::diff::installed(&job.knowledge, &job.targets);
    let mut first = measure_first_pass(plan, job, found, measurements, (t0, phases));
    phases.mark("first_pass");
    let left = plan.budget.0 - t0.elapsed().as_secs_f64() - 2.0;
    let missing = crate::diff::unmeasured(&installed.0, &measurements.results);
    let budget = Seconds(left.min(job.budget.0 * 0.1));
    if !missing.is_empty() && budget.0 >= 2.0 {
        if let Err(e) = measure::named::measure(&missing, measurements, budget) {
            installed.1.push(format!("the installed choice could not be measured: {e:#}"));
        }
    }
    let through = if crate::diff::through_applies(&installed.0) {
        job.budget.0 * 0.1
    } else {
        0.0
    };
    if first.measured.is_ok() && !crate::interrupt::requested() {
        let left = plan.budget.0 - t0.elapsed().as_secs_f64() - 2.0 - through;
        first.measured = race_ties(c, job, &first, (session, measurements), left);
        phases.mark("raced");
    }
    // The race is over: the private sshd stops now.
    drop(first.ssh_run);
    phases.mark("sshd_stopped");
    Measured {
        status: first.measured,
        ssh_skipped: first.ssh_skipped,
        installed,
        through,
        t0,
    }
}

/// Once the answer is known: each local nginx's, Apache's, HAProxy's or stunnel's
/// throughput now and with the recommended lines, through two private instances of
/// it, within the time kept
/// for it; what could not be measured goes to the installed notes.
fn measure_through(
    job: &MainJob,
    plan: &crate::plan::MainPlan,
    outcome: &crate::recommend::Outcome,
    measured: &mut Measured,
    (session, measurements): Run,
) {
    if measured.status.is_err() || measured.through <= 0.0 || crate::interrupt::requested() {
        return;
    }
    let spare = (plan.budget.0 - measured.t0.elapsed().as_secs_f64() - 1.0).min(measured.through * 1.5);
    if spare < 1.5 {
        return;
    }
    let currents = &measured.installed.0;
    let diffs = crate::diff::through_diffs(currents, &session.document(measurements), outcome, &job.knowledge, &job.policy);
    let plans = crate::diff::through::server_plans(currents, &diffs);
    let notes = measure::tls::through::through_each(plans, measurements, Seconds(spare));
    measured.installed.1.extend(notes);
}

/// When each stage of the main job ended, in seconds since the process started:
/// the run's `settings.phases_seconds`, which says where a run's time went (a slow
/// machine, an emulated one, spends it after measuring too).
#[derive(Default)]
struct Phases(serde_json::Map<String, serde_json::Value>);

impl Phases {
    /// Marks `stage` as ended now: seconds since the process started.
    fn mark(&mut self, stage: &str) -> f64 {
        let t = crate::deadline::since_start();
        self.0.insert(stage.to_string(), json!((t * 100.0).round() / 100.0));
        t
    }

    fn json(&self) -> serde_json::Value {
        serde_json::Value::Object(self.0.clone())
    }
}

/// What the main job was asked, checked before anything runs.
struct MainJob {
    budget: Seconds,
    /// The HTML report can be written (checked before measuring; see `main_reports_dir`).
    reports: bool,
    policy: crate::judge::Policy,
    targets: Vec<String>,
    knowledge: crate::judge::Knowledge,
    tls_options: TlsOptions,
}

fn validate_main(c: &CommonOptions) -> Result<MainJob> {
    Ok(MainJob {
        budget: c.budget.unwrap_or(Seconds(90.0)),
        reports: main_reports_dir(c)?.is_some(),
        policy: policy(c)?,
        targets: main_targets(c)?,
        knowledge: crate::judge::Knowledge::builtin()?,
        tls_options: TlsOptions::default(),
    })
}

/// The peers the main job found: OpenSSH is optional, its absence is explained.
struct Found {
    openssh: Option<discover::openssh::OpenSsh>,
    sshd: Result<std::path::PathBuf>,
    ssh_note: Option<String>,
}

impl Found {
    fn usable(&self) -> Option<&discover::openssh::OpenSsh> {
        self.openssh.as_ref().filter(|_| self.ssh_note.is_none())
    }
}

fn discover_main() -> Found {
    let openssh = discover::openssh::discover().ok();
    let sshd = discover::openssh::find_sshd();
    let ssh_note = match (&openssh, &sshd) {
        (Some(_), Ok(_)) => None,
        (_, Err(e)) => Some(format!("SSH skipped: {e:#}")),
        (None, _) => Some("SSH skipped: the OpenSSH client (ssh) is not installed; install openssh-client".to_string()),
    };
    Found { openssh, sshd, ssh_note }
}

/// `extra` settings come from `run` (`--cpu-caps`) for `fleet`.
fn start_main(c: &CommonOptions, job: &MainJob, found: &Found, extra: serde_json::Value) -> Result<(Session, Measurements)> {
    let mut settings = json!({ "budget_seconds": job.budget.0, "policy": job.policy.name, "targets": job.targets });
    if let (Some(m), Some(x)) = (settings.as_object_mut(), extra.as_object()) {
        m.extend(x.clone());
    }
    settings["ssh"] = json!(found.ssh_note.clone().unwrap_or_else(|| "private sshd on 127.0.0.1".into()));
    // Every main job (with or without `run`, and recommend's fresh one) names its
    // OpenSSH, so that `fleet` classes the host by it (the session copies it into
    // `run.libraries`).
    if let Some(o) = &found.openssh {
        settings["openssh"] = json!(o.version);
    }
    Session::start("run", settings, open_store(c)?, progress(c))
}

/// The run's session (the store's writer, for the document) and its measurements
/// (what measuring fills).
type Run<'a> = (&'a Session, &'a mut Measurements);

/// What the quick pass ran (so that a race measures contenders the same way) and
/// how it ended.
struct FirstPass {
    measured: Result<()>,
    tls_plan: Option<measure::tls::LoopbackPlan>,
    ssh_run: Option<SshRun>,
    /// Why SSH was left out although it is installed (too little budget left).
    ssh_skipped: Option<String>,
}

/// The SSH quick pass's plan, client, daemon (kept up for the race) and what its
/// sweeps learnt of the target.
type SshRun = (
    measure::ssh::SshPlan,
    crate::backend::openssh::Client,
    crate::backend::openssh::PrivateSshd,
    measure::ssh::Preflight,
);

/// The quick pass: primitives, TLS on loopback, then SSH on a private sshd.
fn measure_first_pass(
    plan: &crate::plan::MainPlan,
    job: &MainJob,
    found: &Found,
    measurements: &mut Measurements,
    (t0, phases): (std::time::Instant, &mut Phases),
) -> FirstPass {
    let mut first = FirstPass {
        measured: Ok(()),
        tls_plan: None,
        ssh_run: None,
        ssh_skipped: None,
    };
    first.measured = measure_primitives_and_tls(plan, job, measurements, &mut first.tls_plan);
    phases.mark("tls");
    // The private sshd takes a few seconds to start (host keys): with less than
    // that left of the budget, SSH is skipped and said so, not started late.
    let left = plan.budget.0 - t0.elapsed().as_secs_f64();
    if plan.ssh.is_some() && left < 3.0 {
        let note = format!(
            "SSH skipped: {:.1} s of the budget was left, and the private sshd needs about 3 s to start (--budget 20s or more includes SSH)",
            left.max(0.0)
        );
        measurements.set_setting("ssh", json!(note));
        first.ssh_skipped = Some(note);
        return first;
    }
    if first.measured.is_ok() && !crate::interrupt::requested() {
        if let (Some(picks), Some(openssh), Ok(sshd)) = (&plan.ssh, &found.openssh, &found.sshd) {
            let picks = crate::plan::SshPicks {
                admitted: Some(crate::judge::admitted::ssh(&job.policy, &job.knowledge, openssh, false)),
                ..picks.clone()
            };
            // The primitives behind the allowed ciphers (those the primitive pass
            // left without an orderable figure), as `cipherbench ssh` measures them.
            first.measured = match &picks.admitted {
                Some(admitted) => measure::ssh::physics::physics(admitted, (&picks.ciphers, &picks.macs), plan.budget, measurements),
                None => Ok(()),
            }
            .and_then(|_| measure_ssh(plan, &picks, openssh, sshd, measurements, t0, &mut first.ssh_run));
            phases.mark("ssh");
        }
    }
    first
}

fn measure_primitives_and_tls(
    plan: &crate::plan::MainPlan,
    job: &MainJob,
    measurements: &mut Measurements,
    tls_plan: &mut Option<measure::tls::LoopbackPlan>,
) -> Result<()> {
    use crate::backend::openssl::{certs::CertType, tls::Protocol};
    use crate::measure::tls as tls_kind;
    let prims: Vec<_> = primitive::CATALOG.iter().filter(|p| p.default).collect();
    let primitives = plans::primitives(
        &prims,
        &[primitive::Library::DEFAULT],
        &plan.sizes,
        1,
        plan.share(plan.shares.primitives),
    );
    measure::primitives(&primitives, measurements)?;
    if crate::interrupt::requested() {
        return Ok(());
    }
    let mut tls = tls_kind::LoopbackPlan::new(&job.tls_options, plan.share(plan.shares.tls))?;
    // The answer needs every group (TLS 1.3, one certificate) and every
    // certificate type (one group); `cipherbench tls` sweeps the cross product.
    tls.items.retain(|it| match it.work {
        tls_kind::Work::Handshake { .. } => {
            it.protocol == Protocol::Tls13 && (it.cert == CertType::EcdsaP256 || it.group == Some("X25519"))
        }
        tls_kind::Work::Bulk(_) => true,
    });
    let admitted = crate::judge::admitted::tls(&job.policy, &job.knowledge, tls.names(), false);
    let r = tls_kind::loopback_policy_first(&tls, Some(&admitted), measurements).and_then(|_| tls_kind::hello_retries(&tls, measurements));
    *tls_plan = Some(tls);
    r
}

/// The SSH quick pass on a private sshd: the allowed ciphers with one MAC, the
/// kex by handshakes, the allowed MACs with one cipher, the refused last.
fn measure_ssh(
    plan: &crate::plan::MainPlan,
    picks: &crate::plan::SshPicks,
    openssh: &discover::openssh::OpenSsh,
    sshd: &std::path::Path,
    measurements: &mut Measurements,
    t0: std::time::Instant,
    ssh_run: &mut Option<SshRun>,
) -> Result<()> {
    use crate::backend::openssh::PrivateSshd;
    use crate::measure::ssh as ssh_kind;
    let servable = openssh.private_hostkeys();
    let ssh_plan = |ciphers: &[String], macs: &[String], kex: &[String], handshakes: bool, f: f64| {
        ssh_kind::SshPlan::new(
            openssh,
            ciphers,
            macs,
            kex,
            &picks.hostkeys,
            Some(&servable),
            false,
            None,
            false,
            handshakes,
            plan.share(plan.shares.ssh * f),
        )
    };
    // One sweep in the order of spending: the allowed ciphers with one MAC, the
    // allowed MACs with one cipher, the refused last (measure/ssh/stages.rs).
    let mut bulk = ssh_plan(&picks.ciphers, &picks.macs, &picks.kex, true, 1.0)?;
    bulk.admitted = picks.admitted.clone();
    let daemon = PrivateSshd::start(sshd, openssh)?;
    // The share counts from here: what the first passes overran and the daemon's
    // start-up (host keys) come out of it.
    let left = (plan.budget.0 * plan.shares.first_pass() - t0.elapsed().as_secs_f64())
        .min(plan.budget.0 * plan.shares.ssh)
        .max(1.0);
    bulk.budget = Seconds(left);
    let client = daemon.client(&openssh.ssh);
    // One preflight (first connection, feature check) for every sweep of the run:
    // the MAC pass and the race check only what is new to them.
    let mut pre = ssh_kind::Preflight::default();
    let r = ssh_kind::sweep_with(&bulk, &client, measurements, &mut pre);
    *ssh_run = Some((bulk, client, daemon, pre));
    r
}

/// The race: the rest of the budget (`left`, a reserve for judging and the report
/// kept back) goes to the lists whose leaders are still tied.
fn race_ties(c: &CommonOptions, job: &MainJob, first: &FirstPass, (session, measurements): Run, left: f64) -> Result<()> {
    // Only what the history has not ordered yet is raced (see `pool`).
    let evidence = super::pool::pooled(c, &session.document(measurements));
    let outcome = crate::recommend::recommend(&evidence, &job.knowledge, &job.policy, &crate::software::emitters(&job.targets));
    let contests = crate::contest::contests(&outcome, &measurements.results);
    if contests.is_empty() || left < 3.0 {
        return Ok(());
    }
    let racers = crate::contest::Racers {
        tls: first.tls_plan.as_ref(),
        ssh: first.ssh_run.as_ref().map(|(p, c, _, pre)| (p, c, pre)),
    };
    let started = std::time::Instant::now();
    let r = crate::contest::race(measurements, &contests, &racers, Seconds(left), c.quiet || c.json);
    let lists: Vec<_> = contests.iter().map(|k| json!({ "list": k.list, "contenders": k.names })).collect();
    let remeasured = r.as_ref().ok().copied();
    measurements.set_setting(
        "race",
        json!({ "contests": lists, "seconds": started.elapsed().as_secs_f64(), "remeasured": remeasured }),
    );
    r.map(|_| ())
}

/// The answer on the terminal (or the JSON document), the exports, the history
/// and the HTML report; then the run's own outcome.
#[allow(clippy::too_many_arguments)]
fn report_and_store(
    c: &CommonOptions,
    (session, measurements): (Session, Measurements),
    judged: crate::session::Judged,
    job: &MainJob,
    outcome: &crate::recommend::Outcome,
    ssh_note: Option<&str>,
    measured: Result<()>,
    closing: &str,
) -> Result<()> {
    let (doc, status, stored) = close(session, measurements, judged, &measured);
    let report_path = match job.reports {
        true => report::html::write_report(&doc).map(Some),
        false => Ok(None),
    };
    if c.json {
        report::print(&report::json::render(&doc)?)?;
    } else if !c.quiet {
        let path = report_path.as_ref().ok().and_then(|p| p.as_ref()).map(|p| p.display().to_string());
        let stored_ok = !c.no_store && stored.is_none();
        report::print_text(&report::answer::render(
            &doc,
            outcome,
            &job.targets,
            ssh_note,
            path.as_deref(),
            stored_ok,
        ))?;
        report::print_text(&report::terminal::fit(closing))?;
    }
    let emitted = report::emit(
        &doc,
        &Outputs {
            json: false,
            quiet: true,
            ..outputs(c)
        },
    );
    let emitted = match (emitted, report_path) {
        (Ok(()), Err(e)) => Err(e.context("writing the HTML report")),
        (r, _) => r,
    };
    conclude(&doc, status, measured, stored, emitted)
}

/// The main job's reports directory, checked before measuring. Without it the
/// run is refused, unless `--no-store` (nothing is kept), or `--db` names the
/// history and there is no private default folder at all (no home, see
/// `store::default_dir`): then the HTML report is skipped, and said so.
fn main_reports_dir(c: &CommonOptions) -> Result<Option<std::path::PathBuf>> {
    let skip = |why: &str| {
        if !c.quiet && !c.json {
            eprintln!("note: no HTML report: {why}");
        }
        Ok(None)
    };
    let dir = match report::html::reports_dir() {
        Ok(dir) => dir,
        Err(e) if c.no_store || (c.db.is_some() && !crate::store::has_default_place()) => return skip(&e.to_string()),
        Err(e) => return Err(UsageError::Invalid(format!("cannot write the reports directory: {e}")).into()),
    };
    match tempfile::Builder::new().prefix(".cipherbench-check-").tempfile_in(&dir).map(drop) {
        Ok(()) => Ok(Some(dir)),
        Err(e) if c.no_store => skip(&format!("cannot write {} ({e})", dir.display())),
        Err(e) => Err(UsageError::Invalid(format!(
            "cannot write the reports directory {}: {e} (set XDG_DATA_HOME to a writable place, or use --no-store)",
            dir.display()
        ))
        .into()),
    }
}

/// Config targets for the answer: `--for`, else the software found installed.
fn main_targets(c: &CommonOptions) -> Result<Vec<String>> {
    let names = crate::software::names();
    for t in &c.targets {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(t)) {
            return Err(UsageError::unknown("target", t, names.iter().copied()).into());
        }
    }
    if !c.targets.is_empty() {
        return Ok(c.targets.clone());
    }
    let mut found: Vec<String> = crate::software::ALL
        .iter()
        .filter(|t| crate::software::installed(t.programs()))
        .map(|t| t.name().to_string())
        .collect();
    if found.is_empty() {
        found.push("openssl".into());
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_start_keeps_more_for_after_measuring_and_a_native_one_does_not() {
        // Native: discovery in 0.1-0.3 s; the usual reserve stands.
        assert_eq!(after_measuring(Seconds(60.0), 0.25), 3.5);
        assert_eq!(after_measuring(Seconds(20.0), 0.13), 1.5);
        // Emulated: 2.6 s of discovery keeps 13 s.
        assert!((after_measuring(Seconds(60.0), 2.6) - 13.0).abs() < 1e-9);
        // Never more than a quarter of the budget.
        assert_eq!(after_measuring(Seconds(60.0), 30.0), 15.0);
    }
}
