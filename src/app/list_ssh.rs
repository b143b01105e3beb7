//! `list ssh`: the inventory of the local OpenSSH (what the client and the
//! private daemon support), graded. Looking only, no measuring.

use crate::discover::openssh::OpenSsh;
use anyhow::Result;
use serde_json::json;
use std::path::PathBuf;

/// `list ssh`: what the local OpenSSH supports.
pub(super) fn list(json_out: bool, grades: &crate::judge::Grader) -> Result<()> {
    let o = crate::discover::openssh::discover()?;
    let sshd = crate::discover::openssh::find_sshd();
    if json_out {
        return list_json(&o, &sshd, grades);
    }
    let mut s = format!(
        "{}
",
        o.version
    );
    match &sshd {
        Ok(p) => s.push_str(&format!(
            "sshd: {} (private loopback daemon available)
\n",
            p.display()
        )),
        Err(e) => s.push_str(&format!("sshd: {e}\n\n")),
    }
    let t = algorithm_table(&o, grades);
    s.push_str(&format!("{t}\n"));
    s.push_str(&format!(
        "  {} ciphers ({} AEAD) × {} MACs × {} kex: the decomposed sweep measures {} bulk subjects and {} handshakes; --full-matrix measures {}.\n",
        o.ciphers.len(),
        o.aead.len(),
        o.macs.len(),
        o.kex.len(),
        (o.ciphers.len() - o.aead.len()) * o.macs.len() + o.aead.len(),
        o.kex.len() * crate::discover::openssh::DEFAULT_HOSTKEYS.len(),
        ((o.ciphers.len() - o.aead.len()) * o.macs.len() + o.aead.len()) * o.kex.len(),
    ));
    crate::report::write_output(std::path::Path::new("-"), s.as_bytes())
}

/// The JSON form of `list ssh`.
fn list_json(o: &OpenSsh, sshd: &Result<PathBuf>, grades: &crate::judge::Grader) -> Result<()> {
    use crate::judge::Domain;
    let serve = o.private_hostkeys();
    let graded: Vec<_> = [
        (Domain::SshCipher, &o.ciphers),
        (Domain::SshMac, &o.macs),
        (Domain::SshKex, &o.kex),
        (Domain::SshHostkey, &o.hostkey_algorithms),
    ]
    .iter()
    .flat_map(|(d, names)| {
        names
            .iter()
            .map(move |n| json!({"domain": d, "name": n, "grade": grades.grade(*d, n)}))
    })
    .collect();
    let v = json!({
        "version": o.version,
        "ssh": o.ssh,
        "sshd": sshd.as_ref().ok(),
        "sshd_error": sshd.as_ref().err().map(|e| e.to_string()),
        "ciphers": o.ciphers.iter().map(|c| json!({"name": c, "aead": o.is_aead(c)})).collect::<Vec<_>>(),
        "macs": o.macs,
        "kex": o.kex,
        "keys": o.keys,
        "hostkey_algorithms": o.hostkey_algorithms,
        "private_sshd_hostkeys": serve,
        "grades": graded,
    });
    crate::report::write_output(std::path::Path::new("-"), &serde_json::to_vec_pretty(&v)?)
}

/// The graded table of every algorithm the local OpenSSH offers.
fn algorithm_table(o: &OpenSsh, grades: &crate::judge::Grader) -> comfy_table::Table {
    use crate::judge::Domain;
    let serve = o.private_hostkeys();
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    let mut header: Vec<String> = ["kind", "algorithm", "note"].map(String::from).to_vec();
    header.extend(grades.headers());
    t.set_header(header);
    let mut row = |kind: &str, d: Domain, name: &str, note: &str| {
        let mut r = vec![kind.to_string(), name.to_string(), note.to_string()];
        r.extend(grades.cells(d, name));
        t.add_row(r);
    };
    for c in &o.ciphers {
        row(
            "cipher",
            Domain::SshCipher,
            c,
            if o.is_aead(c) { "AEAD: MAC implicit" } else { "needs a MAC" },
        );
    }
    for m in &o.macs {
        row("mac", Domain::SshMac, m, if m.contains("-etm@") { "encrypt-then-MAC" } else { "" });
    }
    for k in &o.kex {
        row("kex", Domain::SshKex, k, "");
    }
    for h in &o.hostkey_algorithms {
        row(
            "hostkey",
            Domain::SshHostkey,
            h,
            if serve.contains(h) { "served by the private sshd" } else { "" },
        );
    }
    t
}
