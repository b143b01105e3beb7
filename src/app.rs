//! One short function per subcommand, each reading as the pipeline:
//! validate → discover → plan → measure → report/store.

use crate::cli::{
    Cli, Command, Common, CompareArgs, FileArgs, HistoryArgs, ListArgs, ListWhat, RecommendArgs, ReportArgs, SpeedArgs, SshArgs,
};
use crate::discover::{self, cpucaps};
use crate::error::{Interrupted, UsageError};
use crate::measure::plans::{self as plan, DEFAULT_SIZES};
use crate::measure::sink::Sink;
use crate::measure::{self, primitive};
use crate::model::RunStatus;
use crate::progress::{self, Progress};
use crate::report::{self, Outputs};
use crate::session::Session;
use crate::store::{self, Store};
use crate::units::{Bytes, Seconds};
use anyhow::Result;
use serde_json::json;

pub fn dispatch(cli: Cli) -> Result<()> {
    let common = cli.common;
    // Checked before anything is measured, the same way in every subcommand.
    outputs(&common).check()?;
    if common.policy.is_some() {
        policy(&common)?;
    }
    match cli.command {
        None => run_main(&common, json!({})),
        Some(Command::Run(a)) => run(&common, &a),
        Some(Command::Speed(a)) => speed(&common, &a, "speed", Seconds(60.0)),
        Some(Command::List(a)) => list(&common, &a),
        Some(Command::History(a)) => history(&common, &a),
        Some(Command::Report(a)) => show(&common, &a),
        Some(Command::Compare(a)) => compare(&common, &a),
        Some(Command::File(a)) => file(&common, &a),
        Some(Command::Ssh(a)) => ssh(&common, &a),
        Some(Command::Recommend(a)) => recommend(&common, &a),
        Some(Command::Tls(a)) => tls(&common, &a),
        Some(Command::Fleet(a)) => crate::fleet::command(&common, &a),
        Some(Command::Check(a)) => check(&common, &a),
        Some(Command::Completions(a)) => crate::cli::completions(&a),
        Some(Command::Man(a)) => crate::cli::man(&a),
    }
}

fn outputs(c: &Common) -> Outputs {
    Outputs {
        json: c.json,
        export_json: c.export_json.clone(),
        export_csv: c.export_csv.clone(),
        export_markdown: c.export_markdown.clone(),
        quiet: c.quiet,
    }
}

/// The history database named by `--db`, or the default one, read-only (for
/// `history`, `report` and `compare`: never created, migrated or written).
fn history_store(c: &Common) -> Result<Store> {
    Store::open_read(&c.db.clone().unwrap_or_else(store::default_path))
}

/// The store a measuring run writes to, unless `--no-store`.
fn open_store(c: &Common) -> Result<Option<Store>> {
    if c.no_store {
        return Ok(None);
    }
    Ok(Some(Store::open(&c.db.clone().unwrap_or_else(store::default_path))?))
}

fn progress(c: &Common) -> Progress {
    Progress::new(c.quiet || c.json)
}

/// The main job: profile this machine within `--budget` (default 90 s) and answer
/// which cipher it should use. discover → primitives → TLS on loopback → SSH on a
/// private sshd (when installed) → judge → recommend → the answer, history and an
/// HTML report.
fn run_main(c: &Common, extra_settings: serde_json::Value) -> Result<()> {
    let job = validate_main(c)?;
    crate::deadline::set_run(std::time::Instant::now(), job.budget);
    let found = discover_main();
    let mut session = start_main(c, &job, &found, extra_settings)?;
    // The plan shares out what start-up (discovery, the knowledge base, the
    // history) left of the budget: the deadline counts from the process's start.
    // Kept back from the plan for what follows measuring (reading the installed
    // configuration, judging, the report): a plan that spends the whole budget
    // runs into the deadline on a loaded machine.
    let budget = crate::deadline::budget_left().map_or(job.budget, |l| Seconds(l.0.min(job.budget.0)));
    let reserve = 0.5 + 0.05 * job.budget.0;
    let plan = crate::plan::main_job(Seconds((budget.0 - reserve).max(budget.0 * 0.5)), found.usable());
    let t0 = std::time::Instant::now();
    let mut first = measure_first_pass(&plan, &job, &found, &mut session, t0);
    let left = plan.budget.0 - t0.elapsed().as_secs_f64() - 2.0;
    let mut installed = crate::diff::main_step(&mut session, &job.knowledge, &job.targets, Seconds(left.min(job.budget.0 * 0.1)));
    // Kept for measuring a local nginx's throughput through private instances.
    let through = if crate::diff::through_applies(&installed.0) {
        job.budget.0 * 0.1
    } else {
        0.0
    };
    if first.measured.is_ok() && !crate::interrupt::requested() {
        first.measured = race_ties(
            c,
            &job,
            &first,
            &mut session,
            plan.budget.0 - t0.elapsed().as_secs_f64() - 2.0 - through,
        );
    }
    let FirstPass {
        measured,
        ssh_run,
        ssh_skipped,
        ..
    } = first;
    let first_ok = measured.is_ok();
    drop(ssh_run);
    session.add_verdicts(crate::judge::primitive_verdicts(session.results()));
    let outcome = crate::recommend::recommend(&session.snapshot(), &job.knowledge, &job.policy, &job.targets);
    let (recommendations, verdicts) = session.records_mut();
    crate::recommend::attach(&outcome, recommendations, verdicts);
    if first_ok && through > 0.0 {
        let spare = (plan.budget.0 - t0.elapsed().as_secs_f64() - 1.0).min(through * 1.5);
        crate::diff::through_step(&mut session, &mut installed, &outcome, &job.knowledge, &job.policy, Seconds(spare));
    }
    let closing = crate::diff::attach(&mut session, &installed, &outcome, &job.knowledge, &job.policy);
    let note = ssh_skipped.or(found.ssh_note);
    report_and_store(c, session, &job, &outcome, note.as_deref(), measured, &closing)
}

/// What the main job was asked, checked before anything runs.
struct MainJob {
    budget: Seconds,
    /// The HTML report can be written (checked before measuring; see `main_reports_dir`).
    reports: bool,
    policy: crate::judge::Policy,
    targets: Vec<String>,
    knowledge: crate::judge::Knowledge,
    tls_args: crate::cli::TlsArgs,
}

fn validate_main(c: &Common) -> Result<MainJob> {
    let tls_args = {
        use clap::{Args, FromArgMatches};
        let cmd = crate::cli::TlsArgs::augment_args(clap::Command::new("tls"));
        crate::cli::TlsArgs::from_arg_matches(&cmd.get_matches_from(["tls"]))?
    };
    Ok(MainJob {
        budget: c.budget.unwrap_or(Seconds(90.0)),
        reports: main_reports_dir(c)?.is_some(),
        policy: policy(c)?,
        targets: main_targets(c)?,
        knowledge: crate::judge::Knowledge::builtin()?,
        tls_args,
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

/// `extra` settings come from `run` (`--cpu-caps`, the OpenSSH version) for `fleet`.
fn start_main(c: &Common, job: &MainJob, found: &Found, extra: serde_json::Value) -> Result<Session> {
    let mut settings = json!({ "budget_seconds": job.budget.0, "policy": job.policy.name, "targets": job.targets });
    if let (Some(m), Some(x)) = (settings.as_object_mut(), extra.as_object()) {
        m.extend(x.clone());
    }
    settings["ssh"] = json!(found.ssh_note.clone().unwrap_or_else(|| "private sshd on 127.0.0.1".into()));
    Session::start("run", settings, open_store(c)?, progress(c))
}

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
    session: &mut Session,
    t0: std::time::Instant,
) -> FirstPass {
    let mut first = FirstPass {
        measured: Ok(()),
        tls_plan: None,
        ssh_run: None,
        ssh_skipped: None,
    };
    first.measured = measure_primitives_and_tls(plan, job, session, &mut first.tls_plan);
    // The private sshd takes a few seconds to start (host keys): with less than
    // that left of the budget, SSH is skipped and said so, not started late.
    let left = plan.budget.0 - t0.elapsed().as_secs_f64();
    if plan.ssh.is_some() && left < 3.0 {
        let note = format!(
            "SSH skipped: {:.1} s of the budget was left, and the private sshd needs about 3 s to start (--budget 20s or more includes SSH)",
            left.max(0.0)
        );
        session.set_setting("ssh", json!(note));
        first.ssh_skipped = Some(note);
        return first;
    }
    if first.measured.is_ok() && !crate::interrupt::requested() {
        if let (Some(picks), Some(openssh), Ok(sshd)) = (&plan.ssh, &found.openssh, &found.sshd) {
            first.measured = measure_ssh(plan, picks, openssh, sshd, session, t0, &mut first.ssh_run);
        }
    }
    first
}

fn measure_primitives_and_tls(
    plan: &crate::plan::MainPlan,
    job: &MainJob,
    session: &mut Session,
    tls_plan: &mut Option<measure::tls::LoopbackPlan>,
) -> Result<()> {
    use crate::backend::openssl::{certs::CertType, tls::Protocol};
    use crate::measure::tls as tls_kind;
    let prims: Vec<_> = primitive::CATALOG.iter().filter(|p| p.default).collect();
    let primitives = plan::primitives(
        &prims,
        &[primitive::Library::Openssl],
        &plan.sizes,
        1,
        plan.share(plan.shares.primitives),
    );
    measure::primitives(&primitives, session)?;
    if crate::interrupt::requested() {
        return Ok(());
    }
    let mut tls = tls_kind::LoopbackPlan::new(&job.tls_args, plan.share(plan.shares.tls))?;
    // The answer needs every group (TLS 1.3, one certificate) and every
    // certificate type (one group); `cipherbench tls` sweeps the cross product.
    tls.items.retain(|it| match it.work {
        tls_kind::Work::Handshake { .. } => {
            it.protocol == Protocol::Tls13 && (it.cert == CertType::EcdsaP256 || it.group == Some("X25519"))
        }
        tls_kind::Work::Bulk(_) => true,
    });
    let r = tls_kind::loopback(&tls, session);
    *tls_plan = Some(tls);
    r
}

/// The SSH quick pass: the ciphers with one MAC and the kex by handshakes, then
/// the MACs with one cipher, on a private sshd.
fn measure_ssh(
    plan: &crate::plan::MainPlan,
    picks: &crate::plan::SshPicks,
    openssh: &discover::openssh::OpenSsh,
    sshd: &std::path::Path,
    session: &mut Session,
    t0: std::time::Instant,
    ssh_run: &mut Option<SshRun>,
) -> Result<()> {
    use crate::backend::openssh::{Client, PrivateSshd, Target};
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
    let (ciphers, macs, kex) = (&picks.ciphers, &picks.macs, &picks.kex);
    let mut bulk = ssh_plan(ciphers, &macs[..macs.len().min(1)], kex, true, 0.65)?;
    let mut mac_plan = ssh_plan(
        &picks.mac_cipher,
        macs.get(1..).unwrap_or(&[]),
        &kex[..kex.len().min(1)],
        false,
        0.35,
    )?;
    let daemon = PrivateSshd::start(sshd, openssh)?;
    // The share counts from here: what the first passes overran and the daemon's
    // start-up (host keys) come out of it.
    let left = (plan.budget.0 * plan.shares.first_pass() - t0.elapsed().as_secs_f64())
        .min(plan.budget.0 * plan.shares.ssh)
        .max(1.0);
    bulk.budget = Seconds(left * 0.65);
    mac_plan.budget = Seconds(left * 0.35);
    let client = Client {
        ssh: openssh.ssh.clone(),
        target: Target::Private {
            port: daemon.port(),
            user: daemon.user().into(),
            key: daemon.files().client_key,
            known_hosts: daemon.files().known_hosts,
        },
    };
    // One preflight (first connection, feature check) for every sweep of the run:
    // the MAC pass and the race check only what is new to them.
    let mut pre = ssh_kind::Preflight::default();
    let mut r = ssh_kind::sweep_with(&bulk, &client, session, &mut pre);
    if r.is_ok() && !picks.mac_cipher.is_empty() && macs.len() > 1 && !crate::interrupt::requested() {
        r = ssh_kind::sweep_with(&mac_plan, &client, session, &mut pre);
    }
    *ssh_run = Some((bulk, client, daemon, pre));
    r
}

/// The race: the rest of the budget (`left`, a reserve for judging and the report
/// kept back) goes to the lists whose leaders are still tied.
fn race_ties(c: &Common, job: &MainJob, first: &FirstPass, session: &mut Session, left: f64) -> Result<()> {
    let outcome = crate::recommend::recommend(&session.snapshot(), &job.knowledge, &job.policy, &job.targets);
    let contests = crate::race::contests(&outcome, session.results());
    if contests.is_empty() || left < 3.0 {
        return Ok(());
    }
    let racers = crate::race::Racers {
        tls: first.tls_plan.as_ref(),
        ssh: first.ssh_run.as_ref().map(|(p, c, _, pre)| (p, c, pre)),
    };
    let started = std::time::Instant::now();
    let r = crate::race::race(session, &contests, &racers, Seconds(left), c.quiet || c.json);
    let lists: Vec<_> = contests.iter().map(|k| json!({ "list": k.list, "contenders": k.names })).collect();
    let remeasured = r.as_ref().ok().copied();
    session.set_setting(
        "race",
        json!({ "contests": lists, "seconds": started.elapsed().as_secs_f64(), "remeasured": remeasured }),
    );
    r.map(|_| ())
}

/// The answer on the terminal (or the JSON document), the exports, the history
/// and the HTML report; then the run's own outcome.
fn report_and_store(
    c: &Common,
    session: Session,
    job: &MainJob,
    outcome: &crate::recommend::Outcome,
    ssh_note: Option<&str>,
    measured: Result<()>,
    closing: &str,
) -> Result<()> {
    let (doc, status, stored) = close(session, &measured);
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
/// run is refused, unless `--no-store` (nothing is kept): then the HTML report
/// is skipped, and said so.
fn main_reports_dir(c: &Common) -> Result<Option<std::path::PathBuf>> {
    let dir = report::html::reports_dir();
    let usable =
        std::fs::create_dir_all(&dir).and_then(|()| tempfile::Builder::new().prefix(".cipherbench-check-").tempfile_in(&dir).map(drop));
    match usable {
        Ok(()) => Ok(Some(dir)),
        Err(e) if c.no_store => {
            if !c.quiet && !c.json {
                eprintln!("note: no HTML report: cannot write {} ({e})", dir.display());
            }
            Ok(None)
        }
        Err(e) => Err(UsageError::Invalid(format!(
            "cannot write the reports directory {}: {e} (set XDG_DATA_HOME to a writable place, or use --no-store)",
            dir.display()
        ))
        .into()),
    }
}

/// `run`: the main job, with `--cpu-caps` re-executed under the masking variable
/// (as `speed` does). The mask and the OpenSSH version are kept in the settings so
/// that `fleet` can class the host by what the run could really use.
fn run(c: &Common, a: &crate::cli::RunArgs) -> Result<()> {
    let mut extra = masked(a.cpu_caps.as_deref())?;
    if let Some(v) = discover::openssh::discover().ok().map(|o| o.version) {
        extra["openssh"] = json!(v);
    }
    run_main(c, extra)
}

/// `--cpu-caps SPEC` for `run` and `ssh`: re-executes under the masking variable
/// (never returns then); in the masked child, the settings that record it.
fn masked(spec: Option<&str>) -> Result<serde_json::Value> {
    let mut extra = json!({});
    if let Some(spec) = spec {
        let caps = cpucaps::parse(spec)?;
        let host = discover::host::fingerprint();
        let (var, value) = cpucaps::environment(&caps, &host.arch, &host.cpu_flags);
        if std::env::var(cpucaps::MARKER).ok().as_deref() != Some(spec) {
            reexec_masked(spec, &var, &value)?;
        }
        extra["cpu_caps"] = json!(spec);
        extra[var] = json!(value);
    }
    Ok(extra)
}

/// Config targets for the answer: `--for`, else the software found installed.
fn main_targets(c: &Common) -> Result<Vec<String>> {
    let names = crate::recommend::emit::target_names();
    for t in &c.targets {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(t)) {
            return Err(UsageError::unknown("target", t, names.iter().copied()).into());
        }
    }
    if !c.targets.is_empty() {
        return Ok(c.targets.clone());
    }
    let installed = |bins: &[&str]| {
        bins.iter().any(|b| {
            ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/sbin", "/bin"]
                .iter()
                .any(|d| std::path::Path::new(d).join(b).exists())
        })
    };
    let mut found: Vec<String> = [
        ("nginx", &["nginx"][..]),
        ("apache", &["apache2", "httpd"][..]),
        ("haproxy", &["haproxy"][..]),
        ("stunnel", &["stunnel4", "stunnel"][..]),
        ("nzbget", &["nzbget"][..]),
        ("curl", &["curl"][..]),
        ("sshd", &["sshd"][..]),
        ("ssh", &["ssh"][..]),
    ]
    .iter()
    .filter(|(t, bins)| names.contains(t) && installed(bins))
    .map(|(t, _)| t.to_string())
    .collect();
    if found.is_empty() {
        found.push("openssl".into());
    }
    Ok(found)
}

/// Resolves typed names to catalogue entries, with suggestions for typos.
fn resolve(names: &[String], all: bool) -> Result<Vec<&'static primitive::Primitive>, UsageError> {
    if all {
        return Ok(primitive::CATALOG.iter().collect());
    }
    if names.is_empty() {
        return Ok(primitive::CATALOG.iter().filter(|p| p.default).collect());
    }
    let mut out: Vec<&'static primitive::Primitive> = Vec::new();
    for n in names {
        let p = primitive::lookup(n).ok_or_else(|| UsageError::unknown("algorithm", n, primitive::known_names()))?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

fn speed(c: &Common, a: &SpeedArgs, command: &str, default_budget: Seconds) -> Result<()> {
    // Validate everything typed before touching libraries or files.
    let prims = resolve(&a.algorithms, a.all)?;
    let sizes: Vec<Bytes> = if a.bytes.is_empty() {
        DEFAULT_SIZES.iter().map(|&b| Bytes(b)).collect()
    } else {
        a.bytes.clone()
    };
    let caps = a.cpu_caps.as_deref().map(cpucaps::parse).transpose()?;
    let budget = c.budget.unwrap_or(default_budget);
    let threads = a.threads as usize;
    check_memory(threads, sizes.iter().map(|b| b.0).max().unwrap_or(0))?;
    crate::deadline::set_run(std::time::Instant::now(), budget);
    let mut settings = json!({
        "algorithms": prims.iter().map(|p| p.name).collect::<Vec<_>>(),
        "bytes": sizes.iter().map(|b| b.0).collect::<Vec<_>>(),
        "threads": threads,
        "budget_seconds": budget.0,
        "libraries": a.libraries.iter().map(|l| l.as_str()).collect::<Vec<_>>(),
    });
    if let (Some(caps), Some(spec)) = (&caps, &a.cpu_caps) {
        let host = discover::host::fingerprint();
        let (var, value) = cpucaps::environment(caps, &host.arch, &host.cpu_flags);
        if std::env::var(cpucaps::MARKER).ok().as_deref() != Some(spec.as_str()) {
            return reexec_masked(spec, &var, &value);
        }
        settings["cpu_caps"] = json!(spec);
        settings[var] = json!(value);
    }
    let store = open_store(c)?;

    let mut session = Session::start(command, settings, store, progress(c))?;
    let plan = plan::primitives(&prims, &a.libraries, &sizes, threads, crate::deadline::plan_budget(budget));
    let measured = measure::primitives(&plan, &mut session);
    session.add_verdicts(crate::judge::primitive_verdicts(session.results()));
    finish(session, measured, &outputs(c))
}

/// Memory this process may still use: the kernel's MemAvailable, and less when a
/// cgroup (v2) limit leaves less.
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let avail = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())?
        * 1024;
    let read = |f: &str| {
        std::fs::read_to_string(format!("/sys/fs/cgroup/{f}"))
            .ok()?
            .trim()
            .parse::<u64>()
            .ok()
    };
    let cgroup = match (read("memory.max"), read("memory.current")) {
        (Some(max), Some(cur)) => Some(max.saturating_sub(cur)),
        _ => None,
    };
    Some(cgroup.map_or(avail, |c| c.min(avail)))
}

/// `speed --threads N --bytes B`: every thread holds an input and an output
/// buffer of the largest size (and a little more). Refused before measuring
/// when that would not fit in memory, instead of an allocation abort later.
fn check_memory(threads: usize, largest: u64) -> Result<(), UsageError> {
    let need = threads as u64 * (2 * largest + (64 << 10));
    let Some(avail) = available_memory() else { return Ok(()) };
    if need as f64 > avail as f64 * 0.8 {
        return Err(UsageError::Invalid(format!(
            "--threads {threads} with --bytes up to {} needs about {:.1} GiB of buffers, and {:.1} GiB is available: use fewer threads or smaller sizes",
            Bytes(largest),
            need as f64 / (1u64 << 30) as f64,
            avail as f64 / (1u64 << 30) as f64
        )));
    }
    Ok(())
}

/// Closes the session in every case, reports what was kept, and maps the outcome.
fn finish(session: Session, measured: Result<()>, out: &Outputs) -> Result<()> {
    let (doc, status, stored) = close(session, &measured);
    let emitted = report::emit(&doc, out);
    conclude(&doc, status, measured, stored, emitted)
}

/// Closes the run's row with the status `measured` implies; the document is
/// whole even when the history database failed.
fn close(session: Session, measured: &Result<()>) -> (crate::model::Document, RunStatus, Option<crate::error::NotSaved>) {
    // Cut at the deadline (the watchdog, or a probe that ran into it) with results
    // kept: partial, not failed, and not interrupted either (a probe that saw the
    // cut stops as it would on Ctrl-C).
    let cut = !crate::interrupt::by_user()
        && (crate::interrupt::cut()
            || measured
                .as_ref()
                .err()
                .is_some_and(|e| e.chain().any(|c| c.downcast_ref::<crate::deadline::DeadlinePassed>().is_some())));
    let interrupted = crate::interrupt::by_user() || (!cut && measured.as_ref().err().is_some_and(|e| crate::error::exit_code(e) == 130));
    let kept = session.results().iter().any(|r| r.status == crate::model::Status::Ok);
    let status = match (measured, interrupted) {
        (_, true) => RunStatus::Interrupted,
        _ if cut && kept => RunStatus::Partial,
        (Err(_), false) => RunStatus::Failed,
        (Ok(()), false) => RunStatus::Complete,
    };
    let (doc, stored) = session.finish(status);
    (doc, status, stored)
}

/// The exit after everything was written: a cut at the deadline first (what
/// stopped the measuring is the cut), then the measuring error, then an
/// interruption, then what could not be saved (history, exports).
fn conclude(
    doc: &crate::model::Document,
    status: RunStatus,
    measured: Result<()>,
    stored: Option<crate::error::NotSaved>,
    emitted: Result<()>,
) -> Result<()> {
    let mut unsaved: Vec<String> = Vec::new();
    if let Some(e) = stored {
        unsaved.push(e.0);
    }
    if let Err(e) = emitted {
        if e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        }) {
            return Err(e);
        }
        unsaved.push(format!("{e:#}"));
    }
    if status == RunStatus::Partial {
        // As a budget spent before every subject was measured (the subjects are
        // recorded as skipped, exit 0): the run did what its budget allowed, said so.
        crate::progress::warn(&format!(
            "cut at {}: {} result(s) kept, the rest not measured (status partial; a longer --budget measures it)",
            crate::deadline::describe(),
            doc.results.len()
        ));
        if !unsaved.is_empty() {
            return Err(crate::error::NotSaved(unsaved.join("; ")).into());
        }
        return Ok(());
    }
    if let Err(e) = measured {
        for u in &unsaved {
            eprintln!("cipherbench: error: {}", crate::untrusted::shown_lines(u));
        }
        return Err(e);
    }
    if status == RunStatus::Interrupted {
        for u in &unsaved {
            eprintln!("cipherbench: error: {}", crate::untrusted::shown_lines(u));
        }
        return Err(Interrupted { kept: doc.results.len() }.into());
    }
    if !unsaved.is_empty() {
        return Err(crate::error::NotSaved(unsaved.join("; ")).into());
    }
    Ok(())
}

/// Runs this same command again with the CPU features masked, and exits with its status.
fn reexec_masked(spec: &str, var: &str, value: &str) -> Result<()> {
    let exe = std::env::current_exe()?;
    let status = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(var, value)
        .env(cpucaps::MARKER, spec)
        .status()?;
    std::process::exit(status.code().unwrap_or(130));
}

/// `--policy NAME|FILE` (default intermediate). A bad policy file is bad input (exit 2),
/// with the loader's `file:line:column` message.
fn policy(c: &Common) -> Result<crate::judge::Policy, UsageError> {
    let name = c.policy.as_deref().unwrap_or(crate::judge::DEFAULT_POLICY);
    crate::judge::Policy::resolve(name).map_err(|e| UsageError::Invalid(e.to_string()))
}

/// The grade column of `list`, with a pass column when `--policy` was given.
fn grader(c: &Common) -> Result<crate::judge::Grader> {
    let p = c.policy.is_some().then(|| policy(c)).transpose()?;
    Ok(crate::judge::Grader::new(p)?)
}

fn list(c: &Common, a: &ListArgs) -> Result<()> {
    let grades = grader(c)?;
    match a.what {
        ListWhat::Primitives => {
            let infos = discover::openssl::primitives();
            if c.json {
                let v: Vec<_> = infos
                    .iter()
                    .map(|i| {
                        json!({
                            "algorithm": i.primitive.name,
                            "class": i.primitive.class.label(),
                            "legacy_provider": i.primitive.legacy,
                            "default_set": i.primitive.default,
                            "available": matches!(i.availability, primitive::Availability::Available(_)),
                            "reason": match &i.availability { primitive::Availability::Unavailable(w) => Some(w.clone()), _ => None },
                            "key_bits": i.key_bits,
                            "block_bytes": i.block_bytes,
                            "grade": grades.grade(crate::judge::Domain::Primitive, i.primitive.name),
                        })
                    })
                    .collect();
                return report::print(&serde_json::to_vec_pretty(&v)?);
            }
            let mut t = comfy_table::Table::new();
            t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
            let mut header: Vec<String> = ["algorithm", "class", "key bits", "block", "status"].map(String::from).to_vec();
            header.extend(grades.headers());
            t.set_header(header);
            for i in &infos {
                let status = match &i.availability {
                    primitive::Availability::Available(_) if i.primitive.legacy => "available (legacy provider)".to_string(),
                    primitive::Availability::Available(_) => "available".to_string(),
                    primitive::Availability::Unavailable(why) => why.clone(),
                };
                let mut row = vec![
                    i.primitive.name.to_string(),
                    i.primitive.class.label().to_string(),
                    i.key_bits.map(|b| b.to_string()).unwrap_or_default(),
                    i.block_bytes.map(|b| b.to_string()).unwrap_or_default(),
                    status,
                ];
                row.extend(grades.cells(crate::judge::Domain::Primitive, i.primitive.name));
                t.add_row(row);
            }
            let out = format!("{}\n{t}\n", crate::backend::openssl::runtime_version());
            report::print_text(&out)
        }
        ListWhat::Ssh => discover::ssh_list::list(c.json, &grades),
        ListWhat::Tls if a.library == primitive::Library::Gnutls || a.priority.is_some() => {
            measure::tls::gnutls::list(c.json, a.library, a.priority.as_deref(), &grades)
        }
        ListWhat::Tls => list_tls(c, &grades),
        ListWhat::CpuCaps => {
            let mut s = String::new();
            for cap in cpucaps::all() {
                s.push_str(&format!("{:<11} {}\n", cap.name, cap.help));
            }
            report::print_text(&s)
        }
    }
}

/// `list tls`: the NZBGet write-up's first step (`openssl ciphers -v`), with grades.
fn list_tls(c: &Common, grades: &crate::judge::Grader) -> Result<()> {
    let suites = discover::openssl::tls_suites()?;
    let domain = |s: &discover::openssl::TlsSuiteInfo| match s.min_protocol.as_str() {
        "TLSv1.3" => crate::judge::Domain::Tls13Suite,
        _ => crate::judge::Domain::Tls12Suite,
    };
    if c.json {
        let v: Vec<_> = suites
            .iter()
            .map(|s| json!({"suite": s, "grade": grades.grade(domain(s), &s.iana)}))
            .collect();
        return report::print(&serde_json::to_vec_pretty(&v)?);
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    let mut header: Vec<String> = ["code", "IANA", "OpenSSL", "min", "Kx", "Au", "Enc", "Mac"]
        .map(String::from)
        .to_vec();
    header.extend(grades.headers());
    t.set_header(header);
    for s in &suites {
        let mut row = vec![
            s.code.clone(),
            s.iana.clone(),
            s.openssl.clone(),
            s.min_protocol.clone(),
            s.kx.clone(),
            s.au.clone(),
            s.enc.clone(),
            s.mac.clone(),
        ];
        row.extend(grades.cells(domain(s), &s.iana));
        t.add_row(row);
    }
    let out = format!("{} · {} suites\n{t}\n", crate::backend::openssl::runtime_version(), suites.len());
    report::print_text(&out)
}

/// `recommend`: a stored run (or a fresh default run) → judge → rank → config lines.
fn recommend(c: &Common, a: &RecommendArgs) -> Result<()> {
    let policy = policy(c)?;
    let names = crate::recommend::emit::target_names();
    for t in &c.targets {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(t)) {
            return Err(UsageError::unknown("target", t, names.iter().copied()).into());
        }
    }
    let knowledge = crate::judge::Knowledge::builtin()?;
    for problem in policy.validate(&knowledge) {
        progress::warn(&format!("policy {}: {problem}", policy.name));
    }
    let mut doc = recommend_source(c, a)?;
    let outcome = crate::recommend::recommend(&doc, &knowledge, &policy, &c.targets);
    crate::recommend::attach(&outcome, &mut doc.recommendations, &mut doc.verdicts);
    // What to change in the installed configuration, against this run's figures.
    let (installed, installed_notes) = crate::diff::for_stored_run(&c.targets, &knowledge);
    let (diffs, diff_text) = crate::diff::section(&installed, &installed_notes, &doc, &outcome, &knowledge, &policy);
    doc.run.settings["installed_diff"] = serde_json::to_value(&diffs)?;
    crate::diff::annotate(&mut doc.recommendations, &diffs);
    if c.json {
        report::print(&report::json::render(&doc)?)?;
    } else if !c.quiet {
        let text = crate::report::rankings::render(&doc, &policy, &knowledge, &outcome);
        report::print_text(&text)?;
        report::print_text(&report::terminal::fit(&diff_text))?;
    }
    let exports = Outputs {
        json: false,
        quiet: true,
        ..outputs(c)
    };
    report::emit(&doc, &exports)
}

/// The run to recommend from: `--run`, else the latest stored run, else a fresh
/// default run measured now (the same code path as `cipherbench run`).
fn recommend_source(c: &Common, a: &RecommendArgs) -> Result<crate::model::Document> {
    let db = c.db.clone().unwrap_or_else(store::default_path);
    if !c.no_store {
        let store = Store::open(&db)?;
        if a.run.is_some() || !store.runs(1)?.is_empty() {
            return store.load(a.run.as_deref().unwrap_or("latest"));
        }
    } else if a.run.is_some() {
        return Err(UsageError::Invalid("--run reads the history; drop --no-store".into()).into());
    }
    let scratch = tempfile::tempdir()?;
    let db = if c.no_store { scratch.path().join("history.sqlite") } else { db };
    if !c.quiet && !c.json {
        eprintln!("no stored run: measuring the default run first (as `cipherbench run`)");
    }
    let measure = Common {
        db: Some(db.clone()),
        no_store: false,
        quiet: true,
        json: false,
        export_json: None,
        export_csv: None,
        export_markdown: None,
        ..c.clone()
    };
    run_main(&measure, json!({}))?;
    Store::open(&db)?.load("latest")
}

/// OpenSSH: validate names → discover (ssh -Q, sshd) → start the private sshd or
/// reach --host → feature check, bulk and handshake sweeps → report/store. The
/// daemon is stopped by its `Drop` on every path.
fn ssh(c: &Common, a: &SshArgs) -> Result<()> {
    use crate::backend::openssh::{Client, PrivateSshd, Target};
    if let [dec, full] = a.compare_sweeps.as_slice() {
        return measure::ssh::compare_sweep_files(dec, full);
    }
    let caps = masked(a.cpu_caps.as_deref())?;
    // The budget covers the whole command: starting the private sshd counts too.
    let t_run = std::time::Instant::now();
    if !a.serve {
        crate::deadline::set_run(t_run, c.budget.unwrap_or(Seconds(180.0)));
    }
    let remote_policy = a.host.as_ref().map(|_| policy(c)).transpose()?;
    let openssh = discover::openssh::discover()?;
    let servable = a.host.is_none().then(|| openssh.private_hostkeys());
    let plan = measure::ssh::SshPlan::new(
        &openssh,
        &a.ciphers,
        &a.macs,
        &a.kex,
        &a.hostkeys,
        servable.as_deref(),
        a.full_matrix,
        a.bytes.map(|b| b.0),
        a.verify,
        !a.no_handshakes,
        c.budget.unwrap_or(Seconds(180.0)),
    )?;
    let store = if a.serve { None } else { open_store(c)? };
    let daemon = match &a.host {
        Some(_) => None,
        // --serve offers only the selected algorithms (a server that refuses some).
        None if a.serve => Some(PrivateSshd::start(&discover::openssh::find_sshd()?, &plan.restrict(&openssh))?),
        None => Some(PrivateSshd::start(&discover::openssh::find_sshd()?, &openssh)?),
    };
    let target = match (&daemon, &a.host) {
        (Some(d), _) => Target::Private {
            port: d.port(),
            user: d.user().into(),
            key: d.files().client_key,
            known_hosts: d.files().known_hosts,
        },
        (None, h) => Target::Remote {
            destination: h.clone().unwrap_or_default(),
            port: a.port,
            identity: a.identity.clone(),
            options: a.ssh_options.clone(),
        },
    };
    let client = Client {
        ssh: openssh.ssh.clone(),
        target,
    };
    if a.serve {
        return measure::ssh::serve(&client, daemon.as_ref());
    }
    // A remote host's banner first: silent, dripping or not-SSH hosts are named so.
    client.reach()?;
    let mut settings = measure::ssh::settings(&plan, &openssh, &client, daemon.as_ref());
    if let (Some(m), Some(x)) = (settings.as_object_mut(), caps.as_object()) {
        m.extend(x.clone());
        m.insert("openssh".into(), json!(openssh.version));
    }
    let mut session = Session::start("ssh", settings, store, progress(c))?;
    let plan = measure::ssh::SshPlan {
        budget: Seconds((plan.budget.0 - t_run.elapsed().as_secs_f64()).max(0.0)),
        ..plan
    };
    let measured = measure::ssh::sweep(&plan, &client, &mut session);
    drop(daemon);
    // A remote server: what to change there, against this run's figures.
    let remote_diff = match &a.host {
        Some(h) if !crate::interrupt::requested() => {
            let current = crate::diff::remote::ssh_server(&openssh.ssh, h, a.port, a.identity.as_deref(), &a.ssh_options);
            Some(crate::diff::remote::section(
                current,
                &mut session,
                "sshd",
                remote_policy.as_ref().expect("with --host"),
            )?)
        }
        _ => None,
    };
    let done = finish(session, measured, &outputs(c));
    if let (Some(text), false) = (remote_diff, c.quiet || c.json) {
        report::print_text(&text)?;
    }
    done
}

fn history(c: &Common, a: &HistoryArgs) -> Result<()> {
    let store = history_store(c)?;
    let runs = store.runs(a.limit)?;
    if c.json {
        return report::print(&serde_json::to_vec_pretty(&runs)?);
    }
    if runs.is_empty() {
        println!("no runs stored in {} yet", store.path().display());
        return Ok(());
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    t.set_header(["run", "started", "command", "status", "results", "cpu"]);
    for r in runs {
        t.add_row([r.id, r.started_at, r.command, r.status, r.results.to_string(), r.cpu_model]);
    }
    report::print_text(&format!("{t}\n"))
}

fn show(c: &Common, a: &ReportArgs) -> Result<()> {
    let store = history_store(c)?;
    let doc = store.load(&a.run)?;
    let format = a.format.or_else(|| a.output.as_deref().and_then(report::Format::from_path));
    let Some(format) = format else {
        if let Some(o) = &a.output {
            return Err(UsageError::Invalid(format!(
                "cannot tell the format of {} from its name; add --format html|md|json|csv|text",
                o.display()
            ))
            .into());
        }
        return report::emit(&doc, &outputs(c));
    };
    let doc = if format == report::Format::Html {
        with_recommendations(c, doc)?
    } else {
        doc
    };
    let bytes = report::render(&doc, format)?;
    let to_stdout = match (&a.output, format) {
        (Some(p), _) => {
            report::write_output(p, &bytes)?;
            p.as_os_str() == "-"
        }
        (None, report::Format::Html) => {
            let path = report::html::write_report(&doc)?;
            if !c.quiet && !c.json {
                println!("Report: {}", path.display());
            }
            false
        }
        (None, _) => {
            report::print(&bytes)?;
            true
        }
    };
    // The common exports still work beside the report; --json only when stdout is free.
    let exports = Outputs {
        json: c.json && !to_stdout,
        quiet: true,
        ..outputs(c)
    };
    report::emit(&doc, &exports)
}

/// `doc` with recommendations and verdicts under the policy, when it has none yet
/// (runs stored by `speed` or `file` before `recommend` looked at them).
fn with_recommendations(c: &Common, mut doc: crate::model::Document) -> Result<crate::model::Document> {
    if !doc.recommendations.is_empty() {
        return Ok(doc);
    }
    let policy = policy(c)?;
    let knowledge = crate::judge::Knowledge::builtin()?;
    let outcome = crate::recommend::recommend(&doc, &knowledge, &policy, &c.targets);
    crate::recommend::attach(&outcome, &mut doc.recommendations, &mut doc.verdicts);
    Ok(doc)
}

/// A run for `compare`: an exported JSON file when `spec` names one, else a run
/// id, prefix or `latest` in the history.
fn compare_side(c: &Common, spec: &str, store: &mut Option<Store>) -> Result<crate::model::Document> {
    let path = std::path::Path::new(spec);
    if path.is_file() {
        // A file that is not a cipherbench document is bad input (exit 2).
        return report::compare::load_json(path).map_err(|e| UsageError::Invalid(format!("{e:#}")).into());
    }
    if spec.ends_with(".json") || spec.contains(std::path::MAIN_SEPARATOR) {
        return Err(UsageError::Invalid(format!("no such file: {spec}")).into());
    }
    if store.is_none() {
        *store = Some(history_store(c)?);
    }
    store.as_ref().expect("opened above").load(spec)
}

fn compare(c: &Common, a: &CompareArgs) -> Result<()> {
    let mut store = None;
    let (da, db) = (compare_side(c, &a.a, &mut store)?, compare_side(c, &a.b, &mut store)?);
    let cmp = report::compare::compare(&a.a, &da, &a.b, &db, a.threshold);
    if c.json {
        report::print(&serde_json::to_vec_pretty(&cmp)?)?;
    } else if !c.quiet {
        report::print_text(&report::compare::render(&cmp))?;
    }
    // Findings (exit 1): nothing compared is not "no regression", so a CI gate
    // must not pass on it.
    if a.fail_on_regression && cmp.rows.is_empty() {
        return Err(crate::error::Finding(format!(
            "nothing to compare: {} and {} share no measured result (kind, subject and metric), so no regression can be ruled out",
            a.a, a.b
        ))
        .into());
    }
    if a.fail_on_regression && cmp.regressions > 0 {
        return Err(crate::error::Finding(format!(
            "{} regression(s): B ({}) is slower than A ({}) beyond both runs' intervals and the {:.1}% threshold",
            cmp.regressions,
            a.b,
            a.a,
            cmp.threshold * 100.0
        ))
        .into());
    }
    Ok(())
}

/// Resolves the `file` cipher list: known names that can stream a file.
fn resolve_file_ciphers(names: &[String], all: bool) -> Result<Vec<&'static primitive::Primitive>, UsageError> {
    use crate::measure::file::supports;
    if all {
        return Ok(primitive::CATALOG.iter().filter(|p| supports(p)).collect());
    }
    let names: Vec<String> = if names.is_empty() {
        plan::DEFAULT_FILE_CIPHERS.iter().map(|s| s.to_string()).collect()
    } else {
        names.to_vec()
    };
    let prims = resolve(&names, false)?;
    if let Some(p) = prims.iter().find(|p| !supports(p)) {
        return Err(UsageError::Invalid(format!(
            "{} cannot encrypt a file as a stream ({}); use a cipher, GCM, OCB or chacha20-poly1305",
            p.name,
            if p.class.label() == "aead" {
                "CCM needs the whole length first"
            } else {
                "it is not a cipher"
            }
        )));
    }
    Ok(prims)
}

/// Checks that each path is a readable regular file, before anything is measured.
fn file_input(path: &std::path::Path, chunk: usize) -> Result<plan::FileInput> {
    let shown = path.display();
    // stat, never open, first: opening a FIFO blocks until a writer comes.
    let meta = std::fs::metadata(path).map_err(|e| UsageError::Invalid(format!("cannot read {shown}: {e}")))?;
    if meta.is_dir() {
        return Err(UsageError::Invalid(format!("{shown} is a directory; give the files in it")).into());
    }
    if let Some(kind) = crate::measure::file::special_kind(&meta.file_type()) {
        return Err(UsageError::Invalid(format!("{shown} is {kind}: give a regular file, or --size")).into());
    }
    crate::measure::file::open_input(path).map_err(|e| UsageError::Invalid(format!("{e:#}")))?;
    let sha256 = crate::measure::file::hash_file(path, chunk)?;
    Ok(plan::FileInput {
        path: path.to_path_buf(),
        label: path.display().to_string(),
        size: meta.len(),
        sha256,
    })
}

/// Refuses directories, devices, FIFOs and sockets at once (stat only).
fn file_input_kind(path: &std::path::Path) -> Result<(), UsageError> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| UsageError::Invalid(format!("cannot read {shown}: {e}")))?;
    if meta.is_dir() {
        return Err(UsageError::Invalid(format!("{shown} is a directory; give the files in it")));
    }
    if let Some(kind) = crate::measure::file::special_kind(&meta.file_type()) {
        return Err(UsageError::Invalid(format!("{shown} is {kind}: give a regular file, or --size")));
    }
    Ok(())
}

/// Writes `size` bytes of random data in `dir`, chunk by chunk.
fn generate_input(dir: &std::path::Path, size: Bytes, chunk: usize) -> Result<plan::FileInput> {
    use std::io::Write;
    let label = format!("generated-{size}").replace(' ', "");
    let path = dir.join(&label);
    let mut f = std::fs::File::create(&path).map_err(|e| UsageError::Invalid(format!("cannot write {}: {e}", path.display())))?;
    let mut buf = vec![0u8; chunk.min(size.0 as usize).max(1)];
    let mut left = size.0;
    while left > 0 {
        let n = (buf.len() as u64).min(left) as usize;
        openssl::rand::rand_bytes(&mut buf[..n])?;
        f.write_all(&buf[..n])
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        left -= n as u64;
    }
    f.sync_all()?;
    let mut input = file_input(&path, chunk)?;
    input.label = label;
    Ok(input)
}

fn file(c: &Common, a: &FileArgs) -> Result<()> {
    // Validate everything typed before touching files or libraries.
    if a.paths.is_empty() && a.size.is_empty() {
        return Err(UsageError::Invalid("give files to encrypt, or --size 100M for generated data".into()).into());
    }
    let prims = resolve_file_ciphers(&a.ciphers, a.all)?;
    let chunk = (a.chunk.0 as usize).clamp(4096, 64 << 20);
    let parent = a.output_dir.clone().unwrap_or_else(std::env::temp_dir);
    // Inputs are checked (kind, readable) before anything is written or hashed.
    for p in &a.paths {
        file_input_kind(p)?;
    }
    if let Some(b) = c.budget {
        crate::deadline::set_run(std::time::Instant::now(), b);
    }
    let workdir = crate::measure::file::private_dir(&parent)
        .map_err(|e| UsageError::Invalid(format!("cannot write in the output directory {}: {e}", parent.display())))?;
    let mut inputs = Vec::new();
    for p in &a.paths {
        inputs.push(file_input(p, chunk)?);
    }
    for &size in &a.size {
        inputs.push(generate_input(workdir.path(), size, chunk)?);
    }
    let store = open_store(c)?;
    let settings = json!({
        "ciphers": prims.iter().map(|p| p.name).collect::<Vec<_>>(),
        "mode": a.mode,
        "reps": a.reps,
        "chunk_bytes": chunk,
        "keys": if a.password.is_some() { format!("pbkdf2-hmac-sha256, {} iterations", a.pbkdf2_iter) } else { "random".into() },
        "via_openssl_cli": a.via_openssl_cli,
        "inputs": inputs.iter().map(|i| json!({"path": i.label, "bytes": i.size, "sha256": hex::encode(i.sha256)})).collect::<Vec<_>>(),
    });
    let empties: Vec<&str> = inputs.iter().filter(|i| i.size == 0).map(|i| i.label.as_str()).collect();
    if !empties.is_empty() && !c.quiet && !c.json {
        eprintln!("note: {} empty: nothing to time there", empties.join(", "));
    }

    let mut session = Session::start("file", settings, store, progress(c))?;
    let plan = plan::FilePlan {
        inputs,
        primitives: prims,
        mode: a.mode,
        reps: a.reps as usize,
        via_openssl_cli: a.via_openssl_cli,
        chunk,
        password: a.password.clone(),
        pbkdf2_iterations: a.pbkdf2_iter,
        workdir: workdir.path().to_path_buf(),
        budget: c.budget,
    };
    let measured = measure::files(&plan, &mut session);
    session.add_verdicts(crate::judge::primitive_verdicts(session.results()));
    let outcome = finish(session, measured, &outputs(c));
    // Outputs and generated inputs go now, whatever happened.
    crate::interrupt::forget_dir(workdir.path());
    drop(workdir);
    outcome
}

/// TLS: validate names → reach and enumerate the server (--connect) or generate
/// certificates and start the loopback server → handshake and bulk sweeps →
/// report/store.
fn tls(c: &Common, a: &crate::cli::TlsArgs) -> Result<()> {
    use crate::measure::tls;
    let budget = c.budget.unwrap_or(Seconds(60.0));
    if a.serve.is_none() {
        crate::deadline::set_run(std::time::Instant::now(), budget);
        // Every connect, handshake and read keeps the run's deadline: a longer
        // --timeout cannot outlast it, and the user is told.
        let whole = budget.0 + crate::deadline::grace(budget).0;
        if a.connect.is_some() && a.timeout.0 > whole && !c.quiet && !c.json {
            eprintln!(
                "note: --timeout {:.0}s is capped at {whole:.1} s, what the run has (--budget {:.0}s + {:.1} s grace)",
                a.timeout.0,
                budget.0,
                crate::deadline::grace(budget).0
            );
        }
    }
    if a.serve.is_some() || a.priority.is_some() || a.libraries != [primitive::Library::Openssl] {
        return tls_libraries(c, a, budget);
    }
    if let Some(target) = &a.connect {
        let remote_policy = policy(c)?;
        let plan = tls::RemotePlan::new(a, target, budget)?;
        let quiet = c.quiet || c.json;
        let scan = tls::scan(&plan, &|m: &str| {
            if !quiet {
                eprintln!("{}", crate::untrusted::for_terminal(m));
            }
        })?;
        let mut session = Session::start("tls", plan.settings(&scan), open_store(c)?, progress(c))?;
        let measured = tls::remote(&plan, &scan, &mut session);
        // What to change on that server, against this run's figures.
        let remote_diff = if crate::interrupt::requested() {
            None
        } else {
            let k = crate::judge::Knowledge::builtin()?;
            let current = crate::diff::remote::tls_server(target, a.sni.as_deref(), &scan, &k);
            Some(crate::diff::remote::section(current, &mut session, "nginx", &remote_policy)?)
        };
        let done = finish(session, measured, &outputs(c));
        if let (Some(text), false) = (remote_diff, c.quiet || c.json) {
            report::print_text(&text)?;
        }
        return done;
    }
    let plan = tls::LoopbackPlan::new(a, budget)?;
    let mut session = Session::start("tls", plan.settings(), open_store(c)?, progress(c))?;
    let measured = tls::loopback(&plan, &mut session);
    finish(session, measured, &outputs(c))
}

/// `tls --lib gnutls` or `--lib openssl,gnutls` (every client→server pair), `--priority`,
/// `--serve`: GnuTLS sessions on one or both ends.
fn tls_libraries(c: &Common, a: &crate::cli::TlsArgs, budget: Seconds) -> Result<()> {
    use crate::measure::tls::{self, gnutls as tls_gnutls};
    if let Some(addr) = &a.serve {
        return tls_gnutls::serve(a, addr, c.quiet || c.json);
    }
    if let Some(target) = &a.connect {
        if a.libraries.iter().any(|l| *l != primitive::Library::Gnutls) {
            return Err(
                UsageError::Invalid("--connect measures through one library: --lib openssl (default) or --lib gnutls".into()).into(),
            );
        }
        let plan = tls_gnutls::RemotePlan::new(a, target, budget)?;
        let quiet = c.quiet || c.json;
        let mut session = Session::start("tls", plan.settings(), open_store(c)?, progress(c))?;
        let measured = tls_gnutls::remote(&plan, &mut session, &|m: &str| {
            if !quiet {
                eprintln!("{}", crate::untrusted::for_terminal(m));
            }
        });
        return finish(session, measured, &outputs(c));
    }
    let g = tls_gnutls::GnutlsPlan::new(&a.libraries, a.priority.as_deref())?;
    let mut plan = tls::LoopbackPlan::new(a, budget)?;
    if g.priority.is_some() {
        plan.items = tls_gnutls::priority_items(&plan, a)?;
        plan.skipped.clear();
    }
    let mut session = Session::start("tls", g.settings(&plan), open_store(c)?, progress(c))?;
    let measured = tls_gnutls::loopback(&plan, &g, &mut session);
    finish(session, measured, &outputs(c))
}

/// `check`: the installed (or --config-from) configuration → what its usual peer
/// negotiates → that choice measured beside what the policy allows → recommend →
/// diff → one line per finding, exit 1 when there is one.
/// The share of `check`'s budget for its first pass over every candidate; the
/// rest measures again the comparisons the first pass left open.
const CHECK_FIRST_PASS: f64 = 0.7;
/// With a local nginx: the first pass's share, and the most the throughput
/// through two private nginx instances takes (`diff::subjects::measure_through`).
const CHECK_FIRST_PASS_THROUGH: f64 = 0.6;
const CHECK_THROUGH: f64 = 0.3;

fn check(c: &Common, a: &crate::cli::CheckArgs) -> Result<()> {
    use crate::diff::{self, check::CheckReport, subjects::Subjects};
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
    let subjects = Subjects::with_candidates(&currents, &knowledge, &policy);
    let budget = c.budget.unwrap_or(Seconds(40.0));
    crate::deadline::set_run(std::time::Instant::now(), budget);
    let settings = json!({
        "budget_seconds": budget.0,
        "policy": policy.name,
        "min_gain": a.min_gain,
        "config_from": a.config_from,
        "software": currents.iter().map(|x| x.installed.software).collect::<Vec<_>>(),
    });
    let mut session = Session::start("check", settings, open_store(c)?, progress(c))?;
    let t0 = std::time::Instant::now();
    // Two passes: every candidate first, then what is left of the budget on the
    // comparisons the answer is about (now against recommended) that the first
    // pass could not call.
    // A local nginx: its throughput change is measured through two private nginx
    // instances once the recommendation is known (the second pass leaves it out).
    let through = currents.iter().any(|x| diff::subjects::through_nginx_binary(x).is_some());
    let first = if through { CHECK_FIRST_PASS_THROUGH } else { CHECK_FIRST_PASS };
    let mut measured = diff::subjects::measure(&subjects, &mut session, Seconds(budget.0 * first));
    let targets: Vec<String> = currents.iter().map(|x| x.installed.software.to_string()).collect();
    let mut snapshot = session.snapshot();
    let mut outcome = crate::recommend::recommend(&snapshot, &knowledge, &policy, &targets);
    let mut diffs = diff::build_all(&currents, &snapshot, &outcome, &knowledge, &policy);
    let left = (budget.0 - t0.elapsed().as_secs_f64()).min(budget.0 * CHECK_THROUGH);
    if through && measured.is_ok() && left >= 1.5 && !crate::interrupt::requested() {
        notes.extend(diff::subjects::measure_through(&currents, &diffs, &mut session, Seconds(left)));
        snapshot = session.snapshot();
        diffs = diff::build_all(&currents, &snapshot, &outcome, &knowledge, &policy);
    }
    let again = diff::subjects::Subjects::undecided(&diffs);
    let left = budget.0 - t0.elapsed().as_secs_f64();
    let open = !again.tls_suites.is_empty() || !again.ssh_ciphers.is_empty();
    if open && measured.is_ok() && left >= 2.0 && !crate::interrupt::requested() {
        let mut scratch = session.scratch(progress(c));
        measured = diff::subjects::measure(&again, &mut scratch, Seconds(left));
        let pooled = crate::race::pool_into(&mut session, &scratch)?;
        session.set_setting(
            "second_pass",
            json!({"tls_suites": again.tls_suites, "ssh_ciphers": again.ssh_ciphers, "ssh_macs": again.ssh_macs,
                   "seconds": left, "pooled": pooled}),
        );
        snapshot = session.snapshot();
        outcome = crate::recommend::recommend(&snapshot, &knowledge, &policy, &targets);
        diffs = diff::build_all(&currents, &snapshot, &outcome, &knowledge, &policy);
    }
    let (recommendations, verdicts) = session.records_mut();
    crate::recommend::attach(&outcome, recommendations, verdicts);
    session.set_setting("installed_diff", serde_json::to_value(&diffs)?);
    diff::annotate(session.recommendations_mut(), &diffs);
    let (doc, status, stored) = close(session, &measured);
    let findings = diff::check::findings(&diffs, a.min_gain);
    let report = CheckReport {
        schema: "cipherbench-check/1",
        policy: policy.name.clone(),
        min_gain: a.min_gain,
        run_id: doc.run.id.clone(),
        findings,
        diffs,
        notes,
    };
    if c.json {
        report::print(&serde_json::to_vec_pretty(&report)?)?;
    } else if !c.quiet {
        let mut text = diff::render::section(&report.diffs, &report.notes);
        text.push('\n');
        if report.findings.is_empty() {
            text.push_str(&format!(
                "check: no finding under policy {} (min gain {:.0} %)\n",
                policy.name,
                a.min_gain * 100.0
            ));
        }
        if a.verbose {
            for f in &report.findings {
                text.push_str(&format!("FINDING {}\n", f.message));
            }
        } else {
            text.push_str(&diff::check::grouped(&report.findings, &policy.name, 80));
        }
        if !report.findings.is_empty() {
            text.push_str(&diff::check::summary(&report.findings, a.verbose));
        }
        report::print_text(&report::terminal::fit(&text))?;
    }
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
    // A measuring error or an interruption first; a finding (exit 1) before
    // outputs that could not be saved (exit 4, then reported on stderr).
    let concluded = conclude(&doc, status, measured, stored, emitted);
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
