//! Writing a new index directory, incrementally from a base index when given one.

use std::collections::HashSet;
use std::fs::{self, File};
use std::path::Path;

use rayon::prelude::*;

use super::format::{put_varint, write_content, write_postings, StoredFile};
use super::{distinct_trigrams, Trigram, TrigramIndex};
use crate::error::{invalid, Result};

/// At most this many file ids (u32, and the content store counts files in a u32).
const MAX_FILES: usize = u32::MAX as usize - 1;

/// Lines in `data`: newlines, plus one for a last line without its newline.
pub fn count_lines(data: &[u8]) -> u32 {
    let newlines = memchr::memchr_iter(b'\n', data).count();
    let partial = usize::from(!data.is_empty() && !data.ends_with(b"\n"));
    (newlines + partial).min(u32::MAX as usize) as u32
}

impl TrigramIndex {
    /// Writes an index of `files` plus the files of `base` neither in `drop` nor re-supplied into `dir`
    /// (which must exist and be empty), fsyncs it and opens it.
    pub fn build(
        dir: &Path,
        files: &[(String, &[u8])],
        base: Option<&TrigramIndex>,
        drop: &[String],
    ) -> Result<TrigramIndex> {
        if fs::read_dir(dir)?.next().is_some() {
            return invalid(format!("index directory {} is not empty", dir.display()));
        }
        let mut supplied: HashSet<&str> = HashSet::with_capacity(files.len());
        for (path, _) in files {
            if !supplied.insert(path.as_str()) {
                return invalid(format!("duplicate path {path:?} in files"));
            }
        }
        let dropped: HashSet<&str> = drop.iter().map(String::as_str).collect();
        let mut docs: Vec<(&str, &[u8])> = Vec::new();
        if let Some(base) = base {
            for (id, path) in base.paths().iter().enumerate() {
                if !supplied.contains(path.as_str()) && !dropped.contains(path.as_str()) {
                    docs.push((path, base.data(id as u32)));
                }
            }
        }
        docs.extend(files.iter().map(|(p, d)| (p.as_str(), *d)));
        if docs.len() > MAX_FILES {
            return invalid(format!("too many files: {}", docs.len()));
        }
        let stored: Vec<StoredFile<'_>> = docs
            .par_iter()
            .map(|&(path, data)| StoredFile {
                path,
                data,
                lines: count_lines(data),
            })
            .collect();
        write_content(dir, &stored)?;
        let (table, blob) = postings(&docs);
        write_postings(dir, docs.len(), &table, &blob)?;
        File::open(dir)?.sync_all()?;
        TrigramIndex::open(dir)
    }
}

/// The trigram table (trigram, count, offset) and the delta + varint encoded posting lists.
fn postings(docs: &[(&str, &[u8])]) -> (Vec<(Trigram, u32, u64)>, Vec<u8>) {
    let per_file: Vec<Vec<Trigram>> = docs
        .par_iter()
        .map(|(_, data)| distinct_trigrams(data))
        .collect();
    let total = per_file.iter().map(Vec::len).sum();
    let mut pairs: Vec<u64> = Vec::with_capacity(total);
    for (id, tris) in per_file.into_iter().enumerate() {
        pairs.extend(tris.into_iter().map(|t| ((t as u64) << 32) | id as u64));
    }
    pairs.par_sort_unstable();
    let mut table: Vec<(Trigram, u32, u64)> = Vec::new();
    let mut blob: Vec<u8> = Vec::with_capacity(total + total / 4);
    let mut prev_id = 0u32;
    for pair in pairs {
        let (t, id) = ((pair >> 32) as u32, pair as u32);
        match table.last_mut() {
            Some(last) if last.0 == t => {
                last.1 += 1;
                put_varint(&mut blob, id - prev_id);
            }
            _ => {
                table.push((t, 1, blob.len() as u64));
                put_varint(&mut blob, id);
            }
        }
        prev_id = id;
    }
    (table, blob)
}
