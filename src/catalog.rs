//! The names of what can be measured: the primitive catalogue (OpenSSL EVP names,
//! their class and operations, the libraries that run them). Pure data: the
//! measurement kind (`measure::primitive`) drives these, reports and plans read
//! them without reaching into `measure/`.

use serde::Serialize;

pub mod kat;

/// The AEAD constructions the catalogue names (the OpenSSL engine builds them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AeadKind {
    Gcm,
    Ccm,
    Ocb,
    ChaChaPoly,
}

/// What sort of primitive, and how it is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Cipher,
    Aead(AeadKind),
    Digest,
    /// HMAC over the named digest.
    Hmac(&'static str),
    /// A TLS 1.2 CBC record: HMAC over the named digest, then CBC encryption of
    /// data || MAC || padding with a fresh IV (MAC-then-encrypt, as in AES128-SHA).
    CbcHmac(&'static str),
    Poly1305,
    /// A key-encapsulation mechanism (ML-KEM), by OpenSSL's key type name:
    /// per-operation figures (keygen, encaps, decaps), no block sizes.
    Kem(&'static str),
    /// A signature scheme (ML-DSA), by OpenSSL's key type name: keygen, sign,
    /// verify per operation.
    Signature(&'static str),
}

impl Class {
    pub fn label(self) -> &'static str {
        match self {
            Class::Cipher => "cipher",
            Class::Aead(_) => "aead",
            Class::Digest => "digest",
            Class::Hmac(_) | Class::Poly1305 => "mac",
            Class::CbcHmac(_) => "cipher+mac",
            Class::Kem(_) => "kem",
            Class::Signature(_) => "signature",
        }
    }
    /// Measured per operation (operations per second), not per byte.
    pub fn per_operation(self) -> bool {
        matches!(self, Class::Kem(_) | Class::Signature(_))
    }
    /// The operations measured for this class.
    pub fn ops(self) -> &'static [Op] {
        match self {
            Class::Cipher | Class::Aead(_) | Class::CbcHmac(_) => &[Op::Encrypt, Op::Decrypt],
            Class::Digest => &[Op::Digest],
            Class::Hmac(_) | Class::Poly1305 => &[Op::Mac],
            Class::Kem(_) => &[Op::Keygen, Op::Encaps, Op::Decaps],
            Class::Signature(_) => &[Op::Keygen, Op::Sign, Op::Verify],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Encrypt,
    Decrypt,
    Digest,
    Mac,
    Keygen,
    Encaps,
    Decaps,
    Sign,
    Verify,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Encrypt => "encrypt",
            Op::Decrypt => "decrypt",
            Op::Digest => "digest",
            Op::Mac => "mac",
            Op::Keygen => "keygen",
            Op::Encaps => "encaps",
            Op::Decaps => "decaps",
            Op::Sign => "sign",
            Op::Verify => "verify",
        }
    }
}

/// A library by its `--lib` name (`openssl`, `gnutls`, `rustls`). What each one
/// is, and what it can run, is `backend::libraries`' registry: a name is made
/// there, from a registered library, and nowhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Library(&'static str);

impl Library {
    /// The system OpenSSL: what every measurement uses unless `--lib` says otherwise.
    pub const DEFAULT: Library = Library("openssl");

    /// A registered library's name as a handle (only the registry calls this).
    pub const fn registered(name: &'static str) -> Library {
        Library(name)
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

/// The primitives behind an SSH cipher and MAC (`aes128-gcm@openssh.com` →
/// `aes-128-gcm`; a CTR or CBC cipher with `hmac-sha2-256-etm@openssh.com` →
/// `aes-128-ctr` then `hmac-sha256`). `None` for what the catalogue does not
/// measure (UMAC, HMAC-SHA-512) or an AEAD's absent MAC when one is needed.
pub fn ssh_primitives(cipher: &str, mac: Option<&str>) -> Option<(String, Option<String>)> {
    let c = match cipher {
        "aes128-gcm@openssh.com" => return Some(("aes-128-gcm".into(), None)),
        "aes256-gcm@openssh.com" => return Some(("aes-256-gcm".into(), None)),
        "chacha20-poly1305@openssh.com" => return Some(("chacha20-poly1305".into(), None)),
        "aes128-ctr" | "aes192-ctr" | "aes256-ctr" | "aes128-cbc" | "aes192-cbc" | "aes256-cbc" => {
            format!("aes-{}-{}", &cipher[3..6], &cipher[7..])
        }
        "3des-cbc" => "des-ede3-cbc".to_string(),
        _ => return None,
    };
    let m = match mac?.trim_end_matches("-etm@openssh.com") {
        "hmac-sha1" => "hmac-sha1",
        "hmac-sha2-256" => "hmac-sha256",
        "hmac-md5" => "hmac-md5",
        _ => return None,
    };
    Some((c, Some(m.to_string())))
}

/// One catalogue entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Primitive {
    /// Lower-case OpenSSL EVP name, as typed on the command line.
    pub name: &'static str,
    pub class: Class,
    /// Supplied by OpenSSL 3's legacy provider.
    pub legacy: bool,
    /// Part of the default `speed` set.
    pub default: bool,
}

const fn p(name: &'static str, class: Class, legacy: bool, default: bool) -> Primitive {
    Primitive {
        name,
        class,
        legacy,
        default,
    }
}

use AeadKind::*;
use Class::*;

/// Everything `speed` knows how to measure.
pub const CATALOG: &[Primitive] = &[
    p("aes-128-gcm", Aead(Gcm), false, true),
    p("aes-192-gcm", Aead(Gcm), false, false),
    p("aes-256-gcm", Aead(Gcm), false, true),
    p("aes-128-ccm", Aead(Ccm), false, false),
    p("aes-192-ccm", Aead(Ccm), false, false),
    p("aes-256-ccm", Aead(Ccm), false, false),
    p("aes-128-ocb", Aead(Ocb), false, false),
    p("aes-192-ocb", Aead(Ocb), false, false),
    p("aes-256-ocb", Aead(Ocb), false, false),
    p("chacha20-poly1305", Aead(ChaChaPoly), false, true),
    p("aes-128-ctr", Cipher, false, true),
    p("aes-192-ctr", Cipher, false, false),
    p("aes-256-ctr", Cipher, false, false),
    p("aes-128-cbc", Cipher, false, true),
    p("aes-192-cbc", Cipher, false, false),
    p("aes-256-cbc", Cipher, false, true),
    p("aes-128-ecb", Cipher, false, false),
    p("aes-192-ecb", Cipher, false, false),
    p("aes-256-ecb", Cipher, false, false),
    p("aes-128-xts", Cipher, false, false),
    p("aes-256-xts", Cipher, false, false),
    p("chacha20", Cipher, false, true),
    p("camellia-128-cbc", Cipher, false, false),
    p("camellia-192-cbc", Cipher, false, false),
    p("camellia-256-cbc", Cipher, false, false),
    p("camellia-128-ctr", Cipher, false, false),
    p("camellia-256-ctr", Cipher, false, false),
    p("camellia-128-ecb", Cipher, false, false),
    p("camellia-192-ecb", Cipher, false, false),
    p("camellia-256-ecb", Cipher, false, false),
    p("aria-128-gcm", Aead(Gcm), false, false),
    p("aria-256-gcm", Aead(Gcm), false, false),
    p("aria-128-cbc", Cipher, false, false),
    p("aria-256-cbc", Cipher, false, false),
    p("aria-128-ctr", Cipher, false, false),
    p("aria-128-ecb", Cipher, false, false),
    p("sm4-cbc", Cipher, false, false),
    p("sm4-ctr", Cipher, false, false),
    p("sm4-ecb", Cipher, false, false),
    p("des-ede3-cbc", Cipher, false, true),
    p("des-ede3-ecb", Cipher, false, false),
    p("des-cbc", Cipher, true, false),
    p("des-ecb", Cipher, true, false),
    p("rc4", Cipher, true, false),
    p("rc2-cbc", Cipher, true, false),
    p("rc2-ecb", Cipher, true, false),
    p("bf-cbc", Cipher, true, false),
    p("bf-ecb", Cipher, true, false),
    p("cast5-cbc", Cipher, true, false),
    p("cast5-ecb", Cipher, true, false),
    p("idea-cbc", Cipher, true, false),
    p("idea-ecb", Cipher, true, false),
    p("seed-cbc", Cipher, true, false),
    p("seed-ecb", Cipher, true, false),
    p("md5", Digest, false, false),
    p("sha1", Digest, false, true),
    p("sha224", Digest, false, false),
    p("sha256", Digest, false, true),
    p("sha384", Digest, false, false),
    p("sha512", Digest, false, true),
    p("sha3-256", Digest, false, false),
    p("blake2b512", Digest, false, false),
    p("blake2s256", Digest, false, false),
    p("hmac-md5", Hmac("MD5"), false, false),
    p("hmac-sha1", Hmac("SHA1"), false, false),
    p("hmac-sha256", Hmac("SHA256"), false, true),
    p("poly1305", Poly1305, false, true),
    p("aes-128-cbc-hmac-sha1", CbcHmac("SHA1"), false, false),
    p("aes-128-cbc-hmac-sha256", CbcHmac("SHA256"), false, false),
    // Post-quantum (OpenSSL 3.5 and later): FIPS 203 and FIPS 204.
    p("ml-kem-512", Kem("ML-KEM-512"), false, false),
    p("ml-kem-768", Kem("ML-KEM-768"), false, true),
    p("ml-kem-1024", Kem("ML-KEM-1024"), false, false),
    p("ml-dsa-44", Signature("ML-DSA-44"), false, false),
    p("ml-dsa-65", Signature("ML-DSA-65"), false, true),
    p("ml-dsa-87", Signature("ML-DSA-87"), false, false),
];

/// The cipher inside a composite primitive (`aes-128-cbc-hmac-sha1` → `aes-128-cbc`).
pub fn cipher_part(p: &Primitive) -> &'static str {
    match p.class {
        Class::CbcHmac(_) => &p.name[..p.name.find("-hmac-").unwrap_or(p.name.len())],
        _ => p.name,
    }
}

/// Other spellings users type, mapped to catalogue names.
const ALIASES: &[(&str, &str)] = &[
    ("3des", "des-ede3-cbc"),
    ("des3", "des-ede3-cbc"),
    ("des-ede3", "des-ede3-cbc"),
    ("des", "des-cbc"),
    ("blowfish", "bf-cbc"),
    ("bf", "bf-cbc"),
    ("cast", "cast5-cbc"),
    ("cast5", "cast5-cbc"),
    ("cast-cbc", "cast5-cbc"),
    ("idea", "idea-cbc"),
    ("seed", "seed-cbc"),
    ("rc2", "rc2-cbc"),
    ("sm4", "sm4-cbc"),
    ("aes128", "aes-128-cbc"),
    ("aes256", "aes-256-cbc"),
    ("sha-1", "sha1"),
    ("sha-256", "sha256"),
    ("sha-512", "sha512"),
    ("blake2b", "blake2b512"),
    ("blake2s", "blake2s256"),
    ("hmac(md5)", "hmac-md5"),
    ("hmac(sha1)", "hmac-sha1"),
    ("hmac(sha256)", "hmac-sha256"),
    ("chacha20-poly1305@openssh.com", "chacha20-poly1305"),
    ("mlkem512", "ml-kem-512"),
    ("mlkem768", "ml-kem-768"),
    ("mlkem1024", "ml-kem-1024"),
    ("mldsa44", "ml-dsa-44"),
    ("mldsa65", "ml-dsa-65"),
    ("mldsa87", "ml-dsa-87"),
];

/// Looks a name up, case-insensitively, through the aliases.
pub fn lookup(name: &str) -> Option<&'static Primitive> {
    let lower = name.trim().to_ascii_lowercase();
    let canonical = ALIASES.iter().find(|(alias, _)| *alias == lower).map(|(_, c)| *c).unwrap_or(&lower);
    CATALOG.iter().find(|p| p.name == canonical)
}

/// Every name a user may type (for suggestions).
pub fn known_names() -> impl Iterator<Item = &'static str> {
    CATALOG.iter().map(|p| p.name).chain(ALIASES.iter().map(|(a, _)| *a))
}

// ---------------------------------------------------------------------------
// TLS suite names

/// A TLS suite's names and code (from `data/knowledge/tls_suites.toml`, the same
/// file the security knowledge reads; only the names are read here).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct TlsSuiteName {
    pub iana: String,
    pub openssl: Option<String>,
    #[serde(default)]
    pub openssl_aliases: Vec<String>,
    pub gnutls: Option<String>,
    /// As `openssl ciphers -V` prints it: `0xC0,0x2F`.
    #[serde(default)]
    pub code: String,
}

#[derive(serde::Deserialize)]
struct SuiteNames {
    suite: Vec<TlsSuiteName>,
}

/// Every TLS suite the knowledge base names.
pub fn tls_suite_names() -> &'static [TlsSuiteName] {
    static NAMES: std::sync::OnceLock<Vec<TlsSuiteName>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        toml::from_str::<SuiteNames>(include_str!("../data/knowledge/tls_suites.toml"))
            .map(|n| n.suite)
            .unwrap_or_default()
    })
}

/// A TLS suite by IANA, OpenSSL (current or old) or GnuTLS name, case-insensitively,
/// or by its code written as `0xC0,0x2F`.
pub fn tls_suite_name(name: &str) -> Option<&'static TlsSuiteName> {
    let n = name.trim();
    let code = |c: &str| -> Option<Vec<u8>> {
        let b: Option<Vec<u8>> = c
            .split(',')
            .map(|p| {
                p.trim()
                    .strip_prefix("0x")
                    .filter(|h| h.len() == 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
            })
            .collect();
        b.filter(|b| b.len() == 2 || b.len() == 3)
    };
    let all = tls_suite_names();
    all.iter()
        .find(|s| {
            let others = s.openssl.iter().chain(s.openssl_aliases.iter()).chain(s.gnutls.iter());
            s.iana.eq_ignore_ascii_case(n) || others.into_iter().any(|o| o.eq_ignore_ascii_case(n))
        })
        .or_else(|| {
            let want = code(n)?;
            all.iter().find(|s| code(&s.code).as_ref() == Some(&want))
        })
}
