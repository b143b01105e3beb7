//! Which catalogue primitives a library can run here, and why not (`list
//! primitives --lib`): each registered library answers for itself
//! (`backend::libraries::fetch`), with its key and block sizes where it has them.

use crate::backend::libraries;
use crate::backend::primitives::Availability;
use crate::catalog::{Library, Primitive, CATALOG};

/// One catalogue entry as a library here sees it.
pub struct PrimitiveInfo {
    pub primitive: &'static Primitive,
    pub availability: Availability,
    /// Supplied by the default library's legacy provider (the catalogue's
    /// `legacy` flag is about the default library, OpenSSL 3).
    pub legacy: bool,
    pub key_bits: Option<usize>,
    pub block_bytes: Option<usize>,
}

/// Every catalogue primitive with its availability in `lib`.
pub fn primitives(lib: Library) -> Vec<PrimitiveInfo> {
    CATALOG
        .iter()
        .map(|p| {
            let availability = libraries::fetch(p, lib);
            let (key_bits, block_bytes) = match &availability {
                Availability::Available(s) => (s.key_bits(), s.block_bytes()),
                Availability::Unavailable(_) => (None, None),
            };
            PrimitiveInfo {
                primitive: p,
                availability,
                legacy: p.legacy && lib == Library::DEFAULT,
                key_bits,
                block_bytes,
            }
        })
        .collect()
}

/// The library and its version, as the page's first line (`OpenSSL 3.5.1 1 Jul
/// 2025`, `gnutls 3.8.9`), or why it cannot be loaded.
pub fn version_line(lib: Library) -> String {
    let e = libraries::entry(lib);
    match (e.version)() {
        Ok(v) if v.to_ascii_lowercase().starts_with(e.name) => v,
        Ok(v) => format!("{} {v}", e.name),
        Err(err) => format!("{}: unavailable ({err:#})", e.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every registered library lists the whole catalogue, some of it available,
    /// each unavailable entry with its reason; only the default library's
    /// entries come from a legacy provider.
    #[test]
    fn every_library_lists_the_catalogue_with_reasons() {
        for e in libraries::ALL {
            let lib = libraries::named(e.name).unwrap();
            let infos = primitives(lib);
            assert_eq!(infos.len(), CATALOG.len());
            let available = infos
                .iter()
                .filter(|i| matches!(i.availability, Availability::Available(_)))
                .count();
            assert!(available > 0, "{}", e.name);
            for i in &infos {
                if let Availability::Unavailable(why) = &i.availability {
                    assert!(!why.trim().is_empty(), "{} {}", e.name, i.primitive.name);
                }
                assert!(!i.legacy || lib == Library::DEFAULT);
            }
            assert!(version_line(lib).to_ascii_lowercase().starts_with(e.name), "{}", version_line(lib));
        }
    }
}
