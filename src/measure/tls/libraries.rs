//! The TLS libraries of a run: each `--lib` name's `backend::tls::TlsLibrary`
//! (from the registry, `backend::libraries`), and the client → server pairs.
//! Everything else in `measure::tls` is written against the trait.

use crate::backend::tls::TlsLibrary;
use crate::catalog::Library;
use anyhow::Result;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_cover_both_directions() {
        let (o, g) = (Library::DEFAULT, crate::backend::libraries::named("gnutls").unwrap());
        assert_eq!(pairs(&[g]), [(g, g)]);
        assert_eq!(pairs(&[o, g, o]), [(o, o), (o, g), (g, o), (g, g)]);
    }
}
