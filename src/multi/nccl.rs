//! NCCL communicators (through cudarc's `nccl` bindings, the library loaded at run time): the
//! gathers and the grouped send/receive a group of GPUs runs its sharded sort with.

use crate::device::Gpu;
use crate::error::{Error, Result};
use bytemuck::Pod;
use cudarc::driver::DevicePtr;
use cudarc::nccl::{result, sys};

/// The bytes each rank's share of an all-gather is padded to a multiple of.
const ALL_GATHER_ALIGN: usize = 16;

/// The bootstrap of a group whose ranks are separate processes (or hosts): rank 0 makes one
/// ([`NcclId::new`]), sends its bytes to every other rank by any channel of the caller's (MPI,
/// a file, a socket), and each rank joins with it ([`GpuRank::join`](super::GpuRank::join)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NcclId(pub [u8; 128]);

impl NcclId {
    /// A new unique id (NCCL's `ncclGetUniqueId`): [`Error::NoNccl`] where the NCCL library
    /// cannot be loaded.
    pub fn new() -> Result<NcclId> {
        nccl_present()?;
        let id = result::get_uniqueid().map_err(|e| nccl_error("ncclGetUniqueId", e))?;
        Ok(NcclId(id.internal.map(|c| c as u8)))
    }
}

/// [`Error::NoNccl`] unless the NCCL library loads.
pub(crate) fn nccl_present() -> Result<()> {
    // SAFETY: only tries to open the library; nothing from it is called.
    match unsafe { sys::is_culib_present() } {
        true => Ok(()),
        false => Err(Error::NoNccl),
    }
}

fn nccl_error(call: &'static str, e: result::NcclError) -> Error {
    Error::Nccl { call, result: format!("{:?}", e.0) }
}

/// One rank's NCCL communicator.
pub(crate) struct Communicator {
    raw: sys::ncclComm_t,
}

// SAFETY: an NCCL communicator may be used from any thread, one call at a time; the rank
// holding it keeps it behind a mutex.
unsafe impl Send for Communicator {}

impl Drop for Communicator {
    fn drop(&mut self) {
        // SAFETY: `raw` came from a successful init and is destroyed once; an error here
        // leaves nothing to clean up that could be.
        let _ = unsafe { result::comm_destroy(self.raw) };
    }
}

impl Communicator {
    /// One communicator per device of `ordinals` (distinct), rank i on `ordinals[i]`, in one
    /// process (`ncclCommInitAll`).
    pub(crate) fn for_devices(ordinals: &[usize]) -> Result<Vec<Communicator>> {
        nccl_present()?;
        let devices: Vec<i32> = ordinals.iter().map(|&o| i32::try_from(o).map_err(|_| Error::invalid("ordinals", format!("device ordinal {o} is past i32")))).collect::<Result<_>>()?;
        let mut raw = vec![std::ptr::null_mut(); devices.len()];
        // SAFETY: `raw` has room for one communicator per device of `devices`.
        unsafe { result::comm_init_all(raw.as_mut_ptr(), devices.len() as i32, devices.as_ptr()) }.map_err(|e| nccl_error("ncclCommInitAll", e))?;
        Ok(raw.into_iter().map(|raw| Communicator { raw }).collect())
    }

    /// Rank `rank` of `size` ranks bootstrapped by `id` (`ncclCommInitRank`), on `gpu`'s device:
    /// blocks until every rank has joined.
    pub(crate) fn join(gpu: &Gpu, rank: usize, size: usize, id: &NcclId) -> Result<Communicator> {
        nccl_present()?;
        let (rank, size) = match (i32::try_from(rank), i32::try_from(size)) {
            (Ok(r), Ok(s)) if r < s => (r, s),
            _ => return Err(Error::invalid("rank", format!("rank {rank} must be below size {size} (and size fit in i32)"))),
        };
        gpu.context().bind_to_thread()?;
        let id = sys::ncclUniqueId { internal: id.0.map(|b| b as core::ffi::c_char) };
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` receives the communicator; NCCL takes the device bound above.
        unsafe { result::comm_init_rank(&mut raw, size, id, rank) }.map_err(|e| nccl_error("ncclCommInitRank", e))?;
        Ok(Communicator { raw })
    }

    /// Every rank's `mine` (one length on every rank), one after another in rank order, through
    /// device buffers on `gpu`.
    pub(crate) fn all_gather<T: Pod>(&self, gpu: &Gpu, mine: &[T], size: usize) -> Result<Vec<T>> {
        let bytes: &[u8] = bytemuck::cast_slice(mine);
        if bytes.is_empty() {
            return Ok(Vec::new());
        }
        // Each rank's bytes padded to a whole number of 16-byte words: NCCL's kernels read the
        // buffers in words (compute-sanitizer saw a 4-byte read of a 1-byte buffer).
        let slot = bytes.len().next_multiple_of(ALL_GATHER_ALIGN);
        let mut padded = bytes.to_vec();
        padded.resize(slot, 0);
        let send = gpu.upload_table(&padded)?;
        let mut receive = gpu.alloc_zeros::<u8>(slot * size)?;
        {
            let (from, _r) = send.device_ptr(gpu.stream());
            let (to, _w) = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut receive, gpu.stream());
            // SAFETY: `send` holds `slot` bytes, `receive` that many per rank; both stay alive
            // until the download below, which waits for the stream.
            unsafe { result::all_gather(from as *const _, to as *mut _, slot, sys::ncclDataType_t::ncclUint8, self.raw, stream(gpu)) }
                .map_err(|e| nccl_error("ncclAllGather", e))?;
        }
        let gathered = gpu.download(&receive)?;
        let mut out = vec![T::zeroed(); mine.len() * size];
        for (rank, part) in bytemuck::cast_slice_mut::<T, u8>(&mut out).chunks_mut(bytes.len()).enumerate() {
            part.copy_from_slice(&gathered[rank * slot..rank * slot + bytes.len()]);
        }
        Ok(out)
    }

    /// One grouped round of sends and receives: `sends[j]` (device address, bytes) to rank j,
    /// `receives[j]` from rank j; empty ones are left out (on both sides alike, as every
    /// rank plans them from the same gathered splits). Enqueued on `gpu`'s stream.
    ///
    /// # Safety
    /// Every range is device memory of `gpu`'s device of its length, alive and untouched by
    /// anything else until the stream has passed the exchange.
    pub(crate) unsafe fn send_receive(&self, gpu: &Gpu, sends: &[(u64, usize)], receives: &[(u64, usize)]) -> Result<()> {
        result::group_start().map_err(|e| nccl_error("ncclGroupStart", e))?;
        let mut posted = Ok(());
        for (peer, (&(send, send_len), &(receive, receive_len))) in sends.iter().zip(receives).enumerate() {
            let peer = peer as i32;
            if send_len > 0 {
                // SAFETY: the caller's contract on the range.
                posted = unsafe { result::send(send as *const _, send_len, sys::ncclDataType_t::ncclUint8, peer, self.raw, stream(gpu)) }.map(drop).map_err(|e| nccl_error("ncclSend", e));
            }
            if posted.is_ok() && receive_len > 0 {
                // SAFETY: the caller's contract on the range.
                posted = unsafe { result::recv(receive as *mut _, receive_len, sys::ncclDataType_t::ncclUint8, peer, self.raw, stream(gpu)) }.map(drop).map_err(|e| nccl_error("ncclRecv", e));
            }
            if posted.is_err() {
                break;
            }
        }
        // The group is closed whatever happened inside it.
        let ended = result::group_end().map(drop).map_err(|e| nccl_error("ncclGroupEnd", e));
        posted.and(ended)
    }
}

/// `gpu`'s stream as NCCL takes it.
fn stream(gpu: &Gpu) -> sys::cudaStream_t {
    gpu.stream().cu_stream() as sys::cudaStream_t
}
