//! Known-answer tests: before an algorithm is timed, the very engine methods the
//! probe will call must reproduce a published vector (NIST SP 800-38A/C/D, RFC 8439,
//! FIPS 180, ...). The vectors are data, in `data/kat/primitives.toml`
//! (`catalog::kat`). Every library, OpenSSL included, checks itself in its
//! folder against the vectors handed to it here
//! (`backend::primitives::Source::known_answer`).

use crate::catalog::kat::published;
pub use crate::catalog::kat::{KatError, Passed};
use crate::measure::primitive::{Fetched, Primitive};

/// Runs every vector for `p` through the library's engines the probe uses.
pub fn check(p: &Primitive, fetched: &Fetched) -> Result<Passed, KatError> {
    let passed = fetched.known_answer(p, published())?;
    if passed.is_empty() {
        return Err(KatError::NoVector(p.name.to_string()));
    }
    Ok(passed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::primitive::{fetch_from, Availability, Library, CATALOG};

    #[test]
    fn vector_file_parses_and_names_known_algorithms() {
        let f = published();
        assert!(!f.cipher.is_empty() && !f.digest.is_empty() && !f.mac.is_empty());
        let names = f
            .cipher
            .iter()
            .map(|v| &v.algorithm)
            .chain(f.digest.iter().map(|v| &v.algorithm))
            .chain(f.mac.iter().map(|v| &v.algorithm))
            .chain(f.kem.iter().map(|v| &v.algorithm));
        for n in names {
            assert!(crate::measure::primitive::lookup(n).is_some(), "vector for unknown algorithm {n}");
        }
    }

    /// Runs the KAT of every catalogue primitive `fetch` makes available; returns
    /// how many were checked and the failures.
    fn sweep(fetch: impl Fn(&Primitive) -> Availability) -> (usize, Vec<String>) {
        let mut failures = Vec::new();
        let mut checked = 0;
        for p in CATALOG {
            if let Availability::Available(f) = fetch(p) {
                checked += 1;
                if let Err(e) = check(p, &f) {
                    failures.push(format!("{}: {e}", p.name));
                }
            }
        }
        (checked, failures)
    }

    /// Every primitive in the catalogue that this OpenSSL offers passes its KAT.
    #[test]
    fn every_available_primitive_passes_its_known_answer_test() {
        let (checked, failures) = sweep(|p| fetch_from(p, Library::DEFAULT));
        assert!(checked > 40, "only {checked} primitives available");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// Every primitive every registered library offers passes its known-answer
    /// test as the run calls it (each library's own check, in its folder, has
    /// its own tests there).
    #[test]
    fn every_library_passes_its_known_answer_tests() {
        for e in crate::backend::libraries::ALL {
            let lib = crate::backend::libraries::named(e.name).unwrap();
            let (checked, failures) = sweep(|p| crate::measure::primitive::fetch_from(p, lib));
            assert!(checked >= 3, "{}: only {checked} primitives available", e.name);
            assert!(failures.is_empty(), "{}: {}", e.name, failures.join("\n"));
        }
    }
}
