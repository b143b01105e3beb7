//! `cipherbench fleet FILES|DIR`: many hosts' exports → answers per hardware class.
//!
//! The fleet is profiled by Ansible (deploy/ansible/profile.yml runs the main job on
//! each host and fetches `results/HOST.json`); this command only merges files, it
//! never reaches a host itself. Pipeline: [`merge`] (stream the files into
//! per-class summaries) → [`decide`] (each class through the same `recommend` as a
//! single run; outliers; the fleet-wide config) → [`render`] (terminal, JSON,
//! Markdown, HTML, and the group_vars/host_vars that deploy/ansible/apply.yml reads).
//!
//! Exit status: 0 when every file merged; 1 when some file or host could not be
//! merged (each is named, the rest is still merged and reported; a path given on
//! the command line that does not exist is one of them, as is a host with a
//! figure that is not physically possible, `crate::plausible`); 2 when nothing
//! could be merged at all (then no Ansible variables are written).
//! `--ansible-vars` never writes an empty list, and exits 1 when no class has a
//! line for any target.
//!
//! Every string in an export and every file name is outside text: what is printed
//! for people goes through [`crate::untrusted::shown`], and the machine-read
//! outputs (`--json`, the Ansible variables) are written by serde_json.

pub mod caps;
pub mod decide;
pub mod merge;
pub mod render;

use crate::error::UsageError;
use crate::options::{CommonOptions, FleetOptions};
use crate::untrusted::{bounded, shown};
use anyhow::Result;
use serde::Serialize;

/// The fleet document's schema (a separate document from a run's `cipherbench/1`).
pub const FLEET_SCHEMA: &str = "cipherbench-fleet/1";

/// Everything `fleet` found: one serde model for every output.
#[derive(Debug, Clone, Serialize)]
pub struct FleetReport {
    pub schema: String,
    pub policy: String,
    pub hosts_merged: usize,
    /// Files and hosts that could not be merged, each named with why.
    pub problems: Vec<merge::Problem>,
    pub classes: Vec<decide::ClassReport>,
    pub fleet: decide::FleetWide,
    /// Which host is in which class.
    pub host_classes: std::collections::BTreeMap<String, String>,
    /// Summed over the fleet: options installed software offers that the policy
    /// refuses, with how many hosts offer each (from each run's installed diff).
    pub findings: Vec<Finding>,
}

/// "37 hosts: sshd offers hmac-sha1".
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub hosts: usize,
    pub software: String,
    pub list: String,
    pub name: String,
    pub level: String,
    pub refusals: Vec<String>,
}

/// The fleet's findings: offered options the fleet's policy refuses (re-judged
/// with the same knowledge; lists without a domain keep the run's own verdict).
fn findings(merged: &merge::Merged, knowledge: &crate::judge::Knowledge, policy: &crate::judge::Policy) -> Vec<Finding> {
    use crate::judge::Domain;
    let mut out: Vec<Finding> = Vec::new();
    for (o, n) in &merged.findings {
        let domain = match o.list.as_str() {
            "ssh_ciphers" => Some(Domain::SshCipher),
            "ssh_macs" => Some(Domain::SshMac),
            "ssh_kex" => Some(Domain::SshKex),
            "ssh_hostkeys" => Some(Domain::SshHostkey),
            "tls13_suites" => Some(Domain::Tls13Suite),
            "tls12_suites" => Some(Domain::Tls12Suite),
            "groups" => Some(Domain::Group),
            "protocols" => Some(Domain::Protocol),
            _ => None,
        };
        let (allowed, refusals) = match domain {
            Some(d) => {
                let decision = policy.allows(&knowledge.judge(d, &o.name));
                (decision.allowed, decision.refusals)
            }
            None => (o.allowed_by_run, Vec::new()),
        };
        if !allowed {
            out.push(Finding {
                hosts: *n,
                software: o.software.clone(),
                list: o.list.clone(),
                name: o.name.clone(),
                level: o.level.clone(),
                refusals,
            });
        }
    }
    out.sort_by(|a, b| b.hosts.cmp(&a.hosts).then(a.software.cmp(&b.software)).then(a.name.cmp(&b.name)));
    out
}

pub fn command(c: &CommonOptions, a: &FleetOptions) -> Result<()> {
    let policy = crate::judge::Policy::resolve(c.policy.as_deref().unwrap_or(crate::judge::DEFAULT_POLICY))
        .map_err(|e| UsageError::Invalid(e.to_string()))?;
    let names = crate::software::names();
    for t in &c.targets {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(t)) {
            return Err(UsageError::unknown("target", t, names.iter().copied()).into());
        }
    }
    let targets: Vec<String> = if c.targets.is_empty() {
        // Default targets: what apply.yml writes.
        crate::software::ansible().iter().map(|s| s.to_string()).collect()
    } else {
        c.targets.clone()
    };
    let limit = a.max_export_size.map_or(merge::DEFAULT_MAX_EXPORT, |b| b.0);
    let knowledge = crate::judge::Knowledge::builtin()?;
    let mut progress = crate::progress::Progress::new(c.quiet || c.json);
    let report = build(&a.paths, limit, &knowledge, &policy, &targets, &mut progress);
    render::emit(&report, c, a)?;
    if report.hosts_merged == 0 {
        return Err(UsageError::Invalid(format!(
            "no host export could be merged ({} problem(s), listed above)",
            report.problems.len()
        ))
        .into());
    }
    if !report.problems.is_empty() {
        // The first few by name (all of them are in the report): a directory of
        // 10,000 bad files must not make one 10,000-item error line.
        const NAMED: usize = 20;
        let mut named: Vec<String> = report
            .problems
            .iter()
            .take(NAMED)
            .map(|p| format!("{} ({})", shown(&bounded(p.host_or_file(), 200)), p.kind))
            .collect();
        if report.problems.len() > NAMED {
            named.push(format!("and {} more (listed in the report)", report.problems.len() - NAMED));
        }
        // A finding (exit 1), as the exit-code table has it: the rest merged,
        // and the hosts that did not are named.
        return Err(crate::error::Finding(format!(
            "{} host(s) merged; {} file(s) or host(s) not merged: {}",
            report.hosts_merged,
            report.problems.len(),
            named.join(", ")
        ))
        .into());
    }
    Ok(())
}

impl merge::Problem {
    pub fn host_or_file(&self) -> &str {
        if self.host.is_empty() {
            &self.file
        } else {
            &self.host
        }
    }
}

/// Merges `paths` (exports of at most `limit` bytes) and decides, without printing.
pub fn build(
    paths: &[std::path::PathBuf],
    limit: u64,
    knowledge: &crate::judge::Knowledge,
    policy: &crate::judge::Policy,
    targets: &[String],
    progress: &mut crate::progress::Progress,
) -> FleetReport {
    let (files, mut problems) = merge::expand(paths);
    let mut merged = merge::merge(&files, limit, progress);
    problems.append(&mut merged.problems);
    // A host with an export and a stale marker: the export wins.
    problems.retain(|p| !(matches!(p.kind.as_str(), "failed" | "unreachable") && merged.hosts.contains(&p.host)));
    let decided = decide::decide(&merged, knowledge, policy, targets);
    let mut host_classes = std::collections::BTreeMap::new();
    for c in &decided.classes {
        for h in &c.hosts {
            host_classes.insert(h.clone(), c.id.clone());
        }
    }
    let findings = findings(&merged, knowledge, policy);
    FleetReport {
        findings,
        schema: FLEET_SCHEMA.into(),
        policy: policy.name.clone(),
        hosts_merged: merged.hosts.len(),
        problems,
        classes: decided.classes,
        fleet: decided.fleet,
        host_classes,
    }
}

#[cfg(test)]
mod hostile_tests;
