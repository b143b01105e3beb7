//! The one list of TLS and crypto libraries. Each entry is the library's own
//! folder under `backend/` answering for itself: its `--lib` name, what it is,
//! the [`TlsLibrary`] that runs its handshakes and records, and which catalogue
//! primitives it can time. Everything else names a library only through a
//! [`Library`] handle made here, so adding a library is its folder plus one line
//! in [`ALL`].

use crate::backend::primitives::Availability;
pub use crate::backend::tls::Entry;
use crate::backend::tls::TlsLibrary;
use crate::catalog::{Library, Primitive};
use anyhow::Result;
use std::sync::Arc;

/// Every library, the default ([`Library::DEFAULT`], the system OpenSSL) first.
pub const ALL: &[&Entry] = &[
    &super::openssl::library::ENTRY,
    &super::gnutls::library::ENTRY,
    &super::rustls::library::ENTRY,
];

/// The library a `--lib` name stands for.
pub fn named(name: &str) -> Option<Library> {
    ALL.iter().find(|e| e.name == name).map(|e| Library::registered(e.name))
}

/// What a library is. Every [`Library`] is made from an entry of [`ALL`].
pub fn entry(l: Library) -> &'static Entry {
    ALL.iter()
        .find(|e| e.name == l.as_str())
        .copied()
        .unwrap_or_else(|| unreachable!("{} is not a registered library", l.as_str()))
}

/// The TLS implementation of a library.
pub fn tls(l: Library) -> Result<Arc<dyn TlsLibrary>> {
    (entry(l).tls)()
}

/// What a library's own configuration text is, when it takes one (`--priority`).
pub fn native_text(l: Library) -> Option<&'static str> {
    entry(l).native_text
}

/// The first of `libs` that takes its own configuration text, with what that text is.
pub fn takes_native(libs: &[Library]) -> Option<(Library, &'static str)> {
    libs.iter().find_map(|&l| native_text(l).map(|t| (l, t)))
}

/// "--lib gnutls": the libraries that take their own configuration text.
pub fn native_libs() -> String {
    listed(|e| e.native_text.is_some())
}

/// "--lib openssl, --lib gnutls or --lib rustls": every library, for messages.
pub fn every_lib() -> String {
    listed(|_| true)
}

/// "--lib openssl or --lib rustls": the libraries whose clients give streams
/// for a protocol of the caller's own (`--http-get`), for messages.
pub fn streaming_libs() -> String {
    listed(|e| (e.tls)().is_ok_and(|t| t.lacks_streams().is_none()))
}

/// `--lib NAME` for each entry that `keep` keeps: "a, b or c".
fn listed(keep: impl Fn(&Entry) -> bool) -> String {
    let l: Vec<String> = ALL.iter().filter(|e| keep(e)).map(|e| format!("--lib {}", e.name)).collect();
    match l.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => l.join(""),
    }
}

/// A library's version as a report shows it: its title before the version it
/// recorded, unless the version already starts with it (`OpenSSL 3.0.19 …`).
pub fn shown_version(e: &Entry, version: &str) -> String {
    if version.starts_with(e.title) {
        version.to_string()
    } else {
        format!("{} {version}", e.title)
    }
}

/// Whether a library can run a catalogue primitive here, and why not.
pub fn fetch(p: &Primitive, l: Library) -> Availability {
    (entry(l).primitives)(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default is registered and first; every entry's name is the one its
    /// TLS implementation gives its results, and no two entries share a name.
    #[test]
    fn every_entry_names_itself_and_the_default_is_first() {
        assert_eq!(ALL[0].name, Library::DEFAULT.as_str());
        assert_eq!(named("openssl"), Some(Library::DEFAULT));
        assert_eq!(named("OpenSSL"), None);
        let mut seen = std::collections::BTreeSet::new();
        for e in ALL {
            assert!(seen.insert(e.name), "{} twice", e.name);
            let l = named(e.name).unwrap();
            assert_eq!(entry(l).name, e.name);
            match tls(l) {
                Ok(t) => assert_eq!(t.name(), e.name),
                // GnuTLS is loaded at run time; `make test` installs it.
                Err(err) => panic!("{}: {err:#}", e.name),
            }
        }
    }
}
