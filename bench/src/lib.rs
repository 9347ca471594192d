//! What the benchmark's two sides share: the CPU-bound work both servers do,
//! so the driver can check every answer.

use sha2::{Digest, Sha256};

/// How many bytes `hash` digests.
pub const HASH_BYTES: usize = 64 * 1024;

/// SHA-256 of `HASH_BYTES` bytes derived from `seed`, as hex: the same
/// function as the benchmark plugin's (`tests/plugins/bench`).
pub fn hash(seed: u64) -> String {
    let mut data = vec![0u8; HASH_BYTES];
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for byte in &mut data {
        // xorshift64: cheap, deterministic filler.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        *byte = state as u8;
    }
    let digest = Sha256::digest(&data);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
