//! Weighted reciprocal rank fusion.
//!
//! score(id) = sum over lists i containing id of weights[i] / (k + rank_i + 1), rank 0-based, summed in
//! list order (so a reference implementation gets the same floating-point result). An id repeated within
//! one list counts at its first (best) rank. Order: score descending, then best rank in any list, then id.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// One fused id: where it first appears (list, position), its score and its rank per list (-1: absent).
#[derive(Clone, Debug, PartialEq)]
pub struct Fused {
    pub first: (usize, usize),
    pub score: f64,
    pub ranks: Vec<i64>,
}

/// FNV-1a: ids are short strings from our own services, not attacker-chosen, and SipHash dominates otherwise.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
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

pub fn fuse<S: AsRef<str>>(
    lists: &[Vec<S>],
    weights: &[f64],
    k: f64,
) -> Result<Vec<Fused>, String> {
    if lists.len() != weights.len() {
        return Err(format!(
            "{} lists but {} weights",
            lists.len(),
            weights.len()
        ));
    }
    if !(k.is_finite() && k >= 0.0) {
        return Err(format!("k must be a finite number >= 0, got {k}"));
    }
    if let Some(w) = weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
        return Err(format!("weights must be finite and >= 0, got {w}"));
    }
    let capacity = lists.iter().map(Vec::len).sum();
    let mut index: HashMap<&str, usize, BuildHasherDefault<Fnv>> =
        HashMap::with_capacity_and_hasher(capacity, Default::default());
    let mut fused: Vec<Fused> = Vec::with_capacity(capacity);
    for (i, list) in lists.iter().enumerate() {
        for (rank, id) in list.iter().enumerate() {
            let slot = *index.entry(id.as_ref()).or_insert_with(|| {
                fused.push(Fused {
                    first: (i, rank),
                    score: 0.0,
                    ranks: vec![-1; lists.len()],
                });
                fused.len() - 1
            });
            if fused[slot].ranks[i] < 0 {
                fused[slot].ranks[i] = rank as i64;
            }
        }
    }
    for f in &mut fused {
        for (i, &rank) in f.ranks.iter().enumerate() {
            if rank >= 0 {
                f.score += weights[i] / (k + rank as f64 + 1.0);
            }
        }
    }
    let id = |f: &Fused| lists[f.first.0][f.first.1].as_ref();
    let best = |f: &Fused| {
        f.ranks
            .iter()
            .filter(|&&r| r >= 0)
            .min()
            .copied()
            .unwrap_or(i64::MAX)
    };
    fused.sort_unstable_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| best(a).cmp(&best(b)))
            .then_with(|| id(a).cmp(id(b)))
    });
    Ok(fused)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids<'a>(lists: &'a [Vec<&'a str>], out: &[Fused]) -> Vec<&'a str> {
        out.iter().map(|f| lists[f.first.0][f.first.1]).collect()
    }

    #[test]
    fn fuses_by_weighted_reciprocal_rank() {
        let lists = vec![vec!["a", "b", "c"], vec!["c", "a"]];
        let out = fuse(&lists, &[1.0, 2.0], 60.0).unwrap();
        assert_eq!(ids(&lists, &out), vec!["c", "a", "b"]);
        assert_eq!(out[0].score, 1.0 / 63.0 + 2.0 / 61.0);
        assert_eq!(out[0].ranks, vec![2, 0]);
        assert_eq!(out[2].ranks, vec![1, -1]);
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
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].ranks, vec![0]);
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
