//! A test-only OAuth authorization server on 127.0.0.1 (RFC 8414 metadata
//! and a JWKS) and the access tokens it would issue, signed with a key made
//! for these tests.

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The key the test's authorization server signs with: generated for this
/// test (`openssl genrsa 2048`, PKCS#1 DER in base64), guarding nothing.
pub const SIGNING_KEY: &str = "MIIEowIBAAKCAQEAj3i1Huh76Zn1Z1AMoXIQLTHW+xTSvJmyLbUCvn1v1IJUheeaIW8Wtj1mUKf3LXWQONh8yKGD54gngtUnpNVWZlXDA3smWGN9mOXdln0/OrlebZMgh4wv/2A+/3XAJBsRkw4cMe47oRsxYPzy0mDCZCSFrJTEQvkqhoUtYOYUKmbmTlQK7oF4zZOhX7ZQbcRJu1+8XEN8tlgu6v3fY/4/JHRlcE/2d4GmPnHnffqTNFyvmVPoM5/TtS3oeTGSAMnY2HVV1VVU2CMLgFVj+IcS9yaJW9leyIpmSd34cBjiyd2r1myn5zYXMgwPPCiln47P9Z3Qg5gKptbduiRSYht/NwIDAQABAoIBAAMW2yDhv6f4NTUMH7bVkRdFX0wubBqR3VN89iSqPcoKeQ3IaWS2ktDKF1W9mtBt8Mo7OyCffbVyv0Bix5pAhROUstYfL48FVr3VQUViyAWYhTnVylmw1pMTUaKdjfgZDx1RV0u/RfsXmKNufuoHGa3KAt4u9oo8pEJGRC5gdecId5k4TQUplFYaVf/r4x6hBBS1Wri746GJcWm6AoyxxQf9sZt7hBYYPLnvHPRR/7Jbj3yPtub9yScUZPFYxLblMv59IRO77Q1Nz+zCw2Ouqh1JgU9VcsH6JCBvuIyGlHiAWNNsNofkJR7A7e7JGEA9EcbWd2RBppz9649gltGtdsUCgYEAxHT/QCoKnvJGvU8bJ0SZc/JHW7HyltHMojfjlrLCZxXM/KkkfdoDuwlNyQ7pwWZkJPoFBEwlBZ6E3iaRCSkn/7v2dT6ZIVnzf142lHcz8elQmZLJb/0jBm67/Iqn/iHVeHzG7o936/RmovNX+aA9W7R5UtvUfh6qA0Tf/yoj3BsCgYEAuvSXWzTzY6pCFA/HsIUl3mRdJQ5X95+3fX2pPtvtnYFTKBqBYvoiP5e8hg+2gSIg9rh82qUrn6RFzg0EmfS0KQyCV6Yfzc0QNm8YSGULkcdtRo8VyCMxx3UWQWRf3xvOB40Zrws/Hoe+RclW2Sshjx64oZB5pd+MYvnKSoXkYxUCgYBAEmBFDvET0bRcfXY/olHhzLyVHT4fDiGNLmkddwOMF0IZjRiHqxjYYTprPl/iYYB7xsboFeVlJcPzp+RZdoDDGQxSRK4wgGO3wIRQe2gHl65fx83GpmpL6MWKobYUXfh/KUK//y5/V+A5eN/SW/5m8D85VNTCpUGRe18KmzXCzQKBgEfzNgTt/fWPYtrhr9Jpi8dpDMfkG0q7dxyerfH5JhuF2AEJIl57MY8T0IQvq+dKwTDyk2p6Qq2vxQWl0O2HVYauv8MHthm4H9MzMj86VBeIjq+nBZT+pnvCvgvwm0z8IHCbhxTs2R/g0gN9lyUBCmtQQXI8bfS+cgLta0L/AIR5AoGBAJdMjq7rGufrE1RFYAFF2Nau1e/3IWDcLSGwyuxSr7vajuYs+vamnaYr+P9cJn1477XMhn/K+PEt8dddvnPJnxwKDb9ohSSdAptHTQw+GEuckTNmtdzaM8/OmRSj7ae00/+ZuZMNgKdasCOgb0RU7nD6TglWHj01m1g9ncDY/JWN";
/// Its modulus, base64url, for the JWKS.
pub const MODULUS: &str = "j3i1Huh76Zn1Z1AMoXIQLTHW-xTSvJmyLbUCvn1v1IJUheeaIW8Wtj1mUKf3LXWQONh8yKGD54gngtUnpNVWZlXDA3smWGN9mOXdln0_OrlebZMgh4wv_2A-_3XAJBsRkw4cMe47oRsxYPzy0mDCZCSFrJTEQvkqhoUtYOYUKmbmTlQK7oF4zZOhX7ZQbcRJu1-8XEN8tlgu6v3fY_4_JHRlcE_2d4GmPnHnffqTNFyvmVPoM5_TtS3oeTGSAMnY2HVV1VVU2CMLgFVj-IcS9yaJW9leyIpmSd34cBjiyd2r1myn5zYXMgwPPCiln47P9Z3Qg5gKptbduiRSYht_Nw";
pub const RESOURCE: &str = "https://warden.test/mcp";

/// An authorization server: RFC 8414 metadata and the JWKS, each answered
/// on its own connection. Returns its issuer URL.
pub async fn authorization_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let metadata = json!({ "issuer": issuer, "jwks_uri": format!("{issuer}/jwks") }).to_string();
    let jwks =
        json!({ "keys": [{ "kty": "RSA", "kid": "test", "alg": "RS256", "use": "sig", "n": MODULUS, "e": "AQAB" }] })
            .to_string();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let (metadata, jwks) = (metadata.clone(), jwks.clone());
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buffer = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buffer[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split_whitespace().nth(1).unwrap_or("");
                let (status, body) = match path {
                    "/.well-known/oauth-authorization-server" => ("200 OK", metadata),
                    "/jwks" => ("200 OK", jwks),
                    _ => ("404 Not Found", "{}".to_string()),
                };
                let answer = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    issuer
}

/// An access token for `subject` with `scope`, as the server would issue it.
pub fn token(issuer: &str, subject: &str, scope: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims =
        json!({ "iss": issuer, "aud": RESOURCE, "sub": subject, "scope": scope, "exp": now + 3600, "iat": now });
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some("test".into());
    use base64::Engine as _;
    let der = base64::engine::general_purpose::STANDARD.decode(SIGNING_KEY).unwrap();
    let key = jsonwebtoken::EncodingKey::from_rsa_der(&der);
    jsonwebtoken::encode(&header, &claims, &key).unwrap()
}
