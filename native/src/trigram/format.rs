//! On-disk layout of an index directory and the memory-mapped reader.
//!
//! `content.bin` (the content store), all integers little-endian:
//! ```text
//! magic "CSCONT01" | version u32 | num_files u32 | paths_len u64 | data_len u64
//! data_offsets  (num_files + 1) x u64   into the data blob
//! path_offsets  (num_files + 1) x u64   into the paths blob
//! line_counts   num_files x u32         lines per file (for the long-file penalty)
//! paths blob (UTF-8) | data blob (every file's bytes, concatenated)
//! ```
//! `postings.bin`:
//! ```text
//! magic "CSTRIG01" | version u32 | num_files u32 | num_trigrams u32 | reserved u32 | postings_len u64
//! table  num_trigrams x (trigram u32, count u32, offset u64), sorted by trigram (binary search)
//! postings blob: per trigram, its file ids ascending, delta + LEB128-varint encoded
//! ```

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use super::Trigram;
use crate::error::{corrupt, Result};

pub const CONTENT_FILE: &str = "content.bin";
pub const POSTINGS_FILE: &str = "postings.bin";
const CONTENT_MAGIC: &[u8; 8] = b"CSCONT01";
const POSTINGS_MAGIC: &[u8; 8] = b"CSTRIG01";
/// Bumped on any layout change, so an old index is refused instead of misread.
const VERSION: u32 = 1;
const HEADER_LEN: usize = 32;
const TABLE_ENTRY_LEN: usize = 16;
/// A 3-byte trigram never exceeds this key.
const MAX_TRIGRAM: u32 = 0x00ff_ffff;

#[inline]
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

#[inline]
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// One trigram's entry in the postings table.
#[derive(Clone, Copy, Debug)]
pub struct TableEntry {
    pub trigram: Trigram,
    pub count: u32,
    pub start: usize,
    pub end: usize,
}

/// An open, validated, memory-mapped index.
pub struct TrigramIndex {
    dir: PathBuf,
    content: Mmap,
    postings: Mmap,
    num_files: usize,
    num_trigrams: usize,
    data_offsets_at: usize,
    line_counts_at: usize,
    data_at: usize,
    table_at: usize,
    postings_at: usize,
    paths: Vec<String>,
    ids: HashMap<String, u32>,
}

impl TrigramIndex {
    /// Opens and validates `dir`; damage gives `Error::Corrupt`, never a panic.
    pub fn open(dir: &Path) -> Result<TrigramIndex> {
        let content = map(&dir.join(CONTENT_FILE))?;
        let postings = map(&dir.join(POSTINGS_FILE))?;
        let c = ContentLayout::validate(&content)?;
        let p = PostingsLayout::validate(&postings, c.num_files)?;
        let paths = c.read_paths(&content)?;
        let mut ids = HashMap::with_capacity(paths.len());
        for (i, path) in paths.iter().enumerate() {
            if ids.insert(path.clone(), i as u32).is_some() {
                return corrupt(format!("duplicate path {path:?}"));
            }
        }
        Ok(TrigramIndex {
            dir: dir.to_path_buf(),
            num_files: c.num_files,
            num_trigrams: p.num_trigrams,
            data_offsets_at: HEADER_LEN,
            line_counts_at: c.line_counts_at,
            data_at: c.data_at,
            table_at: HEADER_LEN,
            postings_at: p.postings_at,
            content,
            postings,
            paths,
            ids,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn num_files(&self) -> usize {
        self.num_files
    }

    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    pub fn path(&self, id: u32) -> &str {
        &self.paths[id as usize]
    }

    pub fn id_of(&self, path: &str) -> Option<u32> {
        self.ids.get(path).copied()
    }

    /// The stored bytes of file `id` (validated at open, so in bounds).
    pub fn data(&self, id: u32) -> &[u8] {
        let at = self.data_offsets_at + id as usize * 8;
        let start = u64_at(&self.content, at) as usize;
        let end = u64_at(&self.content, at + 8) as usize;
        &self.content[self.data_at + start..self.data_at + end]
    }

    pub fn content(&self, path: &str) -> Option<&[u8]> {
        self.id_of(path).map(|id| self.data(id))
    }

    /// Lines `first..=last` (1-based) of a stored file, joined by their newlines, without the last one's:
    /// the text `content.split('\n')[first - 1:last]` joins. Lines past the end are absent, not an error.
    pub fn lines(&self, path: &str, first: u32, last: u32) -> Option<&[u8]> {
        let data = self.content(path)?;
        let first = first.max(1) as usize;
        if (last as usize) < first {
            return Some(&data[..0]);
        }
        let mut newlines = memchr::memchr_iter(b'\n', data);
        let start = match first {
            1 => 0,
            n => newlines.nth(n - 2).map_or(data.len(), |at| at + 1),
        };
        let end = newlines
            .nth(last as usize - first)
            .unwrap_or(data.len())
            .max(start);
        Some(&data[start..end])
    }

    pub fn line_count(&self, id: u32) -> u32 {
        u32_at(&self.content, self.line_counts_at + id as usize * 4)
    }

    pub fn postings_bytes(&self) -> u64 {
        self.postings.len() as u64
    }

    pub fn content_bytes(&self) -> u64 {
        self.content.len() as u64
    }

    pub fn num_trigrams(&self) -> usize {
        self.num_trigrams
    }

    /// The `i`-th table entry (table order is trigram order); `i < num_trigrams()`.
    pub fn entry(&self, i: usize) -> TableEntry {
        let at = self.table_at + i * TABLE_ENTRY_LEN;
        let start = u64_at(&self.postings, at + 8) as usize;
        let end = if i + 1 < self.num_trigrams {
            u64_at(&self.postings, at + TABLE_ENTRY_LEN + 8) as usize
        } else {
            self.postings.len() - self.postings_at
        };
        TableEntry {
            trigram: u32_at(&self.postings, at),
            count: u32_at(&self.postings, at + 4),
            start,
            end,
        }
    }

    /// Binary search of the trigram table.
    pub fn lookup(&self, t: Trigram) -> Option<TableEntry> {
        let (mut lo, mut hi) = (0usize, self.num_trigrams);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let key = u32_at(&self.postings, self.table_at + mid * TABLE_ENTRY_LEN);
            match key.cmp(&t) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(self.entry(mid)),
            }
        }
        None
    }

    /// Number of files containing `t` (0 when absent).
    pub fn count(&self, t: Trigram) -> usize {
        self.lookup(t).map_or(0, |e| e.count as usize)
    }

    /// Decodes the sorted file ids of `t`; a damaged list gives `Error::Corrupt`.
    pub fn posting_list(&self, t: Trigram) -> Result<Vec<u32>> {
        let Some(e) = self.lookup(t) else {
            return Ok(Vec::new());
        };
        decode_ids(self.posting_bytes(&e), e.count as usize, self.num_files)
    }

    /// The encoded posting list of a table entry.
    pub fn posting_bytes(&self, e: &TableEntry) -> &[u8] {
        &self.postings[self.postings_at + e.start..self.postings_at + e.end]
    }
}

fn map(path: &Path) -> Result<Mmap> {
    let file = File::open(path)?;
    // SAFETY: index files are written once and never modified in place (new generations go to new
    // directories), so the mapping does not change under us.
    let mmap = unsafe { Mmap::map(&file)? };
    Ok(mmap)
}

struct ContentLayout {
    num_files: usize,
    path_offsets_at: usize,
    line_counts_at: usize,
    paths_at: usize,
    data_at: usize,
}

impl ContentLayout {
    fn validate(b: &[u8]) -> Result<ContentLayout> {
        if b.len() < HEADER_LEN || &b[..8] != CONTENT_MAGIC {
            return corrupt(format!("{CONTENT_FILE}: bad magic"));
        }
        if u32_at(b, 8) != VERSION {
            return corrupt(format!(
                "{CONTENT_FILE}: unsupported version {}",
                u32_at(b, 8)
            ));
        }
        let num_files = u32_at(b, 12) as usize;
        let (paths_len, data_len) = (u64_at(b, 16), u64_at(b, 24));
        let offsets_len = (num_files as u64 + 1) * 8;
        let expected = HEADER_LEN as u64 + 2 * offsets_len + num_files as u64 * 4;
        let expected = expected
            .checked_add(paths_len)
            .and_then(|x| x.checked_add(data_len));
        if expected != Some(b.len() as u64) {
            return corrupt(format!(
                "{CONTENT_FILE}: length {} does not match its header",
                b.len()
            ));
        }
        let path_offsets_at = HEADER_LEN + offsets_len as usize;
        let line_counts_at = path_offsets_at + offsets_len as usize;
        let paths_at = line_counts_at + num_files * 4;
        let data_at = paths_at + paths_len as usize;
        check_offsets(b, HEADER_LEN, num_files, data_len, "data")?;
        check_offsets(b, path_offsets_at, num_files, paths_len, "path")?;
        Ok(ContentLayout {
            num_files,
            path_offsets_at,
            line_counts_at,
            paths_at,
            data_at,
        })
    }

    fn read_paths(&self, b: &[u8]) -> Result<Vec<String>> {
        (0..self.num_files)
            .map(|i| {
                let start = u64_at(b, self.path_offsets_at + i * 8) as usize;
                let end = u64_at(b, self.path_offsets_at + i * 8 + 8) as usize;
                match std::str::from_utf8(&b[self.paths_at + start..self.paths_at + end]) {
                    Ok(s) => Ok(s.to_owned()),
                    Err(_) => corrupt(format!("{CONTENT_FILE}: path {i} is not UTF-8")),
                }
            })
            .collect()
    }
}

/// Offsets must start at 0, never decrease and end at `total`.
fn check_offsets(b: &[u8], at: usize, n: usize, total: u64, what: &str) -> Result<()> {
    let mut prev = 0u64;
    for i in 0..=n {
        let o = u64_at(b, at + i * 8);
        if (i == 0 && o != 0) || o < prev || o > total || (i == n && o != total) {
            return corrupt(format!("{CONTENT_FILE}: {what} offset {i} out of order"));
        }
        prev = o;
    }
    Ok(())
}

struct PostingsLayout {
    num_trigrams: usize,
    postings_at: usize,
}

impl PostingsLayout {
    fn validate(b: &[u8], num_files: usize) -> Result<PostingsLayout> {
        if b.len() < HEADER_LEN || &b[..8] != POSTINGS_MAGIC {
            return corrupt(format!("{POSTINGS_FILE}: bad magic"));
        }
        if u32_at(b, 8) != VERSION {
            return corrupt(format!(
                "{POSTINGS_FILE}: unsupported version {}",
                u32_at(b, 8)
            ));
        }
        if u32_at(b, 12) as usize != num_files {
            return corrupt(format!(
                "{POSTINGS_FILE}: file count differs from {CONTENT_FILE}"
            ));
        }
        let num_trigrams = u32_at(b, 16) as usize;
        let postings_len = u64_at(b, 24);
        let postings_at = HEADER_LEN as u64 + num_trigrams as u64 * TABLE_ENTRY_LEN as u64;
        if postings_at.checked_add(postings_len) != Some(b.len() as u64) {
            return corrupt(format!(
                "{POSTINGS_FILE}: length {} does not match its header",
                b.len()
            ));
        }
        let mut prev: Option<(u32, u64)> = None;
        for i in 0..num_trigrams {
            let at = HEADER_LEN + i * TABLE_ENTRY_LEN;
            let (t, count, off) = (u32_at(b, at), u32_at(b, at + 4), u64_at(b, at + 8));
            let ordered = match prev {
                None => off == 0,
                Some((pt, po)) => t > pt && off > po,
            };
            if !ordered
                || t > MAX_TRIGRAM
                || count == 0
                || count as usize > num_files
                || off >= postings_len
            {
                return corrupt(format!("{POSTINGS_FILE}: table entry {i} is invalid"));
            }
            prev = Some((t, off));
        }
        if num_trigrams == 0 && postings_len != 0 {
            return corrupt(format!("{POSTINGS_FILE}: postings without a table"));
        }
        Ok(PostingsLayout {
            num_trigrams,
            postings_at: postings_at as usize,
        })
    }
}

/// Appends `v` as a LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Decodes `count` delta-encoded ids; every id must be ascending and below `num_files`.
pub fn decode_ids(bytes: &[u8], count: usize, num_files: usize) -> Result<Vec<u32>> {
    let mut ids = Vec::with_capacity(count);
    decode_ids_into(bytes, count, num_files, &mut ids)?;
    Ok(ids)
}

/// `decode_ids` into `ids` (cleared first), so a caller decoding many lists reuses one buffer.
pub fn decode_ids_into(
    bytes: &[u8],
    count: usize,
    num_files: usize,
    ids: &mut Vec<u32>,
) -> Result<()> {
    ids.clear();
    let (mut pos, mut prev) = (0usize, 0u64);
    for i in 0..count {
        let mut delta = 0u64;
        let mut shift = 0;
        loop {
            let Some(&byte) = bytes.get(pos) else {
                return corrupt("truncated posting list");
            };
            pos += 1;
            delta |= ((byte & 0x7f) as u64) << shift;
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 28 {
                return corrupt("varint too long in a posting list");
            }
        }
        let id = if i == 0 { delta } else { prev + delta };
        if (i > 0 && delta == 0) || id >= num_files as u64 {
            return corrupt("posting list out of order or out of range");
        }
        ids.push(id as u32);
        prev = id;
    }
    if pos != bytes.len() {
        return corrupt("posting list length mismatch");
    }
    Ok(())
}

/// A file to store: its path, bytes and line count.
pub struct StoredFile<'a> {
    pub path: &'a str,
    pub data: &'a [u8],
    pub lines: u32,
}

pub fn write_content(dir: &Path, files: &[StoredFile<'_>]) -> Result<()> {
    let paths_len: u64 = files.iter().map(|f| f.path.len() as u64).sum();
    let data_len: u64 = files.iter().map(|f| f.data.len() as u64).sum();
    let mut w = BufWriter::new(File::create(dir.join(CONTENT_FILE))?);
    w.write_all(CONTENT_MAGIC)?;
    w.write_all(&VERSION.to_le_bytes())?;
    w.write_all(&(files.len() as u32).to_le_bytes())?;
    w.write_all(&paths_len.to_le_bytes())?;
    w.write_all(&data_len.to_le_bytes())?;
    write_offsets(&mut w, files.iter().map(|f| f.data.len()))?;
    write_offsets(&mut w, files.iter().map(|f| f.path.len()))?;
    for f in files {
        w.write_all(&f.lines.to_le_bytes())?;
    }
    for f in files {
        w.write_all(f.path.as_bytes())?;
    }
    for f in files {
        w.write_all(f.data)?;
    }
    finish(w)
}

fn write_offsets(w: &mut impl Write, lens: impl Iterator<Item = usize>) -> Result<()> {
    let mut off = 0u64;
    w.write_all(&off.to_le_bytes())?;
    for len in lens {
        off += len as u64;
        w.write_all(&off.to_le_bytes())?;
    }
    Ok(())
}

/// `table`: (trigram, count, offset into `blob`) sorted by trigram.
pub fn write_postings(
    dir: &Path,
    num_files: usize,
    table: &[(Trigram, u32, u64)],
    blob: &[u8],
) -> Result<()> {
    let mut w = BufWriter::new(File::create(dir.join(POSTINGS_FILE))?);
    w.write_all(POSTINGS_MAGIC)?;
    w.write_all(&VERSION.to_le_bytes())?;
    w.write_all(&(num_files as u32).to_le_bytes())?;
    w.write_all(&(table.len() as u32).to_le_bytes())?;
    w.write_all(&0u32.to_le_bytes())?;
    w.write_all(&(blob.len() as u64).to_le_bytes())?;
    for &(t, count, off) in table {
        w.write_all(&t.to_le_bytes())?;
        w.write_all(&count.to_le_bytes())?;
        w.write_all(&off.to_le_bytes())?;
    }
    w.write_all(blob)?;
    finish(w)
}

fn finish(w: BufWriter<File>) -> Result<()> {
    let file = w.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    Ok(())
}
