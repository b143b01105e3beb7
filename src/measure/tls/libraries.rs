//! The TLS libraries of a run: each `--lib` name's `backend::tls::TlsLibrary`
//! (from the registry, `backend::libraries`), and the client → server pairs.
//! Everything else in `measure::tls` is written against the trait.

use crate::backend::gnutls::session::{Priority, PriorityError};
use crate::backend::tls::TlsLibrary;
use crate::catalog::Library;
use crate::error::UsageError;
use anyhow::{anyhow, Result};
use std::sync::Arc;

/// The TLS library behind a `--lib` name.
pub fn library(lib: Library) -> Result<Arc<dyn TlsLibrary>> {
    crate::backend::libraries::tls(lib)
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
