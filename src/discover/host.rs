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

/// Reads the fingerprint from /proc and uname. On ARM the crypto flags come from the
/// auxiliary vector (`getauxval(AT_HWCAP)`, what the kernel, and OpenSSL itself,
/// go by; under qemu-user it is the emulated CPU's, while /proc/cpuinfo is the
/// host's and has no `Features` line), with /proc/cpuinfo's `Features` as the
/// fallback when the vector says nothing.
pub fn fingerprint() -> Host {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let (cpu_model, mut cpu_flags) = parse_cpuinfo(&cpuinfo, std::env::consts::ARCH);
    if let Some(flags) = arm_hwcap_flags() {
        cpu_flags = flags;
    }
    Host {
        cpu_model,
        cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        cpu_flags,
        kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        arch: std::env::consts::ARCH.to_string(),
        hostname: read_trimmed("/proc/sys/kernel/hostname"),
    }
}

/// aarch64's `AT_HWCAP` bits (the kernel's `arch/arm64/include/uapi/asm/hwcap.h`) for
/// the flags in [`ARM_FLAGS`], named as /proc/cpuinfo's `Features` names them.
const AARCH64_HWCAP: &[(&str, u64)] = &[
    ("asimd", 1 << 1),
    ("aes", 1 << 3),
    ("pmull", 1 << 4),
    ("sha1", 1 << 5),
    ("sha2", 1 << 6),
    ("sha3", 1 << 17),
    ("sha512", 1 << 21),
];

/// 32-bit ARM: NEON in `AT_HWCAP` (bit 12, named `neon` there; OpenSSL's NEON paths,
/// as aarch64's `asimd`), the ARMv8 crypto extensions in `AT_HWCAP2`
/// (`arch/arm/include/uapi/asm/hwcap.h`).
const ARM32_HWCAP: &[(&str, u64)] = &[("asimd", 1 << 12)];
const ARM32_HWCAP2: &[(&str, u64)] = &[("aes", 1 << 0), ("pmull", 1 << 1), ("sha1", 1 << 2), ("sha2", 1 << 3)];

/// The crypto flags set in the auxiliary vector's `hwcap` and `hwcap2` words of
/// `arch`, in [`ARM_FLAGS`]' order; `None` off ARM, or when both words are 0 (no
/// vector: the caller falls back to /proc/cpuinfo).
pub fn decode_arm_hwcap(arch: &str, hwcap: u64, hwcap2: u64) -> Option<Vec<String>> {
    let set: Vec<&str> = if arch.starts_with("aarch64") {
        AARCH64_HWCAP.iter().filter(|(_, bit)| hwcap & bit != 0).map(|(n, _)| *n).collect()
    } else if arch.starts_with("arm") {
        ARM32_HWCAP
            .iter()
            .filter(|(_, bit)| hwcap & bit != 0)
            .chain(ARM32_HWCAP2.iter().filter(|(_, bit)| hwcap2 & bit != 0))
            .map(|(n, _)| *n)
            .collect()
    } else {
        return None;
    };
    if hwcap == 0 && hwcap2 == 0 {
        return None;
    }
    Some(ARM_FLAGS.iter().filter(|f| set.contains(f)).map(|f| f.to_string()).collect())
}

/// This process's ARM crypto flags from its auxiliary vector; `None` off ARM or
/// without one.
fn arm_hwcap_flags() -> Option<Vec<String>> {
    let arch = std::env::consts::ARCH;
    if !(arch.starts_with("aarch64") || arch.starts_with("arm")) {
        return None;
    }
    // SAFETY: getauxval has no preconditions; an absent entry reads as 0.
    let (hwcap, hwcap2) = unsafe { (libc::getauxval(libc::AT_HWCAP), libc::getauxval(libc::AT_HWCAP2)) };
    // c_ulong is 32 bits on 32-bit ARM: the cast widens there.
    #[allow(clippy::unnecessary_cast)]
    let (hwcap, hwcap2) = (hwcap as u64, hwcap2 as u64);
    decode_arm_hwcap(arch, hwcap, hwcap2)
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
    let arm = arch.starts_with("aarch64") || arch.starts_with("arm");
    let named = ["model name", "Model", "Hardware", "cpu model"]
        .iter()
        .find_map(|k| fields.get(k).filter(|v| !v.is_empty()))
        .map(|s| s.to_string());
    let model = if arm && fields.contains_key("vendor_id") && !fields.contains_key("CPU implementer") {
        // Under qemu-user the kernel's /proc/cpuinfo is the x86 host's: its model is
        // not this process's CPU, and a fleet must not class the emulated arm64 host
        // with the x86 machine it runs on.
        format!(
            "{arch} CPU, emulated (the kernel's /proc/cpuinfo describes {})",
            named.as_deref().unwrap_or("another architecture")
        )
    } else if arm {
        arm_core(fields.get("CPU implementer").copied(), fields.get("CPU part").copied())
            .or(named)
            .unwrap_or_else(|| "unknown".into())
    } else {
        named.unwrap_or_else(|| "unknown".into())
    };
    let (raw, wanted) = if arm {
        (fields.get("Features").copied().unwrap_or(""), ARM_FLAGS)
    } else {
        (fields.get("flags").copied().unwrap_or(""), X86_FLAGS)
    };
    let present: Vec<&str> = raw.split_whitespace().collect();
    let flags = wanted.iter().filter(|f| present.contains(f)).map(|f| f.to_string()).collect();
    (model, flags)
}

/// ARM cores by /proc/cpuinfo's `CPU implementer` and `CPU part` (the MIDR fields;
/// Linux's `arch/arm64/include/asm/cputype.h`): the ones ARM servers, boards and
/// NAS boxes use. Named with the numbers, so two cores never read alike; an
/// unknown part reads as its numbers.
const ARM_CORES: &[(&str, &str, &str)] = &[
    ("0x41", "0xd03", "Cortex-A53"),
    ("0x41", "0xd04", "Cortex-A35"),
    ("0x41", "0xd05", "Cortex-A55"),
    ("0x41", "0xd07", "Cortex-A57"),
    ("0x41", "0xd08", "Cortex-A72"),
    ("0x41", "0xd09", "Cortex-A73"),
    ("0x41", "0xd0a", "Cortex-A75"),
    ("0x41", "0xd0b", "Cortex-A76"),
    ("0x41", "0xd0c", "Neoverse-N1"),
    ("0x41", "0xd0d", "Cortex-A77"),
    ("0x41", "0xd40", "Neoverse-V1"),
    ("0x41", "0xd41", "Cortex-A78"),
    ("0x41", "0xd44", "Cortex-X1"),
    ("0x41", "0xd46", "Cortex-A510"),
    ("0x41", "0xd47", "Cortex-A710"),
    ("0x41", "0xd49", "Neoverse-N2"),
    ("0x41", "0xd4f", "Neoverse-V2"),
    ("0x41", "0xd80", "Cortex-A520"),
    ("0x41", "0xd81", "Cortex-A720"),
    ("0x41", "0xd8e", "Neoverse-N3"),
    ("0xc0", "0xac3", "Ampere-1"),
    ("0x61", "0x022", "Apple M1 Icestorm"),
    ("0x61", "0x023", "Apple M1 Firestorm"),
];

/// An ARM core's name from its implementer and part, with the numbers; `None`
/// without a part.
fn arm_core(implementer: Option<&str>, part: Option<&str>) -> Option<String> {
    let part = part?.trim().to_ascii_lowercase();
    let implementer = implementer.unwrap_or("").trim().to_ascii_lowercase();
    let name = ARM_CORES
        .iter()
        .find(|(i, p, _)| *i == implementer && *p == part)
        .map(|(_, _, n)| *n);
    Some(match (name, implementer.is_empty()) {
        (Some(n), _) => format!("{n} ({implementer}/{part})"),
        (None, false) => format!("ARM implementer {implementer} part {part}"),
        (None, true) => format!("ARM part {part}"),
    })
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
        let text = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";
        let (model, flags) = parse_cpuinfo(text, "aarch64");
        assert_eq!(model, "Neoverse-N1 (0x41/0xd0c)");
        assert_eq!(flags, ["aes", "pmull", "sha1", "sha2", "asimd"]);
        // A Raspberry Pi 4: a Cortex-A72 without the crypto extensions.
        let pi4 = "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\nHardware\t: BCM2835\nModel\t: Raspberry Pi 4 Model B Rev 1.4\n";
        let (model, flags) = parse_cpuinfo(pi4, "aarch64");
        assert_eq!(model, "Cortex-A72 (0x41/0xd08)");
        assert_eq!(flags, ["asimd"]);
        // A part not in the table reads as its numbers, never as another core.
        let other = "CPU implementer\t: 0x48\nCPU part\t: 0xd01\n";
        assert_eq!(parse_cpuinfo(other, "aarch64").0, "ARM implementer 0x48 part 0xd01");
    }

    #[test]
    fn an_arm_process_under_qemu_does_not_take_the_x86_hosts_model() {
        // qemu-user passes the x86 host's /proc/cpuinfo through.
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu aes avx2\n";
        let (model, flags) = parse_cpuinfo(x86, "aarch64");
        assert_eq!(model, "aarch64 CPU, emulated (the kernel's /proc/cpuinfo describes AMD EPYC 7B13)");
        assert!(flags.is_empty(), "{flags:?}: x86 flags are not ARM features");
        // The same text on x86 is the host itself.
        assert_eq!(parse_cpuinfo(x86, "x86_64").0, "AMD EPYC 7B13");
    }

    #[test]
    fn aarch64_hwcap_bits_decode_to_the_features_names() {
        // A Cortex-A72 with the crypto extensions (AWS Graviton 1): fp asimd evtstrm
        // aes pmull sha1 sha2 crc32 cpuid, as its /proc/cpuinfo says.
        let a72 = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 11);
        assert_eq!(
            decode_arm_hwcap("aarch64", a72, 0).unwrap(),
            ["aes", "pmull", "sha1", "sha2", "asimd"]
        );
        // A Raspberry Pi 4 (Cortex-A72 without them): fp asimd evtstrm crc32 cpuid.
        let pi4 = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 7) | (1 << 11);
        assert_eq!(decode_arm_hwcap("aarch64", pi4, 0).unwrap(), ["asimd"]);
        // Neoverse V1 adds sha3 (bit 17) and sha512 (bit 21).
        let v1 = a72 | (1 << 17) | (1 << 21);
        assert_eq!(
            decode_arm_hwcap("aarch64", v1, 0).unwrap(),
            ["aes", "pmull", "sha1", "sha2", "sha512", "sha3", "asimd"]
        );
        // Each flag is its own bit: aes alone is aes alone.
        assert_eq!(decode_arm_hwcap("aarch64", 1 << 3, 0).unwrap(), ["aes"]);
        assert_eq!(decode_arm_hwcap("aarch64", 1 << 4, 0).unwrap(), ["pmull"]);
        assert_eq!(decode_arm_hwcap("aarch64", 1 << 6, 0).unwrap(), ["sha2"]);
    }

    #[test]
    fn arm32_reads_neon_from_hwcap_and_the_crypto_extensions_from_hwcap2() {
        assert_eq!(
            decode_arm_hwcap("arm", 1 << 12, 0b1111).unwrap(),
            ["aes", "pmull", "sha1", "sha2", "asimd"]
        );
        // The same bits in the other word mean something else: hwcap's bit 0 is swp.
        assert_eq!(decode_arm_hwcap("arm", 0b1111, 0).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn no_vector_or_not_arm_falls_back_to_cpuinfo() {
        assert_eq!(decode_arm_hwcap("aarch64", 0, 0), None);
        assert_eq!(decode_arm_hwcap("x86_64", 1 << 3, 0), None);
    }

    #[test]
    fn the_decoded_flags_mask_as_cpuinfo_flags_do() {
        // What the aux vector says feeds `--cpu-caps` as /proc/cpuinfo did: masking AES
        // on an A72 with the extensions leaves NEON and SHA-1/SHA-256.
        let flags = decode_arm_hwcap("aarch64", (1 << 1) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6), 0).unwrap();
        let caps = crate::discover::cpucaps::parse("no-aesni").unwrap();
        let (var, value) = crate::discover::cpucaps::environment(&caps, "aarch64", &flags);
        assert_eq!((var.as_str(), value.as_str()), ("OPENSSL_armcap", "0x19"));
    }

    #[test]
    fn this_host_has_a_fingerprint() {
        let h = fingerprint();
        assert!(h.cores >= 1);
        assert_ne!(h.kernel, "");
    }
}
