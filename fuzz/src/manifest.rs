//! The capability manifest parser (`Manifest::parse`), fed any text.
//!
//! It must answer every input with a manifest or an error, never a panic,
//! and whatever it accepts must keep the rules the sandbox relies on: limits
//! in range, a well-formed pin, absolute mounts without `..`, each guest path
//! mounted once, environment names that are names. Sizes must survive being
//! printed and read back, as `warden check` prints them.
//!
//! `network.tcp` and `network.udp` entries are resolved when the manifest is
//! read; inputs naming a host there (not an address) are skipped, so the
//! fuzzer never waits on the machine's resolver.

use std::net::SocketAddr;
use std::path::{Component, Path};

use warden_runtime::manifest::{Manifest, format_size, parse_size};

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if needs_name_resolution(text) {
        return;
    }
    let manifest = match Manifest::parse(text) {
        Ok(manifest) => manifest,
        Err(error) => {
            let message = format!("{error:#}");
            assert!(!message.is_empty());
            return;
        }
    };
    let limits = &manifest.limits;
    assert!(limits.concurrency >= 1, "{limits:?}");
    assert!(!limits.timeout.is_zero(), "{limits:?}");
    // At most a day: a call's deadline (now + timeout) can never overflow.
    assert!(limits.timeout <= warden_runtime::manifest::MAX_TIMEOUT, "{limits:?}");
    assert_ne!(limits.fuel, Some(0), "{limits:?}");
    if let Some(pin) = &manifest.sha256 {
        assert!(
            pin.len() == 64 && pin.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "{pin:?}"
        );
    }
    if let Some(name) = &manifest.name {
        warden_runtime::naming::check_plugin_name(name).expect("an accepted plugin name is valid");
    }
    let grants = &manifest.grants;
    for (i, mount) in grants.mounts.iter().enumerate() {
        assert!(mount.host.is_absolute(), "{mount:?}");
        let guest = Path::new(&mount.guest);
        assert!(guest.is_absolute() && !mount.guest.contains('\\'), "{mount:?}");
        assert!(
            guest.components().skip(1).all(|c| matches!(c, Component::Normal(_))),
            "{mount:?}"
        );
        assert!(
            grants.mounts[..i].iter().all(|other| other.guest != mount.guest),
            "{:?} is mounted twice",
            mount.guest
        );
    }
    for (name, _) in &grants.env {
        assert!(
            !name.is_empty() && !name.contains('=') && !name.contains('\0'),
            "{name:?}"
        );
    }
    for size in [
        limits.memory,
        limits.output,
        limits.log_output,
        grants.http.max_response,
    ] {
        let printed = format_size(size);
        assert_eq!(parse_size(&printed).ok(), Some(size), "{size} printed as {printed:?}");
    }
}

/// Whether reading `text` would look a host name up: a `host:port` socket
/// entry whose host is not an address.
fn needs_name_resolution(text: &str) -> bool {
    let Ok(table) = text.parse::<toml::Table>() else {
        return false;
    };
    let Some(network) = table.get("network") else {
        return false;
    };
    ["tcp", "udp"].iter().any(|key| {
        let entries = network.get(key).and_then(toml::Value::as_array);
        entries.into_iter().flatten().any(|entry| {
            entry.as_str().is_some_and(|entry| {
                let has_port = entry
                    .rsplit_once(':')
                    .is_some_and(|(_, port)| port.parse::<u16>().is_ok());
                has_port && entry.parse::<SocketAddr>().is_err()
            })
        })
    })
}
