//! One spelling per algorithm where the diff shows a name ([`crate::aliases`]):
//! of an algorithm's names, the one the software lists first by default (sshd's
//! own defaults, as the rankings show it), so that `now` and `recommended` never
//! read as a change from a name to its alias.

use super::negotiate::Negotiated;
use super::{same_alg, Current, Offer};
use crate::model::Document;

/// The lists whose order decides a name's spelling, first to last: the installed
/// sshd's defaults (stored in the run), then what the usual peer and the
/// installed configuration list.
pub(super) struct Spelling<'a> {
    lists: Vec<(&'static str, &'a [String])>,
}

impl<'a> Spelling<'a> {
    pub(super) fn of(doc: &'a Document, c: &'a Current) -> Spelling<'a> {
        let mut lists: Vec<(&'static str, &'a [String])> = Vec::new();
        if let Some(d) = &doc.run.capabilities.sshd_defaults {
            lists.extend([
                ("cipher", &d.ciphers[..]),
                ("mac", &d.macs[..]),
                ("kex", &d.kex[..]),
                ("hostkey", &d.hostkeys[..]),
            ]);
        }
        for o in [&c.peer_offer, &c.offer] {
            if let Offer::Ssh(s) = o {
                lists.extend([
                    ("cipher", &s.ciphers[..]),
                    ("mac", &s.macs[..]),
                    ("kex", &s.kex[..]),
                    ("hostkey", &s.hostkeys[..]),
                ]);
            }
        }
        Spelling { lists }
    }

    /// The spelling of `name` (a `what`: `kex` ...) the first list that has one
    /// of its names lists first; `name` itself when none does.
    pub(super) fn shown(&self, what: &str, name: &str) -> String {
        self.lists
            .iter()
            .filter(|(w, _)| *w == what)
            .find_map(|(_, l)| l.iter().find(|x| same_alg(x, name)))
            .cloned()
            .unwrap_or_else(|| name.to_string())
    }

    /// `n` with each SSH name in its one spelling (TLS suites are IANA names
    /// already, groups their knowledge-base names).
    pub(super) fn negotiated(&self, n: Negotiated) -> Negotiated {
        match n {
            Negotiated::Ssh { cipher, mac, kex, hostkey } => Negotiated::Ssh {
                cipher: self.shown("cipher", &cipher),
                mac: mac.map(|m| self.shown("mac", &m)),
                kex: self.shown("kex", &kex),
                hostkey: self.shown("hostkey", &hostkey),
            },
            tls => tls,
        }
    }
}

/// `names` with each alias of an earlier name folded into it: (name, its other
/// names), in the order of first appearance.
pub fn folded<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<(&'a str, Vec<&'a str>)> {
    let mut out: Vec<(&str, Vec<&str>)> = Vec::new();
    for n in names {
        match out.iter_mut().find(|(first, _)| same_alg(first, n)) {
            Some((first, also)) if *first != n && !also.contains(&n) => also.push(n),
            Some(_) => {}
            None => out.push((n, Vec::new())),
        }
    }
    out
}
