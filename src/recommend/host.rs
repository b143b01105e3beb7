//! What `recommend` knows about the host a document comes from: the capabilities
//! stored with its run (`model::Capabilities`), else, for documents from before
//! they were stored, what the document itself shows. Never the machine
//! `recommend` runs on: a document gives its host's answer anywhere.

use super::choice::{GroupNames, SuiteNames};
use crate::judge::{Domain, Group, GroupKind, KexMethod, Knowledge, TlsSuite};
use crate::model::{Capabilities, Document, Kind, ResultRecord, Status};

/// TLS groups every OpenSSL since 1.1.1 accepts: what a host whose groups are not
/// known is assumed to have (others only where the document measured them).
const CLASSIC_GROUPS: &[&str] = &["x25519", "x448", "secp256r1", "secp384r1", "secp521r1"];

/// A TLS suite under every name the emitters need.
pub fn suite_names(s: &TlsSuite) -> SuiteNames {
    SuiteNames {
        iana: s.iana.clone(),
        openssl: s.openssl.clone(),
        gnutls: s.gnutls.clone(),
        kx: s.kx.clone(),
        au: s.au.clone(),
        enc: s.enc.clone(),
        enc_bits: s.enc_bits,
        mac: s.mac.clone(),
    }
}

/// A group's spellings OpenSSL could take, best first: its name, then its aliases
/// (not GnuTLS's `GROUP-…` ones).
fn openssl_spellings(g: &Group) -> impl Iterator<Item = &str> {
    std::iter::once(g.name.as_str())
        .chain(g.aliases.iter().map(String::as_str))
        .filter(|n| !n.starts_with("GROUP-") && !n.contains(' '))
}

fn gnutls_name(g: &Group) -> Option<String> {
    g.aliases.iter().find(|a| a.starts_with("GROUP-")).cloned()
}

/// A group with its own name for OpenSSL and the GnuTLS one, for a host whose
/// OpenSSL groups are not known (a fleet's merged choice: every class measured it).
pub fn group_names(g: &Group) -> GroupNames {
    GroupNames {
        name: g.name.clone(),
        openssl: openssl_spellings(g).next().map(str::to_string),
        gnutls: gnutls_name(g),
        post_quantum: g.kind == GroupKind::HybridPq,
    }
}

/// A group with the spelling the host's OpenSSL accepts (`None`: it has not got
/// it) and the GnuTLS one; as [`group_names`] when the host's groups are not known.
pub fn host_group_names(g: &Group, caps: &Capabilities) -> GroupNames {
    let Some(o) = &caps.openssl else { return group_names(g) };
    GroupNames {
        name: g.name.clone(),
        openssl: openssl_spellings(g)
            .find(|n| o.groups.iter().any(|x| x.eq_ignore_ascii_case(n)))
            .map(str::to_string),
        gnutls: gnutls_name(g),
        post_quantum: g.kind == GroupKind::HybridPq,
    }
}

/// Whether a group may be configured on the document's host: its OpenSSL accepts
/// it; when that is not known, a classic group or one the run measured.
pub fn has_group(doc: &Document, k: &Knowledge, g: &Group, names: &GroupNames) -> bool {
    if doc.run.capabilities.openssl.is_some() {
        return names.openssl.is_some();
    }
    let measured = doc.results.iter().any(|r| {
        matches!(r.kind, Kind::TlsHandshake | Kind::TlsAccept)
            && r.status == Status::Ok
            && r.median.is_some_and(|m| m > 0.0)
            && r.subject
                .group
                .as_deref()
                .is_some_and(|n| k.group(n).is_some_and(|x| x.name == g.name))
    });
    measured || (g.kind == GroupKind::Ecdhe && CLASSIC_GROUPS.contains(&g.name.as_str()))
}

/// Whether the host's OpenSSL offers a suite: its stored list; when that is not
/// known, every suite OpenSSL has a name for.
pub fn offers_suite(caps: &Capabilities, s: &TlsSuite) -> bool {
    match caps.openssl.as_ref().and_then(|o| o.suites.as_ref()) {
        Some(l) => l.iter().any(|x| x.iana == s.iana),
        None => s.openssl.is_some(),
    }
}

/// The algorithms of one SSH list the run's client had, in its own order: its
/// stored `ssh -Q` list; when that is not known, those the document's SSH records
/// name (accepted in the feature check, or measured), so that no line names an
/// algorithm that host's OpenSSH may not know.
pub fn ssh_client_list(doc: &Document, k: &Knowledge, d: Domain) -> Vec<String> {
    if let Some(o) = &doc.run.capabilities.openssh {
        return match d {
            Domain::SshCipher => o.ciphers.clone(),
            Domain::SshMac => o.macs.clone(),
            Domain::SshKex => o.kex.clone(),
            _ => o.hostkey_algorithms.clone(),
        };
    }
    let seen = |r: &ResultRecord| match r.kind {
        Kind::SshAccept => r.status == Status::Ok && r.median == Some(1.0),
        Kind::SshBulk | Kind::SshHandshake => r.status == Status::Ok,
        _ => false,
    };
    let mut out: Vec<String> = Vec::new();
    for r in doc.results.iter().filter(|r| seen(r)) {
        let s = &r.subject;
        let name = match d {
            Domain::SshCipher => &s.cipher,
            Domain::SshMac => &s.mac,
            Domain::SshKex => &s.kex,
            _ => &s.hostkey,
        };
        if let Some(n) = name.as_ref().filter(|n| !out.contains(n)) {
            out.push(n.clone());
        }
    }
    // Markers (`ext-info-c`) are no key exchange of their own.
    out.retain(|n| !(d == Domain::SshKex && k.ssh_kex(n).is_some_and(|x| x.method == KexMethod::Marker)));
    out
}

/// Whether `doc` measured a remote server (`ssh --host`), not the private sshd.
pub fn is_remote(doc: &Document) -> bool {
    doc.run
        .settings
        .get("target")
        .and_then(|t| t.as_str())
        .is_some_and(|t| !t.starts_with("private sshd"))
}

/// The host-key algorithms an sshd line may list: those of `allowed` (best first)
/// that the server can serve. For a remote run (`ssh --host`), what the server
/// offered in the feature check; otherwise the keys the host's sshd had when the
/// run started (`sshd -T` and its HostKey files). `None` when they are not known:
/// the line is then left out, and sshd keeps its own default.
pub fn server_hostkeys(doc: &Document, allowed: &[String]) -> Option<Vec<String>> {
    let offered: Vec<String> = if is_remote(doc) {
        doc.results
            .iter()
            .filter(|r| r.kind == Kind::SshAccept && r.status == Status::Ok && r.median == Some(1.0))
            .filter(|r| r.subject.cipher.is_none() && r.subject.mac.is_none() && r.subject.kex.is_none())
            .filter_map(|r| r.subject.hostkey.clone())
            .collect()
    } else {
        doc.run.capabilities.sshd_hostkeys.clone()?
    };
    if offered.is_empty() {
        return None;
    }
    Some(allowed.iter().filter(|a| offered.contains(a)).cloned().collect())
}

/// What the ranking of `list` could not know about the host (a document from
/// before capabilities were stored), for the ranking's notes.
pub fn unknown_note(doc: &Document, list: &str) -> Option<String> {
    let caps = &doc.run.capabilities;
    let what = match list {
        "tls13_suites" | "tls12_suites" if caps.openssl.as_ref().is_none_or(|o| o.suites.is_none()) => {
            "which suites that host's OpenSSL offers is not in the document: every suite OpenSSL names is a candidate"
        }
        "groups" if caps.openssl.is_none() => {
            "which groups that host's OpenSSL accepts is not in the document: only the classic ones and those measured are configured"
        }
        "ssh_ciphers" | "ssh_macs" | "ssh_kex" | "ssh_hostkeys" if caps.openssh.is_none() => {
            "which algorithms that host's OpenSSH has is not in the document: only those its run checked or measured are configured"
        }
        _ => return None,
    };
    Some(format!("{what} (not known for that host)."))
}
