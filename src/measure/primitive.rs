//! Primitive throughput: ciphers, AEADs, digests and MACs by block size, ML-KEM
//! and ML-DSA per operation.
//!
//! The candidates are a fixed catalogue (`catalog`). The probe processes one
//! buffer per unit of work, in place, with contexts built before timing; every
//! library, OpenSSL included, builds that work in its folder under `backend/`
//! and hands the probe a timed loop (`backend::primitives::Source`): nothing
//! here names a library.

use crate::backend::primitives::TimedLoop;
use crate::measure::engine::sampler::Probe;
use anyhow::Result;

pub use crate::catalog::*;

pub use crate::backend::libraries::fetch as fetch_from;
pub use crate::backend::primitives::{Availability, Fetched};

/// The timed probe for one primitive, operation and buffer size.
pub struct PrimitiveProbe {
    /// The library's timed loop (one dynamic call per batch of units).
    work: Box<dyn TimedLoop>,
    len: usize,
    /// Counted in operations (ML-KEM, ML-DSA), not bytes.
    per_op: bool,
}

impl PrimitiveProbe {
    /// Builds contexts and buffers for `op` on `len`-byte records with random keys.
    pub fn new(p: &Primitive, fetched: &Fetched, op: Op, len: usize) -> Result<PrimitiveProbe> {
        Ok(PrimitiveProbe {
            work: fetched.make(p, op, len)?,
            len,
            per_op: p.class.per_operation(),
        })
    }

    /// Corrupts what a verifying probe checks (a sealed record, a CBC record's
    /// ciphertext): its next run must fail. False when it verifies nothing.
    #[cfg(test)]
    fn tamper(&mut self) -> bool {
        self.work.tamper()
    }
}

impl Probe for PrimitiveProbe {
    fn run(&mut self, units: u64) -> Result<f64> {
        self.work.run(units)?;
        if self.per_op {
            // Operations, not bytes.
            return Ok(units as f64);
        }
        Ok((units as usize * self.len) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn available(name: &str) -> (&'static Primitive, Fetched) {
        let p = lookup(name).unwrap();
        match fetch_from(p, Library::DEFAULT) {
            Availability::Available(f) => (p, f),
            Availability::Unavailable(why) => panic!("{name}: {why}"),
        }
    }

    #[test]
    fn lookup_is_case_insensitive_with_aliases() {
        assert_eq!(lookup("AES-128-GCM").unwrap().name, "aes-128-gcm");
        assert_eq!(lookup("3DES").unwrap().name, "des-ede3-cbc");
        assert_eq!(lookup("hmac(sha256)").unwrap().name, "hmac-sha256");
        assert!(lookup("aes-128-gcn").is_none());
    }

    #[test]
    fn catalog_names_are_unique() {
        let mut names: Vec<_> = CATALOG.iter().map(|p| p.name).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len());
    }

    #[test]
    fn every_default_primitive_builds_all_ops() {
        for p in CATALOG.iter().filter(|p| p.default) {
            if p.class.per_operation() && matches!(fetch_from(p, Library::DEFAULT), Availability::Unavailable(_)) {
                // Before OpenSSL 3.5 (backend::openssl::pqwork's tests check the reason).
                continue;
            }
            let (_, f) = available(p.name);
            let per_op = p.class.per_operation();
            for &op in p.class.ops() {
                let mut probe = PrimitiveProbe::new(p, &f, op, 64).unwrap();
                let want = if per_op { 2.0 } else { 128.0 };
                assert_eq!(probe.run(2).unwrap(), want, "{} {}", p.name, op.as_str());
            }
        }
    }

    /// Every registered library's default primitives build through the probe
    /// (each library's own loop behind `backend::primitives::Source`), count
    /// their bytes or operations, and a verifying probe (an AEAD's or a CBC
    /// record's decryption) fails once what it checks is corrupted.
    #[test]
    fn every_library_runs_its_primitives_through_the_probe() {
        let mut built = Vec::new();
        for e in crate::backend::libraries::ALL {
            let lib = crate::backend::libraries::named(e.name).unwrap();
            for p in CATALOG.iter().filter(|p| p.default || matches!(p.class, Class::CbcHmac(_))) {
                let Availability::Available(f) = fetch_from(p, lib) else { continue };
                for &op in p.class.ops() {
                    let mut probe = PrimitiveProbe::new(p, &f, op, 64).unwrap_or_else(|e| panic!("{}: {e:#}", lib.as_str()));
                    let want = if p.class.per_operation() { 2.0 } else { 128.0 };
                    assert_eq!(probe.run(2).unwrap(), want, "{} {} {}", lib.as_str(), p.name, op.as_str());
                    let verifies = op == Op::Decrypt && matches!(p.class, Class::Aead(_) | Class::CbcHmac(_));
                    if verifies {
                        assert!(probe.tamper(), "{} {}", lib.as_str(), p.name);
                        assert!(probe.run(1).is_err(), "{} {}: a corrupted record must fail", lib.as_str(), p.name);
                    }
                }
                built.push(format!("{} {}", lib.as_str(), p.name));
            }
        }
        // Every library has at least one (each is installed by make test).
        for e in crate::backend::libraries::ALL {
            assert!(
                built.iter().any(|b| b.starts_with(&format!("{} ", e.name))),
                "{}: {built:?}",
                e.name
            );
        }
    }

    /// TLS 1.2 CBC records round-trip in every library that has them, and a
    /// flipped ciphertext byte fails the MAC check: decryption verifies, it does
    /// not just run.
    #[test]
    fn cbc_hmac_records_verify() {
        let p = lookup("aes-128-cbc-hmac-sha1").unwrap();
        let mut checked = 0;
        for e in crate::backend::libraries::ALL {
            let lib = crate::backend::libraries::named(e.name).unwrap();
            let Availability::Available(f) = fetch_from(p, lib) else {
                assert_ne!(lib, Library::DEFAULT, "unavailable");
                continue;
            };
            let mut enc = PrimitiveProbe::new(p, &f, Op::Encrypt, 1000).unwrap();
            assert_eq!(enc.run(2).unwrap(), 2000.0);
            let mut dec = PrimitiveProbe::new(p, &f, Op::Decrypt, 1000).unwrap();
            assert_eq!(dec.run(2).unwrap(), 2000.0);
            assert!(dec.tamper(), "{}: not a CBC record probe", e.name);
            assert!(dec.run(1).is_err());
            checked += 1;
        }
        assert!(checked >= 2, "{checked} libraries");
    }
}
