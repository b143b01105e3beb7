//! The system OpenSSL defaults: what a program gets when it sets nothing. Debian's
//! `openssl.cnf` can set `CipherString`, `Ciphersuites`, `MinProtocol` and `Groups`
//! in its `system_default` section (reached through `openssl_conf` → `ssl_conf`);
//! `openssl ciphers -s -stdname -v` with no list prints what that resolves to.
//! [`resolve`] is also how every OpenSSL cipher string here becomes a suite list:
//! OpenSSL's own parser, never a re-implementation.

use crate::discover::installed::{self as inst, read_config, run, Config, Directive, Installed, Parsed, TlsConfig};
use anyhow::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};

pub const DEFAULT_FILE: &str = "/etc/ssl/openssl.cnf";

/// One suite a configuration offers, in its order.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct OfferedSuite {
    pub iana: String,
    pub openssl: String,
    /// The oldest protocol that can use it (`TLSv1`, `TLSv1.2`, `TLSv1.3`).
    pub min_protocol: String,
}

impl OfferedSuite {
    pub fn tls13(&self) -> bool {
        self.min_protocol == "TLSv1.3"
    }
}

/// Lines of `openssl ciphers -stdname -v`.
pub fn parse_ciphers(text: &str) -> Vec<OfferedSuite> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // IANA - OPENSSL PROTOCOL Kx= Au= Enc= Mac=
            if f.len() < 4 || f[1] != "-" {
                return None;
            }
            Some(OfferedSuite {
                iana: f[0].to_string(),
                openssl: f[2].to_string(),
                min_protocol: if f[3] == "SSLv3" { "TLSv1".into() } else { f[3].to_string() },
            })
        })
        .collect()
}

/// What OpenSSL makes of a cipher string and a TLS 1.3 suite list (`None`: the
/// defaults), in order, only the suites it can actually use (`-s`).
pub fn resolve(cipher_string: Option<&str>, ciphersuites: Option<&str>) -> Result<Vec<OfferedSuite>> {
    let mut args = vec!["ciphers", "-s", "-stdname", "-v"];
    if let Some(cs) = ciphersuites {
        args.extend(["-ciphersuites", cs]);
    }
    if let Some(s) = cipher_string {
        // A configuration's cipher string may start with '-': after `--` it is
        // never an option of `openssl ciphers`.
        args.extend(["--", s]);
    }
    let inst::Ran { ok, out, err, .. } = run("openssl", &args)?;
    if !ok {
        anyhow::bail!(
            "OpenSSL refuses the cipher list `{}`{}: {}",
            cipher_string.unwrap_or("DEFAULT"),
            ciphersuites.map(|c| format!(" / TLS 1.3 `{c}`")).unwrap_or_default(),
            refusal(&err)
        );
    }
    Ok(parse_ciphers(&out))
}

/// What `openssl ciphers` said when it refused a list: its first line and the
/// library's reason (`Error in cipher list: no cipher match`).
fn refusal(err: &str) -> String {
    let first = err.lines().next().unwrap_or("").trim();
    // `40779B99E47F0000:error:0A0000B9:SSL routines:SSL_CTX_set_cipher_list:no cipher match:../ssl/ssl_lib.c:2741:`
    let reason = err.lines().find_map(|l| l.split(':').nth(5).filter(|_| l.contains(":error:")));
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) if r != first => format!("{first}: {r}"),
        _ => first.to_string(),
    }
}

/// `key = value` pairs of one `[section]` of an OpenSSL config, with line numbers.
fn section<'a>(text: &'a str, name: &str) -> Vec<(usize, &'a str, &'a str)> {
    let mut inside = false;
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.split('#').next().unwrap_or("").trim();
        if let Some(s) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            inside = s.trim() == name;
            continue;
        }
        if inside {
            if let Some((k, v)) = t.split_once('=') {
                out.push((i + 1, k.trim(), v.trim()));
            }
        }
    }
    out
}

/// The `system_default` section's name and its (line, key, value) entries.
/// `(line, key, value)` entries of a section.
pub type Entries = Vec<(usize, String, String)>;

pub fn system_default(text: &str) -> Option<(String, Entries)> {
    let top = |k: &str| {
        text.lines().take_while(|l| !l.trim_start().starts_with('[')).find_map(|l| {
            let (a, b) = l.split('#').next()?.split_once('=')?;
            (a.trim() == k).then(|| b.trim().to_string())
        })
    };
    let init = top("openssl_conf")?;
    let ssl = section(text, &init).into_iter().find(|(_, k, _)| *k == "ssl_conf")?.2.to_string();
    let sd = section(text, &ssl)
        .into_iter()
        .find(|(_, k, _)| *k == "system_default")?
        .2
        .to_string();
    let entries = section(text, &sd)
        .into_iter()
        .map(|(n, k, v)| (n, k.to_string(), v.to_string()))
        .collect();
    Some((sd, entries))
}

/// The client defaults from an `openssl.cnf` text.
pub fn from_text(file: &Path, text: &str) -> Parsed {
    let mut notes = Vec::new();
    let mut config = TlsConfig {
        server: false,
        ..Default::default()
    };
    let mut directives = Vec::new();
    let mut insert_at = None;
    let lines: Vec<&str> = text.lines().collect();
    match system_default(text) {
        Some((name, entries)) => {
            let get = |k: &str| {
                entries
                    .iter()
                    .find(|(_, key, _)| key.eq_ignore_ascii_case(k))
                    .map(|(_, _, v)| v.clone())
            };
            config.cipher_string = get("CipherString");
            config.ciphersuites = get("Ciphersuites");
            config.groups = get("Groups").or_else(|| get("Curves"));
            let (min, max) = (get("MinProtocol"), get("MaxProtocol"));
            if min.is_some() || max.is_some() {
                config.protocols = Some(inst::version_range(min.as_deref(), max.as_deref()));
            }
            for (n, k, _) in &entries {
                directives.push(Directive {
                    keyword: k.to_ascii_lowercase(),
                    file: file.to_path_buf(),
                    line: *n,
                    text: lines[n - 1].to_string(),
                });
            }
            insert_at = entries
                .last()
                .map(|(n, _, _)| *n)
                .or_else(|| lines.iter().position(|l| l.trim() == format!("[{name}]")).map(|p| p + 1));
        }
        None => notes.push(format!(
            "{} has no system_default section: OpenSSL's built-in defaults apply",
            file.display()
        )),
    }
    Parsed::new(config, directives, insert_at, notes)
}

/// The configuration file read when none is given: `$OPENSSL_CONF`, else [`DEFAULT_FILE`].
pub fn default_file() -> PathBuf {
    std::env::var_os("OPENSSL_CONF")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_FILE))
}

pub fn read(config_from: Option<&Path>) -> Result<Option<Installed>> {
    let file = config_from.map(Path::to_path_buf).unwrap_or_else(default_file);
    if !file.exists() && config_from.is_none() {
        return Ok(Some(
            Installed::new("openssl", None, "OpenSSL's built-in defaults", Config::Tls(TlsConfig::default()))
                .with_notes(vec![format!("{} does not exist", file.display())]),
        ));
    }
    let text = read_config(&file)?;
    let source = format!("{} (system_default) and `openssl ciphers -s`", file.display());
    Ok(Some(from_text(&file, &text).installed("openssl", Some(file), source)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Debian's openssl.cnf with a hardening section, as admins write it.
    const CNF: &str = "openssl_conf = openssl_init\n\n[openssl_init]\nproviders = provider_sect\nssl_conf = ssl_sect\n\n[provider_sect]\ndefault = default_sect\n\n[ssl_sect]\nsystem_default = system_default_sect\n\n[system_default_sect]\nMinProtocol = TLSv1.2\nCipherString = DEFAULT@SECLEVEL=2\n";

    #[test]
    fn reads_system_default() {
        let Parsed {
            config: c,
            directives: d,
            insert_at: at,
            notes,
        } = from_text(Path::new("/etc/ssl/openssl.cnf"), CNF);
        assert_eq!(c.cipher_string.as_deref(), Some("DEFAULT@SECLEVEL=2"));
        assert_eq!(c.protocols, Some(vec!["TLSv1.2".to_string(), "TLSv1.3".to_string()]));
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].keyword.as_str(), d[0].line), ("minprotocol", 14));
        assert_eq!(at, Some(15));
        assert!(notes.is_empty());
        let Parsed { config: c, notes, .. } = from_text(Path::new("/x"), "openssl_conf = init\n[init]\n");
        assert_eq!(c.cipher_string, None);
        assert_eq!(notes.len(), 1);
    }

    /// The real `openssl ciphers`: a legacy list keeps its order; a bad one is refused.
    #[test]
    fn real_openssl_resolves_strings() {
        let s = resolve(
            Some("ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256"),
            Some("TLS_AES_128_GCM_SHA256"),
        )
        .unwrap();
        let names: Vec<&str> = s.iter().map(|x| x.iana.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "TLS_AES_128_GCM_SHA256",
                "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
            ]
        );
        assert!(s[0].tls13());
        assert_eq!(s[1].openssl, "ECDHE-RSA-AES128-SHA");
        let e = resolve(Some("NO-SUCH-CIPHER"), None).unwrap_err();
        assert!(format!("{e}").contains("NO-SUCH-CIPHER"), "{e}");
        let system = resolve(None, None).unwrap();
        assert!(system.iter().any(|x| x.tls13()));
    }
}
