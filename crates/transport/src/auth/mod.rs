//! Who is calling, on the HTTP transport: nobody in particular (loopback,
//! or an authenticating proxy in front), the holder of the one bearer token
//! (`--token-file`), or, in OAuth mode (`--oauth-issuer`), the subject of a
//! JWT access token, with what the access policy grants them.
//!
//! Tokens end here: nothing about them reaches a plugin.

pub mod fetch;
pub mod jwks;
pub mod oauth;
pub mod policy_file;
pub mod resource_metadata;

pub use warden_mcp::principal::Principal;
