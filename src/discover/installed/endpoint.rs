//! Where a TLS server listens, from the address its own configuration gives
//! (nginx `listen`, Apache `<VirtualHost>`, HAProxy `bind`, stunnel `accept`): the
//! `host:port` `check` connects to for a real handshake, only when it is an address
//! of this machine. A wildcard address is asked on the loopback one; a name other
//! than `localhost` is not resolved, and an address this machine does not have is
//! never connected to (the configuration under review may come from elsewhere).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, UdpSocket};

/// `host:port` to connect to for a listen address (`443`, `*:443`, `0.0.0.0:443`,
/// `[::]:443`, `127.0.0.1:8443`, `localhost:443`, `_default_:443`); `None` for a
/// unix socket, a name, an address of another machine or a value that is not an
/// address.
pub fn local(address: &str) -> Option<String> {
    let a = address.trim();
    if let Ok(port) = a.parse::<u16>() {
        return (port != 0).then(|| format!("127.0.0.1:{port}"));
    }
    let (host, port) = a.rsplit_once(':')?;
    let port: u16 = port.parse().ok().filter(|p| *p != 0)?;
    let ip = match host {
        "" | "*" | "0.0.0.0" | "_default_" | "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
        "[::]" | "::" => IpAddr::V6(Ipv6Addr::LOCALHOST),
        h => h.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>().ok()?,
    };
    if !ip.is_loopback() && !is_mine(ip) {
        return None;
    }
    Some(match ip {
        IpAddr::V4(v4) => format!("{v4}:{port}"),
        IpAddr::V6(v6) => format!("[{v6}]:{port}"),
    })
}

/// Whether `ip` is an address of this machine: a socket can be bound to it (the
/// kernel refuses any other, unless `ip_nonlocal_bind` is set).
fn is_mine(ip: IpAddr) -> bool {
    !ip.is_unspecified() && !ip.is_multicast() && UdpSocket::bind((ip, 0)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_machines_addresses() {
        assert_eq!(local("443").as_deref(), Some("127.0.0.1:443"));
        assert_eq!(local("*:443").as_deref(), Some("127.0.0.1:443"));
        assert_eq!(local("0.0.0.0:8443").as_deref(), Some("127.0.0.1:8443"));
        assert_eq!(local(":8443").as_deref(), Some("127.0.0.1:8443"));
        assert_eq!(local("_default_:443").as_deref(), Some("127.0.0.1:443"));
        assert_eq!(local("[::]:443").as_deref(), Some("[::1]:443"));
        assert_eq!(local("[::1]:443").as_deref(), Some("[::1]:443"));
        assert_eq!(local("127.0.0.2:443").as_deref(), Some("127.0.0.2:443"));
        assert_eq!(local("localhost:443").as_deref(), Some("127.0.0.1:443"));
        // Another machine's address, a name, a socket, no port: not asked.
        assert_eq!(local("192.0.2.7:443"), None);
        assert_eq!(local("example.org:443"), None);
        assert_eq!(local("unix:/run/x.sock"), None);
        assert_eq!(local("127.0.0.1"), None);
        assert_eq!(local("127.0.0.1:0"), None);
        assert_eq!(local("127.0.0.1:99999"), None);
        // An address this machine has (its default route's source address).
        let probe = UdpSocket::bind("0.0.0.0:0").unwrap();
        if probe.connect("192.0.2.1:9").is_ok() {
            let mine = probe.local_addr().unwrap().ip();
            if !mine.is_unspecified() {
                assert_eq!(local(&format!("{mine}:443")), Some(format!("{mine}:443")));
            }
        }
    }
}
