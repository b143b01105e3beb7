//! Reading a `cipherbench/1` document exported on another machine: bounded in
//! size, of the right schema, and with figures that are physically possible.

use crate::model::{Document, SCHEMA};
use anyhow::{bail, Context, Result};
use std::path::Path;

/// The largest export `compare` reads: a real one is well under 1 MiB, so this
/// bounds only what a hostile or broken file can make it allocate.
pub const MAX_EXPORT_BYTES: u64 = 64 << 20;

/// Reads a `cipherbench/1` JSON document written by `--export-json` or `--json`.
/// A file over [`MAX_EXPORT_BYTES`], or one that is not a regular file, is refused
/// before it is read; the rest is streamed, so memory does not follow its size.
pub fn load_json(path: &Path) -> Result<Document> {
    use std::io::Read;
    let shown = crate::untrusted::shown(&path.display().to_string()).into_owned();
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {shown}"))?;
    if !meta.is_file() {
        bail!("{shown} is not a regular file");
    }
    if meta.len() > MAX_EXPORT_BYTES {
        bail!(
            "{shown} is {} bytes, over the {} MiB an export may have: refused unread",
            meta.len(),
            MAX_EXPORT_BYTES >> 20
        );
    }
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {shown}"))?;
    let mut limited = std::io::BufReader::new(file).take(MAX_EXPORT_BYTES + 1);
    let doc: Document = serde_json::from_reader(&mut limited)
        .with_context(|| format!("{shown} is not a cipherbench JSON document (write one with --export-json)"))?;
    if limited.limit() == 0 {
        bail!("{shown} grew past {} MiB while it was read: refused", MAX_EXPORT_BYTES >> 20);
    }
    if doc.schema != SCHEMA {
        bail!(
            "{shown} has schema '{}', expected '{SCHEMA}'",
            crate::untrusted::shown(&crate::untrusted::bounded(&doc.schema, 100))
        );
    }
    // The figures another machine wrote: each finite, positive and possible.
    if let Err(why) = crate::plausible::check_records(&doc.results) {
        bail!("{shown}: {why}: refused (see docs/json-schema.md, \"Figures read back\")");
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::compare::tests::doc;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 200, ..Default::default() })]

        /// A real export cut, flipped or spliced anywhere is read or refused with
        /// an error, never a panic; what is read has the right schema.
        #[test]
        fn a_mutated_export_is_read_or_refused(
            cut in proptest::prelude::any::<usize>(),
            flips in proptest::collection::vec((proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>()), 0..8),
        ) {
            let mut bytes = serde_json::to_vec_pretty(&doc("r1", "h", 1e9, 0.02)).unwrap();
            for (at, b) in flips {
                let i = at % bytes.len();
                bytes[i] = b;
            }
            bytes.truncate(bytes.len() - cut % (bytes.len() / 4 + 1));
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join("x.json");
            std::fs::write(&f, &bytes).unwrap();
            if let Ok(d) = load_json(&f) {
                proptest::prop_assert_eq!(d.schema, SCHEMA);
            }
        }
    }

    #[test]
    fn an_export_over_the_limit_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("big.json");
        let file = std::fs::File::create(&f).unwrap();
        file.set_len(MAX_EXPORT_BYTES + 1).unwrap();
        let e = format!("{:#}", load_json(&f).unwrap_err());
        assert!(e.contains("over the 64 MiB"), "{e}");
        let e = format!("{:#}", load_json(dir.path()).unwrap_err());
        assert!(e.contains("not a regular file"), "{e}");
    }
}
