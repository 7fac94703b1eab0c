//! The GPU handle: a CUDA context and stream, the kernel modules loaded per (key, comparator),
//! and the pools it keeps for later calls (temporary device storage, pinned staging buffers).
//!
//! Its parts, each a module of its own: [`kernels`] (modules and entry points by name),
//! [`launch`] (kernel launches and grid limits), [`buffers`] (validation of device buffers),
//! [`temp`] (the temp pool), [`reported`] (counts kernels report to the waiting host),
//! [`staging`] (pinned memory and host copy threads), [`transfer`] (host↔device copies through
//! the staging), [`timeline`] (a recorder of what overlaps).

pub(crate) mod buffers;
pub(crate) mod contract;
pub(crate) mod kernels;
pub(crate) mod launch;
pub(crate) mod reported;
pub(crate) mod staging;
pub(crate) mod temp;
pub(crate) mod timeline;
pub(crate) mod transfer;

use crate::error::{Error, Result};
use crate::key::{Comparator, Key};
use cudarc::driver::{sys, CudaContext, CudaSlice, CudaStream, DevicePtr, DeviceRepr, DriverError, ValidAsZeroBits};
use kernels::{Kernels, Module};
use staging::StagingPool;
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// A CUDA device, a stream on it, and what mergepath keeps per device.
///
/// Every operation is enqueued on [`Gpu::stream`] and returns without waiting for the GPU;
/// only copies to the host ([`Gpu::download`]), [`Gpu::synchronize`], and the calls that return
/// a count the GPU finds (such as [`crate::unique`], which waits for that count alone) wait. Buffers are
/// cudarc's [`CudaSlice`]/[`CudaView`](cudarc::driver::CudaView)/
/// [`CudaViewMut`](cudarc::driver::CudaViewMut) of the same context, on any of its streams
/// (cudarc orders the streams through events).
///
/// Its methods that take host slices (`gpu.sort_keys(&mut vec, Less)`, `gpu.merge_keys`, ...,
/// listed in [`crate::slices`]) move the data through a pool of pinned staging buffers and
/// two copy streams of its own, and return when the result is in host memory.
///
/// Kernel modules are loaded once per (key type, comparator) on first use. Temporary device
/// storage (merge partitions, sort buffers) comes from a pool of the buffers earlier calls
/// used, so repeated calls do not allocate; [`Gpu::free_pools`] gives them back. `Gpu` is
/// `Send + Sync`; calls from several threads are ordered on its one stream.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    modules: Mutex<HashMap<ModuleKey, Arc<Kernels>>>,
    /// Device buffers of earlier calls, for [`temp::Temp`].
    temp: Mutex<Vec<CudaSlice<u8>>>,
    staging: Mutex<StagingPool>,
    /// The most device memory one host-slice call plans to use ([`Gpu::with_memory_limit`]).
    memory_limit: Option<usize>,
    /// The merge kernels' guard (`contract::MergeGuard`, zero between launches), made on first
    /// use: its buffer and device address.
    merge_guard: Mutex<MergeGuardSlot>,
    /// The mapped pinned `u64` kernels report counts to, made on first use.
    count_slot: Mutex<reported::CountSlot>,
}

/// The merge guard's buffer and device address, once made.
type MergeGuardSlot = Option<(CudaSlice<u32>, u64)>;

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("ordinal", &self.ctx.ordinal()).finish_non_exhaustive()
    }
}

/// A loaded module's name in a [`Gpu`]'s cache: a (key, comparator) pair's, or a custom
/// comparator's on records' addresses (by its image's address).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum ModuleKey {
    Pair(TypeId),
    Addresses(usize),
}

impl Gpu {
    /// Opens device `ordinal` (its primary context) on the context's default stream.
    ///
    /// The default stream keeps cudarc out of its multi-stream mode, in which every buffer
    /// access records CUDA events (several driver calls per operation); use
    /// [`Gpu::with_stream`] to run on a stream of your own.
    ///
    /// Fails with [`Error::NoDriver`] where there is no CUDA driver, and with
    /// [`Error::Driver`] where there is no such device.
    pub fn new(ordinal: usize) -> Result<Self> {
        // SAFETY: only tries to open the driver library; nothing from it is called yet.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::NoDriver);
        }
        let ctx = CudaContext::new(ordinal)?;
        Ok(Self::with_stream(ctx.default_stream()))
    }

    /// The number of CUDA devices on this machine: [`Error::NoDriver`] where there is no CUDA
    /// driver.
    pub fn count() -> Result<usize> {
        // SAFETY: only tries to open the driver library; nothing from it is called yet.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::NoDriver);
        }
        Ok(CudaContext::device_count()? as usize)
    }

    /// Uses the caller's stream (and its context): mergepath's work is enqueued there.
    pub fn with_stream(stream: Arc<CudaStream>) -> Self {
        Gpu {
            ctx: stream.context().clone(),
            stream,
            modules: Mutex::new(HashMap::new()),
            temp: Mutex::new(Vec::new()),
            staging: Mutex::new(StagingPool::Unmade),
            memory_limit: None,
            merge_guard: Mutex::new(None),
            count_slot: Mutex::new(None),
        }
    }

    /// Caps the device memory that each call on host slices ([`crate::slices`]) plans to use
    /// at `bytes` (its device buffers and temporaries, counted with what it takes from the
    /// `Gpu`'s pool), below what the device has free. A sort whose keys and temporaries do not
    /// fit under the cap sorts device-sized runs and merges them from host memory
    /// ([`Gpu::sort_keys`]), so a GPU can be shared with other work. Device-buffer calls
    /// ([`crate::sort_keys`], ...) are not capped: their buffers are the caller's.
    pub fn with_memory_limit(mut self, bytes: usize) -> Self {
        self.memory_limit = Some(bytes);
        self
    }

    /// The cap set by [`Gpu::with_memory_limit`], if any.
    pub fn memory_limit(&self) -> Option<usize> {
        self.memory_limit
    }

    /// Lets the memory pool this device's stream-ordered allocations come from (its current
    /// pool) keep up to `bytes` of freed device memory for later allocations, instead of giving
    /// it back to the driver at the next synchronization (CUDA's release threshold; the driver's
    /// default, 0, keeps none). Buffers of gigabytes freed and allocated again call after call
    /// are otherwise unmapped and mapped again every time, which on the H100 measured slower
    /// than sorting them (BENCHMARKS.md, sharded sorts). The memory kept stays this process's
    /// until an allocation reuses it; `keep_freed_memory(0)` restores the default. The setting
    /// belongs to the device's pool, so it holds for every context and stream allocating there.
    pub fn keep_freed_memory(&self, bytes: u64) -> Result<()> {
        self.ctx.bind_to_thread()?;
        let mut pool = std::ptr::null_mut();
        // SAFETY: `pool` receives the handle of the device's current memory pool.
        unsafe { sys::cuDeviceGetMemPool(&mut pool, self.ctx.cu_device()) }.result()?;
        let mut threshold = bytes;
        // SAFETY: the release threshold is read from the u64 `threshold` points to.
        unsafe { sys::cuMemPoolSetAttribute(pool, sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, (&mut threshold as *mut u64).cast()) }.result()?;
        Ok(())
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream every operation is enqueued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Waits until everything enqueued on the stream has finished.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.stream.synchronize()?)
    }

    /// The device's compute capability as major * 10 + minor (90 for an H100).
    pub fn compute_capability(&self) -> Result<u32> {
        let (major, minor) = self.ctx.compute_capability()?;
        Ok((major * 10 + minor) as u32)
    }

    /// Allocates `len` zeroed elements on the stream.
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        self.stream.alloc_zeros(len).map_err(|e| oom(e, len * std::mem::size_of::<T>()))
    }

    /// Allocates `len` elements on the stream, left unwritten (no memset), for buffers that
    /// are written whole before anything reads them.
    ///
    /// # Safety
    /// Every element is written before any is read.
    pub(crate) unsafe fn alloc_unwritten<T: DeviceRepr>(&self, len: usize) -> Result<CudaSlice<T>> {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.stream.alloc(len) }.map_err(|e| oom(e, len * std::mem::size_of::<T>()))
    }

    /// The guard the merge kernels share (`merge_guard`, see `cta/guard.cuh`: zeroed when made,
    /// and left zero by each guarded launch's fallback kernel): its device address, and a lock
    /// to hold while a call enqueues its guarded tiles and their fallback kernel, so calls from
    /// several threads on this handle's stream do not interleave those launches (one call's
    /// fallback would take another's report).
    pub(crate) fn merge_guard(&self) -> Result<(u64, MutexGuard<'_, MergeGuardSlot>)> {
        let mut guard = self.merge_guard.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            let words = std::mem::size_of::<contract::MergeGuard>() / 4;
            let buffer = self.alloc_zeros::<u32>(words)?;
            let ptr = buffer.device_ptr(&self.stream).0;
            *guard = Some((buffer, ptr));
        }
        let ptr = guard.as_ref().map_or(0, |(_, ptr)| *ptr);
        Ok((ptr, guard))
    }

    /// The kernels of (K, C), loaded on first use.
    pub(crate) fn kernels<K: Key, C: Comparator<K>>(&self) -> Result<Arc<Kernels>> {
        self.module(ModuleKey::Pair(TypeId::of::<(K, C)>()), C::KERNELS, C::RECORD.is_some().then(std::any::type_name::<K>))
    }

    /// The kernels of a record order on the records' device addresses (`RecordOrder::by_address`:
    /// `fatbin`), loaded on first use.
    pub(crate) fn address_kernels(&self, fatbin: &'static [u8]) -> Result<Arc<Kernels>> {
        self.module(ModuleKey::Addresses(fatbin.as_ptr() as usize), fatbin, None)
    }

    /// The module `key`, loaded from `fatbin` on first use (`record`: as `Kernels::load`).
    fn module(&self, key: ModuleKey, fatbin: &[u8], record: Option<&'static str>) -> Result<Arc<Kernels>> {
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = modules.get(&key) {
            return Ok(k.clone());
        }
        let kernels = Arc::new(Kernels::load(&self.ctx, fatbin, record)?);
        modules.insert(key, kernels.clone());
        Ok(kernels)
    }

    /// The module of the key-independent entries launched from it alone (load-balancing
    /// search, interval expand, joins): the u32 / less one, the only unit build.rs compiles
    /// with `MERGEPATH_INDEX_ENTRIES`.
    pub(crate) fn index_kernels(&self) -> Result<Arc<Kernels>> {
        self.kernels::<u32, crate::key::Less>()
    }

    /// Loads a module of your own kernels into this handle's context: a fatbin (what
    /// `mergepath_build::Kernels` compiles in your build script), a cubin or NUL-terminated
    /// PTX. An empty image is [`Error::InvalidArgument`]; one the driver rejects (no code for
    /// this device, corrupt) is [`Error::Driver`]. See [`Module`] for a launch.
    pub fn load_module(&self, image: &[u8]) -> Result<Module> {
        Module::load(&self.ctx, image)
    }

    /// Bytes of device memory the temp pool holds while no call uses them.
    pub(crate) fn pooled_temp_bytes(&self) -> usize {
        self.temp.lock().unwrap_or_else(|p| p.into_inner()).iter().map(|b| b.len()).sum()
    }

    /// The device memory a host-slice call may plan to use: the device's free memory plus what
    /// the temp pool holds, at most the [`Gpu::with_memory_limit`] cap.
    pub(crate) fn device_budget(&self) -> Result<usize> {
        self.ctx.bind_to_thread()?;
        let (free, _total) = cudarc::driver::result::mem_get_info()?;
        let available = free + self.pooled_temp_bytes();
        Ok(self.memory_limit.map_or(available, |cap| cap.min(available)))
    }

    /// [`Error::TooLargeForDevice`] unless `bytes` of device memory can be had
    /// ([`Gpu::device_budget`]).
    pub(crate) fn ensure_device_memory(&self, bytes: usize) -> Result<()> {
        let available = self.device_budget()?;
        if bytes > available {
            return Err(Error::TooLargeForDevice { needed: bytes, available });
        }
        Ok(())
    }

    /// Gives the temporary device buffers and the pinned staging buffers this handle keeps for
    /// later calls back to the driver (after waiting for its stream). The next call that needs
    /// them allocates them again.
    pub fn free_pools(&self) -> Result<()> {
        self.synchronize()?;
        self.temp.lock().unwrap_or_else(|p| p.into_inner()).clear();
        let mut staging = self.staging.lock().unwrap_or_else(|p| p.into_inner());
        // Staging lent to a call in progress comes back to the pool when the call ends.
        if let StagingPool::Free(_) = *staging {
            *staging = StagingPool::Unmade;
        }
        Ok(())
    }
}

fn oom(e: DriverError, bytes: usize) -> Error {
    if e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
        Error::OutOfMemory { bytes }
    } else {
        Error::Driver(e)
    }
}
