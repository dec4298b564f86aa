//! Code-aware tokens for BM25: identifiers and numbers, whole and split into their parts.
//!
//! Rules (all tokens lower-cased):
//! - A word is a maximal run of ASCII letters, digits and '_' and non-ASCII alphanumeric characters.
//!   Runs of only '_' are skipped.
//! - A word with a non-ASCII character is emitted whole only (no reliable case/part rules).
//! - A word starting with a digit is a number, emitted whole (`0x1f`, `42`).
//! - An identifier is emitted whole, then, when splitting gives anything other than itself, its parts:
//!   split on '_', before an upper-case letter following a lower-case one or a digit (`parseHttp`),
//!   before the last upper-case letter of a run followed by a lower-case one (`HTTPResponse`), and between
//!   letters and digits (`sha256`). Single-letter parts are dropped (`v` of `v2`, `x` of `getX`): they
//!   match everything; digit runs are kept whatever their length (`2` of `XMLHttpRequest2` is a version).

use rayon::prelude::*;

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || (!c.is_ascii() && c.is_alphanumeric())
}

/// Appends the tokens of `text` to `out`.
pub fn push_tokens(text: &str, out: &mut Vec<String>) {
    let mut rest = text;
    while let Some(start) = rest.find(is_word_char) {
        let tail = &rest[start..];
        let len = tail.find(|c: char| !is_word_char(c)).unwrap_or(tail.len());
        push_word(&tail[..len], out);
        rest = &tail[len..];
    }
}

fn push_word(word: &str, out: &mut Vec<String>) {
    if word.bytes().all(|b| b == b'_') {
        return;
    }
    if !word.is_ascii() {
        out.push(word.to_lowercase());
        return;
    }
    let whole = word.to_ascii_lowercase();
    if word.as_bytes()[0].is_ascii_digit() {
        out.push(whole);
        return;
    }
    let parts = split_identifier(word);
    let has_parts = !(parts.len() == 1 && parts[0].len() == word.len());
    out.push(whole);
    if has_parts {
        out.extend(
            parts
                .into_iter()
                .filter(|p| p.len() > 1 || p.as_bytes()[0].is_ascii_digit())
                .map(str::to_ascii_lowercase),
        );
    }
}

/// snake_case, camelCase, PascalCase and letter/digit parts of an ASCII identifier.
fn split_identifier(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for segment in word.split('_').filter(|s| !s.is_empty()) {
        let b = segment.as_bytes();
        let mut start = 0;
        for i in 1..b.len() {
            let (prev, cur) = (b[i - 1], b[i]);
            let next_lower = b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            let boundary = (prev.is_ascii_lowercase() && cur.is_ascii_uppercase())
                || (prev.is_ascii_uppercase() && cur.is_ascii_uppercase() && next_lower)
                || (prev.is_ascii_digit() != cur.is_ascii_digit());
            if boundary {
                parts.push(&segment[start..i]);
                start = i;
            }
        }
        parts.push(&segment[start..]);
    }
    parts
}

pub fn code_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    push_tokens(text, &mut out);
    out
}

/// `code_tokens` of every text, joined with single spaces, computed in parallel.
pub fn code_tokens_joined<S: AsRef<str> + Sync>(texts: &[S]) -> Vec<String> {
    texts
        .par_iter()
        .map(|t| code_tokens(t.as_ref()).join(" "))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        code_tokens(s)
    }

    #[test]
    fn camel_and_pascal() {
        assert_eq!(
            toks("parseHTTPResponse"),
            ["parsehttpresponse", "parse", "http", "response"]
        );
        assert_eq!(
            toks("XMLHttpRequest2"),
            ["xmlhttprequest2", "xml", "http", "request", "2"]
        );
    }

    #[test]
    fn snake_and_digits() {
        assert_eq!(
            toks("max_retry_count"),
            ["max_retry_count", "max", "retry", "count"]
        );
        assert_eq!(toks("sha256sum"), ["sha256sum", "sha", "256", "sum"]);
        assert_eq!(toks("_private"), ["_private", "private"]);
        assert_eq!(toks("getX v2"), ["getx", "get", "v2", "2"]);
    }

    #[test]
    fn plain_words_numbers_and_unicode() {
        assert_eq!(
            toks("def run(x): return 0x1F + 42"),
            ["def", "run", "x", "return", "0x1f", "42"]
        );
        assert_eq!(toks("naïveÉtat = 1; __ = 2"), ["naïveétat", "1", "2"]);
        assert!(toks("  ++ -- ").is_empty());
    }

    #[test]
    fn joined() {
        assert_eq!(
            code_tokens_joined(&["fooBar", "", "a_b"]),
            ["foobar foo bar", "", "a_b"]
        );
    }
}
