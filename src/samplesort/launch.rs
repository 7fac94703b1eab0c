//! The launches of a sample sort: per distribution pass the samples, count, scan and scatter
//! kernels (the host reads the pass's bucket starts to plan the next one), then one launch that
//! finishes the small buckets; buckets the passes cannot shrink go to the mergesort.

use super::plan::{bucket_fates, finish_jobs, pass_chunks, sample_count, Fate, Piece, BUCKETS, CHUNK_TILES};
use crate::device::contract::{
    SamplesortCountParams, SamplesortFinishKeysParams, SamplesortFinishPairsParams, SamplesortSamplesParams, SamplesortScanParams,
    SamplesortScatterKeysParams, SamplesortScatterPairsParams, SamplesortSegment, SAMPLESORT_FINISH_FROM_TEMP, SAMPLESORT_FINISH_SORT,
    SAMPLESORT_SCAN_ITEMS, SAMPLESORT_SCAN_THREADS,
};
use crate::device::kernels::Kernels;
use crate::device::launch::grid_ctas;
use crate::device::temp::TempLayout;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{Comparator, Key};
use crate::sort::launch_sort;
use crate::tuning::{blocksort_shape, samplesort_shape, LaunchShape};
use cudarc::driver::LaunchConfig;

/// A buffer pair a pass reads or writes: keys and, for pairs, values.
#[derive(Clone, Copy)]
struct Buffers {
    keys: u64,
    values: Option<u64>,
}

/// The keys (and values) a sort's caller gave: `n` keys at `keys_in` sorted into `keys_out`
/// (which may be `keys_in`), values (in, out, word bytes) following.
pub(crate) fn launch_samplesort<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    keys_in: u64,
    keys_out: u64,
    values: Option<(u64, u64, usize)>,
    n: usize,
    comp: C,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let kernels = gpu.kernels::<K, C>()?;
    let key_bytes = std::mem::size_of::<K>();
    let arch = kernels.arch;
    let finish_tile = blocksort_shape(arch, key_bytes).tile();
    if n <= finish_tile {
        return launch_sort::<K, C>(gpu, keys_in, keys_out, values, n, comp);
    }
    i64::try_from(n).map_err(|_| Error::TooLarge { what: "sort length" })?;
    let word = values.map_or(0, |(_, _, w)| w);
    let mut layout = TempLayout::default();
    let (keys_at, values_at) = (layout.region(n * key_bytes), layout.region(n * word));
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let temp_buffers = Buffers { keys: base + keys_at as u64, values: values.map(|_| base + values_at as u64) };
    let out_buffers = Buffers { keys: keys_out, values: values.map(|(_, out, _)| out) };

    // Odd passes write the temporary buffer, even ones the output (each reads what the one
    // before wrote; the first reads the input).
    let mut src = Buffers { keys: keys_in, values: values.map(|(input, _, _)| input) };
    let mut pieces = vec![Piece { start: 0, length: n }];
    let mut jobs: Vec<(i64, i32)> = Vec::new();
    let mut mergesorts: Vec<(Piece, Buffers)> = Vec::new();
    let mut pass = 1;
    while !pieces.is_empty() {
        let in_temp = pass % 2 == 1;
        let dst = if in_temp { temp_buffers } else { out_buffers };
        let starts = launch_pass::<K>(gpu, &kernels, src, dst, &pieces, word)?;
        let from = if in_temp { SAMPLESORT_FINISH_FROM_TEMP as i32 } else { 0 };
        let mut next = Vec::new();
        for (g, &piece) in pieces.iter().enumerate() {
            let fates = bucket_fates(piece, &starts[g * BUCKETS..(g + 1) * BUCKETS], finish_tile, pass);
            // Jobs that only copy are needed for pieces in the temporary buffer alone.
            for job in finish_jobs(&fates, finish_tile).into_iter().filter(|j| j.sort || in_temp) {
                let sort = if job.sort { SAMPLESORT_FINISH_SORT as i32 } else { 0 };
                jobs.push((job.piece.start as i64, from | sort | job.piece.length as i32));
            }
            for (bucket, fate) in fates {
                match fate {
                    Fate::Distribute => next.push(bucket),
                    Fate::Mergesort => mergesorts.push((bucket, dst)),
                    Fate::Copy | Fate::Sort => {}
                }
            }
        }
        src = dst;
        pieces = next;
        pass += 1;
    }
    launch_finish::<K>(gpu, &kernels, temp_buffers, out_buffers, &jobs, word)?;
    for (piece, from) in mergesorts {
        let at = |ptr: u64, bytes: usize| ptr + (piece.start * bytes) as u64;
        let piece_values = values.map(|(_, out, w)| (at(from.values.unwrap_or(out), w), at(out, w), w));
        launch_sort::<K, C>(gpu, at(from.keys, key_bytes), at(keys_out, key_bytes), piece_values, piece.length, comp)?;
    }
    Ok(())
}

/// One distribution pass over `pieces` of `src` into `dst`; returns, waiting for the GPU, the
/// pass's bucket starts (BUCKETS per piece, absolute positions).
fn launch_pass<K: Key>(gpu: &Gpu, kernels: &Kernels, src: Buffers, dst: Buffers, pieces: &[Piece], word: usize) -> Result<Vec<i64>> {
    let key_bytes = std::mem::size_of::<K>();
    let (shape, block_shape) = (samplesort_shape(kernels.arch, key_bytes), blocksort_shape(kernels.arch, key_bytes));
    let samples = sample_count(block_shape.tile());
    let chunk_items = CHUNK_TILES * shape.tile();
    let (segments, chunk_segments) = pass_segments(pieces, chunk_items)?;
    let num_chunks = chunk_segments.len();
    let num_counts = num_chunks * BUCKETS;
    let scan_tiles = num_counts.div_ceil(SAMPLESORT_SCAN_THREADS * SAMPLESORT_SCAN_ITEMS);
    let num_states = scan_tiles + 1; // the last: the scan's ticket counter
    // The count kernel zeroes the states, one per thread.
    debug_assert!(num_states <= num_chunks * shape.threads as usize);

    let mut layout = TempLayout::default();
    let at = [pieces.len() * samples * key_bytes, num_counts * 4, num_counts * 8, num_states * 8].map(|bytes| layout.region(bytes));
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let [sorted_samples, counts, offsets, scan_states] = at.map(|offset| base + offset as u64);
    let segment_table = gpu.upload_table(&segments)?;
    let chunk_table = gpu.upload_table(&chunk_segments)?;
    let mut bucket_starts = gpu.alloc_zeros::<i64>(pieces.len() * BUCKETS)?;
    let pass = Pass {
        gpu,
        kernels,
        shape,
        num_pieces: pieces.len(),
        samples: samples as i64,
        num_chunks,
        chunk_items: chunk_items as i64,
        segments: gpu.input("sample sort pieces", &segment_table, 8)?.ptr,
        chunk_segments: gpu.input("sample sort chunks", &chunk_table, 4)?.ptr,
        sorted_samples,
        counts,
        offsets,
        scan_states,
        num_states,
        bucket_starts: gpu.output("sample sort bucket starts", &mut bucket_starts, 8, pieces.len() * BUCKETS, &[])?.ptr,
    };
    pass.samples(src.keys, block_shape.threads)?;
    pass.count(src.keys)?;
    pass.scan(scan_tiles)?;
    pass.scatter(src, dst, word)?;
    // Into memory already written once: a fresh Vec's page faults slow the copy tenfold.
    let mut starts = vec![0i64; pieces.len() * BUCKETS];
    gpu.download_table(&bucket_starts, &mut starts)?;
    Ok(starts)
}

/// A pass's tables: each piece's segment (its place, length, first chunk and its offset among
/// the pass's items) and each chunk's piece.
fn pass_segments(pieces: &[Piece], chunk_items: usize) -> Result<(Vec<SamplesortSegment>, Vec<i32>)> {
    let (first_chunks, chunk_pieces) = pass_chunks(pieces, chunk_items);
    let mut before = 0i64;
    let segments = pieces
        .iter()
        .zip(&first_chunks)
        .map(|(p, &first)| {
            let s = SamplesortSegment { start: p.start as i64, length: p.length as i64, first_chunk: first as i64, base: p.start as i64 - before };
            before += p.length as i64;
            s
        })
        .collect();
    let chunk_segments = chunk_pieces.iter().map(|&g| i32::try_from(g)).collect::<std::result::Result<Vec<i32>, _>>().map_err(|_| Error::TooLarge { what: "sample sort pieces" })?;
    Ok((segments, chunk_segments))
}

/// One distribution pass's tables and temporaries on the device, and its launches.
struct Pass<'a> {
    gpu: &'a Gpu,
    kernels: &'a Kernels,
    shape: LaunchShape,
    num_pieces: usize,
    samples: i64,
    num_chunks: usize,
    chunk_items: i64,
    segments: u64,
    chunk_segments: u64,
    sorted_samples: u64,
    counts: u64,
    offsets: u64,
    scan_states: u64,
    num_states: usize,
    bucket_starts: u64,
}

impl Pass<'_> {
    fn config(ctas: usize, threads: u32) -> Result<LaunchConfig> {
        Ok(LaunchConfig { grid_dim: (grid_ctas(ctas, "sample sort grid")?, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 })
    }

    /// Each piece's samples, sorted: a CTA of the blocksort's `threads` per piece.
    fn samples(&self, keys: u64, threads: u32) -> Result<()> {
        let params = SamplesortSamplesParams { keys, segments: self.segments, num_segments: self.num_pieces as i64, samples: self.samples, sorted: self.sorted_samples };
        // SAFETY: `SamplesortSamplesParams` is `mergepath_samplesort_samples`'s parameter struct;
        // one CTA of the blocksort shape per piece (the pieces lie inside `src`'s n keys),
        // `samples` is at most the blocksort tile (sample_count) and `sorted` holds samples
        // keys per piece.
        unsafe { self.gpu.launch(&self.kernels.samplesort_samples()?, Self::config(self.num_pieces, threads)?, &params) }
    }

    /// Each chunk's bucket counts.
    fn count(&self, keys: u64) -> Result<()> {
        let params = SamplesortCountParams {
            keys,
            sorted_samples: self.sorted_samples,
            samples: self.samples,
            segments: self.segments,
            chunk_segments: self.chunk_segments,
            num_chunks: self.num_chunks as i64,
            chunk_items: self.chunk_items,
            counts: self.counts,
            scan_states: self.scan_states,
            num_scan_states: self.num_states as i64,
        };
        // SAFETY: `SamplesortCountParams` is `mergepath_samplesort_count`'s; one CTA of the
        // samplesort shape per chunk (pass_chunks with chunk_items), `counts` holds BUCKETS per
        // chunk and `scan_states` num_states slots, fewer than the grid's threads.
        unsafe { self.gpu.launch(&self.kernels.samplesort_count()?, Self::config(self.num_chunks, self.shape.threads)?, &params) }
    }

    /// The counts scanned into offsets, `scan_tiles` CTAs.
    fn scan(&self, scan_tiles: usize) -> Result<()> {
        let params = SamplesortScanParams { counts: self.counts, num_counts: (self.num_chunks * BUCKETS) as i64, offsets: self.offsets, scan_states: self.scan_states };
        // SAFETY: `SamplesortScanParams` is `mergepath_samplesort_scan`'s; scan_tiles CTAs of
        // SAMPLESORT_SCAN_THREADS over num_counts counts into as many offsets, with scan_tiles + 1
        // states zeroed by the count kernel before it in stream order.
        unsafe { self.gpu.launch(&self.kernels.samplesort_scan()?, Self::config(scan_tiles, SAMPLESORT_SCAN_THREADS as u32)?, &params) }
    }

    /// Every key (and value) of `src` to its bucket's place in `dst`, and the bucket starts.
    fn scatter(&self, src: Buffers, dst: Buffers, word: usize) -> Result<()> {
        let cfg = Self::config(self.num_chunks, self.shape.threads)?;
        let (sorted_samples, samples, segments, chunk_segments) = (self.sorted_samples, self.samples, self.segments, self.chunk_segments);
        let (num_chunks, chunk_items, offsets, bucket_starts) = (self.num_chunks as i64, self.chunk_items, self.offsets, self.bucket_starts);
        let (Some(values), Some(values_out)) = (src.values, dst.values) else {
            let params = SamplesortScatterKeysParams { keys: src.keys, sorted_samples, samples, segments, chunk_segments, num_chunks, chunk_items, offsets, bucket_starts, keys_out: dst.keys };
            // SAFETY: `SamplesortScatterKeysParams` is `mergepath_samplesort_scatter_keys`'s;
            // grid and tables as for the count kernel, `offsets` scanned from its counts, every
            // place inside the pieces of `dst` (the pieces' extents), `bucket_starts` BUCKETS
            // per piece.
            return unsafe { self.gpu.launch(&self.kernels.samplesort_scatter_keys()?, cfg, &params) };
        };
        let params = SamplesortScatterPairsParams {
            keys: src.keys,
            values,
            sorted_samples,
            samples,
            segments,
            chunk_segments,
            num_chunks,
            chunk_items,
            offsets,
            bucket_starts,
            keys_out: dst.keys,
            values_out,
        };
        // SAFETY: as above for `mergepath_samplesort_scatter_pairs_{word}`
        // (`SamplesortScatterPairsParams`), with values of `word` bytes in both buffers.
        unsafe { self.gpu.launch(&self.kernels.samplesort_scatter_pairs(word)?, cfg, &params) }
    }
}

/// The finishing jobs (start, job word): pieces of at most a blocksort tile sorted or copied
/// into the output.
fn launch_finish<K: Key>(gpu: &Gpu, kernels: &Kernels, temp: Buffers, out: Buffers, jobs: &[(i64, i32)], word: usize) -> Result<()> {
    if jobs.is_empty() {
        return Ok(());
    }
    let key_bytes = std::mem::size_of::<K>();
    let starts: Vec<i64> = jobs.iter().map(|j| j.0).collect();
    let words: Vec<i32> = jobs.iter().map(|j| j.1).collect();
    let start_table = gpu.upload_table(&starts)?;
    let word_table = gpu.upload_table(&words)?;
    let (starts, job_words) = (gpu.input("sample sort jobs", &start_table, 8)?.ptr, gpu.input("sample sort jobs", &word_table, 4)?.ptr);
    let num_jobs = jobs.len() as i64;
    let grid = grid_ctas(jobs.len(), "sample sort grid")?;
    match (temp.values, out.values) {
        (Some(temp_values), Some(out_values)) => {
            let shape = blocksort_shape(kernels.arch, key_bytes);
            let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
            let params = SamplesortFinishPairsParams { temp: temp.keys, temp_values, out: out.keys, out_values, starts, jobs: job_words, num_jobs };
            // SAFETY: `SamplesortFinishPairsParams` is `mergepath_samplesort_finish_pairs_{word}`'s;
            // one CTA of the blocksort shape per job, each a piece of at most its tile inside
            // the n keys (and values of `word` bytes) of both buffers.
            unsafe { gpu.launch(&kernels.samplesort_finish_pairs(word)?, cfg, &params) }
        }
        _ => {
            let shape = blocksort_shape(kernels.arch, key_bytes);
            let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
            let params = SamplesortFinishKeysParams { temp: temp.keys, out: out.keys, starts, jobs: job_words, num_jobs };
            // SAFETY: as above for `mergepath_samplesort_finish_keys`.
            unsafe { gpu.launch(&kernels.samplesort_finish_keys()?, cfg, &params) }
        }
    }
}
