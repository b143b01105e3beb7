//! The installed-configuration diff as steps of the commands that use it: read
//! what is installed, resolve it, build the diffs, and attach them to the run.

use super::*;

/// The configurations to diff: `config_from` (its software from `--for` or its
/// content), else every installed software of `targets` (all when empty). Notes
/// name what could not be read.
pub fn read_installed(targets: &[String], config_from: Option<&std::path::Path>) -> anyhow::Result<(Vec<Installed>, Vec<String>)> {
    use crate::discover::installed as inst;
    use crate::error::UsageError;
    use crate::software;
    for t in targets {
        if !software::readable().iter().any(|s| s.eq_ignore_ascii_case(t)) {
            return Err(UsageError::unknown("software to check", t, software::readable()).into());
        }
    }
    let Some(typed) = config_from else {
        return Ok(software::discover(targets));
    };
    // Absolute before any tool sees it: `nginx -p DIR -c FILE` and `sshd -f FILE`
    // would read a relative path against their own prefix, not the cwd.
    let absolute = std::path::absolute(typed).map_err(|e| {
        UsageError::Invalid(format!(
            "cannot make the configuration file {} an absolute path: {e}",
            crate::untrusted::shown(&typed.display().to_string())
        ))
    })?;
    let path = absolute.as_path();
    let text = inst::read_config(path)?;
    let software = match targets {
        [one] => one.to_ascii_lowercase(),
        [] => inst::guess(path, &text)
            .ok_or_else(|| {
                UsageError::Invalid(format!(
                    "cannot tell which software {} configures; add --for {}",
                    path.display(),
                    software::readable().join("|")
                ))
            })?
            .to_string(),
        _ => return Err(UsageError::Invalid("--config-from reads one file: give one --for target".into()).into()),
    };
    let i = software::read_installed(&software, Some(path))?
        .ok_or_else(|| UsageError::Invalid(format!("{} is not a {software} configuration", path.display())))?;
    Ok((vec![i], Vec::new()))
}

/// Resolves and negotiates each configuration; the ones that fail become notes.
pub fn resolve_all(installed: Vec<Installed>, k: &Knowledge) -> (Vec<Current>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    // The ssh client's peer is this machine's sshd: read once. sshd's is a
    // default client (`ssh -F /dev/null`), not this machine's configured one
    // (see `current`).
    let ssh_peer = |want: &str| installed.iter().find(|i| i.software == want).cloned();
    for i in installed.iter().cloned() {
        let peer = match i.software {
            "ssh" => ssh_peer("sshd"),
            _ => None,
        };
        let name = i.software;
        match current(i, k, peer.as_ref()) {
            Ok(c) => out.push(c),
            Err(e) => notes.push(format!("{name}: {e:#}")),
        }
    }
    (out, notes)
}

/// Every diff of `currents` against a run and its recommendation.
pub fn build_all(currents: &[Current], doc: &Document, outcome: &Outcome, k: &Knowledge, policy: &Policy) -> Vec<SoftwareDiff> {
    currents.iter().map(|c| build(c, doc, outcome, k, policy)).collect()
}

/// The software names of `targets` this module can read (all when empty).
fn readable(targets: &[String]) -> Vec<String> {
    targets
        .iter()
        .filter(|t| crate::software::readable().iter().any(|s| s.eq_ignore_ascii_case(t)))
        .cloned()
        .collect()
}

/// The main job's step before ranking: what is installed among `targets`, and
/// what it negotiates (the configurations that could not be read become notes).
pub fn installed(k: &Knowledge, targets: &[String]) -> (Vec<Current>, Vec<String>) {
    let wanted = readable(targets);
    if wanted.is_empty() || crate::interrupt::requested() {
        return (Vec::new(), Vec::new());
    }
    let (installed, mut notes) = crate::software::discover(&wanted);
    let (currents, more) = resolve_all(installed, k);
    notes.extend(more);
    (currents, notes)
}

/// What the installed configurations negotiate that the run has not measured yet
/// (`results`): the subjects that make "now" a subject of the run.
pub fn unmeasured(currents: &[Current], results: &[crate::model::ResultRecord]) -> subjects::Subjects {
    subjects::not_in(&subjects::negotiated(currents), results)
}

/// `recommend`'s and the remote subcommands' closing section: the diffs, and them
/// as text.
pub fn section(
    currents: &[Current],
    notes: &[String],
    doc: &Document,
    outcome: &Outcome,
    k: &Knowledge,
    policy: &Policy,
) -> (Vec<SoftwareDiff>, String) {
    let diffs = build_all(currents, doc, outcome, k, policy);
    let text = render::section(&diffs, notes);
    (diffs, text)
}

/// Annotates a document's `recommendations[]` with the diffs (`now`, `gain`,
/// `diff`: what the HTML report shows under "What changing would gain").
pub fn annotate(recommendations: &mut [RecommendationRecord], diffs: &[SoftwareDiff]) {
    for d in diffs {
        let protocol = match &d.now {
            Some(Negotiated::Ssh { .. }) => "ssh",
            _ if d.offered.iter().any(|g| g.list.starts_with("ssh_")) => "ssh",
            _ => "tls",
        };
        let Some(r) = recommendations
            .iter_mut()
            .find(|r| r.target == d.software && r.protocol == protocol)
        else {
            continue;
        };
        r.now = Some(d.now.as_ref().map(|n| n.label()).or(d.now_error.clone()).map(Now::Label));
        let gains: Vec<String> = d
            .changes
            .iter()
            .filter(|c| c.gain.is_some())
            .map(|c| format!("{}: {}", c.metric, c.verdict))
            .collect();
        r.gain = Some(if d.nothing_to_change {
            "nothing to change".to_string()
        } else {
            gains.join("; ")
        });
        if let Some(p) = &d.patch {
            r.diff = Some(p.lines().map(str::to_string).collect());
        }
    }
}

/// Whether the main job measures a throughput change through private server
/// instances (nginx, Apache, HAProxy, stunnel) once it has its recommendation
/// (and so keeps time for it).
pub fn through_applies(currents: &[Current]) -> bool {
    currents.iter().any(|c| through::server_binary(c).is_some())
}

/// The main job's step after ranking: the diffs of `currents` against the measured
/// document `doc` and its `outcome`, for [`through::server_plans`] to plan
/// each local server's throughput now and with the recommended lines.
pub fn through_diffs(currents: &[Current], doc: &Document, outcome: &Outcome, k: &Knowledge, policy: &Policy) -> Vec<SoftwareDiff> {
    if !through_applies(currents) {
        return Vec::new();
    }
    build_all(currents, doc, outcome, k, policy)
}

/// For `recommend`: the installed configurations of `targets` (all when empty), read
/// now and diffed against a stored run.
pub fn for_stored_run(targets: &[String], k: &Knowledge) -> (Vec<Current>, Vec<String>) {
    let wanted = readable(targets);
    if !targets.is_empty() && wanted.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let (installed, mut notes) = crate::software::discover(&wanted);
    let (currents, more) = resolve_all(installed, k);
    notes.extend(more);
    (currents, notes)
}
