//! What the system OpenSSL offers: its runtime version and which catalogue
//! primitives it can run (and why not).

use crate::backend::openssl::{legacy_provider, runtime_version, LegacyProvider};
use crate::measure::primitive::{fetch, Availability, Fetched, Primitive, CATALOG};
use std::collections::BTreeMap;

/// One catalogue entry as this OpenSSL sees it.
pub struct PrimitiveInfo {
    pub primitive: &'static Primitive,
    pub availability: Availability,
    pub key_bits: Option<usize>,
    pub block_bytes: Option<usize>,
}

/// Every catalogue primitive with its availability here.
pub fn primitives() -> Vec<PrimitiveInfo> {
    CATALOG
        .iter()
        .map(|p| {
            let availability = fetch(p);
            let (key_bits, block_bytes) = match &availability {
                Availability::Available(Fetched::Cipher(c)) => (Some(c.key_length() * 8), Some(c.block_size())),
                Availability::Available(Fetched::Digest(m)) => (None, Some(m.block_size())),
                _ => (None, None),
            };
            PrimitiveInfo {
                primitive: p,
                availability,
                key_bits,
                block_bytes,
            }
        })
        .collect()
}

/// Library name -> runtime version, for the run record.
pub fn libraries() -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert("openssl".to_string(), runtime_version());
    m.insert(
        "openssl-legacy-provider".to_string(),
        match legacy_provider() {
            LegacyProvider::Loaded => "loaded".to_string(),
            LegacyProvider::NotLoaded(why) => format!("not loaded: {why}"),
        },
    );
    m.insert("cipherbench".to_string(), env!("CARGO_PKG_VERSION").to_string());
    m
}
