//! Apache httpd mod_ssl.

use crate::recommend::choice::{server_protocol_name, Choice, Emitter};

pub struct Apache;

impl Emitter for Apache {
    fn target(&self) -> &'static str {
        "apache"
    }
    fn location(&self) -> &'static str {
        "httpd.conf / ssl.conf (server config or <VirtualHost>)"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Tls(t) = choice else { return None };
        let protocols: Vec<String> = t.protocols.iter().map(|p| format!("+{}", server_protocol_name(p))).collect();
        let mut out = vec![format!("SSLProtocol -all {}", protocols.join(" "))];
        if !t.tls12.is_empty() {
            out.push(format!("SSLCipherSuite {}", t.openssl_tls12()));
        }
        if t.has("TLSv1.3") {
            out.push(format!("SSLCipherSuite TLSv1.3 {}", t.openssl_tls13()));
        }
        out.extend(t.groups_line("SSLOpenSSLConfCmd Curves", " ", "", ""));
        out.push("SSLHonorCipherOrder on".into());
        Some(out)
    }
}
