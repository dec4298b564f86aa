//! The trigram index against a naive line-by-line scan, incremental builds and damaged files.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use _native::budget::{Budget, CancelFlag};
use _native::error::Error;
use _native::trigram::{requires_trigrams, SearchRequest, TrigramIndex};
use regex::bytes::RegexBuilder;

/// xorshift64*: deterministic data without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "def",
    "class",
    "parse",
    "Parser",
    "HTTPResponse",
    "get_cache",
    "lru_cache",
    "raise",
    "ValueError",
    "return",
    "self",
    "x",
    "42",
    "0xFF",
    "fn",
    "struct",
    "import",
    "os.path",
    "naïve",
    "ÉTAT",
    "(",
    ")",
    ":",
    "=",
    "+",
    "\t",
    "KeyError",
    "cache",
    "Cache",
    "CACHE",
];

fn gen_file(rng: &mut Rng) -> Vec<u8> {
    let lines = 1 + rng.below(40);
    let mut out = String::new();
    for _ in 0..lines {
        let words = rng.below(10);
        for w in 0..words {
            if w > 0 {
                out.push(' ');
            }
            out.push_str(WORDS[rng.below(WORDS.len())]);
        }
        out.push_str(if rng.below(10) == 0 { "\r\n" } else { "\n" });
    }
    if rng.below(3) == 0 {
        out.pop(); // no final newline
    }
    out.into_bytes()
}

fn corpus(seed: u64, n: usize) -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| (format!("src/m{i:03}.py"), gen_file(&mut rng)))
        .collect()
}

fn tmpdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cs-native-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn build(
    dir: &Path,
    files: &[(String, Vec<u8>)],
    base: Option<&TrigramIndex>,
    drop: &[String],
) -> TrigramIndex {
    let borrowed: Vec<(String, &[u8])> = files
        .iter()
        .map(|(p, d)| (p.clone(), d.as_slice()))
        .collect();
    TrigramIndex::build(dir, &borrowed, base, drop).unwrap()
}

type Hits = BTreeSet<(String, u32)>;

fn search(index: &TrigramIndex, pattern: &str, is_regex: bool, cs: bool) -> (Hits, bool) {
    let req = SearchRequest {
        pattern,
        is_regex,
        case_sensitive: cs,
        limit: usize::MAX,
        allowed: None,
    };
    let r = index.search(&req).unwrap();
    (
        r.matches.into_iter().map(|m| (m.path, m.line)).collect(),
        r.full_scan,
    )
}

/// Lines (1-based) where the pattern matches, checking each line on its own.
fn naive(files: &[(String, Vec<u8>)], pattern: &str, is_regex: bool, cs: bool) -> Hits {
    let source = if is_regex {
        pattern.to_owned()
    } else {
        regex::escape(pattern)
    };
    let re = RegexBuilder::new(&source)
        .case_insensitive(!cs)
        .multi_line(true)
        .build()
        .unwrap();
    let mut out = Hits::new();
    for (path, data) in files {
        let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        if data.ends_with(b"\n") {
            lines.pop();
        }
        for (i, line) in lines.iter().enumerate() {
            if re.is_match(line) {
                out.insert((path.clone(), i as u32 + 1));
            }
        }
    }
    out
}

#[test]
fn literal_and_regex_search_equal_a_naive_scan() {
    let files = corpus(7, 120);
    let dir = tmpdir("naive");
    let index = build(&dir, &files, None, &[]);
    let literals = [
        "cache",
        "Cache",
        "get_cache",
        "HTTPRes",
        "ror",
        "naïve",
        "état",
        "x",
        "(",
        "absent_word",
        "42 0x",
    ];
    for lit in literals {
        for cs in [true, false] {
            let (got, _) = search(&index, lit, false, cs);
            assert_eq!(
                got,
                naive(&files, lit, false, cs),
                "literal {lit:?} case_sensitive={cs}"
            );
        }
    }
    let regexes = [
        r"def \w+_cache",
        r"raise \w+Error",
        r"^class ",
        r"(parse|Parser)\(",
        r"[A-Z]{4,}",
        r"lru_cache|KeyError",
        r"ca[cC]he\b",
        r"\d+",
        r"self$",
        r"É?tat",
        r"(?i)http(response)?",
    ];
    for re in regexes {
        for cs in [true, false] {
            let (got, _) = search(&index, re, true, cs);
            assert_eq!(
                got,
                naive(&files, re, true, cs),
                "regex {re:?} case_sensitive={cs}"
            );
        }
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn full_scan_only_when_nothing_is_required() {
    let files = corpus(3, 20);
    let dir = tmpdir("fullscan");
    let index = build(&dir, &files, None, &[]);
    assert!(search(&index, "ab", false, true).1);
    assert!(search(&index, r"\w+", true, true).1);
    assert!(!search(&index, "get_cache", false, true).1);
    assert!(!search(&index, r"def \w+", true, true).1);
    let req = SearchRequest {
        pattern: "get_cache",
        is_regex: false,
        case_sensitive: true,
        limit: 10,
        allowed: None,
    };
    let r = index.search(&req).unwrap();
    assert!(r.candidate_files < r.total_files);
    assert!(r.matches.len() <= 10);
    // Deterministic order: score descending, then path, then line.
    for w in r.matches.windows(2) {
        assert!(
            w[0].score > w[1].score
                || (w[0].score == w[1].score && (&w[0].path, w[0].line) < (&w[1].path, w[1].line))
        );
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn allowed_restricts_files() {
    let files = corpus(5, 30);
    let dir = tmpdir("allowed");
    let index = build(&dir, &files, None, &[]);
    let allowed = [1u32, 3, 5];
    let req = SearchRequest {
        pattern: "cache",
        is_regex: false,
        case_sensitive: false,
        limit: 1000,
        allowed: Some(&allowed),
    };
    let r = index.search(&req).unwrap();
    assert_eq!(r.total_files, 3);
    let names: BTreeSet<&str> = allowed
        .iter()
        .map(|&i| files[i as usize].0.as_str())
        .collect();
    assert!(!r.matches.is_empty());
    assert!(r.matches.iter().all(|m| names.contains(m.path.as_str())));
    let bad = [99u32];
    let req = SearchRequest {
        allowed: Some(&bad),
        ..req
    };
    assert!(matches!(index.search(&req), Err(Error::Invalid(_))));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn incremental_build_equals_a_fresh_build() {
    let files = corpus(11, 40);
    let (d1, d2, d3) = (tmpdir("inc1"), tmpdir("inc2"), tmpdir("inc3"));
    let base = build(&d1, &files, None, &[]);
    let changed = vec![(
        files[4].0.clone(),
        b"def brand_new_function():\n    pass\n".to_vec(),
    )];
    let drop = vec![files[7].0.clone(), "not/there.py".to_owned()];
    let inc = build(&d2, &changed, Some(&base), &drop);
    let mut expected: Vec<(String, Vec<u8>)> = files
        .iter()
        .filter(|(p, _)| p != &files[4].0 && p != &files[7].0)
        .cloned()
        .collect();
    expected.extend(changed.iter().cloned());
    let fresh = build(&d3, &expected, None, &[]);
    assert_eq!(inc.num_files(), 39);
    assert_eq!(inc.content(&files[4].0).unwrap(), changed[0].1.as_slice());
    assert!(inc.content(&files[7].0).is_none());
    assert_eq!(inc.content(&files[0].0).unwrap(), files[0].1.as_slice());
    for (pattern, is_regex) in [("brand_new", false), ("cache", false), (r"raise \w+", true)] {
        assert_eq!(
            search(&inc, pattern, is_regex, true),
            search(&fresh, pattern, is_regex, true)
        );
    }
    assert_eq!(search(&inc, "brand_new", false, true).0.len(), 1);
    assert_eq!(inc.postings_bytes(), fresh.postings_bytes());
    for d in [d1, d2, d3] {
        fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn build_refuses_bad_input() {
    let dir = tmpdir("bad");
    fs::write(dir.join("junk"), b"x").unwrap();
    let one: Vec<(String, &[u8])> = vec![("a".into(), b"abc".as_slice())];
    assert!(matches!(
        TrigramIndex::build(&dir, &one, None, &[]),
        Err(Error::Invalid(_))
    ));
    let dir2 = tmpdir("dup");
    let dup: Vec<(String, &[u8])> = vec![
        ("a".into(), b"abc".as_slice()),
        ("a".into(), b"abd".as_slice()),
    ];
    assert!(matches!(
        TrigramIndex::build(&dir2, &dup, None, &[]),
        Err(Error::Invalid(_))
    ));
    let index = TrigramIndex::build(&dir2, &[], None, &[]).unwrap();
    assert_eq!(index.num_files(), 0);
    assert!(search(&index, "abc", false, true).0.is_empty());
    for d in [dir, dir2] {
        fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn damaged_files_give_a_clean_error() {
    let files = corpus(13, 10);
    let dir = tmpdir("corrupt");
    drop(build(&dir, &files, None, &[]));
    let original_postings = fs::read(dir.join("postings.bin")).unwrap();
    let original_content = fs::read(dir.join("content.bin")).unwrap();
    let mut rng = Rng(99);
    for name in ["postings.bin", "content.bin"] {
        let original = if name == "postings.bin" {
            &original_postings
        } else {
            &original_content
        };
        // Truncations and single-byte flips anywhere in the headers, tables and offsets.
        for cut in [0, 5, 31, original.len() / 2, original.len() - 1] {
            fs::write(dir.join(name), &original[..cut]).unwrap();
            assert!(
                matches!(TrigramIndex::open(&dir), Err(Error::Corrupt(_))),
                "{name} cut at {cut}"
            );
        }
        for _ in 0..300 {
            let mut damaged = original.clone();
            let at = rng.below(original.len());
            damaged[at] ^= 1 << rng.below(8);
            fs::write(dir.join(name), &damaged).unwrap();
            // Never a panic: either a clean error, or (content bytes / varint bits) an index that still searches.
            if let Ok(index) = TrigramIndex::open(&dir) {
                let req = SearchRequest {
                    pattern: "cache",
                    is_regex: false,
                    case_sensitive: true,
                    limit: 10,
                    allowed: None,
                };
                let _ = index.search(&req);
            }
        }
        fs::write(dir.join(name), original).unwrap();
    }
    fs::remove_file(dir.join("postings.bin")).unwrap();
    assert!(matches!(TrigramIndex::open(&dir), Err(Error::Io(_))));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn invalid_regex_reports_its_position() {
    let dir = tmpdir("invalid");
    let index = build(&dir, &corpus(1, 3), None, &[]);
    let req = SearchRequest {
        pattern: "abc(def",
        is_regex: true,
        case_sensitive: true,
        limit: 10,
        allowed: None,
    };
    match index.search(&req) {
        Err(Error::Invalid(m)) => assert!(m.contains("position 3"), "{m}"),
        other => panic!("unexpected {other:?}"),
    }
    let big = "(?:a{1000}){1000}";
    let req = SearchRequest {
        pattern: big,
        ..req
    };
    assert!(matches!(index.search(&req), Err(Error::Invalid(m)) if m.contains("size limit")));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_spent_budget_stops_the_search() {
    let files = corpus(9, 40);
    let dir = tmpdir("budget");
    let index = build(&dir, &files, None, &[]);
    let req = SearchRequest {
        pattern: r"\w+",
        is_regex: true,
        case_sensitive: false,
        limit: 10,
        allowed: None,
    };
    let past = Budget::new(Some(Duration::ZERO), None);
    assert!(matches!(
        index.search_within(&req, &past),
        Err(Error::Timeout(_))
    ));
    let flag = CancelFlag::default();
    flag.cancel();
    let cancelled = Budget::new(None, Some(flag));
    assert!(matches!(
        index.search_within(&req, &cancelled),
        Err(Error::Cancelled(_))
    ));
    let ample = Budget::new(Some(Duration::from_secs(600)), None);
    assert!(!index
        .search_within(&req, &ample)
        .unwrap()
        .matches
        .is_empty());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn requires_trigrams_says_when_the_index_narrows() {
    assert!(requires_trigrams(r"def \w+\s*\(", true, true).unwrap());
    assert!(requires_trigrams("get_cache", false, false).unwrap());
    assert!(!requires_trigrams(".", true, false).unwrap());
    assert!(!requires_trigrams("ab", false, true).unwrap());
    assert!(!requires_trigrams("foo|x", true, true).unwrap());
    assert!(requires_trigrams("(unclosed", true, true).is_err());
}

/// Rounds of random edits, deletes and new files, each built on the previous round's index: every
/// round's files are byte-identical to a from-scratch build of the same files in the same order.
#[test]
fn chained_incremental_builds_equal_fresh_builds_byte_for_byte() {
    let mut rng = Rng(2024);
    let mut expected = corpus(5, 30);
    let root = tmpdir("chain");
    let dir = |name: String| {
        let d = root.join(name);
        fs::create_dir_all(&d).unwrap();
        d
    };
    let mut current = build(&dir("r0".into()), &expected, None, &[]);
    let mut next_new = 0;
    for round in 1..=25 {
        let mut supplied: Vec<(String, Vec<u8>)> = Vec::new();
        let mut drop: Vec<String> = Vec::new();
        for _ in 0..rng.below(4) {
            if expected.is_empty() {
                break;
            }
            let path = expected[rng.below(expected.len())].0.clone();
            match rng.below(3) {
                0 => drop.push(path),
                _ if !supplied.iter().any(|(p, _)| p == &path) => {
                    supplied.push((path, gen_file(&mut rng)))
                }
                _ => {}
            }
        }
        for _ in 0..rng.below(3) {
            supplied.push((format!("new/n{next_new}.py"), gen_file(&mut rng)));
            next_new += 1;
        }
        if round % 7 == 0 {
            drop.push("never/indexed.py".to_owned());
        }
        let gone = |p: &String| drop.contains(p) || supplied.iter().any(|(s, _)| s == p);
        expected.retain(|(p, _)| !gone(p));
        expected.extend(supplied.iter().cloned());
        let inc = build(
            &dir(format!("inc{round}")),
            &supplied,
            Some(&current),
            &drop,
        );
        let fresh = build(&dir(format!("fresh{round}")), &expected, None, &[]);
        for file in ["content.bin", "postings.bin"] {
            assert!(
                fs::read(inc.dir().join(file)).unwrap()
                    == fs::read(fresh.dir().join(file)).unwrap(),
                "round {round}: {file} differs"
            );
        }
        for (pattern, is_regex) in [("cache", false), (r"def \w+", true), ("ÉTAT", false)] {
            assert_eq!(
                search(&inc, pattern, is_regex, false),
                search(&fresh, pattern, is_regex, false)
            );
        }
        current = inc;
    }
    // Deleting everything leaves an empty, valid index.
    let all: Vec<String> = expected.iter().map(|(p, _)| p.clone()).collect();
    let empty = build(&dir("empty".into()), &[], Some(&current), &all);
    assert_eq!(empty.num_files(), 0);
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn lines_equal_a_split_on_newlines() {
    let dir = tmpdir("lines");
    let files = vec![
        ("a.py".to_string(), b"one\ntwo\r\nthree\n\nfive\n".to_vec()),
        ("b.py".to_string(), b"no newline at all".to_vec()),
        ("c.py".to_string(), Vec::new()),
    ];
    let index = build(&dir, &files, None, &[]);
    for (path, data) in &files {
        let text = String::from_utf8(data.clone()).unwrap();
        let split: Vec<&str> = text.split('\n').collect();
        for first in 1..=split.len() as u32 + 1 {
            for last in 0..=split.len() as u32 + 1 {
                let lo = (first as usize - 1).min(split.len());
                let hi = (last as usize).min(split.len()).max(lo);
                let want = split[lo..hi].join("\n");
                let got = index.lines(path, first, last).unwrap();
                assert_eq!(got, want.as_bytes(), "{path} {first}..={last}");
            }
        }
    }
    assert!(index.lines("missing.py", 1, 2).is_none());
}
