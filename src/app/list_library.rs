//! `list tls --lib LIB` for a library other than the system OpenSSL: what a
//! GnuTLS priority string resolves to, or the suites and groups another library
//! implements (rustls), graded. Looking only, no measuring.

use crate::backend::gnutls::library::code_text;
use crate::backend::gnutls::library::names as gnutls_names;
use crate::backend::gnutls::session::{Priority, PriorityError, SuiteInfo};
use crate::catalog::Library;
use crate::error::UsageError;
use anyhow::{bail, Result};
use serde_json::json;

/// What a priority string resolves to, like `gnutls-cli --priority X -l`: suites
/// (IANA and GnuTLS names, code, minimum protocol, Kx/Enc/Mac, grade), protocols,
/// groups and signature algorithms.
pub(super) fn list(json_out: bool, lib: Library, priority: Option<&str>, grades: &crate::judge::Grader) -> Result<()> {
    if crate::backend::libraries::native_text(lib).is_none() {
        if priority.is_some() {
            return Err(UsageError::Invalid(format!(
                "--priority is a library's own configuration text: use `list tls {} --priority ...`",
                crate::backend::libraries::native_libs()
            ))
            .into());
        }
        return list_library(json_out, lib, grades);
    }
    let text = priority.unwrap_or("NORMAL");
    let p = match Priority::new(text) {
        Ok(p) => p,
        Err(e @ PriorityError::Syntax { .. }) => return Err(UsageError::Invalid(format!("invalid --priority: {e}")).into()),
        Err(PriorityError::Library(e)) => bail!("GnuTLS is unavailable: {e}"),
    };
    let names = gnutls_names()?;
    let version = crate::backend::gnutls::version()?;
    let domain = |s: &SuiteInfo| {
        if s.min_version == "TLS1.3" {
            crate::judge::Domain::Tls13Suite
        } else {
            crate::judge::Domain::Tls12Suite
        }
    };
    let suites = p.suites();
    if json_out {
        let v = json!({
            "library": "gnutls",
            "version": version,
            "priority": text,
            "suites": suites.iter().map(|s| json!({
                "code": code_text(s.code),
                "iana": names.iana_of(s),
                "gnutls": s.name,
                "min_protocol": s.min_version,
                "kx": s.kx,
                "cipher": s.cipher,
                "mac": s.mac,
                "grade": grades.grade(domain(s), &names.iana_of(s)),
            })).collect::<Vec<_>>(),
            "protocols": p.protocols(),
            "groups": p.groups(),
            "signatures": p.signatures(),
        });
        return crate::report::print(&serde_json::to_vec_pretty(&v)?);
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    let mut header: Vec<String> = ["code", "IANA", "GnuTLS", "min", "Kx", "Enc", "Mac"].map(String::from).to_vec();
    header.extend(grades.headers());
    t.set_header(header);
    for s in &suites {
        let iana = names.iana_of(s);
        let mut row = vec![
            code_text(s.code),
            iana.clone(),
            s.name.clone(),
            s.min_version.clone(),
            if s.kx.is_empty() { "any".into() } else { s.kx.clone() },
            s.cipher.clone(),
            s.mac.clone(),
        ];
        row.extend(grades.cells(domain(s), &iana));
        t.add_row(row);
    }
    let out = format!(
        "GnuTLS {version} · priority '{text}' · {} suites\n{t}\nProtocols: {}\nGroups: {}\nSignatures: {}\n",
        suites.len(),
        p.protocols().join(", "),
        p.groups().join(", "),
        p.signatures().join(", ")
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
