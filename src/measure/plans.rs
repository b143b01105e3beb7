//! The primitive and file kinds' work: candidates × budget → ordered items (the
//! TLS and SSH kinds keep their plans beside their probes, `tls::LoopbackPlan`,
//! `ssh::SshPlan`).
//!
//! The budget is shared out evenly first; whatever is left after the first pass
//! goes to racing (`engine::race`): subjects whose intervals overlap the leader
//! of their group get more samples, so close calls are settled by data or
//! honestly reported as ties.

use super::engine::sampler::{Basis, SamplerConfig};
use super::primitive::{Library, Op, Primitive};
use crate::units::{Bytes, Seconds};

/// One subject to measure.
#[derive(Debug, Clone, Copy)]
pub struct PrimitiveItem {
    pub primitive: &'static Primitive,
    pub library: Library,
    pub op: Op,
    pub bytes: Bytes,
}

#[derive(Debug, Clone)]
pub struct PrimitivePlan {
    pub items: Vec<PrimitiveItem>,
    pub threads: usize,
    pub sampler: SamplerConfig,
    pub budget: Seconds,
    /// Batches every subject gets even when its share of the budget ran out
    /// first (a loaded core stretches each batch's wall time): 0 for none. The
    /// SSH physics pass sets it, so that no allowed cipher's primitive is left
    /// with too few batches to order anything.
    pub min_batches: usize,
    /// When the top-up to `min_batches` stops even if short (besides the run's
    /// deadline): a share of the run, so that a short budget keeps time for what
    /// comes after the primitives. None: only the run's deadline.
    pub floor_until: Option<std::time::Instant>,
}

/// Default block sizes, as `openssl speed`.
pub const DEFAULT_SIZES: [u64; 6] = [16, 64, 256, 1024, 8192, 16384];

/// Longest time one subject may take in the first pass (`openssl speed` spends 3 s).
const MAX_PER_SUBJECT: f64 = 3.0;
const MIN_PER_SUBJECT: f64 = 0.05;

/// Sampler settings for `n` subjects sharing `budget`.
pub fn share(budget: Seconds, n: usize) -> SamplerConfig {
    let per = (budget.0 / n.max(1) as f64).clamp(MIN_PER_SUBJECT, MAX_PER_SUBJECT);
    let base = SamplerConfig::default();
    SamplerConfig {
        budget: Seconds(per),
        // Keep at least ~12 samples inside the subject's share.
        sample_time: Seconds((per / 12.0).clamp(0.002, base.sample_time.0)),
        warmup: Seconds((per / 10.0).min(base.warmup.0)),
        ..base
    }
}

/// Orders the work: algorithm by algorithm (the libraries side by side), each
/// operation over every size.
pub fn primitives(prims: &[&'static Primitive], libraries: &[Library], sizes: &[Bytes], threads: usize, budget: Seconds) -> PrimitivePlan {
    primitives_of_ops(prims, libraries, sizes, threads, budget, |_| true)
}

/// [`primitives`], only the operations `keep` accepts (e.g. encrypt alone, when
/// only the cost of sealing is asked), the budget shared among those.
pub fn primitives_of_ops(
    prims: &[&'static Primitive],
    libraries: &[Library],
    sizes: &[Bytes],
    threads: usize,
    budget: Seconds,
    keep: impl Fn(Op) -> bool,
) -> PrimitivePlan {
    let mut items = Vec::new();
    for &p in prims {
        for &library in libraries {
            for &op in p.class.ops().iter().filter(|&&op| keep(op)) {
                // Per-operation primitives (ML-KEM, ML-DSA) have no block size.
                let sizes = if p.class.per_operation() { &[Bytes(0)][..] } else { sizes };
                for &bytes in sizes {
                    items.push(PrimitiveItem {
                        primitive: p,
                        library,
                        op,
                        bytes,
                    });
                }
            }
        }
    }
    // Racing gets a fifth of the budget. Primitive samples are short (10 ms) and
    // many (at least 30): a median over many short samples shrugs off another
    // process's burst, which a single long average (openssl speed) absorbs.
    let shared = share(Seconds(budget.0 * 0.8), items.len());
    let sampler = SamplerConfig {
        sample_time: Seconds(shared.sample_time.0.min(0.01)),
        min_samples: 30,
        // The whole share: a median over a longer window is steadier from run
        // to run (`openssl speed` likewise runs for all of its -seconds).
        min_time: shared.budget,
        // One thread: bytes per CPU second of the measuring thread, like `openssl
        // speed` without -elapsed, so another process's load does not move the
        // figure. Several threads: aggregate throughput over wall time.
        basis: if threads == 1 { Basis::Cpu } else { Basis::Wall },
        // Batches (`measure::primitives`) sample for all of their time, where one
        // contiguous run used to stop about a tenth early: 90% of the share keeps
        // a default `speed` run as long as it was.
        budget: Seconds(shared.budget.0 * 0.9),
        ..shared
    };
    PrimitivePlan {
        items,
        threads,
        sampler,
        budget,
        min_batches: 0,
        floor_until: None,
    }
}

/// One input of the `file` benchmark.
#[derive(Debug, Clone)]
pub struct FileInput {
    pub path: std::path::PathBuf,
    /// What reports call it: the path as typed, or `generated-100M`.
    pub label: String,
    pub size: u64,
    /// SHA-256 of the contents, to verify every decryption.
    pub sha256: [u8; 32],
}

/// Every input × cipher × operation, each repeated `reps` times.
#[derive(Debug, Clone)]
pub struct FilePlan {
    pub inputs: Vec<FileInput>,
    pub primitives: Vec<&'static Primitive>,
    pub mode: crate::measure::file::IoMode,
    pub reps: usize,
    pub via_openssl_cli: bool,
    pub chunk: usize,
    pub password: Option<String>,
    pub pbkdf2_iterations: usize,
    /// Private directory for outputs; removed when the run ends.
    pub workdir: std::path::PathBuf,
    /// `--budget`: fewer repetitions when they do not fit (none: exactly `reps`).
    pub budget: Option<Seconds>,
}

impl FilePlan {
    /// One warm-up pass (the sampler's calibration) then exactly `reps` passes.
    pub fn sampler(&self) -> SamplerConfig {
        SamplerConfig {
            warmup: Seconds(0.0),
            sample_time: Seconds(0.0),
            min_samples: self.reps,
            max_samples: self.reps,
            precision: 0.0,
            min_time: Seconds(0.0),
            budget: Seconds(f64::MAX / 4.0),
            max_units: 1,
            basis: Basis::Wall,
            slice: SamplerConfig::default().slice,
        }
    }
}

/// The study's ciphers and modes, plus today's defaults for comparison.
pub const DEFAULT_FILE_CIPHERS: [&str; 11] = [
    "des-ecb",
    "des-cbc",
    "rc2-ecb",
    "rc2-cbc",
    "bf-ecb",
    "bf-cbc",
    "aes-256-ecb",
    "aes-256-cbc",
    "aes-256-ctr",
    "aes-256-gcm",
    "chacha20-poly1305",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::primitive::lookup;

    #[test]
    fn plan_covers_ops_and_sizes_within_budget() {
        let prims = [lookup("aes-128-gcm").unwrap(), lookup("sha256").unwrap()];
        let sizes = [Bytes(16), Bytes(16384)];
        let plan = primitives(&prims, &[Library::DEFAULT], &sizes, 1, Seconds(6.0));
        // gcm: encrypt+decrypt x 2 sizes, sha256: digest x 2 sizes
        assert_eq!(plan.items.len(), 6);
        assert!((plan.sampler.budget.0 * 6.0) <= 6.0 * 0.8 + 1e-9);
        assert_eq!(plan.items[0].op, Op::Encrypt);
        assert_eq!(plan.items[5].op, Op::Digest);
    }

    /// ML-KEM and ML-DSA get one item per operation, whatever the sizes.
    #[test]
    fn per_operation_primitives_ignore_sizes() {
        let prims = [
            lookup("ml-kem-768").unwrap(),
            lookup("ml-dsa-65").unwrap(),
            lookup("sha256").unwrap(),
        ];
        let sizes = [Bytes(16), Bytes(1024), Bytes(16384)];
        let plan = primitives(&prims, &[Library::DEFAULT], &sizes, 1, Seconds(6.0));
        let ops: Vec<&str> = plan.items.iter().map(|i| i.op.as_str()).collect();
        assert_eq!(
            ops,
            ["keygen", "encaps", "decaps", "keygen", "sign", "verify", "digest", "digest", "digest"]
        );
        assert!(plan.items[..6].iter().all(|i| i.bytes == Bytes(0)));
    }

    #[test]
    fn shares_are_clamped() {
        assert_eq!(share(Seconds(1000.0), 2).budget, Seconds(MAX_PER_SUBJECT));
        assert_eq!(share(Seconds(1.0), 1000).budget, Seconds(MIN_PER_SUBJECT));
    }
}
