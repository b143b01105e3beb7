//! `list tls --lib LIB` for a library other than the system OpenSSL: what the
//! library's own configuration text resolves to (GnuTLS's priority string), or
//! the suites and groups it implements (rustls), graded. Looking only, no
//! measuring; the library lists itself through its `TlsLibrary`.

use crate::backend::tls::ListedSuite;
use crate::catalog::Library;
use crate::error::UsageError;
use anyhow::Result;
use serde_json::json;

/// What the library's own text resolves to, like `gnutls-cli --priority X -l`:
/// suites (IANA and the library's names, code, minimum protocol, Kx/Enc/Mac,
/// grade), protocols, groups and signature algorithms.
pub(super) fn list(json_out: bool, lib: Library, priority: Option<&str>, grades: &crate::judge::Grader) -> Result<()> {
    let tls = crate::backend::libraries::tls(lib)?;
    let Some(listing) = tls.native_listing(priority) else {
        if priority.is_some() {
            return Err(UsageError::Invalid(format!(
                "--priority is a library's own configuration text: use `list tls {} --priority ...`",
                crate::backend::libraries::native_libs()
            ))
            .into());
        }
        return list_library(json_out, lib, grades);
    };
    let l = listing?;
    let title = crate::backend::libraries::entry(lib).title;
    let domain = |s: &ListedSuite| match s.protocol {
        crate::backend::openssl::tls::Protocol::Tls13 => crate::judge::Domain::Tls13Suite,
        _ => crate::judge::Domain::Tls12Suite,
    };
    if json_out {
        let mut v = json!({
            "library": lib.as_str(),
            "version": l.version,
        });
        let suites: Vec<_> = l
            .suites
            .iter()
            .map(|s| {
                let mut m = serde_json::Map::new();
                m.insert("code".into(), json!(s.code));
                m.insert("iana".into(), json!(s.iana));
                m.insert(lib.as_str().into(), json!(s.name));
                m.insert("min_protocol".into(), json!(s.min_protocol));
                m.insert("kx".into(), json!(s.kx));
                m.insert("cipher".into(), json!(s.cipher));
                m.insert("mac".into(), json!(s.mac));
                m.insert("grade".into(), json!(grades.grade(domain(s), &s.iana)));
                serde_json::Value::Object(m)
            })
            .collect();
        if let Some(m) = v.as_object_mut() {
            m.insert(l.text_is.into(), json!(l.text));
            m.insert("suites".into(), json!(suites));
            m.insert("protocols".into(), json!(l.protocols));
            m.insert("groups".into(), json!(l.groups));
            m.insert("signatures".into(), json!(l.signatures));
        }
        return crate::report::print(&serde_json::to_vec_pretty(&v)?);
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    let mut header: Vec<String> = ["code", "IANA", title, "min", "Kx", "Enc", "Mac"].map(String::from).to_vec();
    header.extend(grades.headers());
    t.set_header(header);
    for s in &l.suites {
        let mut row = vec![
            s.code.clone(),
            s.iana.clone(),
            s.name.clone(),
            s.min_protocol.clone(),
            if s.kx.is_empty() { "any".into() } else { s.kx.clone() },
            s.cipher.clone(),
            s.mac.clone(),
        ];
        row.extend(grades.cells(domain(s), &s.iana));
        t.add_row(row);
    }
    let out = format!(
        "{title} {} · {} '{}' · {} suites\n{t}\nProtocols: {}\nGroups: {}\nSignatures: {}\n",
        l.version,
        l.text_is,
        l.text,
        l.suites.len(),
        l.protocols.join(", "),
        l.groups.join(", "),
        l.signatures.join(", ")
    );
    crate::report::print_text(&out)
}

/// The suites and groups a library implements, as the library itself lists them,
/// graded (TLS 1.3 suites first, as the library orders them).
fn list_library(json_out: bool, lib: Library, grades: &crate::judge::Grader) -> Result<()> {
    let tls = crate::backend::libraries::tls(lib)?;
    let domain = |iana: &str| {
        if iana.starts_with("TLS_AES_") || iana.starts_with("TLS_CHACHA20_") {
            crate::judge::Domain::Tls13Suite
        } else {
            crate::judge::Domain::Tls12Suite
        }
    };
    let (suites, groups) = (tls.suites(), tls.groups());
    if json_out {
        let v = json!({
            "library": lib.as_str(),
            "version": tls.version(),
            "suites": suites.iter().map(|s| json!({"iana": s, "grade": grades.grade(domain(s), s)})).collect::<Vec<_>>(),
            "groups": groups,
        });
        return crate::report::print(&serde_json::to_vec_pretty(&v)?);
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    let mut header = vec!["IANA".to_string()];
    header.extend(grades.headers());
    t.set_header(header);
    for s in &suites {
        let mut row = vec![s.clone()];
        row.extend(grades.cells(domain(s), s));
        t.add_row(row);
    }
    let out = format!("{} · {} suites\n{t}\nGroups: {}\n", tls.version(), suites.len(), groups.join(", "));
    crate::report::print_text(&out)
}
