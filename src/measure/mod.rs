//! Measurement kinds and the engine they share. Each kind provides candidates and
//! a probe; the sampler and statistics are shared.
//!
//! The map: `engine/` (sampler, statistics, noise, races); `plans.rs` (what the
//! primitive and file runs are given); `primitives_run.rs` and `files_run.rs`
//! (those runs); `primitive.rs`, `file.rs`, `kat.rs` (their probes and
//! known-answer tests); `tls/` and `ssh/` (the protocol kinds); `named.rs` (a
//! few subjects given by name, through the TLS and SSH stages: the installed
//! choice beside what the policy allows); `sink.rs` (where results go as they
//! are made).

pub mod engine;
pub mod file;
mod files_run;
pub mod kat;
pub mod named;
pub mod plans;
pub mod primitive;
mod primitives_run;
pub mod sink;
pub mod ssh;
pub mod tls;

/// Random bytes that never fail (the kernel's when OpenSSL has none): for data, keys
/// of throw-away measurements and run ids.
pub use crate::backend::openssl::random_bytes;
pub use files_run::files;
pub use primitives_run::primitives;
