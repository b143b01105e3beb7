//! `ssh --serve`: keep the private daemon up for bench scripts.

use crate::backend::openssh::client::{Client, Destination};
use crate::backend::openssh::PrivateSshd;
use anyhow::{bail, Result};
use serde_json::json;

/// `ssh --serve` (hidden, for bench scripts): keeps the private daemon up until
/// Ctrl-C or SIGTERM, after printing how to reach it as one JSON line.
pub fn serve(client: &Client, daemon: Option<&PrivateSshd>) -> Result<()> {
    let (
        Some(d),
        Destination::Private {
            port,
            user,
            key,
            known_hosts,
        },
    ) = (daemon, &client.target)
    else {
        bail!("--serve needs the private sshd");
    };
    let line = json!({
        "port": port, "user": user, "identity": key, "known_hosts": known_hosts,
        "pid": d.pid(), "dir": d.dir(), "banner": d.banner(),
        "client_cpus": crate::backend::openssh::placement::placement().map(|p| p.client.clone()),
    });
    println!("{line}");
    use std::io::Write;
    std::io::stdout().flush()?;
    while !crate::interrupt::requested() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(())
}
