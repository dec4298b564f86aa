//! Deriving the trigrams a match requires: a boolean query over posting lists.
//!
//! A literal needs all of its trigrams. A regex is parsed with regex-syntax and its HIR walked bottom-up,
//! tracking for every node (as in Russ Cox's codesearch) the exact set of strings it can match when that
//! set is small, else sets of possible prefixes and suffixes plus a query that any match satisfies.
//! Every string is ASCII-lower-cased, as the index is. Whatever the caps cut is only lost precision
//! (more candidates), never a missed match.

use std::collections::BTreeSet;

use regex_syntax::hir::{Class, Hir, HirKind};

use super::{trigram_of, Trigram};

/// Most strings in an exact/prefix/suffix set: cross products beyond this are dropped (less precision).
const MAX_SET: usize = 64;
/// Largest character class expanded into literals (`[abc]`, case-folded letters); bigger ones match "anything".
const MAX_CLASS_CHARS: u32 = 16;
/// Most conditions one And keeps. Later ones would only narrow the candidates a little more, and dropping a
/// condition of an And is sound. Bounds the planner's work and the posting lists decoded per query: a
/// 1,000-character case-insensitive literal did not finish planning in 120 s with every trigram kept (now 3.5 ms).
pub const MAX_AND: usize = 64;
/// Most branches one Or keeps; a bigger Or becomes All (every file a candidate: sound, only less precise).
pub const MAX_OR: usize = 256;
/// Longest string an exact set keeps. Longer ones are turned into their trigrams now (and their 2-byte ends,
/// all a boundary trigram needs), so a long literal is not re-copied at every character of a concatenation.
const MAX_EXACT_LEN: usize = 16;

/// A boolean query over trigram posting lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Query {
    /// No requirement: every file is a candidate.
    All,
    /// Nothing can match.
    None,
    Tri(Trigram),
    And(Vec<Query>),
    Or(Vec<Query>),
}

impl Query {
    pub fn and(self, other: Query) -> Query {
        match (self, other) {
            (Query::None, _) | (_, Query::None) => Query::None,
            (Query::All, q) | (q, Query::All) => q,
            (Query::And(mut a), Query::And(b)) => {
                b.into_iter().for_each(|q| push_and(&mut a, q));
                Query::And(a)
            }
            (Query::And(mut a), q) | (q, Query::And(mut a)) => {
                push_and(&mut a, q);
                Query::And(a)
            }
            (a, b) if a == b => a,
            (a, b) => Query::And(vec![a, b]),
        }
    }

    pub fn or(self, other: Query) -> Query {
        match (self, other) {
            (Query::All, _) | (_, Query::All) => Query::All,
            (Query::None, q) | (q, Query::None) => q,
            (Query::Or(mut a), Query::Or(b)) => {
                b.into_iter().for_each(|q| push_or(&mut a, q));
                capped_or(a)
            }
            (Query::Or(mut a), q) | (q, Query::Or(mut a)) => {
                push_or(&mut a, q);
                capped_or(a)
            }
            (a, b) if a == b => a,
            (a, b) => Query::Or(vec![a, b]),
        }
    }

    /// An And that takes no more conditions.
    fn is_full(&self) -> bool {
        matches!(self, Query::And(v) if v.len() >= MAX_AND)
    }

    /// Nodes in the query tree (the planner's bound is on this).
    pub fn size(&self) -> usize {
        match self {
            Query::And(v) | Query::Or(v) => 1 + v.iter().map(Query::size).sum::<usize>(),
            _ => 1,
        }
    }
}

/// Adds a condition to an And unless it is there already or the And is full (dropping it is sound).
fn push_and(conds: &mut Vec<Query>, q: Query) {
    if conds.len() < MAX_AND && !conds.contains(&q) {
        conds.push(q);
    }
}

fn push_or(branches: &mut Vec<Query>, q: Query) {
    if branches.len() <= MAX_OR && !branches.contains(&q) {
        branches.push(q);
    }
}

fn capped_or(branches: Vec<Query>) -> Query {
    if branches.len() > MAX_OR {
        Query::All
    } else {
        Query::Or(branches)
    }
}

/// All trigrams of a literal (ASCII-lower-cased); `All` when it is shorter than 3 bytes.
/// A literal with more distinct trigrams than an And keeps requires an evenly spaced sample of them.
pub fn literal_query(lit: &[u8]) -> Query {
    let mut seen = std::collections::HashSet::new();
    let tris: Vec<Trigram> = lit
        .windows(3)
        .map(|w| trigram_of(w[0], w[1], w[2]))
        .filter(|t| seen.insert(*t))
        .collect();
    let step = tris.len().div_ceil(MAX_AND).max(1);
    tris.into_iter()
        .step_by(step)
        .map(Query::Tri)
        .fold(Query::All, Query::and)
}

type Set = BTreeSet<Vec<u8>>;

fn set_query(set: &Set) -> Query {
    set.iter()
        .map(|s| literal_query(s))
        .fold(Query::None, Query::or)
}

/// What is known about the strings one HIR node matches.
#[derive(Clone, Debug)]
struct Info {
    /// Every string the node can match, when small enough to list.
    exact: Option<Set>,
    /// Possible beginnings / endings of a match (only meaningful when `exact` is None).
    prefix: Set,
    suffix: Set,
    /// A query every file with a match satisfies.
    q: Query,
    /// `q` already requires the prefix (suffix) set's trigrams: a long concatenation carries the same prefix
    /// through every step, and adding its query again at each one made planning quadratic.
    prefix_in_q: bool,
    suffix_in_q: bool,
}

fn single(s: Vec<u8>) -> Set {
    std::iter::once(s).collect()
}

impl Info {
    fn exact(set: Set) -> Info {
        Info {
            exact: Some(set),
            ..Info::any()
        }
    }

    fn any() -> Info {
        Info {
            exact: None,
            prefix: single(vec![]),
            suffix: single(vec![]),
            q: Query::All,
            prefix_in_q: false,
            suffix_in_q: false,
        }
    }

    fn prefixes(&self) -> &Set {
        self.exact.as_ref().unwrap_or(&self.prefix)
    }

    fn suffixes(&self) -> &Set {
        self.exact.as_ref().unwrap_or(&self.suffix)
    }

    /// Everything known, as one query.
    fn finalize(&self) -> Query {
        self.clone().into_query()
    }

    /// `finalize` without copying the query (for a node that is used up).
    fn into_query(self) -> Query {
        match &self.exact {
            Some(e) => self.q.and(set_query(e)),
            None => {
                let q = if self.prefix_in_q {
                    self.q
                } else {
                    self.q.and(set_query(&self.prefix))
                };
                if self.suffix_in_q {
                    q
                } else {
                    q.and(set_query(&self.suffix))
                }
            }
        }
    }

    /// An exact set, unless its strings are long: then their trigrams join the query and only their 2-byte
    /// ends stay (prefixes and suffixes of a match, for the trigrams across the next boundary).
    fn exact_or_required(set: Set, q: Query) -> Info {
        if set.iter().all(|s| s.len() <= MAX_EXACT_LEN) {
            return Info {
                q,
                ..Info::exact(set)
            };
        }
        Info {
            prefix: set.iter().map(|s| s[..s.len().min(2)].to_vec()).collect(),
            suffix: set
                .iter()
                .map(|s| s[s.len().saturating_sub(2)..].to_vec())
                .collect(),
            q: q.and(set_query(&set)),
            ..Info::any()
        }
    }
}

fn lower(bytes: &[u8]) -> Vec<u8> {
    bytes.to_ascii_lowercase()
}

fn cross(a: &Set, b: &Set) -> Option<Set> {
    if a.len() * b.len() > MAX_SET {
        return None;
    }
    Some(
        a.iter()
            .flat_map(|x| b.iter().map(move |y| [x.as_slice(), y.as_slice()].concat()))
            .collect(),
    )
}

/// Keeps a prefix (or suffix) set small: strings over MAX_EXACT_LEN bytes are cut (a shorter beginning is still
/// a beginning), then, when there are too many, cut to 2 bytes (all a boundary trigram needs), else given up.
fn shrink(set: Set, keep_start: bool) -> Set {
    let cut_to = |set: Set, n: usize| -> Set {
        set.into_iter()
            .map(|s| {
                if keep_start {
                    s[..s.len().min(n)].to_vec()
                } else {
                    s[s.len().saturating_sub(n)..].to_vec()
                }
            })
            .collect()
    };
    let set = if set.iter().any(|s| s.len() > MAX_EXACT_LEN) {
        cut_to(set, MAX_EXACT_LEN)
    } else {
        set
    };
    if set.len() <= MAX_SET {
        return set;
    }
    let cut = cut_to(set, 2);
    if cut.len() <= MAX_SET {
        cut
    } else {
        single(vec![])
    }
}

/// The trigrams spanning the boundary between a suffix of `a` and a prefix of `b`.
fn boundary_query(a: &Set, b: &Set) -> Query {
    let ends: Set = a
        .iter()
        .map(|s| s[s.len().saturating_sub(2)..].to_vec())
        .collect();
    let starts: Set = b.iter().map(|s| s[..s.len().min(2)].to_vec()).collect();
    cross(&ends, &starts).map_or(Query::All, |joined| set_query(&joined))
}

fn concat(a: Info, b: Info) -> Info {
    if let (Some(ea), Some(eb)) = (&a.exact, &b.exact) {
        if let Some(e) = cross(ea, eb) {
            return Info::exact_or_required(e, a.q.and(b.q));
        }
    }
    if a.q.is_full() {
        // Nothing more can be required: keep what a match's end looks like for an enclosing node, no more.
        let suffix = match &b.exact {
            Some(eb) => eb.clone(),
            None => b.suffix.clone(),
        };
        return Info {
            prefix: a.prefix,
            suffix: shrink(suffix, false),
            q: a.q,
            prefix_in_q: a.prefix_in_q,
            ..Info::any()
        };
    }
    let boundary = boundary_query(a.suffixes(), b.prefixes());
    // The new prefix (suffix) is a's (b's) when that is known only as a prefix (suffix) or exactly: then the
    // query below requires it already.
    let (prefix, prefix_in_q) = match &a.exact {
        Some(ea) => match cross(ea, b.prefixes()) {
            Some(p) => (p, false),
            None => (ea.clone(), true),
        },
        None => (a.prefix.clone(), true),
    };
    let (suffix, suffix_in_q) = match &b.exact {
        Some(eb) => match cross(a.suffixes(), eb) {
            Some(p) => (p, false),
            None => (eb.clone(), true),
        },
        None => (b.suffix.clone(), true),
    };
    // Shrinking only cuts strings: what `q` requires still implies their (shorter) trigram sets.
    let (prefix, suffix) = (shrink(prefix, true), shrink(suffix, false));
    Info {
        prefix,
        suffix,
        prefix_in_q,
        suffix_in_q,
        q: a.into_query().and(b.into_query()).and(boundary),
        exact: None,
    }
}

fn alternate(a: Info, b: Info) -> Info {
    if let (Some(ea), Some(eb)) = (&a.exact, &b.exact) {
        if ea.len() + eb.len() <= MAX_SET {
            let e: Set = ea.union(eb).cloned().collect();
            return Info {
                q: a.q.or(b.q),
                ..Info::exact(e)
            };
        }
    }
    let prefix = shrink(a.prefixes().union(b.prefixes()).cloned().collect(), true);
    let suffix = shrink(a.suffixes().union(b.suffixes()).cloned().collect(), false);
    Info {
        prefix,
        suffix,
        q: a.into_query().or(b.into_query()),
        ..Info::any()
    }
}

/// The lower-cased UTF-8 (or byte) strings of a small class; None when it is too large to expand.
fn class_literals(class: &Class) -> Option<Set> {
    match class {
        Class::Unicode(c) => {
            let size: u32 = c
                .ranges()
                .iter()
                .map(|r| r.end() as u32 - r.start() as u32 + 1)
                .sum();
            (size <= MAX_CLASS_CHARS).then(|| {
                let mut buf = [0u8; 4];
                c.ranges()
                    .iter()
                    .flat_map(|r| r.start()..=r.end())
                    .map(|ch| lower(ch.encode_utf8(&mut buf).as_bytes()))
                    .collect()
            })
        }
        Class::Bytes(c) => {
            let size: u32 = c
                .ranges()
                .iter()
                .map(|r| r.end() as u32 - r.start() as u32 + 1)
                .sum();
            (size <= MAX_CLASS_CHARS).then(|| {
                c.ranges()
                    .iter()
                    .flat_map(|r| r.start()..=r.end())
                    .map(|b| lower(&[b]))
                    .collect()
            })
        }
    }
}

fn info(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::exact(single(vec![])),
        HirKind::Literal(lit) => Info::exact(single(lower(&lit.0))),
        HirKind::Class(c) => class_literals(c).map_or_else(Info::any, Info::exact),
        HirKind::Capture(c) => info(&c.sub),
        HirKind::Repetition(r) => {
            let sub = info(&r.sub);
            match (r.min, r.max) {
                (1, Some(1)) => sub,
                (0, Some(1)) => match sub.exact {
                    Some(mut e) if e.len() < MAX_SET => {
                        e.insert(vec![]);
                        Info::exact(e)
                    }
                    _ => Info::any(),
                },
                (0, _) => Info::any(),
                _ => Info {
                    prefix: sub.prefixes().clone(),
                    suffix: sub.suffixes().clone(),
                    q: sub.finalize(),
                    prefix_in_q: true,
                    suffix_in_q: true,
                    exact: None,
                },
            }
        }
        HirKind::Concat(subs) => subs
            .iter()
            .map(info)
            .fold(Info::exact(single(vec![])), concat),
        HirKind::Alternation(subs) => subs
            .iter()
            .map(info)
            .reduce(alternate)
            .unwrap_or_else(|| Info::exact(Set::new())),
    }
}

/// The query any file containing a match of `hir` satisfies.
pub fn regex_query(hir: &Hir) -> Query {
    info(hir).finalize()
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_syntax::ParserBuilder;

    fn tri(s: &str) -> Query {
        let b = s.as_bytes();
        Query::Tri(trigram_of(b[0], b[1], b[2]))
    }

    fn q(pattern: &str, case_insensitive: bool) -> Query {
        let hir = ParserBuilder::new()
            .case_insensitive(case_insensitive)
            .utf8(false)
            .build()
            .parse(pattern)
            .unwrap();
        regex_query(&hir)
    }

    fn and(parts: &[&str]) -> Query {
        parts.iter().map(|s| tri(s)).fold(Query::All, Query::and)
    }

    #[test]
    fn literal_needs_all_its_trigrams() {
        assert_eq!(literal_query(b"Parse"), and(&["par", "ars", "rse"]));
        assert_eq!(literal_query(b"ab"), Query::All);
    }

    #[test]
    fn regex_literal_matches_literal_query() {
        assert_eq!(q("parse", false), and(&["par", "ars", "rse"]));
        // Case folding gives the same lower-cased trigrams.
        assert_eq!(q("PaRtY", true), and(&["par", "art", "rty"]));
    }

    #[test]
    fn alternation_is_or() {
        assert_eq!(
            q("foo|barbaz", false),
            Query::Or(vec![and(&["bar", "arb", "rba", "baz"]), and(&["foo"])])
        );
    }

    #[test]
    fn star_and_optional_require_nothing_from_themselves() {
        assert_eq!(q("(abc)*", false), Query::All);
        assert_eq!(q(r"\w+", false), Query::All);
        assert_eq!(q("x?", false), Query::All);
        // The required parts around a star are kept.
        let got = q(r"def \w*_cache", false);
        for t in ["def", "ef ", "_ca", "cac", "ach", "che"] {
            assert!(contains(&got, &tri(t)), "{t} missing in {got:?}");
        }
    }

    #[test]
    fn plus_keeps_its_operand() {
        assert_eq!(q("(abcd)+", false), and(&["abc", "bcd"]));
    }

    #[test]
    fn small_classes_expand_into_literals() {
        assert_eq!(
            q("ab[cd]", false),
            Query::Or(vec![and(&["abc"]), and(&["abd"])])
        );
        // A large class is "anything": only the literal part stays.
        assert_eq!(q("[a-z]+_cache", false), and(&["_ca", "cac", "ach", "che"]));
    }

    #[test]
    fn impossible_class_is_none() {
        assert_eq!(q(r"abc[^\s\S]", false), Query::None);
    }

    #[test]
    fn big_alternations_are_capped_but_sound() {
        let words: Vec<String> = (0..200).map(|i| format!("word{i:03}x")).collect();
        let got = q(&words.join("|"), false);
        // Too many strings to list: an OR of their trigram sets, each branch requiring "wor".
        match &got {
            Query::Or(v) => assert_eq!(v.len(), 200),
            other => panic!("unexpected {other:?}"),
        }
    }

    /// A pattern's query stays small however long the pattern (issue 20: plans of 400-1,000 characters took
    /// seconds to minutes), and it is still sound: the pattern's own text satisfies it.
    #[test]
    fn long_patterns_plan_small_sound_queries() {
        let lorem =
            "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor ks ";
        let mut seed = 7u64;
        let random: String = (0..2048)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                char::from(b' ' + (seed % 95) as u8)
            })
            .collect();
        for text in [
            lorem.repeat(25),
            random,
            "sk".repeat(1024),
            "a".repeat(2048),
        ] {
            let text = &text[..text.len().min(2048)];
            for case_insensitive in [false, true] {
                let hir = ParserBuilder::new()
                    .case_insensitive(case_insensitive)
                    .utf8(false)
                    .build()
                    .parse(&regex::escape(text))
                    .unwrap();
                let got = regex_query(&hir);
                assert!(got.size() <= 64 * 64 * 4, "{} nodes", got.size());
                assert!(
                    satisfied(&got, &distinct(text.as_bytes())),
                    "unsound for {text:.40}"
                );
                assert_ne!(got, Query::All, "no trigram kept for {text:.40}");
            }
        }
    }

    fn distinct(text: &[u8]) -> BTreeSet<Trigram> {
        crate::trigram::distinct_trigrams(text)
            .into_iter()
            .collect()
    }

    fn satisfied(q: &Query, have: &BTreeSet<Trigram>) -> bool {
        match q {
            Query::All => true,
            Query::None => false,
            Query::Tri(t) => have.contains(t),
            Query::And(v) => v.iter().all(|x| satisfied(x, have)),
            Query::Or(v) => v.iter().any(|x| satisfied(x, have)),
        }
    }

    fn contains(q: &Query, t: &Query) -> bool {
        match q {
            Query::And(v) => v.iter().any(|x| contains(x, t)),
            x => x == t,
        }
    }
}
