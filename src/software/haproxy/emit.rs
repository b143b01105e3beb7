//! HAProxy `global` section (bind side; `haproxy -c` of Debian 12's HAProxy 2.6
//! accepts every line, `ssl-default-bind-curves` included).

use crate::discover::installed::TlsConfig;
use crate::recommend::choice::{Choice, Emitter};

pub struct Haproxy;

impl Emitter for Haproxy {
    fn target(&self) -> &'static str {
        "haproxy"
    }
    fn location(&self) -> &'static str {
        "haproxy.cfg, global section"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Tls(t) = choice else { return None };
        let mut out = Vec::new();
        if !t.tls12.is_empty() {
            out.push(format!("ssl-default-bind-ciphers {}", t.openssl_tls12()));
        }
        if t.has("TLSv1.3") {
            out.push(format!("ssl-default-bind-ciphersuites {}", t.openssl_tls13()));
        }
        out.extend(t.groups_line("ssl-default-bind-curves", " ", "", ""));
        let mut options = Vec::new();
        if let Some(min) = t.min_protocol() {
            options.push(format!("ssl-min-ver {}", min));
        }
        if let Some(max) = t.protocols.last() {
            options.push(format!("ssl-max-ver {}", max));
        }
        options.push("no-tls-tickets".into());
        out.push(format!("ssl-default-bind-options {}", options.join(" ")));
        Some(out)
    }
}

/// The installed configuration's TLS values (as `read.rs` read them) in HAProxy's
/// own syntax, for a private instance of it: the order the server keeps included.
pub fn installed_lines(t: &TlsConfig) -> Vec<String> {
    let protocols = t.protocols.as_deref().filter(|p| !p.is_empty());
    let mut out = Vec::new();
    out.extend(t.cipher_string.as_ref().map(|c| format!("ssl-default-bind-ciphers {c}")));
    out.extend(t.ciphersuites.as_ref().map(|c| format!("ssl-default-bind-ciphersuites {c}")));
    out.extend(t.groups.as_ref().map(|g| format!("ssl-default-bind-curves {g}")));
    // HAProxy spells TLS 1.0 `TLSv1.0`.
    let v = |p: &String| if p == "TLSv1" { "TLSv1.0".to_string() } else { p.clone() };
    let mut options = Vec::new();
    if let Some(p) = protocols {
        options.push(format!("ssl-min-ver {} ssl-max-ver {}", v(&p[0]), v(&p[p.len() - 1])));
    }
    if !t.server_order {
        options.push("prefer-client-ciphers".to_string());
    }
    if !options.is_empty() {
        out.push(format!("ssl-default-bind-options {}", options.join(" ")));
    }
    out
}
