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
use crate::tuning::{blocksort_shape, samplesort_shape};
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
    let shape = samplesort_shape(kernels.arch, key_bytes);
    let block_shape = blocksort_shape(kernels.arch, key_bytes);
    let samples = sample_count(block_shape.tile());
    let chunk_items = CHUNK_TILES * shape.tile();
    let (first_chunks, chunk_pieces) = pass_chunks(pieces, chunk_items);
    let mut before = 0i64;
    let segments: Vec<SamplesortSegment> = pieces
        .iter()
        .zip(&first_chunks)
        .map(|(p, &first)| {
            let s = SamplesortSegment { start: p.start as i64, length: p.length as i64, first_chunk: first as i64, base: p.start as i64 - before };
            before += p.length as i64;
            s
        })
        .collect();
    let chunk_segments = chunk_pieces.iter().map(|&g| i32::try_from(g)).collect::<std::result::Result<Vec<i32>, _>>().map_err(|_| Error::TooLarge { what: "sample sort pieces" })?;
    let num_chunks = chunk_segments.len();
    let num_counts = num_chunks * BUCKETS;
    let scan_tile = SAMPLESORT_SCAN_THREADS * SAMPLESORT_SCAN_ITEMS;
    let scan_tiles = num_counts.div_ceil(scan_tile);
    let num_states = scan_tiles + 1; // the last: the scan's ticket counter
    // The count kernel zeroes the states, one per thread.
    debug_assert!(num_states <= num_chunks * shape.threads as usize);

    let mut layout = TempLayout::default();
    let samples_at = layout.region(pieces.len() * samples * key_bytes);
    let counts_at = layout.region(num_counts * 4);
    let offsets_at = layout.region(num_counts * 8);
    let states_at = layout.region(num_states * 8);
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let (sorted_samples, counts, offsets, scan_states) = (base + samples_at as u64, base + counts_at as u64, base + offsets_at as u64, base + states_at as u64);
    let segment_table = gpu.upload_table(&segments)?;
    let segments_ptr = gpu.input("sample sort pieces", &segment_table, 8)?.ptr;
    let chunk_table = gpu.upload_table(&chunk_segments)?;
    let chunk_segments_ptr = gpu.input("sample sort chunks", &chunk_table, 4)?.ptr;
    let mut bucket_starts = gpu.alloc_zeros::<i64>(pieces.len() * BUCKETS)?;
    let bucket_starts_ptr = gpu.output("sample sort bucket starts", &mut bucket_starts, 8, pieces.len() * BUCKETS, &[])?.ptr;
    let config = |ctas: usize, threads: u32| -> Result<LaunchConfig> {
        Ok(LaunchConfig { grid_dim: (grid_ctas(ctas, "sample sort grid")?, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 })
    };
    let (samples, num_chunks_i64, chunk_items) = (samples as i64, num_chunks as i64, chunk_items as i64);

    let params = SamplesortSamplesParams { keys: src.keys, segments: segments_ptr, num_segments: pieces.len() as i64, samples, sorted: sorted_samples };
    // SAFETY: `SamplesortSamplesParams` is `mergepath_samplesort_samples`'s parameter struct; one
    // CTA of the blocksort shape per piece (the pieces lie inside `src`'s n keys), `samples` is
    // at most the blocksort tile (sample_count) and `sorted` holds samples keys per piece.
    unsafe { gpu.launch(&kernels.function("mergepath_samplesort_samples")?, config(pieces.len(), block_shape.threads)?, &params) }?;
    let params = SamplesortCountParams {
        keys: src.keys,
        sorted_samples,
        samples,
        segments: segments_ptr,
        chunk_segments: chunk_segments_ptr,
        num_chunks: num_chunks_i64,
        chunk_items,
        counts,
        scan_states,
        num_scan_states: num_states as i64,
    };
    // SAFETY: `SamplesortCountParams` is `mergepath_samplesort_count`'s; one CTA of the
    // samplesort shape per chunk (pass_chunks with chunk_items), `counts` holds BUCKETS per
    // chunk and `scan_states` num_states slots, fewer than the grid's threads.
    unsafe { gpu.launch(&kernels.function("mergepath_samplesort_count")?, config(num_chunks, shape.threads)?, &params) }?;
    let params = SamplesortScanParams { counts, num_counts: num_counts as i64, offsets, scan_states };
    // SAFETY: `SamplesortScanParams` is `mergepath_samplesort_scan`'s; scan_tiles CTAs of
    // SAMPLESORT_SCAN_THREADS over num_counts counts into as many offsets, with scan_tiles + 1
    // states zeroed by the count kernel before it in stream order.
    unsafe { gpu.launch(&kernels.function("mergepath_samplesort_scan")?, config(scan_tiles, SAMPLESORT_SCAN_THREADS as u32)?, &params) }?;
    let cfg = config(num_chunks, shape.threads)?;
    match (src.values, dst.values) {
        (Some(values), Some(values_out)) => {
            let params = SamplesortScatterPairsParams {
                keys: src.keys,
                values,
                sorted_samples,
                samples,
                segments: segments_ptr,
                chunk_segments: chunk_segments_ptr,
                num_chunks: num_chunks_i64,
                chunk_items,
                offsets,
                bucket_starts: bucket_starts_ptr,
                keys_out: dst.keys,
                values_out,
            };
            // SAFETY: `SamplesortScatterPairsParams` is `mergepath_samplesort_scatter_pairs_{word}`'s;
            // grid and tables as for the count kernel, `offsets` scanned from its counts, every
            // place inside the pieces of `dst` (keys and values of `word` bytes, the pieces'
            // extents), `bucket_starts` BUCKETS per piece.
            unsafe { gpu.launch(&kernels.for_values("mergepath_samplesort_scatter_pairs", word)?, cfg, &params) }?;
        }
        _ => {
            let params = SamplesortScatterKeysParams {
                keys: src.keys,
                sorted_samples,
                samples,
                segments: segments_ptr,
                chunk_segments: chunk_segments_ptr,
                num_chunks: num_chunks_i64,
                chunk_items,
                offsets,
                bucket_starts: bucket_starts_ptr,
                keys_out: dst.keys,
            };
            // SAFETY: as above for `mergepath_samplesort_scatter_keys` (`SamplesortScatterKeysParams`).
            unsafe { gpu.launch(&kernels.function("mergepath_samplesort_scatter_keys")?, cfg, &params) }?;
        }
    }
    // Into memory already written once: a fresh Vec's page faults slow the copy tenfold.
    let mut starts = vec![0i64; pieces.len() * BUCKETS];
    gpu.download_table(&bucket_starts, &mut starts)?;
    Ok(starts)
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
            unsafe { gpu.launch(&kernels.for_values("mergepath_samplesort_finish_pairs", word)?, cfg, &params) }
        }
        _ => {
            let shape = blocksort_shape(kernels.arch, key_bytes);
            let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
            let params = SamplesortFinishKeysParams { temp: temp.keys, out: out.keys, starts, jobs: job_words, num_jobs };
            // SAFETY: as above for `mergepath_samplesort_finish_keys`.
            unsafe { gpu.launch(&kernels.function("mergepath_samplesort_finish_keys")?, cfg, &params) }
        }
    }
}
