//! The property of interval moves (re-exported from [`crate::testing`]): each operation on
//! each front end against the sequential oracle ([`crate::cpu::interval_move`]), bit for bit.

use crate::cpu;
use crate::device::Gpu;
use crate::key::Value;
use crate::testing::strategies::SplitMix;
use crate::testing::properties::{assert_same_bits, item12, item8, on_gpu, op_error, upload_padded, Backend, PropertyResult};
use crate::types::SortIndex;
use cudarc::driver::DeviceRepr;
use std::fmt::Debug;

/// Interval gather, scatter and move (on the GPU the device calls with `u32` and `u64`
/// indices and the host-slice methods, or the host backend's) of intervals of `lengths`
/// (empty ones included) equal the sequential moves, for 12-byte and 8-byte values. Each
/// interval is read from a place drawn from `seed` in an input longer than the items, and
/// written to a place of its own in an output with gaps (destinations in a shuffled order, not
/// overlapping), whose other items must stay as they were.
pub fn interval_move(backend: Backend<'_>, lengths: &[usize], seed: u64) -> PropertyResult {
    let layout = Layout::new(lengths, seed);
    interval_move_of(backend, &layout, item12)?;
    interval_move_of(backend, &layout, item8)
}

/// Where the intervals of a property case are read from and written to.
struct Layout {
    offsets: Vec<usize>,
    sources: Vec<usize>,
    destinations: Vec<usize>,
    input_len: usize,
    out_len: usize,
}

impl Layout {
    fn new(lengths: &[usize], seed: u64) -> Layout {
        let mut rng = SplitMix(seed);
        let mut draw = |below: usize| rng.below(below);
        let offsets: Vec<usize> = std::iter::once(0).chain(lengths.iter().scan(0, |end, &l| {
            *end += l;
            Some(*end)
        })).collect();
        let count = offsets[lengths.len()];
        let input_len = count + draw(1000);
        let sources = lengths.iter().map(|&l| draw(input_len - l + 1)).collect();
        // The intervals in a shuffled order, each after a gap of 0 to 3 items.
        let mut order: Vec<usize> = (0..lengths.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, draw(i + 1));
        }
        let (mut destinations, mut end) = (vec![0; lengths.len()], 0);
        for s in order {
            destinations[s] = end + draw(4);
            end = destinations[s] + lengths[s];
        }
        Layout { offsets, sources, destinations, input_len, out_len: end + draw(4) }
    }
}

/// The three operations, one kernel.
#[derive(Clone, Copy, Debug)]
enum Op {
    Gather,
    Scatter,
    Move,
}

impl Op {
    const ALL: [Op; 3] = [Op::Gather, Op::Scatter, Op::Move];

    /// `op` on host slices, through `backend`'s method (the host backend's or a GPU's).
    fn on_slices<B: crate::Backend, V: Value>(self, backend: &B, count: usize, [starts, from, to]: [&[u32]; 3], input: &[V], out: &mut [V]) -> crate::Result<()> {
        match self {
            Op::Gather => backend.interval_gather(count, starts, from, input, out),
            Op::Scatter => backend.interval_scatter(count, starts, to, input, out),
            Op::Move => backend.interval_move(count, starts, from, to, input, out),
        }
    }

    /// `op` on device buffers with indices of `I`: the output, starting as `out`, downloaded.
    fn on_device<I: SortIndex + DeviceRepr, V: Value + DeviceRepr>(self, gpu: &Gpu, count: usize, indices: [&[I]; 3], input: &[V], out: &[V]) -> crate::Result<Vec<V>> {
        let [starts, from, to] = indices.map(|v| upload_padded(gpu, v));
        let (starts, from, to, input_d) = (starts?, from?, to?, upload_padded(gpu, input)?);
        let n = indices[0].len();
        let (starts, from, to, input_d) = (starts.slice(..n), from.slice(..n), to.slice(..n), input_d.slice(..input.len()));
        let mut out_d = upload_padded(gpu, out)?;
        {
            let mut view = out_d.slice_mut(..out.len());
            match self {
                Op::Gather => crate::interval_gather(gpu, count, &starts, &from, &input_d, &mut view)?,
                Op::Scatter => crate::interval_scatter(gpu, count, &starts, &to, &input_d, &mut view)?,
                Op::Move => crate::interval_move(gpu, count, &starts, &from, &to, &input_d, &mut view)?,
            }
        }
        Ok(gpu.download(&out_d)?[..out.len()].to_vec())
    }
}

fn interval_move_of<V: Value + Debug + DeviceRepr>(backend: Backend<'_>, layout: &Layout, item: impl Fn(usize) -> V) -> PropertyResult {
    let count = layout.offsets[layout.offsets.len() - 1];
    let input: Vec<V> = (0..layout.input_len).map(&item).collect();
    let untouched = item(usize::MAX);
    let narrow = |v: &[usize]| v.iter().map(|&i| i as u32).collect::<Vec<u32>>();
    let indices = [narrow(&layout.offsets[..layout.offsets.len() - 1]), narrow(&layout.sources), narrow(&layout.destinations)];
    let indices = [&indices[0][..], &indices[1], &indices[2]];
    for op in Op::ALL {
        let (reads, writes) = (!matches!(op, Op::Scatter), !matches!(op, Op::Gather));
        let mut want = vec![untouched; if writes { layout.out_len } else { count }];
        cpu::interval_move(&input, &layout.offsets, reads.then_some(&layout.sources[..]), writes.then_some(&layout.destinations[..]), &mut want);
        let name = format!("interval {op:?}");
        let got: Vec<Vec<V>> = match backend {
            Backend::Host => {
                let mut out = vec![untouched; want.len()];
                op.on_slices(&crate::Host, count, indices, &input, &mut out).map_err(|e| op_error(&name, backend, e))?;
                vec![out]
            }
            Backend::Gpu(gpu) => on_gpu(&name, backend, || {
                let init = vec![untouched; want.len()];
                let by_u32 = op.on_device(gpu, count, indices, &input, &init)?;
                let wide = indices.map(|v| v.iter().map(|&i| i as u64).collect::<Vec<u64>>());
                let by_u64 = op.on_device(gpu, count, [&wide[0][..], &wide[1], &wide[2]], &input, &init)?;
                let mut host_slices = init;
                op.on_slices(gpu, count, indices, &input, &mut host_slices)?;
                Ok(vec![by_u32, by_u64, host_slices])
            })?,
        };
        for (variant, out) in got.iter().enumerate() {
            assert_same_bits(&format!("{name} of {}-byte values on {} (variant {variant})", size_of::<V>(), backend.name()), out, &want)?;
        }
    }
    Ok(())
}
