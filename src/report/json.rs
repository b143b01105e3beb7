//! The `cipherbench/1` JSON document.

use crate::model::Document;

pub fn render(doc: &Document) -> anyhow::Result<Vec<u8>> {
    let mut v = serde_json::to_vec_pretty(doc)?;
    v.push(b'\n');
    Ok(v)
}
