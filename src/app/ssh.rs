//! `ssh`: OpenSSH transfers and handshakes on a private sshd or a remote host.

use super::{finish, masked, open_store, outputs, policy, progress};
use crate::backend::openssh::{Client, Destination, PrivateSshd};
use crate::discover;
use crate::measure;
use crate::options::{CommonOptions, SshOptions};
use crate::report;
use crate::session::{Judged, Session};
use crate::units::Seconds;
use anyhow::Result;
use serde_json::json;

/// OpenSSH: validate names → discover (ssh -Q, sshd) → start the private sshd or
/// reach --host → feature check, bulk and handshake sweeps → report/store. The
/// daemon is stopped by its `Drop` on every path.
pub(super) fn ssh(c: &CommonOptions, a: &SshOptions) -> Result<()> {
    if let [dec, full] = a.compare_sweeps.as_slice() {
        return measure::ssh::compare_sweep_files(dec, full);
    }
    let caps = masked(a.cpu_caps.as_deref())?;
    // The policy and knowledge that order the sweep's spending.
    let judge = (policy(c)?, crate::judge::Knowledge::builtin()?);
    // The budget covers the whole command: starting the private sshd counts too.
    let t_run = std::time::Instant::now();
    if !a.serve {
        crate::deadline::set_run(t_run, c.budget.unwrap_or(Seconds(180.0)));
    }
    let remote_policy = a.host.as_ref().map(|_| policy(c)).transpose()?;
    let openssh = discover::openssh::discover()?;
    let servable = a.host.is_none().then(|| openssh.private_hostkeys());
    // What the policy allows is measured first (the order of spending).
    let named = !(a.ciphers.is_empty() && a.macs.is_empty());
    let admitted = crate::judge::admitted::ssh(&judge.0, &judge.1, &openssh, named);
    let mut plan = measure::ssh::SshPlan::new(
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
    plan.admitted = Some(admitted);
    let store = if a.serve { None } else { open_store(c)? };
    let daemon = match &a.host {
        Some(_) => None,
        // --serve offers only the selected algorithms (a server that refuses some).
        None if a.serve => Some(PrivateSshd::start(&discover::openssh::find_sshd()?, &plan.restrict(&openssh))?),
        None => Some(PrivateSshd::start(&discover::openssh::find_sshd()?, &openssh)?),
    };
    let client = client(a, &openssh, daemon.as_ref());
    if a.serve {
        return measure::ssh::serve(&client, daemon.as_ref());
    }
    // A remote host's banner first: silent, dripping or not-SSH hosts are named so.
    client.reach()?;
    // A remote server's offer, and what this machine's client negotiates there,
    // are asked before measuring: at the end of a loaded run the deadline may
    // leave no time for `ssh -vv`.
    let current = a
        .host
        .as_ref()
        .map(|h| crate::diff::remote::ssh_server(&openssh.ssh, h, a.port, a.identity.as_deref(), &a.ssh_options));
    let mut settings = measure::ssh::settings(&plan, &openssh, &client, daemon.as_ref());
    if let (Some(m), Some(x)) = (settings.as_object_mut(), caps.as_object()) {
        m.extend(x.clone());
        m.insert("openssh".into(), json!(openssh.version));
    }
    let (session, mut measurements) = Session::start("ssh", settings, store, progress(c))?;
    if let (Some(_), Some(admitted)) = (&daemon, &plan.admitted) {
        measure::ssh::physics::physics(admitted, (&plan.ciphers, &plan.macs), plan.budget, &mut measurements)?;
    }
    let plan = measure::ssh::SshPlan {
        budget: Seconds((plan.budget.0 - t_run.elapsed().as_secs_f64()).max(0.0)),
        ..plan
    };
    let measured = measure::ssh::sweep(&plan, &client, &mut measurements);
    drop(daemon);
    // A remote server: what to change there, against this run's figures.
    let remote_diff = match (current, remote_policy) {
        (Some(now), Some(p)) if !crate::interrupt::requested() => {
            let (diffs, text) = crate::diff::remote::section(now, &session.document(&measurements), "sshd", &p)?;
            measurements.set_setting("installed_diff", serde_json::to_value(&diffs)?);
            Some(text)
        }
        _ => None,
    };
    let done = finish(session, measurements, Judged::default(), measured, &outputs(c));
    if let (Some(text), false) = (remote_diff, c.quiet || c.json) {
        report::print_text(&text)?;
    }
    done
}

/// The ssh client for the private sshd, or for --host with the user's own
/// configuration.
fn client(a: &SshOptions, openssh: &discover::openssh::OpenSsh, daemon: Option<&PrivateSshd>) -> Client {
    match daemon {
        Some(d) => d.client(&openssh.ssh),
        None => Client {
            ssh: openssh.ssh.clone(),
            target: Destination::Remote {
                destination: a.host.clone().unwrap_or_default(),
                port: a.port,
                identity: a.identity.clone(),
                options: a.ssh_options.clone(),
            },
        },
    }
}
