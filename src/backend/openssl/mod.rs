//! The system OpenSSL (libcrypto/libssl), through the `openssl` crate.

pub mod certs;
pub mod engine;
mod ffi;
pub mod kat;
pub mod library;
pub mod mac;
pub mod pq;
pub mod pqwork;
pub mod primitives;
pub mod record;
pub mod tls;
pub mod transport;
pub mod work;

use openssl::provider::Provider;
use std::sync::OnceLock;

/// Result of trying to load OpenSSL 3's legacy provider (RC4, RC2, DES, Blowfish,
/// CAST5, IDEA, SEED live there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LegacyProvider {
    Loaded,
    NotLoaded(String),
}

struct Providers {
    _legacy: Option<Provider>,
    _default: Option<Provider>,
    state: LegacyProvider,
}

// SAFETY: OSSL_PROVIDER handles are reference-counted and thread-safe in OpenSSL 3;
// we only hold them to keep the providers loaded for the life of the process.
unsafe impl Send for Providers {}
unsafe impl Sync for Providers {}

static PROVIDERS: OnceLock<Providers> = OnceLock::new();

/// Loads the legacy provider next to the default one, once per process.
pub fn legacy_provider() -> &'static LegacyProvider {
    &PROVIDERS
        .get_or_init(|| {
            if std::env::var_os("CIPHERBENCH_NO_LEGACY").is_some() {
                return Providers {
                    _legacy: None,
                    _default: None,
                    state: LegacyProvider::NotLoaded("disabled by CIPHERBENCH_NO_LEGACY".into()),
                };
            }
            // Loading any provider explicitly stops the default one from being
            // loaded implicitly, so load both.
            match Provider::try_load(None, "legacy", true) {
                Ok(p) => Providers {
                    _default: Provider::try_load(None, "default", true).ok(),
                    _legacy: Some(p),
                    state: LegacyProvider::Loaded,
                },
                Err(e) => Providers {
                    _legacy: None,
                    _default: None,
                    state: LegacyProvider::NotLoaded(first_error(&e)),
                },
            }
        })
        .state
}

/// The runtime version string of libcrypto, e.g. "OpenSSL 3.0.19 27 Jan 2026".
pub fn runtime_version() -> String {
    openssl::version::version().to_string()
}

/// The first reason in an OpenSSL error stack, for messages users read.
pub fn first_error(e: &openssl::error::ErrorStack) -> String {
    e.errors()
        .first()
        .and_then(|err| err.reason().map(str::to_string))
        .unwrap_or_else(|| e.to_string())
}

/// Checks that the process's OpenSSL works at all before anything uses it: that
/// its default library context gives random numbers and SHA-256 and AES-128-GCM.
/// An `OPENSSL_CONF` that loads only the null provider, or a provider that fails
/// to load, leaves it with none: that is said here, naming the configuration
/// file, instead of failing (or panicking) in the middle of a run. Asked once,
/// before the legacy provider is loaded (loading it loads the default provider
/// explicitly, which would hide a configuration that loads none).
pub fn usable() -> anyhow::Result<()> {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    let checked = CHECKED.get_or_init(|| {
        let mut r = [0u8; 16];
        let failed = openssl::rand::rand_bytes(&mut r)
            .map_err(|e| ("random numbers", e))
            .and_then(|()| openssl::hash::hash(openssl::hash::MessageDigest::sha256(), b"").map_err(|e| ("SHA-256", e)))
            .and_then(|_| {
                openssl::symm::encrypt_aead(
                    openssl::symm::Cipher::aes_128_gcm(),
                    &[0; 16],
                    Some(&[0; 12]),
                    &[],
                    b"",
                    &mut [0; 16],
                )
                .map_err(|e| ("AES-128-GCM", e))
            });
        match failed {
            Ok(_) => Ok(()),
            Err((what, e)) => {
                let conf = match std::env::var_os("OPENSSL_CONF") {
                    Some(c) => format!(
                        "the OpenSSL configuration {} (OPENSSL_CONF)",
                        crate::untrusted::shown(&c.to_string_lossy())
                    ),
                    None => format!("the system's OpenSSL configuration (in {})", openssl_dir()),
                };
                Err(format!(
                    "{} offers no {what} here ({}): {conf} loads no provider that works (only the null provider, \
                     or one that fails to load); unset OPENSSL_CONF or fix that file",
                    runtime_version(),
                    crate::untrusted::shown(&first_error(&e))
                ))
            }
        }
    });
    checked.clone().map_err(anyhow::Error::msg)
}

/// Where libcrypto looks for its configuration (`openssl version -d`).
fn openssl_dir() -> String {
    let d = openssl::version::dir();
    d.strip_prefix("OPENSSLDIR: ").unwrap_or(d).trim_matches('"').to_string()
}

/// Fills `buf` with random bytes: OpenSSL's, or the kernel's when OpenSSL has
/// none (a broken configuration, see [`usable`]). For benchmark data, keys of
/// throw-away measurements and run ids, which need to differ, not to be secret:
/// this never fails.
pub fn random_bytes(buf: &mut [u8]) {
    if openssl::rand::rand_bytes(buf).is_ok() {
        return;
    }
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: the pointer and length describe `rest`, a live, writable slice.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n > 0 {
            filled += n as usize;
        } else if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        } else {
            break;
        }
    }
    // No kernel source either: a generator seeded from the clock and the pid.
    let mut x = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ (u64::from(std::process::id()) << 32)
        | 1;
    for b in &mut buf[filled..] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
}
