//! Where TLS libraries are listed: each `Library` (the `--lib` names, in
//! `catalog.rs`) and the `backend::tls::TlsLibrary` that runs it. Everything else
//! in `measure::tls` is written against the trait.

use crate::backend::gnutls::library::{Gnutls, Names};
use crate::backend::gnutls::session::{Priority, PriorityError};
use crate::backend::openssl::library::Openssl;
use crate::backend::tls::TlsLibrary;
use crate::catalog::Library;
use crate::error::UsageError;
use anyhow::{anyhow, Result};
use std::sync::Arc;

/// The TLS library behind a `--lib` name.
pub fn library(lib: Library) -> Result<Arc<dyn TlsLibrary>> {
    Ok(match lib {
        Library::Openssl => Arc::new(Openssl),
        Library::Gnutls => Arc::new(Gnutls {
            names: Arc::new(gnutls_names()?),
        }),
    })
}

/// GnuTLS's suite table with IANA names: by code from the local OpenSSL's list,
/// else the suite catalogue, else GnuTLS's own name.
pub fn gnutls_names() -> Result<Names> {
    let local = crate::discover::openssl::tls_suites().unwrap_or_default();
    Names::load(|code| {
        local
            .iter()
            .find(|l| l.code.eq_ignore_ascii_case(code))
            .map(|l| l.iana.clone())
            .or_else(|| crate::catalog::tls_suite_name(code).map(|t| t.iana.clone()))
    })
}

/// Client → server library pairs for `--lib`: one library alone, or every pair of two.
pub fn pairs(libs: &[Library]) -> Vec<(Library, Library)> {
    let mut l: Vec<Library> = Vec::new();
    for x in libs {
        if !l.contains(x) {
            l.push(*x);
        }
    }
    let mut out = Vec::new();
    for &c in &l {
        for &s in &l {
            out.push((c, s));
        }
    }
    out
}

/// Compiles a user's priority string; a syntax error is bad input (exit 2) with
/// GnuTLS's position.
pub fn user_priority(text: &str) -> Result<Priority> {
    match Priority::new(text) {
        Ok(p) => {
            if p.suites().is_empty() {
                return Err(UsageError::Invalid(format!(
                    "the GnuTLS priority string '{text}' enables no cipher suite (`cipherbench list tls --lib gnutls --priority '{text}'` shows what it resolves to)"
                ))
                .into());
            }
            Ok(p)
        }
        Err(e @ PriorityError::Syntax { .. }) => Err(UsageError::Invalid(format!("invalid --priority: {e}")).into()),
        Err(PriorityError::Library(e)) => Err(anyhow!("GnuTLS is unavailable: {e}")),
    }
}
