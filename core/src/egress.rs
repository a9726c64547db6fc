//! Where the server may send a partner's webhooks (SPEC section 10, "URLs"): only to globally
//! routable addresses. A partner's URL must never reach inside our network: the metadata
//! service of the cloud, the loopback, private ranges, and every other address the IANA
//! special-purpose registries mark not globally reachable, in their IPv6 disguises too
//! (IPv4-mapped, IPv4-compatible, NAT64 and 6to4 forms carry an IPv4 address that is judged as
//! itself).
//!
//! [`classify`] names the first class that applies, in the SPEC's order; `None` is a public
//! address. The host is checked again at every connect, after resolution, so a name that
//! resolves elsewhere later is caught where it matters.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{Ipv4Net, Ipv6Net};

/// Why an address is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// 169.254.169.254 and fd00:ec2::254.
    CloudMetadata,
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// 10/8, 172.16/12, 192.168/16, fc00::/7.
    Private,
    /// 169.254/16, fe80::/10.
    LinkLocal,
    /// 100.64/10 (carrier-grade NAT).
    Cgnat,
    /// 224/4, ff00::/8.
    Multicast,
    /// 0.0.0.0, ::.
    Unspecified,
    /// 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20.
    Documentation,
    /// 198.18/15, 2001:2::/48.
    Benchmarking,
    /// Every other range not globally reachable (0/8, 192.0.0/24, 240/4, 255.255.255.255,
    /// 100::/64, 2001::/23, fec0::/10, 5f00::/16, 64:ff9b:1::/48 ...).
    Reserved,
}

impl Class {
    /// The SPEC's name of the class (`cloud-metadata`, `loopback`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::CloudMetadata => "cloud-metadata",
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::LinkLocal => "link-local",
            Self::Cgnat => "cgnat",
            Self::Multicast => "multicast",
            Self::Unspecified => "unspecified",
            Self::Documentation => "documentation",
            Self::Benchmarking => "benchmarking",
            Self::Reserved => "reserved",
        }
    }
}

fn v4(text: &str) -> Ipv4Net {
    // The tables below are constant text; a typo fails every test.
    text.parse().unwrap_or_else(|_| Ipv4Net::default())
}

fn v6(text: &str) -> Ipv6Net {
    text.parse().unwrap_or_else(|_| Ipv6Net::default())
}

/// IPv4 ranges by class, in the SPEC's order (the first match names the class).
fn v4_table() -> &'static [(Class, Vec<Ipv4Net>)] {
    static TABLE: std::sync::OnceLock<Vec<(Class, Vec<Ipv4Net>)>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        vec![
            (Class::CloudMetadata, vec![v4("169.254.169.254/32")]),
            (Class::Loopback, vec![v4("127.0.0.0/8")]),
            (Class::Private, vec![v4("10.0.0.0/8"), v4("172.16.0.0/12"), v4("192.168.0.0/16")]),
            (Class::LinkLocal, vec![v4("169.254.0.0/16")]),
            (Class::Cgnat, vec![v4("100.64.0.0/10")]),
            (Class::Multicast, vec![v4("224.0.0.0/4")]),
            (Class::Unspecified, vec![v4("0.0.0.0/32")]),
            (Class::Documentation, vec![v4("192.0.2.0/24"), v4("198.51.100.0/24"), v4("203.0.113.0/24")]),
            (Class::Benchmarking, vec![v4("198.18.0.0/15")]),
            (
                Class::Reserved,
                vec![
                    v4("0.0.0.0/8"),
                    v4("192.0.0.0/24"),
                    v4("192.31.196.0/24"),
                    v4("192.52.193.0/24"),
                    v4("192.88.99.0/24"),
                    v4("192.175.48.0/24"),
                    v4("240.0.0.0/4"),
                    v4("255.255.255.255/32"),
                ],
            ),
        ]
    })
}

/// IPv6 ranges by class, in the SPEC's order. The IPv4-carrying forms are handled before.
fn v6_table() -> &'static [(Class, Vec<Ipv6Net>)] {
    static TABLE: std::sync::OnceLock<Vec<(Class, Vec<Ipv6Net>)>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        vec![
            (Class::CloudMetadata, vec![v6("fd00:ec2::254/128")]),
            (Class::Loopback, vec![v6("::1/128")]),
            (Class::Private, vec![v6("fc00::/7")]),
            (Class::LinkLocal, vec![v6("fe80::/10")]),
            (Class::Multicast, vec![v6("ff00::/8")]),
            (Class::Unspecified, vec![v6("::/128")]),
            (Class::Documentation, vec![v6("2001:db8::/32"), v6("3fff::/20")]),
            (Class::Benchmarking, vec![v6("2001:2::/48")]),
            (
                Class::Reserved,
                vec![
                    v6("::/8"),
                    v6("64:ff9b:1::/48"),
                    v6("100::/64"),
                    v6("2001::/23"),
                    v6("5f00::/16"),
                    v6("fec0::/10"),
                ],
            ),
        ]
    })
}

/// The IPv4 address an IPv6 address carries, in the forms that deliver to it: IPv4-mapped
/// (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, deprecated), NAT64 (`64:ff9b::/96`) and
/// 6to4 (`2002:aabb:ccdd::/16`).
fn embedded_v4(ip: &Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(tail),
        // `::` and `::1` are IPv6's own; every other `::a.b.c.d` is the old compatible form.
        [0, 0, 0, 0, 0, 0, _, _] if u32::from(tail) > 1 => Some(tail),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(tail),
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8)),
        _ => None,
    }
}

/// The class of a refused address, or `None` for a globally routable one.
pub fn classify(ip: IpAddr) -> Option<Class> {
    match ip {
        IpAddr::V4(a) => v4_table().iter().find(|(_, nets)| nets.iter().any(|n| n.contains(&a))).map(|(c, _)| *c),
        IpAddr::V6(a) => match embedded_v4(&a) {
            Some(inner) => classify(IpAddr::V4(inner)),
            None => v6_table().iter().find(|(_, nets)| nets.iter().any(|n| n.contains(&a))).map(|(c, _)| *c),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> Option<&'static str> {
        classify(text.parse().unwrap()).map(Class::as_str)
    }

    #[test]
    fn every_class_in_the_spec_order() {
        for (ip, want) in [
            ("169.254.169.254", "cloud-metadata"),
            ("fd00:ec2::254", "cloud-metadata"),
            ("127.0.0.1", "loopback"),
            ("127.255.255.254", "loopback"),
            ("::1", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("fd12:3456::1", "private"),
            ("169.254.1.1", "link-local"),
            ("fe80::1", "link-local"),
            ("100.64.0.1", "cgnat"),
            ("100.127.255.255", "cgnat"),
            ("224.0.0.1", "multicast"),
            ("ff02::1", "multicast"),
            ("0.0.0.0", "unspecified"),
            ("::", "unspecified"),
            ("192.0.2.1", "documentation"),
            ("2001:db8::1", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("2001:2::1", "benchmarking"),
            ("0.1.2.3", "reserved"),
            ("240.0.0.1", "reserved"),
            ("255.255.255.255", "reserved"),
            ("192.0.0.8", "reserved"),
            ("100::1", "reserved"),
            ("fec0::1", "reserved"),
        ] {
            assert_eq!(class(ip), Some(want), "{ip}");
        }
    }

    #[test]
    fn ipv6_disguises_are_judged_by_their_ipv4() {
        for (ip, want) in [
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "cloud-metadata"),
            ("::ffff:10.0.0.1", "private"),
            ("::127.0.0.1", "loopback"),
            ("64:ff9b::a00:1", "private"),
            ("2002:7f00:1::", "loopback"),
        ] {
            assert_eq!(class(ip), Some(want), "{ip}");
        }
        assert_eq!(class("::ffff:93.184.216.34"), None);
        assert_eq!(class("64:ff9b::5db8:d822"), None);
    }

    #[test]
    fn public_addresses_pass() {
        for ip in ["93.184.216.34", "1.1.1.1", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111"] {
            assert_eq!(class(ip), None, "{ip}");
        }
    }
}
