//! Property tests for every config reader: random bytes, and random mutations of
//! real-looking files (cut anywhere, braces, quotes, escapes, includes, NUL and
//! bidi characters spliced in), never panic and never take long. A config file is
//! input the tool did not write.

use crate::discover::installed::*;
use crate::software::{apache::read as apache, gnutls::read as gnutls, haproxy::read as haproxy, nginx::read as nginx};
use crate::software::{nzbget::read as nzbget, openssl::read as openssl, sshd::read as sshd, stunnel::read as stunnel};
use proptest::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};

const NGINX: &str = "user www-data;\nworker_processes auto;\nevents {\n\tworker_connections 768;\n}\nhttp {\n\tssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3; # Dropping SSLv3\n\tssl_prefer_server_ciphers on;\n\tinclude /etc/nginx/conf.d/*.conf;\n\tserver {\n\t\tlisten 443 ssl;\n\t\tssl_ciphers \"ECDHE-RSA-AES128-GCM-SHA256:AES128-SHA\";\n\t\tssl_ecdh_curve 'X25519:prime256v1';\n\t\tlocation / { return 200 \"ok\\n\"; }\n\t}\n}\n";
const NGINX_DUMP: &str = "# configuration file /etc/nginx/nginx.conf:\nhttp {\n\tssl_protocols TLSv1.2;\n\tinclude /etc/nginx/sites-enabled/*;\n}\n\n# configuration file /etc/nginx/sites-enabled/default:\nserver {\n\tssl_ciphers HIGH:!aNULL;\n}\n";
const SSHD: &str = "Include /etc/ssh/sshd_config.d/*.conf\nPort 22\nCiphers aes128-ctr,aes256-gcm@openssh.com\nMACs hmac-sha2-256\nKexAlgorithms +diffie-hellman-group14-sha1\nHostKey /etc/ssh/ssh_host_ed25519_key\nMatch User backup\n\tCiphers aes128-cbc\n";
const SSHD_DUMP: &str = "port 22\nciphers chacha20-poly1305@openssh.com,aes128-ctr\nmacs umac-64-etm@openssh.com,hmac-sha2-256\nkexalgorithms sntrup761x25519-sha512@openssh.com,curve25519-sha256\nhostkeyalgorithms ssh-ed25519\n";
const APACHE: &str = "LoadModule ssl_module modules/mod_ssl.so\n<IfModule mod_ssl.c>\n  SSLProtocol all -SSLv3 -TLSv1\n  SSLCipherSuite HIGH:!aNULL:!MD5\n  SSLHonorCipherOrder on\n</IfModule>\n<VirtualHost *:443>\n  SSLEngine on\n  SSLOpenSSLConfCmd Curves X25519:secp256r1\n</VirtualHost>\nInclude conf-enabled/*.conf\n";
const APACHE_INCLUDES: &str = "Included configuration files:\n  (*) /etc/apache2/apache2.conf\n    (146) /etc/apache2/mods-enabled/ssl.load\n    (147) /etc/apache2/mods-enabled/ssl.conf\n";
const HAPROXY: &str = "global\n    log /dev/log local0\n    ssl-default-bind-ciphers ECDHE-RSA-AES128-SHA:AES128-SHA\n    ssl-default-bind-ciphersuites TLS_AES_128_GCM_SHA256\n    ssl-default-bind-options ssl-min-ver TLSv1.0 no-tls-tickets\n\nfrontend f\n    bind :443 ssl crt /etc/haproxy/site.pem ciphers HIGH\n";
const STUNNEL: &str = "; comment\nforeground = yes\n[https]\naccept = 443\nconnect = 80\ncert = /etc/stunnel/s.pem\nciphers = ECDHE-RSA-AES128-GCM-SHA256\nciphersuites = TLS_AES_256_GCM_SHA384\nsslVersionMin = TLSv1.2\ncurves = X25519:P-256\n";
const STUNNEL_VERSION: &str = "stunnel 5.68 on x86_64-pc-linux-gnu platform\nGlobal options:\nciphers = HIGH:!aNULL:!SSLv2:!DH:!kDHEPSK\nciphersuites = TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256\ncurves = X25519:P-256:X448:P-521:P-384\nsslVersionMin = TLSv1.2\n";
const OPENSSL_CNF: &str = "openssl_conf = default_conf\n[default_conf]\nssl_conf = ssl_sect\n[ssl_sect]\nsystem_default = system_default_sect\n[system_default_sect]\nMinProtocol = TLSv1.2\nCipherString = DEFAULT@SECLEVEL=2\nCiphersuites = TLS_AES_256_GCM_SHA384\nGroups = X25519:P-256\n";
const OPENSSL_CIPHERS: &str = "0x13,0x02 - TLS_AES_256_GCM_SHA384 TLSv1.3 Kx=any Au=any Enc=AESGCM(256) Mac=AEAD\n0xC0,0x2C - ECDHE-ECDSA-AES256-GCM-SHA384 TLSv1.2 Kx=ECDH Au=ECDSA Enc=AESGCM(256) Mac=AEAD\n";
const NZBGET: &str = "Server1.Name=news\nServer1.Encryption=yes\nServer1.Cipher=RC4-MD5\n";
const GNUTLS: &str = "[overrides]\ndefault-priority-string = NORMAL:-VERS-TLS1.0:-VERS-TLS1.1\n";

/// Pieces a mutation splices in: the syntax of every reader, and hostile bytes.
const SPLICE: &[&str] = &[
    "{",
    "}",
    ";",
    "\"",
    "'",
    "\\",
    "#",
    "\n",
    "\r\n",
    "\t",
    " ",
    "=",
    ":",
    ",",
    "[",
    "]",
    "<",
    ">",
    "</",
    "include ",
    "Include /",
    "Match ",
    "ssl_ciphers ",
    "Ciphers ",
    "SSLCipherSuite ",
    "\0",
    "\u{1b}[2J",
    "\u{202e}",
    "\u{85}",
    "\u{2028}",
    "é",
    "東",
    "\u{feff}",
    "((((",
    ")))",
    "*",
    "?",
    "../../",
    "${x}",
    "$(",
    "%s",
    "\"\"\"",
    "''",
];

fn base_texts() -> Vec<&'static str> {
    vec![
        NGINX,
        NGINX_DUMP,
        SSHD,
        SSHD_DUMP,
        APACHE,
        APACHE_INCLUDES,
        HAPROXY,
        STUNNEL,
        STUNNEL_VERSION,
        OPENSSL_CNF,
        OPENSSL_CIPHERS,
        NZBGET,
        GNUTLS,
    ]
}

#[derive(Debug, Clone)]
enum Edit {
    Cut(usize),
    Delete(usize, usize),
    Insert(usize, usize),
    Repeat(usize, usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::Cut),
        (any::<usize>(), 0usize..40).prop_map(|(a, n)| Edit::Delete(a, n)),
        (any::<usize>(), 0..SPLICE.len()).prop_map(|(a, i)| Edit::Insert(a, i)),
        (any::<usize>(), 1usize..30, 1usize..200).prop_map(|(a, n, k)| Edit::Repeat(a, n, k)),
    ]
}

fn boundary(s: &str, at: usize) -> usize {
    let mut i = at % (s.len() + 1);
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate(base: &str, edits: &[Edit]) -> String {
    let mut s = base.to_string();
    for e in edits {
        match *e {
            Edit::Cut(a) => {
                let i = boundary(&s, a);
                s.truncate(i);
            }
            Edit::Delete(a, n) => {
                let i = boundary(&s, a);
                let j = boundary(&s, i + n);
                if j >= i {
                    s.replace_range(i..j, "");
                }
            }
            Edit::Insert(a, k) => {
                let i = boundary(&s, a);
                s.insert_str(i, SPLICE[k]);
            }
            Edit::Repeat(a, n, k) => {
                let i = boundary(&s, a);
                let j = boundary(&s, i + n);
                if j > i {
                    let piece = s[i..j].repeat(k);
                    s.insert_str(j, &piece);
                }
            }
        }
    }
    s
}

/// Runs every reader on `text`; each must return (whatever it makes of it) fast.
fn read_all(text: &str) {
    let t0 = Instant::now();
    let f = Path::new("/etc/x.conf");
    let files = vec![(f.to_path_buf(), text.to_string())];
    let _ = nginx::sections(text);
    let _ = nginx::parse(f, text);
    let _ = nginx::from_files(&files, Path::new("/etc/nginx"), Some((1, 22, 1)));
    let _ = nginx::from_files(&nginx::sections(text), Path::new("/etc/nginx"), None);
    let _ = sshd::parse_dump(text, true);
    let _ = sshd::parse_dump(text, false);
    let _ = sshd::global_directives(f, text);
    let _ = sshd::insert_line(text);
    let _ = apache::parse_includes(text);
    let _ = apache::from_files(&files);
    let _ = haproxy::from_text(f, text);
    let defaults = stunnel::parse_defaults(text);
    let _ = stunnel::from_text(f, text, &defaults);
    let _ = openssl::parse_ciphers(text);
    let _ = openssl::system_default(text);
    let _ = openssl::from_text(f, text);
    let _ = nzbget::from_text(f, text);
    let _ = gnutls::system_priority(f, text);
    let _ = guess(f, text);
    for line in text.lines().take(200) {
        let _ = leading_words(line);
        let _ = value_after(line, "ciphers");
        let _ = normalise_version(line);
    }
    let _ = scan_directives(f, text, &["ssl_ciphers", "Ciphers", "SSLCipherSuite"], '#');
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "the readers took {:?} over {} bytes",
        t0.elapsed(),
        text.len()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        read_all(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn mutated_real_files_never_panic(which in 0usize..13, edits in proptest::collection::vec(edit(), 0..12)) {
        let bases = base_texts();
        read_all(&mutate(bases[which % bases.len()], &edits));
    }

    #[test]
    fn spliced_syntax_never_panics(pieces in proptest::collection::vec(0..SPLICE.len(), 0..200)) {
        let text: String = pieces.iter().map(|i| SPLICE[*i]).collect();
        read_all(&text);
    }
}

#[test]
fn deep_nesting_and_long_lines_stay_fast() {
    read_all(&"http {".repeat(20_000));
    read_all(&"}".repeat(20_000));
    read_all(&format!("ssl_ciphers {};\n", "A:".repeat(200_000)));
    read_all(&"include /etc/x.conf;\n".repeat(5_000));
    read_all(&"<IfModule x>\n".repeat(10_000));
}
