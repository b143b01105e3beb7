//! Everything cipherbench knows about each target software (the software
//! `recommend --for` writes lines for), one folder per software, `software/NAME/`:
//!
//! - `emit.rs`: its lines, a pure function of the choice (`recommend::choice`):
//!   the [`Emitter`] that `recommend` is handed through [`emitters`];
//! - `read.rs` (where it has a configuration): its installed configuration, read
//!   with the shared tools of `discover::installed` (the `Installed` value, the
//!   bounded file read, the config tool run within the run's deadline);
//! - `mod.rs`: its [`Target`]: which protocol lists it takes, where its
//!   configuration lives, how its own parser validates lines, how the real
//!   software negotiates them against a private peer, and what a patch and the
//!   fleet's Ansible variables need.
//!
//! Adding a target: its folder and its line in [`ALL`] (with its `pub mod`
//! above), both here; its place in ALL is its place everywhere.
//! Nothing outside this module lists the software: `recommend` writes lines with
//! the emitters it is given, and `diff`, `fleet` and `app` ask this registry.

pub mod apache;
pub mod curl;
pub mod gnutls;
pub mod haproxy;
mod negotiated;
pub mod nginx;
pub mod nzbget;
pub mod openssl;
pub mod rustls;
mod server;
pub mod ssh;
pub mod sshd;
pub mod stunnel;
#[cfg_attr(not(test), allow(dead_code))]
mod validate;

use crate::discover::installed::{Installed, TlsConfig};
use crate::error::UsageError;
use crate::recommend::choice::{Choice, Emitted, Emitter};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub use negotiated::{Negotiation, Want};
pub use validate::{Checked, Refused};

// Validation runs after `recommend` and the main job (app/validate.rs); some
// descriptive methods are used by the tests only so far.
/// The protocol a target configures.
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Tls,
    Ssh,
}

#[cfg_attr(not(test), allow(dead_code))]
impl Protocol {
    /// The ranking lists (recommend's names) a target of this protocol takes.
    pub fn lists(self) -> &'static [&'static str] {
        match self {
            Protocol::Tls => &["tls13_suites", "tls12_suites", "groups"],
            Protocol::Ssh => &["ssh_ciphers", "ssh_macs", "ssh_kex", "ssh_hostkeys"],
        }
    }
}

/// A target software.
#[cfg_attr(not(test), allow(dead_code))]
pub trait Target: Sync {
    /// Its pure emitter: the lines from a choice (callable from recommend).
    fn emitter(&self) -> &'static dyn Emitter;
    fn protocol(&self) -> Protocol;

    /// The `--for` name, e.g. `nginx`.
    fn name(&self) -> &'static str {
        self.emitter().target()
    }
    /// The ranking lists its lines are made from.
    fn lists(&self) -> &'static [&'static str] {
        self.protocol().lists()
    }
    /// Its lines for `choice`; `None` when it does not speak that protocol.
    fn lines(&self, choice: &Choice) -> Option<Vec<String>> {
        self.emitter().emit(choice)
    }
    /// Where the lines go, in words.
    fn location(&self) -> &'static str {
        self.emitter().location()
    }
    /// Programs whose presence means it is installed (the main job's default
    /// targets); empty: never picked on its own.
    fn programs(&self) -> &'static [&'static str] {
        &[]
    }
    /// Its main configuration file when none is given (environment overrides
    /// applied); `None` when it has no file.
    fn config_path(&self) -> Option<PathBuf> {
        None
    }
    /// Whether [`Target::read_installed`] can read its configuration.
    fn reads_installed(&self) -> bool {
        true
    }
    /// The installed configuration, or that of `config_from`; `Ok(None)` when it
    /// is not installed (or cannot be read at all, see [`Target::reads_installed`]).
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>>;
    /// Its lines checked by its own parser: `Ok(Checked::Parsed)` when the parser
    /// accepted them, an error with what it said when it refused them.
    fn validate(&self, lines: &[String]) -> Result<Checked>;
    /// "Validated means negotiated": after its parser accepted `lines`, the real
    /// software run with them against a private peer on 127.0.0.1 (a server with
    /// a default client, a client with a private server that honours the
    /// client's order), judged against the answer `want` by
    /// [`negotiated::judge`]: `Negotiation::Negotiated` with what it negotiated,
    /// `Negotiation::NotRun` with why it could not run, a [`Refused`] starting
    /// with what it negotiated when that is not the answer's first choice.
    fn negotiate(&self, _lines: &[String], _want: &Want) -> Result<Negotiation> {
        Ok(Negotiation::NotRun(format!("{} is not run with its lines yet", self.name())))
    }

    /// Through (`check`'s throughput of a server before and after): the installed
    /// configuration's TLS values in its own syntax, for a private instance of it;
    /// `None` when no private instance of it is run.
    fn installed_lines(&self, _installed: &TlsConfig) -> Option<Vec<String>> {
        None
    }

    /// Patch: every keyword its lines can start with (two-word ones first).
    fn keywords(&self) -> &'static [&'static str] {
        &[]
    }
    /// Patch: the emitted lines in the syntax of the file they go into.
    fn file_lines(&self, _installed: &Installed, emitted: &[String]) -> Vec<String> {
        emitted.to_vec()
    }
    /// Patch: the files beside the main one that the emitted lines set whole,
    /// each as (its path on disk, its whole new text): created where missing,
    /// changed where it differs (NZBGet before 25.4: its OpenSSL configuration
    /// and the systemd drop-in that names it).
    fn whole_files(&self, _installed: &Installed, _emitted: &[String]) -> Vec<(PathBuf, String)> {
        Vec::new()
    }
    /// Patch: whether keywords `a` and `b` set the same value (an emitted line
    /// then replaces either).
    fn same_setting(&self, a: &str, b: &str) -> bool {
        a == b
    }
    /// Patch: whether a replaced line keeps its trailing ` #` comment.
    fn keeps_comments(&self) -> bool {
        true
    }
    /// Fleet: whether deploy/ansible/apply.yml writes its lines (its variables are
    /// `cipherbench_fleet_NAME_lines` and `cipherbench_class_NAME_lines`).
    fn ansible(&self) -> bool {
        false
    }
}

/// Every target, in the one order they are shown in: the TLS libraries, the
/// servers, the clients, then SSH (its client before its server). The answer's
/// config lines, `--for`'s help, `check`'s and the main job's diffs, the main
/// job's default targets (the software found installed) and the lists of
/// readable and Ansible targets all follow it.
pub static ALL: &[&dyn Target] = &[
    &openssl::OpenSsl,
    &gnutls::GnuTls,
    &apache::Apache,
    &nginx::Nginx,
    &haproxy::Haproxy,
    &stunnel::Stunnel,
    &curl::Curl,
    &rustls::Rustls,
    &nzbget::Nzbget,
    &ssh::Ssh,
    &sshd::Sshd,
];

/// The emitters of `targets` (every target when empty; case-insensitive), in
/// [`ALL`]'s order: what `recommend` writes lines with.
pub fn emitters(targets: &[String]) -> Vec<&'static dyn Emitter> {
    ALL.iter()
        .filter(|t| targets.is_empty() || targets.iter().any(|w| w.eq_ignore_ascii_case(t.name())))
        .map(|t| t.emitter())
        .collect()
}

/// The lines of every target of `targets` (all when empty) for `choice`, in
/// [`ALL`]'s order; targets that do not speak its protocol have none.
pub fn lines(choice: &Choice, targets: &[String]) -> Vec<Emitted> {
    crate::recommend::choice::lines(choice, &emitters(targets))
}

/// The target named `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static dyn Target> {
    ALL.iter().copied().find(|t| t.name().eq_ignore_ascii_case(name))
}

/// Every `--for` name.
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|t| t.name()).collect()
}

/// The names of the targets whose installed configuration can be read.
pub fn readable() -> Vec<&'static str> {
    ALL.iter().filter(|t| t.reads_installed()).map(|t| t.name()).collect()
}

/// The targets whose lines the fleet's Ansible playbook writes.
pub fn ansible() -> Vec<&'static str> {
    ALL.iter().filter(|t| t.ansible()).map(|t| t.name()).collect()
}

/// Whether one of `programs` is installed (in sbin or bin; programs in sbin are
/// not on a user's PATH).
pub fn installed(programs: &[&str]) -> bool {
    programs.iter().any(|b| {
        ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/sbin", "/bin"]
            .iter()
            .any(|d| Path::new(d).join(b).exists())
    })
}

/// Reads the installed configuration of `software` (a `--for` name), or of
/// `config_from` when given. `Ok(None)` when the software is not installed.
pub fn read_installed(software: &str, config_from: Option<&Path>) -> Result<Option<Installed>> {
    if let Some(p) = config_from {
        // Unreadable is a clear error naming the file, before any program runs.
        crate::discover::installed::read_config(p)?;
    }
    match find(software).filter(|t| t.reads_installed()) {
        Some(t) => t.read_installed(config_from),
        None => Err(UsageError::unknown("software", software, readable()).into()),
    }
}

/// Every target of `targets` (all when empty) whose configuration is installed,
/// and a note for each one that could not be read.
pub fn discover(targets: &[String]) -> (Vec<Installed>, Vec<String>) {
    let mut found = Vec::new();
    let mut notes = Vec::new();
    for t in ALL.iter().filter(|t| t.reads_installed()) {
        let s = t.name();
        if !targets.is_empty() && !targets.iter().any(|w| w.eq_ignore_ascii_case(s)) {
            continue;
        }
        match t.read_installed(None) {
            Ok(Some(i)) => found.push(i),
            Ok(None) => {}
            Err(e) => notes.push(format!("{s}: {e:#}")),
        }
    }
    (found, notes)
}

#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod tests;
