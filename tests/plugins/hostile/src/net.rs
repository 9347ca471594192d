//! Sockets, DNS and outgoing HTTP.

use crate::{Args, Outcome, failed};
use std::io::Read;
use std::net::{TcpStream, ToSocketAddrs, UdpSocket};
use wasi::http::outgoing_handler;
use wasi::http::types::{Fields, Method, OutgoingRequest, Scheme};

pub fn connect(args: &Args) -> Outcome {
    TcpStream::connect(args.str("addr")?).map_err(failed)?;
    Ok("connected".into())
}

pub fn resolve(args: &Args) -> Outcome {
    let addrs = (args.str("host")?, 80).to_socket_addrs().map_err(failed)?;
    Ok(addrs.map(|a| a.ip().to_string()).collect::<Vec<_>>().join("\n"))
}

pub fn udp(args: &Args) -> Outcome {
    let socket = UdpSocket::bind("0.0.0.0:0").map_err(failed)?;
    socket.send_to(b"x", args.str("addr")?).map_err(failed)?;
    Ok("sent".into())
}

/// Splits `scheme://authority/path?query#fragment`; the fragment is dropped.
fn split_url(url: &str) -> Result<(Scheme, &str, &str), crate::Error> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(crate::Error::InvalidArguments(format!(
            "{url:?} is not a URL: it has no scheme://"
        )));
    };
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        other => Scheme::Other(other.to_string()),
    };
    let rest = rest.split('#').next().unwrap_or_default();
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    Ok((scheme, authority, if path.is_empty() { "/" } else { path }))
}

pub fn fetch(args: &Args) -> Outcome {
    let (scheme, authority, path) = split_url(args.str("url")?)?;
    let request = OutgoingRequest::new(Fields::new());
    let refused = |what: &str| failed(format!("the host refused the request's {what}"));
    request.set_method(&Method::Get).map_err(|()| refused("method"))?;
    request.set_scheme(Some(&scheme)).map_err(|()| refused("scheme"))?;
    request
        .set_authority(Some(authority))
        .map_err(|()| refused("authority"))?;
    request.set_path_with_query(Some(path)).map_err(|()| refused("path"))?;
    // The body is never taken, so the request goes out with an empty one.
    let future = outgoing_handler::handle(request, None).map_err(|code| failed(format!("{code:?}")))?;
    let pollable = future.subscribe();
    pollable.block();
    drop(pollable);
    let response = match future.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Err(failed(format!("{code:?}"))),
        Some(Err(())) => return Err(failed("the response was already taken")),
        None => return Err(failed("the response is not ready after blocking on it")),
    };
    let status = response.status();
    let body = response
        .consume()
        .map_err(|()| failed("the response body was already taken"))?;
    let mut stream = body
        .stream()
        .map_err(|()| failed("the body stream was already taken"))?;
    let mut bytes = Vec::new();
    let read = stream.read_to_end(&mut bytes);
    // Child resources go before their parents.
    drop(stream);
    drop(body);
    drop(response);
    read.map_err(failed)?;
    Ok(format!("status {status}\n{}", String::from_utf8_lossy(&bytes)))
}
