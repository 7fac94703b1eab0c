//! The loop of the streamed host-slice merges: batches uploaded into device slots, merged, and
//! downloaded, with each batch's download enqueued after the next batch's upload, so the host
//! threads copy the next batch in while the GPU merges this one instead of waiting for it.

use crate::device::transfer::{Pipeline, Stream};
use crate::error::Result;
use cudarc::driver::CudaEvent;

/// The three steps of one batch in a device slot (its input and output lanes): each enqueues
/// its work on the pipeline's stream for it ([`run_batches`] orders the streams).
pub(super) trait Batches {
    /// What the upload leaves for the merge (the batch's pieces in the slot).
    type Uploaded;
    /// Enqueues batch `batch`'s upload into slot `slot`'s input, on [`Stream::Upload`].
    fn upload(&mut self, pipe: &mut Pipeline<'_>, batch: usize, slot: usize) -> Result<Self::Uploaded>;
    /// Enqueues the merge of the uploaded batch from slot `slot`'s input into its output, on
    /// [`Stream::Kernels`].
    fn merge(&mut self, pipe: &mut Pipeline<'_>, slot: usize, uploaded: Self::Uploaded) -> Result<()>;
    /// Enqueues batch `batch`'s download from slot `slot`'s output, on [`Stream::Download`].
    fn download(&mut self, pipe: &mut Pipeline<'_>, batch: usize, slot: usize) -> Result<()>;
}

/// Runs `batches` batches through `slots` device slots (batch b in slot b % slots): a slot's
/// upload waits for its previous merge (which read the input), its merge for its previous
/// download (which read the output). With two slots or more, batch b's download is enqueued
/// after batch b + 1's upload: its DMAs then find the merge done, and the host threads never
/// wait for a merge before copying the next batch in.
pub(super) fn run_batches<B: Batches>(pipe: &mut Pipeline<'_>, slots: usize, batches: usize, steps: &mut B) -> Result<()> {
    assert!(slots > 0, "a batch needs a slot");
    // The slots may be new, or still used by earlier work on the kernels' stream.
    pipe.order(Stream::Kernels, Stream::Upload)?;
    let mut merged: Vec<Option<CudaEvent>> = (0..slots).map(|_| None).collect();
    let mut downloaded: Vec<Option<CudaEvent>> = (0..slots).map(|_| None).collect();
    let lag = usize::from(slots > 1);
    for b in 0..batches {
        let s = b % slots;
        if let Some(done) = &merged[s] {
            pipe.wait(Stream::Upload, done)?;
        }
        let uploaded = steps.upload(pipe, b, s)?;
        pipe.order(Stream::Upload, Stream::Kernels)?;
        // Batch b - slots's download, which reads this slot's output, was enqueued by now
        // (at the latest after batch b - slots + lag's upload, lag < slots).
        if let Some(done) = &downloaded[s] {
            pipe.wait(Stream::Kernels, done)?;
        }
        steps.merge(pipe, s, uploaded)?;
        merged[s] = Some(pipe.record(Stream::Kernels)?);
        if b >= lag {
            download(pipe, steps, &merged, &mut downloaded, b - lag)?;
        }
    }
    for b in batches.saturating_sub(lag)..batches {
        download(pipe, steps, &merged, &mut downloaded, b)?;
    }
    Ok(())
}

/// Enqueues batch `batch`'s download after its merge, and records when it is done.
fn download<B: Batches>(pipe: &mut Pipeline<'_>, steps: &mut B, merged: &[Option<CudaEvent>], downloaded: &mut [Option<CudaEvent>], batch: usize) -> Result<()> {
    let s = batch % merged.len();
    if let Some(done) = &merged[s] {
        pipe.wait(Stream::Download, done)?;
    }
    steps.download(pipe, batch, s)?;
    downloaded[s] = Some(pipe.record(Stream::Download)?);
    Ok(())
}
