//! Per-repository trigram index (the Russ Cox / Zoekt approach).
//!
//! `format` lays out the two files on disk, `build` writes them, `query` derives the trigrams a match
//! requires, `search` selects candidate files and verifies them, `score` ranks matching lines.

mod build;
mod format;
pub mod query;
pub mod score;
mod search;

pub use format::TrigramIndex;
pub use search::{requires_trigrams, GrepMatch, GrepResult, SearchRequest};

/// A trigram packed as `b0 << 16 | b1 << 8 | b2` (bytes already ASCII-lower-cased).
pub type Trigram = u32;

/// Packs three bytes into a trigram key, lower-casing ASCII letters as the index does.
#[inline]
pub fn trigram_of(a: u8, b: u8, c: u8) -> Trigram {
    ((a.to_ascii_lowercase() as u32) << 16)
        | ((b.to_ascii_lowercase() as u32) << 8)
        | c.to_ascii_lowercase() as u32
}

/// Every trigram of `bytes` (ASCII-lower-cased), sorted and without duplicates.
pub fn distinct_trigrams(bytes: &[u8]) -> Vec<Trigram> {
    let mut out: Vec<Trigram> = bytes
        .windows(3)
        .map(|w| trigram_of(w[0], w[1], w[2]))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigrams_are_lower_cased_and_distinct() {
        assert_eq!(
            distinct_trigrams(b"AbAbab"),
            vec![trigram_of(b'a', b'b', b'a'), trigram_of(b'b', b'a', b'b')]
        );
        assert!(distinct_trigrams(b"ab").is_empty());
    }
}
