//! `list`: what exists here, with grades.

use super::grader;
use crate::discover::{self, cpucaps};
use crate::measure::primitive;
use crate::options::{CommonOptions, ListOptions, ListWhat};
use crate::report;
use anyhow::Result;
use serde_json::json;

pub(super) fn list(c: &CommonOptions, a: &ListOptions) -> Result<()> {
    let grades = grader(c)?;
    match a.what {
        ListWhat::Primitives => {
            let infos = discover::primitives::primitives(a.library);
            if c.json {
                let v: Vec<_> = infos
                    .iter()
                    .map(|i| {
                        json!({
                            "algorithm": i.primitive.name,
                            "class": i.primitive.class.label(),
                            "legacy_provider": i.legacy,
                            "default_set": i.primitive.default,
                            "available": matches!(i.availability, primitive::Availability::Available(_)),
                            "reason": match &i.availability { primitive::Availability::Unavailable(w) => Some(w.clone()), _ => None },
                            "key_bits": i.key_bits,
                            "block_bytes": i.block_bytes,
                            "grade": grades.grade(crate::judge::Domain::Primitive, i.primitive.name),
                        })
                    })
                    .collect();
                return report::print(&serde_json::to_vec_pretty(&v)?);
            }
            let mut t = comfy_table::Table::new();
            t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
            let mut header: Vec<String> = ["algorithm", "class", "key bits", "block", "status"].map(String::from).to_vec();
            header.extend(grades.headers());
            t.set_header(header);
            for i in &infos {
                let status = match &i.availability {
                    primitive::Availability::Available(_) if i.legacy => "available (legacy provider)".to_string(),
                    primitive::Availability::Available(_) => "available".to_string(),
                    primitive::Availability::Unavailable(why) => why.clone(),
                };
                let mut row = vec![
                    i.primitive.name.to_string(),
                    i.primitive.class.label().to_string(),
                    i.key_bits.map(|b| b.to_string()).unwrap_or_default(),
                    i.block_bytes.map(|b| b.to_string()).unwrap_or_default(),
                    status,
                ];
                row.extend(grades.cells(crate::judge::Domain::Primitive, i.primitive.name));
                t.add_row(row);
            }
            let out = format!("{}\n{t}\n", discover::primitives::version_line(a.library));
            report::print_text(&out)
        }
        ListWhat::Ssh => super::list_ssh::list(c.json, &grades),
        ListWhat::Tls if a.library != primitive::Library::DEFAULT || a.priority.is_some() => {
            super::list_library::list(c.json, a.library, a.priority.as_deref(), &grades)
        }
        ListWhat::Tls => list_tls(c, &grades),
        ListWhat::CpuCaps => {
            let mut s = String::new();
            for cap in cpucaps::all() {
                s.push_str(&format!("{:<11} {}\n", cap.name, cap.help));
            }
            report::print_text(&s)
        }
    }
}

/// `list tls`: the NZBGet write-up's first step (`openssl ciphers -v`), with grades.
fn list_tls(c: &CommonOptions, grades: &crate::judge::Grader) -> Result<()> {
    let suites = discover::openssl::tls_suites()?;
    let domain = |s: &discover::openssl::TlsSuiteInfo| match s.min_protocol.as_str() {
        "TLSv1.3" => crate::judge::Domain::Tls13Suite,
        _ => crate::judge::Domain::Tls12Suite,
    };
    if c.json {
        let v: Vec<_> = suites
            .iter()
            .map(|s| json!({"suite": s, "grade": grades.grade(domain(s), &s.iana)}))
            .collect();
        return report::print(&serde_json::to_vec_pretty(&v)?);
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    let mut header: Vec<String> = ["code", "IANA", "OpenSSL", "min", "Kx", "Au", "Enc", "Mac"]
        .map(String::from)
        .to_vec();
    header.extend(grades.headers());
    t.set_header(header);
    for s in &suites {
        let mut row = vec![
            s.code.clone(),
            s.iana.clone(),
            s.openssl.clone(),
            s.min_protocol.clone(),
            s.kx.clone(),
            s.au.clone(),
            s.enc.clone(),
            s.mac.clone(),
        ];
        row.extend(grades.cells(domain(s), &s.iana));
        t.add_row(row);
    }
    let out = format!("{} · {} suites\n{t}\n", crate::backend::openssl::runtime_version(), suites.len());
    report::print_text(&out)
}
