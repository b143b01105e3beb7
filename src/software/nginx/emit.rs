//! nginx (ngx_http_ssl_module; `ssl_conf_command` needs nginx 1.19.4 and OpenSSL 1.1.1).

use crate::discover::installed::TlsConfig;
use crate::recommend::choice::{server_protocol_name, Choice, Emitter};

pub struct Nginx;

impl Emitter for Nginx {
    fn target(&self) -> &'static str {
        "nginx"
    }
    fn location(&self) -> &'static str {
        "nginx.conf (http or server block)"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Tls(t) = choice else { return None };
        let protocols: Vec<String> = t.protocols.iter().map(|p| server_protocol_name(p)).collect();
        let mut out = vec![format!("ssl_protocols {};", protocols.join(" "))];
        if !t.tls12.is_empty() {
            out.push(format!("ssl_ciphers {};", t.openssl_tls12()));
        }
        out.extend(t.groups_line("ssl_ecdh_curve", " ", ";", " (auto)"));
        if t.has("TLSv1.3") {
            out.push(format!("ssl_conf_command Ciphersuites {};", t.openssl_tls13()));
        }
        out.push("ssl_prefer_server_ciphers on;".into());
        Some(out)
    }
}

/// The installed configuration's TLS values as nginx directives, for a private
/// instance of it: every value `read.rs` read, the defaults it resolved included.
pub fn installed_lines(t: &TlsConfig) -> Vec<String> {
    // A value with blanks needs quotes; nginx takes `!`, `:` and `+` bare.
    let value = |v: &str| {
        if v.contains(char::is_whitespace) {
            format!("\"{}\"", v.replace('"', ""))
        } else {
            v.to_string()
        }
    };
    let mut out = Vec::new();
    if let Some(p) = t.protocols.as_ref().filter(|p| !p.is_empty()) {
        out.push(format!("ssl_protocols {};", p.join(" ")));
    }
    if let Some(c) = &t.cipher_string {
        out.push(format!("ssl_ciphers {};", value(c)));
    }
    if let Some(g) = &t.groups {
        out.push(format!("ssl_ecdh_curve {};", value(g)));
    }
    if let Some(c) = &t.ciphersuites {
        out.push(format!("ssl_conf_command Ciphersuites {};", value(c)));
    }
    out.push(format!("ssl_prefer_server_ciphers {};", if t.server_order { "on" } else { "off" }));
    out
}
