//! One short function per subcommand, each reading as the pipeline:
//! validate → discover → plan → measure → report/store. Here: the dispatch (where
//! the command line becomes options, once) and what every subcommand shares (the
//! store, the outputs, the policy, how a run is closed and its exit chosen); one
//! file per subcommand, the main job in main_job.rs.

mod check;
mod file;
mod history;
mod list;
mod list_library;
mod list_ssh;
mod main_job;
mod pool;
mod recommend;
mod speed;
mod ssh;
mod tls;
mod validate;

use crate::cli::{Cli, Command};
use crate::discover::{self, cpucaps};
use crate::error::{Interrupted, UsageError};
use crate::measure::sink::Measurements;
use crate::model::RunStatus;
use crate::options::CommonOptions;
use crate::progress::Progress;
use crate::report::{self, Outputs};
use crate::session::{Judged, Session};
use crate::store::{self, Store};
use crate::units::Seconds;
use anyhow::{Context, Result};
use serde_json::json;

/// The command line becomes plain options here, once; nothing below sees clap.
pub fn dispatch(cli: Cli) -> Result<()> {
    let common = CommonOptions::from(cli.common);
    // Checked before anything is measured, the same way in every subcommand.
    outputs(&common).check()?;
    if common.policy.is_some() {
        policy(&common)?;
    }
    // What the commands that measure or run tools need of their environment: a
    // temporary folder (bad input when missing, exit 2) and an OpenSSL that works
    // (exit 3 with the configuration named, not a panic in the middle of a run).
    let reads_only = matches!(
        cli.command,
        Some(
            Command::History(_)
                | Command::Report(_)
                | Command::Compare(_)
                | Command::Fleet(_)
                | Command::Completions(_)
                | Command::Man(_)
                | Command::ServeNntp(_)
        )
    );
    if !reads_only {
        temp_dir_usable()?;
        crate::backend::openssl::usable()?;
    }
    // The commands that emit lines for this machine emit NZBGet's for the NZBGet
    // installed here (its version decides the form).
    if matches!(
        cli.command,
        None | Some(Command::Run(_) | Command::Recommend(_) | Command::Check(_))
    ) {
        crate::software::nzbget::emit::for_installed(crate::software::nzbget::read::environment());
    }
    match cli.command {
        None => main_job::run_main(&common, json!({})),
        Some(Command::Run(a)) => main_job::run(&common, &a.into()),
        Some(Command::Speed(a)) => speed::speed(&common, &a.into(), "speed", Seconds(60.0)),
        Some(Command::List(a)) => list::list(&common, &a.into()),
        Some(Command::History(a)) => history::history(&common, &a.into()),
        Some(Command::Report(a)) => history::show(&common, &a.into()),
        Some(Command::Compare(a)) => history::compare(&common, &a.into()),
        Some(Command::File(a)) => file::file(&common, &a.into()),
        Some(Command::Ssh(a)) => ssh::ssh(&common, &a.into()),
        Some(Command::Recommend(a)) => recommend::recommend(&common, &a.into()),
        Some(Command::Tls(a)) => tls::tls(&common, &a.into()),
        Some(Command::Fleet(a)) => crate::fleet::command(&common, &a.into()),
        Some(Command::Check(a)) => check::check(&common, &a.into()),
        Some(Command::Completions(a)) => crate::cli::completions(&a),
        Some(Command::Man(a)) => crate::cli::man(&a),
        Some(Command::ServeNntp(a)) => serve_nntp(&a),
    }
}

/// The temporary folder (`TMPDIR`, else /tmp) takes a file: the captured output of
/// every tool cipherbench runs, and `file`'s data, go there.
fn temp_dir_usable() -> Result<(), UsageError> {
    let dir = std::env::temp_dir();
    tempfile::tempfile_in(&dir).map(drop).map_err(|e| {
        let from = if std::env::var_os("TMPDIR").is_some() { " (TMPDIR)" } else { "" };
        UsageError::Invalid(format!(
            "cannot use the temporary folder {}{from}: {e}; set TMPDIR to a folder you can write",
            crate::untrusted::shown(&dir.to_string_lossy())
        ))
    })
}

fn outputs(c: &CommonOptions) -> Outputs {
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
fn history_store(c: &CommonOptions) -> Result<Store> {
    Store::open_read(&store::chosen(c.db.as_deref())?)
}

/// The store a measuring run writes to, unless `--no-store`.
fn open_store(c: &CommonOptions) -> Result<Option<Store>> {
    if c.no_store {
        return Ok(None);
    }
    Ok(Some(Store::open(&store::chosen(c.db.as_deref())?)?))
}

fn progress(c: &CommonOptions) -> Progress {
    Progress::new(c.quiet || c.json)
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
fn policy(c: &CommonOptions) -> Result<crate::judge::Policy, UsageError> {
    let name = c.policy.as_deref().unwrap_or(crate::judge::DEFAULT_POLICY);
    crate::judge::Policy::resolve(name).map_err(|e| UsageError::Invalid(e.to_string()))
}

/// The grade column of `list`, with a pass column when `--policy` was given.
fn grader(c: &CommonOptions) -> Result<crate::judge::Grader> {
    let p = c.policy.is_some().then(|| policy(c)).transpose()?;
    Ok(crate::judge::Grader::new(p)?)
}

/// Closes the session with what was made of it (`judged`) in every case, reports
/// what was kept, and maps the outcome.
fn finish(session: Session, measurements: Measurements, judged: Judged, measured: Result<()>, out: &Outputs) -> Result<()> {
    let (doc, status, stored) = close(session, measurements, judged, &measured);
    let emitted = report::emit(&doc, out);
    conclude(&doc, status, measured, stored, emitted)
}

/// The judge's verdicts and recommend's outcome as the document keeps them.
fn judged(verdicts: Vec<crate::model::VerdictRecord>, outcome: &crate::recommend::Outcome) -> Judged {
    let mut j = Judged::from_verdicts(verdicts);
    crate::recommend::attach(outcome, &mut j.recommendations, &mut j.verdicts);
    j
}

/// Closes the run's row with the status `measured` implies and what was made of
/// it (`judged`); the document is whole even when the history database failed.
fn close(
    session: Session,
    measurements: Measurements,
    judged: Judged,
    measured: &Result<()>,
) -> (crate::model::Document, RunStatus, Option<crate::error::NotSaved>) {
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
    let kept = measurements.results.iter().any(|r| r.status == crate::model::Status::Ok);
    let status = match (measured, interrupted) {
        (_, true) => RunStatus::Interrupted,
        _ if cut && kept => RunStatus::Partial,
        (Err(_), false) => RunStatus::Failed,
        (Ok(()), false) => RunStatus::Complete,
    };
    let (doc, stored) = session.finish(status, measurements, judged);
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

/// `serve-nntp` (hidden): the private news server in the foreground, for bench
/// scripts and tests that run a real news client against it.
fn serve_nntp(a: &crate::cli::ServeNntpArgs) -> Result<()> {
    use crate::backend::nntp::{Articles, NewsServer, Spec};
    use std::io::Write;
    let server = NewsServer::start(Spec {
        articles: Articles {
            count: a.articles,
            size: a.article_size,
        },
        connections: a.connections,
        within: std::time::Duration::from_secs(a.seconds),
        tls12_only: a.tls12_only,
    })?;
    if let Some(p) = &a.nzb {
        std::fs::write(p, server.nzb()).with_context(|| format!("cannot write {}", p.display()))?;
    }
    let mut out = std::io::stdout();
    writeln!(out, "listening 127.0.0.1:{}", server.port())?;
    out.flush()?;
    let mut said = 0;
    loop {
        let running = server.running() && !crate::interrupt::requested();
        let seen = server.negotiated();
        for n in &seen[said..] {
            let group = n.group.as_deref().unwrap_or("-");
            writeln!(out, "negotiated {} {} {group}", n.protocol, n.suite)?;
        }
        out.flush()?;
        said = seen.len();
        if !running {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
