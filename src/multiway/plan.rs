//! The passes of a multiway merge: rounds of four-way merges of consecutive runs (the sort's
//! four-way pass over runs of any lengths), until one run is left.

use crate::sort::mergesort4_pair_boundaries;

/// One frame of a four-way pass: up to four consecutive runs merged into one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PassFrame {
    /// The pass's run index of its first run.
    pub(crate) first_run: usize,
    /// Items of each of its runs (0 past the pass's last run).
    pub(crate) count: [usize; 4],
    /// Where its output starts.
    pub(crate) out_begin: usize,
    /// Its first coarse boundary among the pass's.
    pub(crate) first_boundary: usize,
    /// Its first output tile among the pass's.
    pub(crate) first_tile: usize,
}

impl PassFrame {
    /// Items of all its runs.
    pub(crate) fn total(&self) -> usize {
        self.count.iter().sum()
    }
}

/// One four-way pass over runs of any lengths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MultiwayPass {
    /// Its frames, one per four runs, in order.
    pub(crate) frames: Vec<PassFrame>,
    /// Coarse boundaries of all frames: one every `spacing` items of each frame's first two
    /// runs and of its last two (the sort's `mergesort4_pair_boundaries`, the device's
    /// `mergesort4_frame_boundaries`).
    pub(crate) boundaries: usize,
    /// Output tiles of `2 * spacing` items of all frames (each frame's last may be short).
    pub(crate) tiles: usize,
}

/// The four-way passes that merge runs of `lengths` (in order; each pass merges groups of four
/// consecutive runs, so of equal items those of an earlier run stay first) into one, with
/// coarse boundaries `spacing` apart: ceil(log4(runs)) passes, one for a single run.
pub(crate) fn multiway_passes(lengths: &[usize], spacing: usize) -> Vec<MultiwayPass> {
    let mut runs = lengths.to_vec();
    let mut passes = Vec::new();
    while passes.is_empty() || runs.len() > 1 {
        let pass = four_way_pass(&runs, spacing);
        runs = pass.frames.iter().map(PassFrame::total).collect();
        passes.push(pass);
    }
    passes
}

/// The frames of one pass over `runs`.
fn four_way_pass(runs: &[usize], spacing: usize) -> MultiwayPass {
    let (mut out_begin, mut boundaries, mut tiles) = (0, 0, 0);
    let frames = runs
        .chunks(4)
        .enumerate()
        .map(|(f, group)| {
            let mut count = [0; 4];
            count[..group.len()].copy_from_slice(group);
            let frame = PassFrame { first_run: 4 * f, count, out_begin, first_boundary: boundaries, first_tile: tiles };
            out_begin += frame.total();
            let (ab, cd) = mergesort4_pair_boundaries(&count, spacing);
            boundaries += ab + cd;
            tiles += frame.total().div_ceil(2 * spacing);
            frame
        })
        .collect();
    MultiwayPass { frames, boundaries, tiles }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every pass covers the items once, frame after frame, each frame's boundaries and
        /// tiles counted from its runs; each pass's runs are the last one's frames; the last
        /// pass leaves one run; ceil(log4(runs)) passes.
        #[test]
        fn passes_cover_the_runs(lengths in prop::collection::vec(prop_oneof![Just(0usize), 0usize..5000], 1..300), spacing in 1usize..700) {
            let passes = multiway_passes(&lengths, spacing);
            let total: usize = lengths.iter().sum();
            let mut runs = lengths.clone();
            for pass in &passes {
                prop_assert_eq!(pass.frames.len(), runs.len().div_ceil(4));
                let (mut out, mut bounds, mut tiles) = (0, 0, 0);
                for (f, frame) in pass.frames.iter().enumerate() {
                    prop_assert_eq!(frame.first_run, 4 * f);
                    for r in 0..4 {
                        prop_assert_eq!(frame.count[r], runs.get(4 * f + r).copied().unwrap_or(0));
                    }
                    prop_assert_eq!((frame.out_begin, frame.first_boundary, frame.first_tile), (out, bounds, tiles));
                    out += frame.total();
                    bounds += (frame.count[0] + frame.count[1]).div_ceil(spacing) + (frame.count[2] + frame.count[3]).div_ceil(spacing);
                    tiles += frame.total().div_ceil(2 * spacing);
                }
                prop_assert_eq!((out, bounds, tiles), (total, pass.boundaries, pass.tiles));
                runs = pass.frames.iter().map(PassFrame::total).collect();
            }
            prop_assert_eq!(runs.len(), 1);
            let mut expected = 1;
            while 4usize.pow(expected) < lengths.len() {
                expected += 1;
            }
            prop_assert_eq!(passes.len(), expected as usize);
        }
    }
}
