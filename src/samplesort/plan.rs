//! The plan of a sample sort, shared by the launch code and the CPU mirror: the samples, the
//! bucket of a key, the tiles of a distribution pass and what becomes of each bucket.

#[cfg(any(test, feature = "models"))]
use crate::key::ordering_by;
use crate::device::contract::{SAMPLESORT_BUCKETS, SAMPLESORT_SPLITTERS};

/// Buckets of one distribution pass (even: open, between two splitters; odd: equal to one).
pub const BUCKETS: usize = SAMPLESORT_BUCKETS;
/// Splitters of one distribution pass.
pub const SPLITTERS: usize = SAMPLESORT_SPLITTERS;
/// Distribution passes a piece goes through at most; a bucket still too large after them (or
/// one that a pass did not make smaller: a comparator that is not a strict weak order) is
/// sorted by the mergesort.
pub const MAX_PASSES: usize = 4;

/// Keys sampled per piece, given the blocksort's tile (the samples are sorted in one tile): 8
/// per splitter, fewer where the tile is smaller (at least SPLITTERS + 1, a power of two).
pub fn sample_count(blocksort_tile: usize) -> usize {
    let per_tile = 1usize << (usize::BITS - 1 - blocksort_tile.max(1).leading_zeros());
    per_tile.clamp(SPLITTERS + 1, 8 * (SPLITTERS + 1))
}

#[cfg(any(test, feature = "models"))]
/// Position (within its piece of `length` keys) of sample `j` of `samples`: the middle of the
/// j-th of `samples` equal parts (the device's `samplesort_sample_reader`).
pub fn sample_position(length: usize, samples: usize, j: usize) -> usize {
    ((2 * j as u128 + 1) * length as u128 / (2 * samples as u128)) as usize
}

#[cfg(any(test, feature = "models"))]
/// The splitters from a piece's sorted sample: every (samples / (SPLITTERS + 1))-th item.
pub fn splitters_of<K: Copy>(sorted_samples: &[K]) -> Vec<K> {
    let every = sorted_samples.len() / (SPLITTERS + 1);
    (0..SPLITTERS).map(|i| sorted_samples[(i + 1) * every - 1]).collect()
}

#[cfg(any(test, feature = "models"))]
/// The bucket of `x` among `splitters` (SPLITTERS of them) under `less`: with u the splitters
/// not above x (an upper bound), 2u - 1 if x equals splitter u - 1, else 2u (the device's
/// `samplesort_classifier`: the same for sorted splitters). Always below BUCKETS.
pub fn bucket_of<K>(splitters: &[K], x: &K, less: impl Fn(&K, &K) -> bool) -> usize {
    let mut u = 0;
    let mut step = SPLITTERS.div_ceil(2);
    while step > 0 {
        if !less(x, &splitters[u + step - 1]) {
            u += step;
        }
        step /= 2;
    }
    if u > 0 && !less(&splitters[u - 1], x) {
        2 * u - 1
    } else {
        2 * u
    }
}

/// A piece of the keys: `start .. start + length` of the buffer it lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// Its first key.
    pub start: usize,
    /// Its keys.
    pub length: usize,
}

/// What happens to a piece after a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Already in order (an equality bucket, or at most one key): copied where it must go.
    Copy,
    /// Sorted by one CTA (at most the finishing tile of keys), with its neighbours ([`finish_jobs`]).
    Sort,
    /// Distributed again by the next pass.
    Distribute,
    /// Sorted by the mergesort: too large after MAX_PASSES passes, or not smaller than the
    /// piece it came from.
    Mergesort,
}

/// The buckets of `piece` after pass `pass` (1-based) from the bucket starts the pass wrote
/// (BUCKETS absolute positions, in order), each with its fate; empty buckets are left out.
/// Buckets over `finish_tile` keys are distributed again unless `pass` was the last allowed or
/// the bucket holds the whole piece.
pub fn bucket_fates(piece: Piece, starts: &[i64], finish_tile: usize, pass: usize) -> Vec<(Piece, Fate)> {
    let end = piece.start + piece.length;
    // Clamped into the piece and made non-decreasing, whatever the device wrote (a comparator
    // that is not a strict weak order still gives counts that sum up, but keep every piece
    // inside its parent regardless).
    let mut at = piece.start;
    let bounds: Vec<usize> = starts
        .iter()
        .enumerate()
        .map(|(b, &s)| {
            at = if b == 0 { piece.start } else { (s.max(0) as usize).clamp(at, end) };
            at
        })
        .chain(std::iter::once(end))
        .collect();
    (0..starts.len())
        .filter(|&b| bounds[b + 1] > bounds[b])
        .map(|b| {
            let bucket = Piece { start: bounds[b], length: bounds[b + 1] - bounds[b] };
            let fate = if b % 2 == 1 || bucket.length <= 1 {
                Fate::Copy
            } else if bucket.length <= finish_tile {
                Fate::Sort
            } else if pass >= MAX_PASSES || bucket.length >= piece.length {
                Fate::Mergesort
            } else {
                Fate::Distribute
            };
            (bucket, fate)
        })
        .collect()
}

/// Tiles of the distribution kernels per chunk (one CTA's run of consecutive tiles of a piece):
/// fewer chunks keep the per-(bucket, chunk) counts few, so counting, scanning and reading
/// them costs little next to the keys.
pub const CHUNK_TILES: usize = 8;

/// The chunks of a distribution pass over `pieces` in chunks of `chunk` keys: each piece's
/// first chunk, and each chunk's piece.
pub fn pass_chunks(pieces: &[Piece], chunk: usize) -> (Vec<usize>, Vec<usize>) {
    let mut first = Vec::with_capacity(pieces.len());
    let mut chunk_pieces = Vec::new();
    for (g, p) in pieces.iter().enumerate() {
        first.push(chunk_pieces.len());
        chunk_pieces.extend(std::iter::repeat_n(g, p.length.div_ceil(chunk)));
    }
    (first, chunk_pieces)
}

/// One CTA's finishing work: a piece of at most a tile sorted, or copied where it must go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FinishJob {
    /// Its keys.
    pub piece: Piece,
    /// Sorted (else already in order).
    pub sort: bool,
}

/// The finishing jobs of a piece's buckets (as [`bucket_fates`] gives them): runs of
/// consecutive buckets to copy or sort, packed into jobs of at most `tile` keys (consecutive
/// buckets sort as one: every key of a bucket goes before every key of the next), a job sorted
/// if any of its buckets needs it. A bucket to copy that is larger than a tile is copied in
/// tile-sized jobs. Buckets to distribute or mergesort end a run.
pub fn finish_jobs(fates: &[(Piece, Fate)], tile: usize) -> Vec<FinishJob> {
    let mut jobs = Vec::new();
    let mut open: Option<FinishJob> = None;
    for &(bucket, fate) in fates {
        let sort = match fate {
            Fate::Copy => false,
            Fate::Sort => true,
            Fate::Distribute | Fate::Mergesort => {
                jobs.extend(open.take());
                continue;
            }
        };
        match open.as_mut() {
            Some(job) if job.piece.start + job.piece.length == bucket.start && job.piece.length + bucket.length <= tile => {
                job.piece.length += bucket.length;
                job.sort |= sort;
            }
            _ => {
                jobs.extend(open.take());
                if bucket.length <= tile {
                    open = Some(FinishJob { piece: bucket, sort });
                } else {
                    for at in (0..bucket.length).step_by(tile) {
                        let piece = Piece { start: bucket.start + at, length: (bucket.length - at).min(tile) };
                        jobs.push(FinishJob { piece, sort });
                    }
                }
            }
        }
    }
    jobs.extend(open);
    jobs
}

#[cfg(any(test, feature = "models"))]
/// The sample sort on the CPU, step for step as on the device (the same samples, splitters,
/// buckets, stable distribution and fates; a stable sort for the finishing and mergesort
/// pieces): `keys` sorted stably by `less`. `samples` keys per piece, pieces of at most
/// `finish_tile` keys finished by a sort.
pub fn samplesort_cpu<K: Copy>(keys: &mut [K], less: impl Fn(&K, &K) -> bool + Copy, samples: usize, finish_tile: usize) {
    let stable_sort = |s: &mut [K]| s.sort_by(|a, b| ordering_by(less, a, b));
    if keys.len() <= finish_tile {
        stable_sort(keys);
        return;
    }
    let mut pieces = vec![Piece { start: 0, length: keys.len() }];
    let mut pass = 1;
    while !pieces.is_empty() {
        let mut next = Vec::new();
        for piece in pieces {
            let slice = &keys[piece.start..piece.start + piece.length];
            let mut sample: Vec<K> = (0..samples).map(|j| slice[sample_position(piece.length, samples, j)]).collect();
            stable_sort(&mut sample);
            let splitters = splitters_of(&sample);
            let buckets: Vec<usize> = slice.iter().map(|x| bucket_of(&splitters, x, less)).collect();
            let mut counts = vec![0usize; BUCKETS];
            buckets.iter().for_each(|&b| counts[b] += 1);
            let mut starts = Vec::with_capacity(BUCKETS);
            let mut at = piece.start;
            for c in &counts {
                starts.push(at as i64);
                at += c;
            }
            let mut out = slice.to_vec();
            let mut place: Vec<usize> = starts.iter().map(|&s| s as usize - piece.start).collect();
            for (x, &b) in slice.iter().zip(&buckets) {
                out[place[b]] = *x;
                place[b] += 1;
            }
            keys[piece.start..piece.start + piece.length].copy_from_slice(&out);
            let fates = bucket_fates(piece, &starts, finish_tile, pass);
            for job in finish_jobs(&fates, finish_tile).iter().filter(|j| j.sort) {
                stable_sort(&mut keys[job.piece.start..job.piece.start + job.piece.length]);
            }
            for (bucket, fate) in fates {
                match fate {
                    Fate::Mergesort => stable_sort(&mut keys[bucket.start..bucket.start + bucket.length]),
                    Fate::Distribute => next.push(bucket),
                    Fate::Copy | Fate::Sort => {}
                }
            }
        }
        pieces = next;
        pass += 1;
    }
}
