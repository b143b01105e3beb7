//! CSV: one row per result. Columns come from the serde model itself (nested
//! `subject` fields are flattened), so the CSV can never drift from the JSON.

use crate::model::Document;
use serde_json::{Map, Value};

fn flatten(prefix: &str, v: &Value, out: &mut Map<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() || prefix == "subject" {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

pub fn render(doc: &Document) -> anyhow::Result<Vec<u8>> {
    let mut rows = Vec::new();
    let mut columns: Vec<String> = vec!["run_id".into()];
    for r in &doc.results {
        let mut flat = Map::new();
        flat.insert("run_id".into(), Value::String(doc.run.id.clone()));
        let v = serde_json::to_value(r)?;
        if let Value::Object(m) = v {
            for (k, v) in m {
                let prefix = if k == "subject" { "subject".to_string() } else { k.clone() };
                match v {
                    Value::Object(_) => flatten(&prefix, &v, &mut flat),
                    other => {
                        flat.insert(k, other);
                    }
                }
            }
        }
        for k in flat.keys() {
            if !columns.contains(k) {
                columns.push(k.clone());
            }
        }
        rows.push(flat);
    }
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(&columns)?;
    for row in rows {
        w.write_record(columns.iter().map(|c| match row.get(c) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
        }))?;
    }
    Ok(w.into_inner()?)
}
