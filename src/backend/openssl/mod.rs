//! The system OpenSSL (libcrypto/libssl), through the `openssl` crate.

pub mod certs;
pub mod engine;
mod ffi;
pub mod library;
pub mod mac;
pub mod pq;
pub mod record;
pub mod tls;
pub mod transport;

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
