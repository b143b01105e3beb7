//! `tls`: TLS handshakes and bulk transfers, on loopback or against a server.

use super::{finish, open_store, outputs, policy, progress};
use crate::error::UsageError;
use crate::measure::primitive;
use crate::options::{CommonOptions, TlsOptions};
use crate::report;
use crate::session::{Judged, Session};
use crate::units::Seconds;
use anyhow::Result;

/// TLS: validate names → reach and enumerate the server (--connect) or generate
/// certificates and start the loopback server → handshake and bulk sweeps →
/// report/store.
pub(super) fn tls(c: &CommonOptions, a: &TlsOptions) -> Result<()> {
    use crate::measure::tls;
    let budget = c.budget.unwrap_or(Seconds(60.0));
    // The policy and knowledge that order loopback's spending, read before the
    // budget's clock starts.
    let loopback = a.serve.is_none() && a.priority.is_none() && a.connect.is_none() && a.libraries == [primitive::Library::DEFAULT];
    let judge = loopback
        .then(|| Ok::<_, anyhow::Error>((policy(c)?, crate::judge::Knowledge::builtin()?)))
        .transpose()?;
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
    if let Some(target) = &a.connect {
        return tls_remote(c, a, target, budget);
    }
    if a.serve.is_some() || a.priority.is_some() || a.libraries != [primitive::Library::DEFAULT] {
        return tls_libraries(c, a, budget);
    }
    let plan = tls::LoopbackPlan::new(a, budget)?;
    // What the policy allows is measured first (the order of spending).
    let named = !(a.suites.is_empty() && a.groups.is_empty());
    let admitted = judge.map(|(p, k)| crate::judge::admitted::tls(&p, &k, plan.names(), named));
    let (session, mut measurements) = Session::start("tls", plan.settings(), open_store(c)?, progress(c))?;
    let measured =
        tls::loopback_policy_first(&plan, admitted.as_ref(), &mut measurements).and_then(|_| tls::hello_retries(&plan, &mut measurements));
    finish(session, measurements, Judged::default(), measured, &outputs(c))
}

/// `tls --connect`: one client library, from the registry. It enumerates
/// protocols, suites and groups through its `TlsLibrary`, skipping (and saying)
/// what it lacks; with `--priority`, it walks the suites of that text of its own
/// (`TlsLibrary::native_suites`: GnuTLS's priority string).
fn tls_remote(c: &CommonOptions, a: &TlsOptions, target: &str, budget: Seconds) -> Result<()> {
    use crate::backend::libraries;
    use crate::measure::tls;
    let mut libs = a.libraries.clone();
    libs.sort_by_key(|l| l.as_str());
    libs.dedup();
    // `RemotePlan::new` takes the first of `--lib`: the one.
    let [_] = libs[..] else {
        return Err(UsageError::Invalid(format!("--connect measures through one client library: {}", libraries::every_lib())).into());
    };
    let quiet = c.quiet || c.json;
    let say = |m: &str| {
        if !quiet {
            eprintln!("{}", crate::untrusted::for_terminal(m));
        }
    };
    let plan = tls::RemotePlan::new(a, target, budget)?;
    if plan.native.is_some() {
        let (session, mut measurements) = Session::start("tls", plan.walk_settings(), open_store(c)?, progress(c))?;
        let measured = tls::walk(&plan, &mut measurements, &say);
        return finish(session, measurements, Judged::default(), measured, &outputs(c));
    }
    let remote_policy = policy(c)?;
    let scan = tls::scan(&plan, &say)?;
    if !scan.not_offered.is_empty() {
        say(&format!(
            "{} cannot offer {} of the protocols, suites and groups tried: recorded as not offered",
            plan.lib.version(),
            scan.not_offered.len()
        ));
    }
    // What a default client negotiates there is asked before measuring: at the
    // end of a loaded run the deadline may leave no time for it.
    let current = crate::diff::remote::tls_server(target, a.sni.as_deref(), &scan);
    let (session, mut measurements) = Session::start("tls", plan.settings(&scan), open_store(c)?, progress(c))?;
    let measured = tls::remote(&plan, &scan, &mut measurements);
    // What to change on that server, against this run's figures.
    let remote_diff = if crate::interrupt::requested() {
        None
    } else {
        let (diffs, text) = crate::diff::remote::section(current, &session.document(&measurements), "nginx", &remote_policy)?;
        measurements.set_setting("installed_diff", serde_json::to_value(&diffs)?);
        Some(text)
    };
    let done = finish(session, measurements, Judged::default(), measured, &outputs(c));
    if let (Some(text), false) = (remote_diff, quiet) {
        report::print_text(&text)?;
    }
    done
}

/// `tls --lib gnutls` or `--lib openssl,rustls` (every client→server pair),
/// `--priority` (a library's own configuration text), `--serve` (any library).
fn tls_libraries(c: &CommonOptions, a: &TlsOptions, budget: Seconds) -> Result<()> {
    use crate::measure::tls::{self, pairs};
    if let Some(addr) = &a.serve {
        return tls::serve::serve(a, addr, c.quiet || c.json);
    }
    let g = pairs::LibraryPairs::new(&a.libraries, a.priority.as_deref())?;
    let mut plan = tls::LoopbackPlan::new(a, budget)?;
    if g.priority.is_some() {
        plan.items = pairs::priority_items(&plan, a)?;
        plan.skipped.clear();
    }
    let (session, mut measurements) = Session::start("tls", g.settings(&plan), open_store(c)?, progress(c))?;
    let measured = pairs::loopback(&plan, &g, &mut measurements);
    finish(session, measurements, Judged::default(), measured, &outputs(c))
}
