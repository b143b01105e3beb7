//! The host fingerprint that goes with every run: the same numbers mean different
//! things on a CPU with and without AES instructions.

use crate::model::Host;
use std::collections::BTreeMap;

/// CPU flags that change which crypto code paths OpenSSL takes.
const X86_FLAGS: &[&str] = &[
    "aes",
    "pclmulqdq",
    "ssse3",
    "avx",
    "avx2",
    "avx512f",
    "vaes",
    "vpclmulqdq",
    "sha_ni",
];
const ARM_FLAGS: &[&str] = &["aes", "pmull", "sha1", "sha2", "sha512", "sha3", "asimd"];

/// Reads the fingerprint from /proc and uname.
pub fn fingerprint() -> Host {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let (cpu_model, cpu_flags) = parse_cpuinfo(&cpuinfo, std::env::consts::ARCH);
    Host {
        cpu_model,
        cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        cpu_flags,
        kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        arch: std::env::consts::ARCH.to_string(),
        hostname: read_trimmed("/proc/sys/kernel/hostname"),
    }
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Model name and the crypto-relevant flags from /proc/cpuinfo text.
pub fn parse_cpuinfo(text: &str, arch: &str) -> (String, Vec<String>) {
    let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once(':') {
            fields.entry(k.trim()).or_insert(v.trim());
        }
    }
    let model = ["model name", "Model", "Hardware", "cpu model", "CPU part"]
        .iter()
        .find_map(|k| fields.get(k).filter(|v| !v.is_empty()))
        .map(|s| s.to_string())
        .unwrap_or_else(|| "unknown".into());
    let (raw, wanted) = if arch.starts_with("aarch64") || arch.starts_with("arm") {
        (fields.get("Features").copied().unwrap_or(""), ARM_FLAGS)
    } else {
        (fields.get("flags").copied().unwrap_or(""), X86_FLAGS)
    };
    let present: Vec<&str> = raw.split_whitespace().collect();
    let flags = wanted.iter().filter(|f| present.contains(f)).map(|f| f.to_string()).collect();
    (model, flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_x86_cpuinfo() {
        let text = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu sse2 ssse3 aes pclmulqdq avx avx2 sha_ni vaes\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n";
        let (model, flags) = parse_cpuinfo(text, "x86_64");
        assert_eq!(model, "AMD EPYC 7B13");
        assert_eq!(flags, ["aes", "pclmulqdq", "ssse3", "avx", "avx2", "vaes", "sha_ni"]);
    }

    #[test]
    fn parses_arm_cpuinfo() {
        let text = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\nCPU part\t: 0xd0c\n";
        let (model, flags) = parse_cpuinfo(text, "aarch64");
        assert_eq!(model, "0xd0c");
        assert_eq!(flags, ["aes", "pmull", "sha1", "sha2", "asimd"]);
    }

    #[test]
    fn this_host_has_a_fingerprint() {
        let h = fingerprint();
        assert!(h.cores >= 1);
        assert_ne!(h.kernel, "");
    }
}
