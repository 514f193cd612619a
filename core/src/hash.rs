//! Stable content hashes for cache keys.

use sha2::{Digest, Sha256};

/// The first 16 hex digits of the SHA-256 of `bytes`: stable across processes, platforms and
/// versions, and short enough to read in a database dump.
pub fn short_hash(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Hashes several parts with separators so that ("ab","c") and ("a","bc") differ.
pub fn hash_parts<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    let d = h.finalize();
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}
