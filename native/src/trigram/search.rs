//! Candidate selection (trigram query over posting lists) and verification of the candidates.

use memchr::memmem;
use rayon::prelude::*;
use regex::bytes::{Regex, RegexBuilder};
use regex_syntax::ParserBuilder;

use super::query::{literal_query, regex_query, Query};
use super::score::{is_definition_line, is_whole_word, line_score, LineFeatures};
use super::TrigramIndex;
use crate::budget::Budget;
use crate::error::{invalid, Error, Result};

/// Compiled-program cap for one regex: large enough for real code patterns, small enough to bound memory.
pub const REGEX_SIZE_LIMIT: usize = 16 << 20;
/// Lazy-DFA cache cap per regex (per thread): bounds memory of pathological patterns.
pub const REGEX_DFA_SIZE_LIMIT: usize = 16 << 20;
/// A returned line is cut to this many characters: minified files have megabyte-long lines.
pub const MAX_LINE_CHARS: usize = 500;
/// Matches in one file between two looks at the budget. Measured: `.` over 7.5 MB (7.5 M matches) took 2.2 s,
/// ~0.3 us a match, so 4,096 matches are ~1.2 ms between looks.
const MATCHES_PER_BUDGET_CHECK: u32 = 4096;

pub struct SearchRequest<'a> {
    pub pattern: &'a str,
    pub is_regex: bool,
    pub case_sensitive: bool,
    pub limit: usize,
    pub allowed: Option<&'a [u32]>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GrepMatch {
    pub path: String,
    pub line: u32,
    pub text: String,
    pub score: f64,
    pub match_count: u32,
    pub whole_word: bool,
    pub definition_line: bool,
}

#[derive(Clone, Debug)]
pub struct GrepResult {
    pub matches: Vec<GrepMatch>,
    pub candidate_files: usize,
    pub total_files: usize,
    pub full_scan: bool,
}

enum Matcher {
    Literal(Box<memmem::Finder<'static>>),
    Regex(Regex),
}

impl Matcher {
    /// Calls `f(start, end)` for every non-overlapping match in `hay`, in order, while it returns true.
    fn for_each(&self, hay: &[u8], mut f: impl FnMut(usize, usize) -> bool) {
        match self {
            Matcher::Literal(finder) => {
                let n = finder.needle().len();
                for s in finder.find_iter(hay) {
                    if !f(s, s + n) {
                        return;
                    }
                }
            }
            Matcher::Regex(re) => {
                for m in re.find_iter(hay) {
                    if !f(m.start(), m.end()) {
                        return;
                    }
                }
            }
        }
    }

    fn is_match(&self, hay: &[u8]) -> bool {
        match self {
            Matcher::Literal(finder) => finder.find(hay).is_some(),
            Matcher::Regex(re) => re.is_match(hay),
        }
    }
}

/// Whether matches of the pattern require any trigram, i.e. the index narrows the files to read (false: a
/// full scan). Plans without compiling the regex: cheap enough to ask before admitting a search.
pub fn requires_trigrams(pattern: &str, is_regex: bool, case_sensitive: bool) -> Result<bool> {
    Ok(plan_query(pattern, is_regex, case_sensitive)?.1 != Query::All)
}

/// The pattern as regex source (a literal escaped) and the trigram query its matches satisfy.
fn plan_query(pattern: &str, is_regex: bool, case_sensitive: bool) -> Result<(String, Query)> {
    if pattern.is_empty() {
        return invalid("pattern must not be empty");
    }
    if !is_regex && case_sensitive {
        return Ok((String::new(), literal_query(pattern.as_bytes())));
    }
    // A case-insensitive literal goes the regex way, so case folding (and its trigrams) agree exactly.
    let source = if is_regex {
        pattern.to_owned()
    } else {
        regex::escape(pattern)
    };
    let hir = ParserBuilder::new()
        .multi_line(true)
        .case_insensitive(!case_sensitive)
        .utf8(false)
        .build()
        .parse(&source)
        .map_err(|e| syntax_error(&source, &e))?;
    let query = regex_query(&hir);
    Ok((source, query))
}

/// Parses the pattern into a verifier and the trigram query its matches satisfy.
fn plan(pattern: &str, is_regex: bool, case_sensitive: bool) -> Result<(Matcher, Query)> {
    let (source, query) = plan_query(pattern, is_regex, case_sensitive)?;
    if !is_regex && case_sensitive {
        let finder = memmem::Finder::new(pattern.as_bytes()).into_owned();
        return Ok((Matcher::Literal(Box::new(finder)), query));
    }
    let re = RegexBuilder::new(&source)
        .multi_line(true)
        .case_insensitive(!case_sensitive)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => Error::Invalid(format!(
                "invalid regex at position 0: compiled regex exceeds the size limit of {limit} bytes"
            )),
            other => Error::Invalid(format!("invalid regex: {other}")),
        })?;
    Ok((Matcher::Regex(re), query))
}

/// "invalid regex at position N: <what>", N in characters of the pattern.
fn syntax_error(pattern: &str, e: &regex_syntax::Error) -> Error {
    let (offset, what) = match e {
        regex_syntax::Error::Parse(p) => (p.span().start.offset, p.kind().to_string()),
        regex_syntax::Error::Translate(t) => (t.span().start.offset, t.kind().to_string()),
        other => (0, other.to_string()),
    };
    let pos = pattern.get(..offset).map_or(offset, |s| s.chars().count());
    Error::Invalid(format!("invalid regex at position {pos}: {what}"))
}

/// Sorted file ids satisfying `q`; None means every file (no restriction).
fn eval(index: &TrigramIndex, q: &Query, budget: &Budget) -> Result<Option<Vec<u32>>> {
    budget.check("reading posting lists")?;
    match q {
        Query::All => Ok(None),
        Query::None => Ok(Some(Vec::new())),
        Query::Tri(t) => index.posting_list(*t).map(Some),
        Query::And(parts) => {
            // Rarest first: single trigrams by their stored counts, before any list is decoded.
            let mut parts: Vec<&Query> = parts.iter().collect();
            parts.sort_by_key(|p| match p {
                Query::Tri(t) => index.count(*t),
                _ => usize::MAX,
            });
            let mut acc: Option<Vec<u32>> = None;
            for p in parts {
                if let Some(ids) = eval(index, p, budget)? {
                    acc = Some(match acc {
                        None => ids,
                        Some(a) => intersect(&a, &ids),
                    });
                }
                if acc.as_ref().is_some_and(Vec::is_empty) {
                    break;
                }
            }
            Ok(acc)
        }
        Query::Or(parts) => {
            let mut acc: Vec<u32> = Vec::new();
            for p in parts {
                match eval(index, p, budget)? {
                    None => return Ok(None),
                    Some(ids) => acc = union(&acc, &ids),
                }
            }
            Ok(Some(acc))
        }
    }
}

fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(a.len().min(b.len())));
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::with_capacity(a.len() + b.len());
    out.extend_from_slice(a);
    out.extend_from_slice(b);
    out.sort_unstable();
    out.dedup();
    out
}

/// One matching line, before its text is materialised (only the top `limit` lines need text).
struct Hit {
    file: u32,
    line: u32,
    start: usize,
    end: usize,
    score: f64,
    match_count: u32,
    whole_word: bool,
    definition: bool,
}

/// All matching lines of one file.
fn verify_file(index: &TrigramIndex, file: u32, m: &Matcher, budget: &Budget) -> Result<Vec<Hit>> {
    budget.check("verifying candidate files")?;
    let data = index.data(file);
    let mut hits: Vec<Hit> = Vec::new();
    let (mut line_no, mut counted_to) = (1u32, 0usize);
    let (mut seen, mut over) = (0u32, Ok(()));
    m.for_each(data, |s, e| {
        seen += 1;
        if seen % MATCHES_PER_BUDGET_CHECK == 0 {
            over = budget.check("verifying candidate files");
            if over.is_err() {
                return false;
            }
        }
        if s == data.len() && s > 0 && data[s - 1] == b'\n' {
            return true; // an empty match after the final newline is on no line
        }
        if let Some(last) = hits.last_mut() {
            if s <= last.end {
                last.match_count += 1;
                let line = &data[last.start..last.end];
                last.whole_word |=
                    is_whole_word(line, s - last.start, e.min(last.end) - last.start);
                return true;
            }
        }
        line_no += memchr::memchr_iter(b'\n', &data[counted_to..s]).count() as u32;
        counted_to = s;
        let start = memchr::memrchr(b'\n', &data[..s]).map_or(0, |p| p + 1);
        let end = memchr::memchr(b'\n', &data[s..]).map_or(data.len(), |p| s + p);
        let line = &data[start..end];
        hits.push(Hit {
            file,
            line: line_no,
            start,
            end,
            score: 0.0,
            match_count: 1,
            whole_word: is_whole_word(line, s - start, e.min(end) - start),
            definition: is_definition_line(line),
        });
        true
    });
    over?;
    if !hits.is_empty() {
        let path_match = m.is_match(index.path(file).as_bytes());
        let file_lines = index.line_count(file);
        for h in &mut hits {
            h.score = line_score(&LineFeatures {
                match_count: h.match_count,
                whole_word: h.whole_word,
                definition: h.definition,
                path_match,
                file_lines,
            });
        }
    }
    Ok(hits)
}

/// The line's text without "\r", lossy UTF-8, at most MAX_LINE_CHARS characters.
fn line_text(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = String::from_utf8_lossy(line);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text.into_owned(),
    }
}

impl TrigramIndex {
    pub fn search(&self, req: &SearchRequest<'_>) -> Result<GrepResult> {
        self.search_within(req, &Budget::unlimited())
    }

    /// `search`, stopped with Error::Timeout / Error::Cancelled as soon as `budget` runs out (the planner's
    /// cost is bounded by the pattern's length; every loop after it looks at the budget).
    pub fn search_within(&self, req: &SearchRequest<'_>, budget: &Budget) -> Result<GrepResult> {
        let (matcher, query) = plan(req.pattern, req.is_regex, req.case_sensitive)?;
        let allowed = self.allowed_ids(req.allowed)?;
        let total_files = allowed.as_ref().map_or(self.num_files(), Vec::len);
        let full_scan = query == Query::All;
        let candidates: Vec<u32> = match (eval(self, &query, budget)?, allowed) {
            (None, None) => (0..self.num_files() as u32).collect(),
            (None, Some(a)) => a,
            (Some(c), None) => c,
            (Some(c), Some(a)) => intersect(&c, &a),
        };
        let per_file: Vec<Vec<Hit>> = candidates
            .par_iter()
            .with_max_len(1)
            .map(|&f| verify_file(self, f, &matcher, budget))
            .collect::<Result<_>>()?;
        let mut hits: Vec<Hit> = per_file.into_iter().flatten().collect();
        let order = |a: &Hit, b: &Hit| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| self.path(a.file).cmp(self.path(b.file)))
                .then(a.line.cmp(&b.line))
        };
        if hits.len() > req.limit {
            if req.limit == 0 {
                hits.clear();
            } else {
                hits.select_nth_unstable_by(req.limit - 1, order);
                hits.truncate(req.limit);
            }
        }
        hits.sort_unstable_by(order);
        let matches = hits
            .into_iter()
            .map(|h| GrepMatch {
                path: self.path(h.file).to_owned(),
                line: h.line,
                text: line_text(&self.data(h.file)[h.start..h.end]),
                score: h.score,
                match_count: h.match_count,
                whole_word: h.whole_word,
                definition_line: h.definition,
            })
            .collect();
        Ok(GrepResult {
            matches,
            candidate_files: candidates.len(),
            total_files,
            full_scan,
        })
    }

    /// `allowed` sorted and deduplicated; an id out of range is an error.
    fn allowed_ids(&self, allowed: Option<&[u32]>) -> Result<Option<Vec<u32>>> {
        let Some(allowed) = allowed else {
            return Ok(None);
        };
        if let Some(bad) = allowed.iter().find(|&&id| id as usize >= self.num_files()) {
            return invalid(format!(
                "allowed file id {bad} out of range (index has {} files)",
                self.num_files()
            ));
        }
        let mut ids = allowed.to_vec();
        ids.sort_unstable();
        ids.dedup();
        Ok(Some(ids))
    }
}
