//! Host-side sample sort, without a GPU: the bucket of a key against its definition, the fates
//! of a piece's buckets (every key of the piece in exactly one bucket, in order, each bucket
//! finished, sorted by a CTA within its tile, or split again), the pass tiles, and the CPU
//! mirror of the whole sort (the same samples, splitters, stable distribution and fates as the
//! device) against a stable sort, with many ties so stability shows.

use mergepath::samplesort::{bucket_fates, bucket_of, finish_jobs, pass_chunks, sample_count, sample_position, samplesort_cpu, splitters_of, Fate, Piece, BUCKETS, MAX_PASSES, SPLITTERS};
use proptest::prelude::*;

fn by_key(x: &(u16, usize), y: &(u16, usize)) -> bool {
    x.0 < y.0
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// bucket_of: 2u for a key strictly between splitter u - 1 and u, 2u - 1 for one equal to
    /// splitter u - 1 (the last equal one where splitters repeat), for sorted splitters.
    #[test]
    fn buckets_follow_their_definition(mut splitters in prop::collection::vec(0u16..600, SPLITTERS), x in 0u16..700) {
        splitters.sort();
        let u = splitters.iter().filter(|&&s| s <= x).count();
        let want = if u > 0 && splitters[u - 1] == x { 2 * u - 1 } else { 2 * u };
        prop_assert_eq!(bucket_of(&splitters, &x, |a, b| a < b), want);
        prop_assert!(want < BUCKETS);
    }

    /// Whatever the bucket starts say, the fates cover the piece exactly once, in order; copies
    /// are equality buckets or single keys, sorts fit the tile, and only buckets smaller than
    /// the piece are distributed again, before the last pass.
    #[test]
    fn bucket_fates_cover_the_piece(start in 0usize..1000, length in 1usize..100_000, tile in 1usize..3000, pass in 1usize..6,
                                    raw in prop::collection::vec(0i64..120_000, BUCKETS), sorted_starts in any::<bool>()) {
        let piece = Piece { start, length };
        let mut starts: Vec<i64> = raw.iter().map(|&s| s + start as i64 - 10_000).collect();
        if sorted_starts {
            starts.sort();
        }
        let fates = bucket_fates(piece, &starts, tile, pass);
        let mut at = start;
        for (bucket, fate) in fates {
            prop_assert_eq!(bucket.start, at);
            prop_assert!(bucket.length > 0);
            at += bucket.length;
            match fate {
                Fate::Sort => prop_assert!(bucket.length <= tile && bucket.length > 1),
                Fate::Distribute => prop_assert!(bucket.length > tile && bucket.length < length && pass < MAX_PASSES),
                Fate::Mergesort => prop_assert!(bucket.length > tile),
                Fate::Copy => {}
            }
        }
        prop_assert_eq!(at, start + length);
    }

    /// The finishing jobs hold exactly the buckets to copy or sort, each whole in one job or
    /// (a copy larger than the tile) in consecutive tile-sized jobs, every job at most a tile
    /// of consecutive keys, sorted if any of its buckets must be.
    #[test]
    fn finish_jobs_pack_the_buckets(lengths in prop::collection::vec((1usize..400, 0u8..4), 1..60), tile in 1usize..900) {
        let mut at = 0;
        let fates: Vec<(Piece, Fate)> = lengths.iter().map(|&(l, f)| {
            let fate = [Fate::Copy, Fate::Sort, Fate::Distribute, Fate::Mergesort][f as usize];
            let p = (Piece { start: at, length: if fate == Fate::Sort { l.min(tile) } else { l } }, fate);
            at += p.0.length;
            p
        }).collect();
        let jobs = finish_jobs(&fates, tile);
        let mut covered = vec![None; at];
        for job in &jobs {
            prop_assert!(job.piece.length >= 1 && job.piece.length <= tile);
            for slot in &mut covered[job.piece.start..job.piece.start + job.piece.length] {
                prop_assert!(slot.is_none());
                *slot = Some(job.sort);
            }
        }
        for (bucket, fate) in &fates {
            let slots = &covered[bucket.start..bucket.start + bucket.length];
            match fate {
                Fate::Copy => prop_assert!(slots.iter().all(|s| s.is_some())),
                Fate::Sort => prop_assert!(slots.iter().all(|s| *s == Some(true))),
                _ => prop_assert!(slots.iter().all(|s| s.is_none())),
            }
        }
    }

    /// Every chunk of a pass lies in its piece, and each piece has ceil(length / chunk) chunks.
    #[test]
    fn pass_chunks_cover_the_pieces(lengths in prop::collection::vec(1usize..50_000, 1..20), tile in 1usize..5000) {
        let pieces: Vec<Piece> = lengths.iter().scan(0, |at, &l| { let p = Piece { start: *at, length: l }; *at += l; Some(p) }).collect();
        let (first, tiles) = pass_chunks(&pieces, tile);
        for (g, p) in pieces.iter().enumerate() {
            let n = p.length.div_ceil(tile);
            prop_assert!(tiles[first[g]..first[g] + n].iter().all(|&t| t == g));
        }
        prop_assert_eq!(tiles.len(), lengths.iter().map(|l| l.div_ceil(tile)).sum::<usize>());
    }

    /// The CPU mirror sorts stably: keys with few distinct values (equality buckets) or many,
    /// tagged with their positions, against `sort_by_key`.
    #[test]
    fn samplesort_cpu_is_a_stable_sort(raw in prop::collection::vec(any::<u16>(), 0..40_000), domain in 1u16..u16::MAX, tile in 16usize..3000) {
        let mut keys: Vec<(u16, usize)> = raw.iter().map(|&k| k % domain).zip(0..).collect();
        let mut want = keys.clone();
        want.sort_by_key(|k| k.0);
        samplesort_cpu(&mut keys, by_key, sample_count(5888), tile);
        prop_assert_eq!(keys, want);
    }
}

/// Samples and splitters: the sample count suits every blocksort tile, positions stay inside
/// the piece and are spread over it, and splitters are every 8th sample.
#[test]
fn samples_and_splitters() {
    assert_eq!(sample_count(5888), 2048);
    assert_eq!(sample_count(3840), 2048);
    assert_eq!(sample_count(1408), 1024);
    for length in [1usize, 7, 300, 5889, 1 << 40] {
        let samples = 2048;
        let pos: Vec<usize> = (0..samples).map(|j| sample_position(length, samples, j)).collect();
        assert!(pos.windows(2).all(|w| w[0] <= w[1]) && *pos.last().unwrap() < length);
    }
    let sorted: Vec<u32> = (0..2048).collect();
    let s = splitters_of(&sorted);
    assert_eq!((s.len(), s[0], s[SPLITTERS - 1]), (SPLITTERS, 7, 2039));
}

/// A large sort through the mirror: two passes, skewed keys.
#[test]
fn samplesort_cpu_two_passes() {
    let mut x = 0x9e3779b97f4a7c15u64;
    let mut keys: Vec<(u16, usize)> = (0..3_000_000)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (((x >> 40) as u16) / (1 + (x % 16) as u16), i)
        })
        .collect();
    let mut want = keys.clone();
    want.sort_by_key(|k| k.0);
    samplesort_cpu(&mut keys, by_key, 2048, 2944);
    assert_eq!(keys, want);
}
