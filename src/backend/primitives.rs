//! Which primitives of the catalogue a library can run here, and why not: each
//! library answers for itself (`backend::libraries` names the function), so that
//! "legacy provider not loaded" and "not in this build" are told apart by the
//! library. Measuring runs what is available; `list` shows the rest with the reason.
//!
//! What a library fetched is also how its primitive is run: every library's
//! [`Source`] (OpenSSL's included, in `backend/openssl/`), the one seam through
//! which a library's folder builds its own timed loops ([`TimedLoop`]) and checks
//! itself against the published vectors it is handed. Adding a library needs no
//! change in `measure/`.

use crate::catalog::kat::{KatError, Passed, Vectors};
use crate::catalog::{Op, Primitive};
use anyhow::Result;
use std::sync::Arc;

/// The library side of a primitive, fetched once: the library's own primitive,
/// its timed loops and its known-answer check.
pub type Fetched = Arc<dyn Source>;

/// One primitive as a library fetched it, run and checked by the library itself.
pub trait Source: Send + Sync {
    /// The timed loop of `op` on units of `len` bytes, keyed with random keys and
    /// built before any timing; an error (naming the primitive) when the library
    /// cannot run `op` on such units.
    fn make(&self, p: &Primitive, op: Op, len: usize) -> Result<Box<dyn TimedLoop>>;
    /// The library's primitive against known answers, run before any timing:
    /// `vectors` are the published ones (the library picks those named for `p`,
    /// or for its parts); the sources of the vectors it used, or what failed.
    fn known_answer(&self, p: &Primitive, vectors: &Vectors) -> Result<Passed, KatError>;
    /// Its key size in bits, where it has one (`list primitives`).
    fn key_bits(&self) -> Option<usize> {
        None
    }
    /// Its block size in bytes, where it has one (`list primitives`).
    fn block_bytes(&self) -> Option<usize> {
        None
    }
    /// The library's own type behind the seam, for the one library whose
    /// handles are used outside it (OpenSSL's cipher, by the file command).
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

/// A probe's timed work, as a library built it: contexts, keys and buffers made,
/// `run` does nothing but the work (one dynamic call per batch of units; the
/// library's calls inside are static).
pub trait TimedLoop: Send {
    /// `units` units of work: records sealed or opened, buffers enciphered,
    /// messages hashed (the timed loop).
    fn run(&mut self, units: u64) -> Result<()>;
    /// The bytes the loop works on (tests that prove the work is real).
    #[cfg(test)]
    fn buffer(&self) -> &[u8];
    /// Corrupts what a verifying loop checks (a sealed record, a CBC record's
    /// ciphertext), so that its next run must fail; false when it verifies
    /// nothing (tests).
    #[cfg(test)]
    fn tamper(&mut self) -> bool;
}

/// Whether a library can run a primitive, and why not.
#[derive(Clone)]
pub enum Availability {
    Available(Fetched),
    Unavailable(String),
}
