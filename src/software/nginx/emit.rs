//! nginx (ngx_http_ssl_module; `ssl_conf_command` needs nginx 1.19.4 and OpenSSL 1.1.1).

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
