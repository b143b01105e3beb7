//! The one measurement engine every kind uses.
//!
//! Kinds (primitives, files, TLS, SSH) supply *probes*: one sample of one
//! subject. Everything about time and statistics lives here, once:
//!
//! - [`sampler`]: warm-up, calibration, samples, and interleaved rounds of
//!   independent samples (TLS slices, SSH sessions, primitive batches), each on
//!   fresh probes, A B C, A B C, … so every subject sees the same drift;
//! - [`stats`]: the interval of a subject from its samples, and the one rule for
//!   subjects with too few samples to have an interval of their own;
//! - [`noise`]: the machine's noise over the run, measured from those samples and
//!   stored with it; every interval is at least that wide, so it holds on a
//!   second run, and `compare` takes its threshold from it;
//! - [`rounds`]: the keys of interleaved rounds, stored with each round's value
//!   so that `recommend` may compare subjects within the rounds they share;
//! - [`race`]: ties, who is still in the running for a place, which subjects a
//!   race samples next, and pooling a race's samples with the first pass's.
//!
//! `crate::contest` (the main job's race over its tied lists) and the SSH sweep's
//! racer are callers of [`race`]; neither keeps a rule of its own.

pub mod noise;
pub mod race;
pub mod rounds;
pub mod sampler;
pub mod stats;
