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
                a.extend(b);
                dedup(Query::And(a))
            }
            (Query::And(mut a), q) | (q, Query::And(mut a)) => {
                a.push(q);
                dedup(Query::And(a))
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
                a.extend(b);
                dedup(Query::Or(a))
            }
            (Query::Or(mut a), q) | (q, Query::Or(mut a)) => {
                a.push(q);
                dedup(Query::Or(a))
            }
            (a, b) if a == b => a,
            (a, b) => Query::Or(vec![a, b]),
        }
    }
}

fn dedup(q: Query) -> Query {
    let uniq = |v: Vec<Query>| {
        let mut out: Vec<Query> = Vec::with_capacity(v.len());
        for q in v {
            if !out.contains(&q) {
                out.push(q);
            }
        }
        out
    };
    match q {
        Query::And(v) => Query::And(uniq(v)),
        Query::Or(v) => Query::Or(uniq(v)),
        q => q,
    }
}

/// All trigrams of a literal (ASCII-lower-cased); `All` when it is shorter than 3 bytes.
pub fn literal_query(lit: &[u8]) -> Query {
    lit.windows(3)
        .map(|w| Query::Tri(trigram_of(w[0], w[1], w[2])))
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
}

fn single(s: Vec<u8>) -> Set {
    std::iter::once(s).collect()
}

impl Info {
    fn exact(set: Set) -> Info {
        Info {
            exact: Some(set),
            prefix: single(vec![]),
            suffix: single(vec![]),
            q: Query::All,
        }
    }

    fn any() -> Info {
        Info {
            exact: None,
            prefix: single(vec![]),
            suffix: single(vec![]),
            q: Query::All,
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
        match &self.exact {
            Some(e) => self.q.clone().and(set_query(e)),
            None => self
                .q
                .clone()
                .and(set_query(&self.prefix))
                .and(set_query(&self.suffix)),
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

/// Keeps a prefix (or suffix) set small: cut strings to 2 bytes (all a boundary trigram needs), else give up.
fn shrink(set: Set, keep_start: bool) -> Set {
    if set.len() <= MAX_SET {
        return set;
    }
    let cut: Set = set
        .into_iter()
        .map(|s| {
            if keep_start {
                s[..s.len().min(2)].to_vec()
            } else {
                s[s.len().saturating_sub(2)..].to_vec()
            }
        })
        .collect();
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
            return Info {
                q: a.q.clone().and(b.q.clone()),
                ..Info::exact(e)
            };
        }
    }
    let q = a
        .finalize()
        .and(b.finalize())
        .and(boundary_query(a.suffixes(), b.prefixes()));
    let prefix = match &a.exact {
        Some(ea) => cross(ea, b.prefixes()).unwrap_or_else(|| ea.clone()),
        None => a.prefix.clone(),
    };
    let suffix = match &b.exact {
        Some(eb) => cross(a.suffixes(), eb).unwrap_or_else(|| eb.clone()),
        None => b.suffix.clone(),
    };
    Info {
        exact: None,
        prefix,
        suffix,
        q,
    }
}

fn alternate(a: Info, b: Info) -> Info {
    if let (Some(ea), Some(eb)) = (&a.exact, &b.exact) {
        if ea.len() + eb.len() <= MAX_SET {
            let e: Set = ea.union(eb).cloned().collect();
            return Info {
                q: a.q.clone().or(b.q.clone()),
                ..Info::exact(e)
            };
        }
    }
    let prefix = shrink(a.prefixes().union(b.prefixes()).cloned().collect(), true);
    let suffix = shrink(a.suffixes().union(b.suffixes()).cloned().collect(), false);
    Info {
        exact: None,
        prefix,
        suffix,
        q: a.finalize().or(b.finalize()),
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
                    exact: None,
                    prefix: sub.prefixes().clone(),
                    suffix: sub.suffixes().clone(),
                    q: sub.finalize(),
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

    fn contains(q: &Query, t: &Query) -> bool {
        match q {
            Query::And(v) => v.iter().any(|x| contains(x, t)),
            x => x == t,
        }
    }
}
