//! Writing a new index directory, incrementally from a base index when given one.

use std::collections::HashSet;
use std::fs::{self, File};
use std::path::Path;

use rayon::prelude::*;

use super::format::{decode_ids_into, put_varint, write_content, write_postings, StoredFile};
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
        // The base's files that stay, in base order: their relative order is kept, so their ids map
        // monotonically and the base's sorted posting lists stay sorted after remapping.
        let kept: Vec<u32> = base.map_or_else(Vec::new, |b| {
            (0..b.num_files() as u32)
                .filter(|&id| !supplied.contains(b.path(id)) && !dropped.contains(b.path(id)))
                .collect()
        });
        if kept.len() + files.len() > MAX_FILES {
            return invalid(format!("too many files: {}", kept.len() + files.len()));
        }
        let mut stored: Vec<StoredFile<'_>> = Vec::with_capacity(kept.len() + files.len());
        if let Some(b) = base {
            stored.extend(kept.iter().map(|&id| StoredFile {
                path: b.path(id),
                data: b.data(id),
                lines: b.line_count(id),
            }));
        }
        stored.par_extend(files.par_iter().map(|(path, data)| StoredFile {
            path,
            data,
            lines: count_lines(data),
        }));
        write_content(dir, &stored)?;
        let new_docs: Vec<&[u8]> = files.iter().map(|&(_, data)| data).collect();
        let encoded = match base {
            Some(b) if !kept.is_empty() => merged_postings(b, &kept, &new_docs)?,
            _ => {
                let mut out = Encoder::default();
                out.pairs(&new_pairs(&new_docs, 0));
                out
            }
        };
        write_postings(dir, stored.len(), &encoded.table, &encoded.blob)?;
        File::open(dir)?.sync_all()?;
        TrigramIndex::open(dir)
    }
}

/// `(trigram << 32) | id` for every distinct trigram of every doc, sorted; doc `i` gets id `first_id + i`.
fn new_pairs(docs: &[&[u8]], first_id: u32) -> Vec<u64> {
    let per_file: Vec<Vec<Trigram>> = docs.par_iter().map(|d| distinct_trigrams(d)).collect();
    let mut pairs: Vec<u64> = Vec::with_capacity(per_file.iter().map(Vec::len).sum());
    for (i, tris) in per_file.into_iter().enumerate() {
        let id = first_id as u64 + i as u64;
        pairs.extend(tris.into_iter().map(|t| ((t as u64) << 32) | id));
    }
    pairs.par_sort_unstable();
    pairs
}

#[inline]
fn pair_trigram(pair: u64) -> Trigram {
    (pair >> 32) as Trigram
}

/// End of the run of pairs at `at` that share its trigram.
fn run_end(pairs: &[u64], at: usize) -> usize {
    let t = pair_trigram(pairs[at]);
    at + pairs[at..].partition_point(|&p| pair_trigram(p) == t)
}

/// The trigram table (trigram, count, offset) and the delta + varint encoded posting lists, built in
/// trigram order.
#[derive(Default)]
struct Encoder {
    table: Vec<(Trigram, u32, u64)>,
    blob: Vec<u8>,
}

impl Encoder {
    /// Appends the list of `t` (ascending ids, trigrams in ascending order across calls); an empty list
    /// leaves no entry.
    fn list(&mut self, t: Trigram, ids: impl IntoIterator<Item = u32>) {
        let start = self.blob.len() as u64;
        let (mut count, mut prev) = (0u32, 0u32);
        for id in ids {
            put_varint(&mut self.blob, if count == 0 { id } else { id - prev });
            (count, prev) = (count + 1, id);
        }
        if count > 0 {
            self.table.push((t, count, start));
        }
    }

    /// Appends every list of sorted `pairs`.
    fn pairs(&mut self, pairs: &[u64]) {
        let mut at = 0;
        while at < pairs.len() {
            let end = run_end(pairs, at);
            self.list(
                pair_trigram(pairs[at]),
                pairs[at..end].iter().map(|&p| p as u32),
            );
            at = end;
        }
    }
}

/// The postings of the base's `kept` files (renumbered 0..kept.len() in order) followed by `new_docs`
/// (numbered from kept.len()): the base's lists are decoded, remapped and re-encoded instead of
/// re-extracting every file's trigrams, so the cost is a pass over the encoded postings plus the new docs.
/// The result equals `new_pairs` over all the files in the same order.
fn merged_postings(base: &TrigramIndex, kept: &[u32], new_docs: &[&[u8]]) -> Result<Encoder> {
    const GONE: u32 = u32::MAX;
    let mut remap = vec![GONE; base.num_files()];
    for (new_id, &old_id) in kept.iter().enumerate() {
        remap[old_id as usize] = new_id as u32;
    }
    let added = new_pairs(new_docs, kept.len() as u32);
    let mut out = Encoder {
        table: Vec::with_capacity(base.num_trigrams()),
        blob: Vec::with_capacity(base.postings_bytes() as usize + added.len() * 2),
    };
    let mut ids: Vec<u32> = Vec::new();
    let mut at = 0;
    for i in 0..base.num_trigrams() {
        let e = base.entry(i);
        while at < added.len() && pair_trigram(added[at]) < e.trigram {
            let end = run_end(&added, at);
            out.pairs(&added[at..end]);
            at = end;
        }
        let end = if at < added.len() && pair_trigram(added[at]) == e.trigram {
            run_end(&added, at)
        } else {
            at
        };
        decode_ids_into(
            base.posting_bytes(&e),
            e.count as usize,
            base.num_files(),
            &mut ids,
        )?;
        // New ids are all >= kept.len() > every remapped base id, so the chain stays ascending.
        let base_ids = ids
            .iter()
            .map(|&id| remap[id as usize])
            .filter(|&id| id != GONE);
        out.list(
            e.trigram,
            base_ids.chain(added[at..end].iter().map(|&p| p as u32)),
        );
        at = end;
    }
    out.pairs(&added[at..]);
    Ok(out)
}
