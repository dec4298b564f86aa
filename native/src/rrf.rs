//! Weighted reciprocal rank fusion.
//!
//! score(id) = sum over lists i containing id of weights[i] / (k + rank_i + 1), rank 0-based, summed in
//! list order (so a reference implementation gets the same floating-point result). An id repeated within
//! one list counts at its first (best) rank. Order: score descending, then best rank in any list, then id.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// One fused id: where it first appears (list, position), its score and best rank; its ranks live in
/// `Fusion::ranks`.
#[derive(Clone, Debug, PartialEq)]
pub struct Fused {
    pub first: (usize, usize),
    pub score: f64,
    pub best: usize,
    slot: usize,
}

/// The fused ids, best first, and every id's rank per list (-1: absent) in one flat table.
#[derive(Clone, Debug)]
pub struct Fusion {
    pub items: Vec<Fused>,
    ranks: Vec<i64>,
    lists: usize,
}

impl Fusion {
    pub fn ranks(&self, f: &Fused) -> &[i64] {
        &self.ranks[f.slot * self.lists..(f.slot + 1) * self.lists]
    }
}

/// FNV-1a: ids are short strings from our own services, not attacker-chosen, and SipHash costs more.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        // Fold the well-mixed high bits down: hashbrown picks buckets from the low bits.
        self.0 ^ (self.0 >> 29)
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

fn check_arguments(lists: usize, weights: &[f64], k: f64) -> Result<(), String> {
    if lists != weights.len() {
        return Err(format!("{lists} lists but {} weights", weights.len()));
    }
    if !(k.is_finite() && k >= 0.0) {
        return Err(format!("k must be a finite number >= 0, got {k}"));
    }
    if let Some(w) = weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
        return Err(format!("weights must be finite and >= 0, got {w}"));
    }
    Ok(())
}

pub fn fuse<S: AsRef<str>>(lists: &[Vec<S>], weights: &[f64], k: f64) -> Result<Fusion, String> {
    check_arguments(lists.len(), weights, k)?;
    let n = lists.len();
    let capacity = lists.iter().map(Vec::len).sum();
    let mut index: HashMap<&str, usize, BuildHasherDefault<Fnv>> =
        HashMap::with_capacity_and_hasher(capacity, Default::default());
    let mut items: Vec<Fused> = Vec::with_capacity(capacity);
    let mut ranks: Vec<i64> = Vec::with_capacity(capacity * n);
    for (i, list) in lists.iter().enumerate() {
        for (rank, id) in list.iter().enumerate() {
            let slot = *index.entry(id.as_ref()).or_insert_with(|| {
                items.push(Fused {
                    first: (i, rank),
                    score: 0.0,
                    best: rank,
                    slot: items.len(),
                });
                ranks.extend(std::iter::repeat_n(-1, n));
                items.len() - 1
            });
            let r = &mut ranks[slot * n + i];
            if *r < 0 {
                *r = rank as i64;
                items[slot].best = items[slot].best.min(rank);
            }
        }
    }
    for f in &mut items {
        for (i, &rank) in ranks[f.slot * n..(f.slot + 1) * n].iter().enumerate() {
            if rank >= 0 {
                f.score += weights[i] / (k + rank as f64 + 1.0);
            }
        }
    }
    let id = |f: &Fused| lists[f.first.0][f.first.1].as_ref();
    items.sort_unstable_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.best.cmp(&b.best))
            .then_with(|| id(a).cmp(id(b)))
    });
    Ok(Fusion {
        items,
        ranks,
        lists: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids<'a>(lists: &'a [Vec<&'a str>], out: &Fusion) -> Vec<&'a str> {
        out.items
            .iter()
            .map(|f| lists[f.first.0][f.first.1])
            .collect()
    }

    #[test]
    fn fuses_by_weighted_reciprocal_rank() {
        let lists = vec![vec!["a", "b", "c"], vec!["c", "a"]];
        let out = fuse(&lists, &[1.0, 2.0], 60.0).unwrap();
        assert_eq!(ids(&lists, &out), vec!["c", "a", "b"]);
        assert_eq!(out.items[0].score, 1.0 / 63.0 + 2.0 / 61.0);
        assert_eq!(out.ranks(&out.items[0]), [2, 0]);
        assert_eq!(out.ranks(&out.items[2]), [1, -1]);
    }

    #[test]
    fn ties_break_by_best_rank_then_id() {
        let lists = vec![vec!["b", "a"], vec!["a", "b"], vec!["z"]];
        let out = fuse(&lists, &[1.0, 1.0, 0.0], 0.0).unwrap();
        // a and b tie on score and best rank: id decides; z scores 0 with rank 0.
        assert_eq!(ids(&lists, &out), vec!["a", "b", "z"]);
    }

    #[test]
    fn duplicates_count_once_at_best_rank() {
        let lists = vec![vec!["a", "a", "b"]];
        let out = fuse(&lists, &[1.0], 1.0).unwrap();
        assert_eq!(out.items.len(), 2);
        assert_eq!(out.ranks(&out.items[0]), [0]);
    }

    #[test]
    fn rejects_bad_arguments() {
        let lists = vec![vec!["a"]];
        assert!(fuse(&lists, &[], 60.0).is_err());
        assert!(fuse(&lists, &[1.0], -1.0).is_err());
        assert!(fuse(&lists, &[f64::NAN], 60.0).is_err());
        assert!(fuse(&lists, &[-0.5], 60.0).is_err());
    }
}
