//! The host's GnuTLS: which TLS groups it accepts (a capability stored with each
//! run; GnuTLS's installed configuration is read in `software/gnutls/`).

/// The TLS groups the host's GnuTLS accepts, as its priority strings name them
/// (`GROUP-X25519` ...): the `Groups:` line of `gnutls-cli --list`. `None` when
/// gnutls-cli cannot be run.
pub fn accepted_groups() -> Option<Vec<String>> {
    let cli = super::installed::find_program(&["gnutls-cli"])?;
    // A quick local query, as the other capabilities are: asked when measuring is
    // done, so not stopped at the run's cut (a cut `tls` run kept no groups).
    let said = crate::backend::process::output_within(std::process::Command::new(cli).arg("--list"), crate::backend::process::QUERY_LIMIT)
        .ok()??;
    if !said.status.success() {
        return None;
    }
    parse_groups(&String::from_utf8_lossy(&said.stdout))
}

/// The `Groups:` line of `gnutls-cli --list`, each name with its `GROUP-` prefix.
pub fn parse_groups(text: &str) -> Option<Vec<String>> {
    let line = text.lines().find_map(|l| l.strip_prefix("Groups: "))?;
    let groups: Vec<String> = line
        .split(',')
        .map(str::trim)
        .filter(|g| g.starts_with("GROUP-") && g.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .map(str::to_string)
        .collect();
    (!groups.is_empty()).then_some(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GnuTLS 3.8.9's (Debian 13) `Groups:` line: no ML-KEM group; a hostile name
    /// (not `GROUP-` and letters, digits, dashes) is dropped.
    #[test]
    fn groups_line_of_gnutls_cli_list() {
        let text = "Protocols: VERS-TLS1.3\nGroups: GROUP-SECP256R1, GROUP-X25519, GROUP-X448, GROUP-FFDHE2048, \u{1b}[31mX\nPK-signatures: SIGN-RSA-SHA256\n";
        assert_eq!(
            parse_groups(text).unwrap(),
            ["GROUP-SECP256R1", "GROUP-X25519", "GROUP-X448", "GROUP-FFDHE2048"]
        );
        assert_eq!(parse_groups("Groups: \n"), None);
        assert_eq!(parse_groups("Protocols: VERS-TLS1.3\n"), None);
    }
}
