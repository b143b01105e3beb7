//! `--cpu-caps`: measure as if the CPU lacked some instructions.
//!
//! libcrypto reads `OPENSSL_ia32cap` (x86) or `OPENSSL_armcap` (ARM) once, when it
//! is loaded, so the only honest way to mask features is to set the variable and
//! re-execute ourselves. The child marks itself with `CIPHERBENCH_CPU_CAPS` so it
//! does not loop.

use crate::error::UsageError;

/// A feature that can be masked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cap {
    pub name: &'static str,
    pub help: &'static str,
    /// x86: bits to clear in the first and second 64-bit words of OPENSSL_ia32cap.
    x86: (u64, u64),
    /// ARM: bits to clear in OPENSSL_armcap.
    arm: u32,
}

const CAPS: &[Cap] = &[
    Cap {
        name: "no-aesni",
        help: "no AES instructions and no carry-less multiply (AES-NI, PCLMULQDQ, VAES, VPCLMULQDQ; ARMv8 AES and PMULL)",
        x86: ((1 << 57) | (1 << 33), (1 << 41) | (1 << 42)),
        arm: (1 << 2) | (1 << 5),
    },
    Cap {
        name: "no-pclmul",
        help: "no carry-less multiply (GHASH falls back to tables)",
        x86: (1 << 33, 1 << 42),
        arm: 1 << 5,
    },
    Cap {
        name: "no-avx",
        help: "no AVX (and so no AVX2/AVX-512 paths)",
        x86: (1 << 60, (1 << 5) | 0xC023_0000),
        arm: 0,
    },
    Cap {
        name: "no-avx2",
        help: "no AVX2",
        x86: (0, 1 << 5),
        arm: 0,
    },
    Cap {
        name: "no-avx512",
        help: "no AVX-512 (F, DQ, IFMA, BW, VL)",
        x86: (0, 0xC023_0000),
        arm: 0,
    },
    Cap {
        name: "no-shani",
        help: "no SHA extensions (SHA-NI; ARMv8 SHA1/SHA2/SHA512)",
        x86: (0, 1 << 29),
        arm: (1 << 3) | (1 << 4) | (1 << 6),
    },
    Cap {
        name: "no-ssse3",
        help: "no SSSE3 (vector-permute AES and ChaCha paths)",
        x86: (1 << 41, 0),
        arm: 0,
    },
];

pub const MARKER: &str = "CIPHERBENCH_CPU_CAPS";

pub fn all() -> &'static [Cap] {
    CAPS
}

/// Parses `no-aesni,no-avx2`.
pub fn parse(spec: &str) -> Result<Vec<Cap>, UsageError> {
    let mut out = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let lower = part.to_ascii_lowercase();
        match CAPS.iter().find(|c| c.name == lower) {
            Some(c) => out.push(*c),
            None => return Err(UsageError::unknown("CPU capability", part, CAPS.iter().map(|c| c.name))),
        }
    }
    if out.is_empty() {
        return Err(UsageError::Invalid("--cpu-caps needs at least one of: ".to_string() + &names()));
    }
    Ok(out)
}

fn names() -> String {
    CAPS.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
}

/// The environment variable and value that mask `caps` on this architecture.
/// `arm_features` are the current ARM feature flags (from the host fingerprint).
pub fn environment(caps: &[Cap], arch: &str, arm_features: &[String]) -> (String, String) {
    if arch.starts_with("aarch64") || arch.starts_with("arm") {
        let mut current: u32 = 0;
        for (flag, bit) in [
            ("asimd", 0),
            ("aes", 2),
            ("sha1", 3),
            ("sha2", 4),
            ("pmull", 5),
            ("sha512", 6),
            ("sha3", 11),
        ] {
            if arm_features.iter().any(|f| f == flag) {
                current |= 1 << bit;
            }
        }
        let clear = caps.iter().fold(0u32, |m, c| m | c.arm);
        ("OPENSSL_armcap".into(), format!("0x{:x}", current & !clear))
    } else {
        let (a, b) = caps.iter().fold((0u64, 0u64), |(a, b), c| (a | c.x86.0, b | c.x86.1));
        ("OPENSSL_ia32cap".into(), format!("~0x{a:x}:~0x{b:x}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_aesni_mask_matches_openssl_documentation() {
        // OpenSSL's own docs disable AES-NI and PCLMULQDQ with ~0x200000200000000.
        let caps = parse("no-aesni").unwrap();
        let (var, value) = environment(&caps, "x86_64", &[]);
        assert_eq!(var, "OPENSSL_ia32cap");
        assert_eq!(value, "~0x200000200000000:~0x60000000000");
    }

    #[test]
    fn arm_mask_clears_aes_and_pmull_only() {
        let feats: Vec<String> = ["asimd", "aes", "pmull", "sha2"].iter().map(|s| s.to_string()).collect();
        let (var, value) = environment(&parse("no-aesni").unwrap(), "aarch64", &feats);
        assert_eq!(var, "OPENSSL_armcap");
        assert_eq!(value, "0x11");
    }

    #[test]
    fn unknown_caps_are_refused_with_a_suggestion() {
        let e = parse("no-aesnl").unwrap_err().to_string();
        assert!(e.contains("no-aesni"), "{e}");
        assert!(parse("").is_err());
        assert_eq!(parse("no-avx2, NO-SHANI").unwrap().len(), 2);
    }
}
