//! Holding host resources: sockets, header collections, refused requests.

use crate::{Args, Error};
use wasi::http::outgoing_handler;
use wasi::http::types::{Fields, Method, OutgoingRequest, Scheme};
use wasi::sockets::network::IpAddressFamily;
use wasi::sockets::{tcp_create_socket, udp_create_socket};

fn failed(error: impl std::fmt::Debug) -> String {
    format!("{error:?}")
}

/// Creates sockets until `count` or the first error, holds them for
/// `hold_ms`, and says how many it held.
pub fn sockets(args: &Args) -> Result<String, Error> {
    let count = args.u64("count");
    let mut tcp = Vec::new();
    let mut udp = Vec::new();
    let mut stopped = None;
    for _ in 0..count {
        let created = match args.str("kind") {
            "udp" => udp_create_socket::create_udp_socket(IpAddressFamily::Ipv4)
                .map(|s| udp.push(s))
                .map_err(failed),
            _ => tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4)
                .map(|s| tcp.push(s))
                .map_err(failed),
        };
        if let Err(error) = created {
            stopped = Some(error);
            break;
        }
    }
    let held = tcp.len() + udp.len();
    let hold = args.u64("hold_ms");
    if hold > 0 {
        let until = wasi::clocks::monotonic_clock::now() + hold * 1_000_000;
        while wasi::clocks::monotonic_clock::now() < until {
            wasi::clocks::monotonic_clock::subscribe_instant(until).block();
        }
    }
    Ok(match stopped {
        Some(error) => format!("held {held} sockets, then: {error}"),
        None => format!("held {held} sockets"),
    })
}

/// Creates header collections of `kilobytes` KiB each until `count` or the
/// first error, and says how many it held.
pub fn headers(args: &Args) -> Result<String, Error> {
    let value = vec![b'h'; 1024];
    let mut held = Vec::new();
    let mut stopped = None;
    'collections: for _ in 0..args.u64("count") {
        let fields = Fields::new();
        for k in 0..args.u64("kilobytes") {
            if let Err(error) = fields.append(&format!("x-{k}"), &value) {
                stopped = Some(failed(error));
                held.push(fields);
                break 'collections;
            }
        }
        held.push(fields);
    }
    Ok(match stopped {
        Some(error) => format!("held {} header collections, then: {error}", held.len()),
        None => format!("held {} header collections", held.len()),
    })
}

/// Sends `count` requests to a host no manifest grants; says how many were refused.
pub fn refused_requests(count: u64) -> Result<String, Error> {
    let mut refused = 0;
    for _ in 0..count {
        let request = OutgoingRequest::new(Fields::new());
        let _ = request.set_method(&Method::Get);
        let _ = request.set_scheme(Some(&Scheme::Http));
        let _ = request.set_authority(Some("not-granted.example"));
        let _ = request.set_path_with_query(Some("/"));
        match outgoing_handler::handle(request, None) {
            Err(_) => refused += 1,
            Ok(future) => {
                let pollable = future.subscribe();
                pollable.block();
                drop(pollable);
                if !matches!(future.get(), Some(Ok(Ok(_)))) {
                    refused += 1;
                }
            }
        }
    }
    Ok(format!("refused {refused} of {count}"))
}
