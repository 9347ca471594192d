//! Values the operator had Warden read from its environment or a file, and
//! the one rule for them: they reach the plugin, and nothing Warden writes.
//!
//! A `[config]` or `[environment] set` value is written in the manifest in
//! clear (`api-base = "https://…"`), or named there and read when the plugin
//! loads: `api-key = { env = "WARDEN_API_KEY" }` from Warden's own
//! environment, `api-key = { file = "/run/secrets/api-key" }` from a file
//! (how Kubernetes mounts a Secret). Those, and the variables `[environment]
//! pass` copies from Warden's environment, are secrets:
//!
//! - a `Secret` never prints its value (`Debug` and `Display` write
//!   `[redacted]`); only `expose` hands it out, to the sandbox;
//! - `warden check` and `warden inspect` say where it came from
//!   (`<from env WARDEN_API_KEY>`), never what it is;
//! - what the plugin says besides its answers — `host.log` and progress
//!   messages, captured stdout and stderr, the text of a crash, refused
//!   accesses — and every audit record of its calls pass through its
//!   `Redactor`, built once per load, which writes `[redacted]` in place of
//!   any secret value.
//!
//! An address the operator gives Warden that may carry credentials (a Redis
//! URL with a password) is a `SecretAddress`: it prints without them.
//!
//! A plugin's answers (tool results, resource contents, prompt messages,
//! completions) are not redacted: the plugin was given the secret to use
//! it, and what it answers is its output to the client.

mod address;
mod read;
mod redactor;
mod secret;
mod setting;

pub use address::SecretAddress;
pub use read::{MAX_FILE_BYTES, setting};
pub use redactor::{MIN_REDACTED_BYTES, REDACTED, Redactor};
pub use secret::Secret;
pub use setting::{Setting, Source};
