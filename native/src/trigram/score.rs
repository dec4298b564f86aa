//! Scoring one matching line.
//!
//! ```text
//! score = (1 + ln(1 + match_count))                        more matches on a line, diminishing returns
//!       x WHOLE_WORD_BONUS      if a match is a whole word (bounded by non-identifier characters)
//!       x DEFINITION_BONUS      if the line looks like a definition (def/class/fn/func/struct/...)
//!       x PATH_BONUS            if the pattern also matches the file's path
//!       / (1 + LONG_FILE_PENALTY x log2(1 + file_lines / LONG_FILE_LINES))    mild, for very long files
//! ```

/// A whole-word hit (`parse` in `parse(x)`) is more likely what was meant than `parser_state`.
pub const WHOLE_WORD_BONUS: f64 = 1.5;
/// Definitions are the usual target of a code search ("where is X defined?").
pub const DEFINITION_BONUS: f64 = 2.0;
/// A file whose path also matches (`cache` in `functools_cache.py`) is probably about the pattern.
pub const PATH_BONUS: f64 = 1.25;
/// Strength of the long-file penalty: a 10k-line file scores about 0.74x a short one.
pub const LONG_FILE_PENALTY: f64 = 0.1;
/// Files up to about this many lines are barely penalised.
pub const LONG_FILE_LINES: f64 = 1000.0;

/// What the score of one line depends on.
#[derive(Clone, Copy, Debug)]
pub struct LineFeatures {
    pub match_count: u32,
    pub whole_word: bool,
    pub definition: bool,
    pub path_match: bool,
    pub file_lines: u32,
}

pub fn line_score(f: &LineFeatures) -> f64 {
    let mut score = 1.0 + (1.0 + f.match_count as f64).ln();
    if f.whole_word {
        score *= WHOLE_WORD_BONUS;
    }
    if f.definition {
        score *= DEFINITION_BONUS;
    }
    if f.path_match {
        score *= PATH_BONUS;
    }
    score / (1.0 + LONG_FILE_PENALTY * (1.0 + f.file_lines as f64 / LONG_FILE_LINES).log2())
}

/// Identifier bytes; bytes of non-ASCII characters count as identifier characters (Unicode names).
#[inline]
pub fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// A match `line[start..end]` is a whole word when neither side continues an identifier.
pub fn is_whole_word(line: &[u8], start: usize, end: usize) -> bool {
    if start >= end {
        return false;
    }
    let left = start == 0 || !is_ident(line[start - 1]) || !is_ident(line[start]);
    let right = end == line.len() || !is_ident(line[end]) || !is_ident(line[end - 1]);
    left && right
}

/// Keywords that open a definition in the supported languages.
const DEFINITION_KEYWORDS: &[&str] = &[
    "def",
    "class",
    "fn",
    "func",
    "function",
    "struct",
    "interface",
    "type",
    "trait",
    "enum",
    "impl",
    "module",
    "mod",
    "union",
    "namespace",
    "typedef",
    "record",
    "object",
    "macro_rules!",
];

/// Words that may precede a definition keyword (visibility, async, export...).
const MODIFIERS: &[&str] = &[
    "pub",
    "public",
    "private",
    "protected",
    "internal",
    "static",
    "async",
    "export",
    "default",
    "abstract",
    "final",
    "override",
    "virtual",
    "unsafe",
    "extern",
    "inline",
    "const",
    "sealed",
    "partial",
    "open",
    "data",
    "case",
    "declare",
    "readonly",
];

/// True when the line, after indentation and modifiers, starts with a definition keyword and a space.
pub fn is_definition_line(line: &[u8]) -> bool {
    let mut rest = trim_start(line);
    loop {
        let word_len = rest
            .iter()
            .position(|&b| !(is_ident(b) || b == b'!'))
            .unwrap_or(rest.len());
        let Ok(word) = std::str::from_utf8(&rest[..word_len]) else {
            return false;
        };
        let after = &rest[word_len..];
        if DEFINITION_KEYWORDS.contains(&word) {
            return after.first().is_some_and(|b| b.is_ascii_whitespace());
        }
        if !MODIFIERS.contains(&word) {
            return false;
        }
        // `pub(crate) fn`: skip the parenthesised restriction.
        let after = match after.first() {
            Some(b'(') => match after.iter().position(|&b| b == b')') {
                Some(close) => &after[close + 1..],
                None => return false,
            },
            _ => after,
        };
        let trimmed = trim_start(after);
        if trimmed.len() == after.len() {
            return false;
        }
        rest = trimmed;
    }
}

fn trim_start(b: &[u8]) -> &[u8] {
    let n = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    &b[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(
        match_count: u32,
        whole_word: bool,
        definition: bool,
        path_match: bool,
        file_lines: u32,
    ) -> f64 {
        line_score(&LineFeatures {
            match_count,
            whole_word,
            definition,
            path_match,
            file_lines,
        })
    }

    #[test]
    fn bonuses_order_lines() {
        let base = f(1, false, false, false, 100);
        assert!(f(2, false, false, false, 100) > base);
        assert!(f(1, true, false, false, 100) > base);
        assert!(f(1, false, true, false, 100) > f(1, true, false, false, 100));
        assert!(f(1, false, false, true, 100) > base);
        assert!(f(1, false, false, false, 20_000) < base);
        assert!(f(1, false, false, false, 20_000) > 0.6 * base);
    }

    #[test]
    fn definitions() {
        for yes in [
            "def parse(x):",
            "    async def run(self):",
            "class Foo(Bar):",
            "pub(crate) fn new() -> Self {",
            "func (s *Server) Serve() {",
            "export default function App() {",
            "public static class Util {",
            "type Alias = int",
        ] {
            assert!(is_definition_line(yes.as_bytes()), "{yes}");
        }
        for no in [
            "x = parse(y)",
            "    return self.fn(x)",
            "default:",
            "classy = 1",
            "# def parse",
        ] {
            assert!(!is_definition_line(no.as_bytes()), "{no}");
        }
    }

    #[test]
    fn whole_words() {
        assert!(is_whole_word(b"x = parse(y)", 4, 9));
        assert!(!is_whole_word(b"x = parser(y)", 4, 9));
        assert!(!is_whole_word(b"unparse(y)", 2, 7));
        // A match ending in punctuation is bounded on that side.
        assert!(is_whole_word(b"parse(y)", 0, 6));
    }
}
