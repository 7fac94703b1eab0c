//! The GPU handle: a CUDA context and stream, the loaded kernel modules, and a temp-storage pool.

use crate::error::{Error, Result};
use crate::key::{Comparator, Key};
use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr,
    DeviceSlice, DriverError, LaunchConfig, PushKernelArg, SyncOnDrop, ValidAsZeroBits,
};
use cudarc::nvrtc::Ptx;
use crate::transfer::{Pipeline, PinnedBuffer, StagingPool, Stream};
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A CUDA device, a stream on it, and what mergepath keeps per device.
///
/// Every operation is enqueued on [`Gpu::stream`] and returns without waiting for the GPU;
/// only copies to the host ([`Gpu::download`]) and [`Gpu::synchronize`] wait. Buffers are
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
    modules: Mutex<HashMap<TypeId, Arc<Kernels>>>,
    temp: Mutex<Vec<CudaSlice<u8>>>,
    pub(crate) staging: Mutex<StagingPool>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("ordinal", &self.ctx.ordinal()).finish_non_exhaustive()
    }
}

/// The kernels of one (key, comparator) pair (`kernels/mergepath/instantiate.cuh`): the loaded
/// module, and its entry points, each looked up by name by the algorithm that launches it, on
/// its first launch.
pub(crate) struct Kernels {
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<String, CudaFunction>>,
    /// The virtual architecture the loaded code was compiled for (x10), which selects the
    /// kernels' compile-time tuning row.
    pub arch: u32,
}

impl Kernels {
    /// The entry point `name`.
    pub(crate) fn function(&self, name: &str) -> Result<CudaFunction> {
        self.function_with(name, |_| Ok(()))
    }

    /// The entry point `name`, with `setup` run on it once, when it is first looked up (for
    /// attributes such as its dynamic shared memory limit).
    pub(crate) fn function_with(&self, name: &str, setup: impl FnOnce(&CudaFunction) -> Result<()>) -> Result<CudaFunction> {
        let mut functions = self.functions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = functions.get(name) {
            return Ok(f.clone());
        }
        let f = self.module.load_function(name)?;
        setup(&f)?;
        functions.insert(name.to_owned(), f.clone());
        Ok(f)
    }

    /// The variant of entry point `name` for values of `bytes` (4, 8 or 16): `{name}_{bytes}`.
    pub(crate) fn for_values(&self, name: &str, bytes: usize) -> Result<CudaFunction> {
        self.function(&format!("{name}_{bytes}"))
    }
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

    /// Uses the caller's stream (and its context): mergepath's work is enqueued there.
    pub fn with_stream(stream: Arc<CudaStream>) -> Self {
        Gpu {
            ctx: stream.context().clone(),
            stream,
            modules: Mutex::new(HashMap::new()),
            temp: Mutex::new(Vec::new()),
            staging: Mutex::new(StagingPool::Unmade),
        }
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

    /// Copies a host slice to a new device buffer, through the pinned staging buffers (host
    /// threads copy pageable memory into them while the copy engine moves earlier pieces;
    /// page-locked memory, such as a [`PinnedBuffer`](crate::PinnedBuffer), is copied directly).
    /// Returns when the copy is done.
    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        let bytes = std::mem::size_of_val(host);
        // SAFETY: every byte is written by the copy below before the buffer is returned.
        let mut buf = unsafe { self.stream.alloc::<T>(host.len()) }.map_err(|e| oom(e, bytes))?;
        if bytes > 0 {
            let (ptr, _guard) = buf.device_ptr_mut(&self.stream);
            let mut pipe = Pipeline::new(self)?;
            // The allocation is ordered on this handle's stream.
            pipe.order(Stream::Kernels, Stream::Upload)?;
            // SAFETY: `host` holds `bytes` and stays borrowed until `finish`; `buf` holds
            // `bytes`. DeviceRepr types are copied as plain bytes, as cudarc copies them.
            unsafe { pipe.upload(ptr, host.as_ptr().cast(), bytes) }?;
            pipe.finish()?;
        }
        Ok(buf)
    }

    /// Copies a device buffer into `host` (its length: [`Error::LengthMismatch`] otherwise),
    /// after the work enqueued on the stream that writes it, through the pinned staging
    /// buffers (directly into page-locked memory). Unlike [`Gpu::download`], it writes memory
    /// the caller already has, so no page is touched for the first time.
    pub fn download_into<T: DeviceRepr, S: DevicePtr<T>>(&self, buf: &S, host: &mut [T]) -> Result<()> {
        if host.len() != buf.len() {
            return Err(Error::LengthMismatch { what: "host", expected: buf.len(), got: host.len() });
        }
        self.check_context("buf", buf)?;
        let bytes = std::mem::size_of_val(host);
        if bytes == 0 {
            return Ok(());
        }
        let (ptr, _guard) = buf.device_ptr(&self.stream);
        let mut pipe = Pipeline::new(self)?;
        pipe.order(Stream::Kernels, Stream::Download)?;
        // SAFETY: `host` holds `bytes` and stays borrowed until `finish`; so does `buf`.
        unsafe { pipe.download(host.as_mut_ptr().cast(), ptr, bytes) }?;
        pipe.finish()
    }

    /// Copies a device buffer to a new `Vec`, waiting for the work that writes it (as
    /// [`Gpu::download_into`]; the host threads that copy out of the staging buffers also take
    /// the new memory's first-touch page faults, in parallel).
    pub fn download<T: DeviceRepr, S: DevicePtr<T>>(&self, buf: &S) -> Result<Vec<T>> {
        self.check_context("buf", buf)?;
        let len = buf.len();
        let bytes = len * std::mem::size_of::<T>();
        let mut out: Vec<T> = Vec::with_capacity(len);
        if bytes > 0 {
            let (ptr, _guard) = buf.device_ptr(&self.stream);
            let mut pipe = Pipeline::new(self)?;
            pipe.order(Stream::Kernels, Stream::Download)?;
            // SAFETY: the vector's spare capacity holds `bytes` and stays alive until
            // `finish`; so does `buf`.
            unsafe { pipe.download(out.as_mut_ptr().cast(), ptr, bytes) }?;
            pipe.finish()?;
        }
        // SAFETY: all `len` elements were written by the finished copy, with the bytes the
        // device holds for them (as cudarc's own downloads give them).
        unsafe { out.set_len(len) };
        Ok(out)
    }

    /// `len` zeroed values of `T` in page-locked host memory, which the host-slice calls and
    /// [`Gpu::upload`] / [`Gpu::download_into`] copy directly, at full speed.
    pub fn alloc_pinned<T: bytemuck::Pod>(&self, len: usize) -> Result<PinnedBuffer<T>> {
        PinnedBuffer::zeroed(&self.ctx, len)
    }

    /// A copy of `data` in page-locked host memory (see [`Gpu::alloc_pinned`]).
    pub fn pinned_from<T: bytemuck::Pod>(&self, data: &[T]) -> Result<PinnedBuffer<T>> {
        let mut buf = self.alloc_pinned(data.len())?;
        buf.copy_from_slice(data);
        Ok(buf)
    }

    /// The kernels of (K, C), loaded on first use.
    pub(crate) fn kernels<K: Key, C: Comparator<K>>(&self) -> Result<Arc<Kernels>> {
        let id = TypeId::of::<(K, C)>();
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = modules.get(&id) {
            return Ok(k.clone());
        }
        if C::KERNELS.is_empty() {
            return Err(Error::KernelsNotBuilt);
        }
        let module = self.ctx.load_module(Ptx::from_binary(C::KERNELS.to_vec()))?;
        let merge_keys = module.load_function("mergepath_merge_keys")?;
        let arch = merge_keys.get_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PTX_VERSION)? as u32;
        let kernels = Arc::new(Kernels { module, functions: Mutex::new(HashMap::new()), arch });
        modules.insert(id, kernels.clone());
        Ok(kernels)
    }

    /// At least `bytes` of temporary device storage, returned to the pool when dropped: the
    /// smallest pooled buffer that is large enough, else a new one (after giving the pooled ones
    /// back to the driver if the device is out of memory). Reuse is safe without synchronizing
    /// because all of this handle's work runs in stream order.
    pub(crate) fn temp(&self, bytes: usize) -> Result<Temp<'_>> {
        let pooled = {
            let mut pool = self.temp.lock().unwrap_or_else(|p| p.into_inner());
            let best = (0..pool.len()).filter(|&i| pool[i].len() >= bytes).min_by_key(|&i| pool[i].len());
            best.map(|i| pool.swap_remove(i))
        };
        let buf = match pooled {
            Some(buf) => buf,
            None => {
                let size = temp_size(bytes);
                // SAFETY: temp storage is always written by a kernel or a copy before it is read.
                match unsafe { self.stream.alloc::<u8>(size) }.map_err(|e| oom(e, size)) {
                    Err(Error::OutOfMemory { .. }) => {
                        self.temp.lock().unwrap_or_else(|p| p.into_inner()).clear();
                        // SAFETY: as above.
                        unsafe { self.stream.alloc::<u8>(size) }.map_err(|e| oom(e, size))?
                    }
                    other => other?,
                }
            }
        };
        Ok(Temp { gpu: self, buf: Some(buf) })
    }

    /// Bytes of device memory the temp pool holds while no call uses them.
    pub(crate) fn pooled_temp_bytes(&self) -> usize {
        self.temp.lock().unwrap_or_else(|p| p.into_inner()).iter().map(|b| b.len()).sum()
    }

    /// [`Error::TooLargeForDevice`] unless `bytes` of device memory can be had: the device's
    /// free memory plus what the temp pool holds.
    pub(crate) fn ensure_device_memory(&self, bytes: usize) -> Result<()> {
        self.ctx.bind_to_thread()?;
        let (free, _total) = cudarc::driver::result::mem_get_info()?;
        let available = free + self.pooled_temp_bytes();
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

    /// Enqueues `func` on the stream. Arguments are raw device pointers and integers.
    ///
    /// # Safety
    /// `args` must match the kernel's parameter list, and every pointer must be valid for
    /// what the kernel reads and writes under `cfg`.
    pub(crate) unsafe fn launch(&self, func: &CudaFunction, cfg: LaunchConfig, args: &[KernelArg]) -> Result<()> {
        let mut builder = self.stream.launch_builder(func);
        for arg in args {
            match arg {
                KernelArg::Ptr(p) => builder.arg(p),
                KernelArg::I64(v) => builder.arg(v),
            };
        }
        // SAFETY: forwarded from this function's contract.
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }
}

/// A grid of `ctas` CTAs, checked against CUDA's limit on grid x (2^31 - 1):
/// [`Error::TooLarge`] naming `what` past it.
pub(crate) fn grid_ctas(ctas: usize, what: &'static str) -> Result<u32> {
    u32::try_from(ctas).ok().filter(|&c| c <= i32::MAX as u32).ok_or(Error::TooLarge { what })
}

/// One kernel argument.
#[derive(Clone, Copy)]
pub(crate) enum KernelArg {
    Ptr(sys::CUdeviceptr),
    I64(i64),
}

fn oom(e: DriverError, bytes: usize) -> Error {
    if e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
        Error::OutOfMemory { bytes }
    } else {
        Error::Driver(e)
    }
}

/// Temporary device storage from the [`Gpu`]'s pool.
pub(crate) struct Temp<'a> {
    gpu: &'a Gpu,
    buf: Option<CudaSlice<u8>>,
}

impl Temp<'_> {
    pub fn device_ptr_mut(&mut self) -> (sys::CUdeviceptr, SyncOnDrop<'_>) {
        let buf = self.buf.as_mut().expect("temp buffer present until drop");
        buf.device_ptr_mut(&self.gpu.stream)
    }
}

/// Buffers the temp pool keeps at most: a host-slice sort holds three at once (its data, the
/// merge buffer, a chunk sort's temporaries); the smallest goes first past that.
const TEMP_POOL_BUFFERS: usize = 4;

/// The size a temp request of `bytes` allocates: the next power of two up to 1 MiB, so slowly
/// growing requests do not reallocate every call, and above that the next multiple of a
/// sixteenth of it, so a large buffer wastes at most about 6 %.
fn temp_size(bytes: usize) -> usize {
    let pow2 = bytes.max(1).next_power_of_two();
    if pow2 <= 1 << 20 {
        pow2
    } else {
        bytes.next_multiple_of(pow2 / 16)
    }
}

impl Drop for Temp<'_> {
    fn drop(&mut self) {
        let buf = self.buf.take().expect("temp buffer present until drop");
        let mut pool = self.gpu.temp.lock().unwrap_or_else(|p| p.into_inner());
        pool.push(buf);
        if pool.len() > TEMP_POOL_BUFFERS {
            let smallest = (0..pool.len()).min_by_key(|&i| pool[i].len()).expect("pool is not empty");
            pool.swap_remove(smallest);
        }
    }
}

/// A device buffer argument after validation: address, length, and the guard that records the
/// access with cudarc once the launch is enqueued (drop it after the launch).
pub(crate) struct BufArg<'a> {
    pub ptr: sys::CUdeviceptr,
    pub len: usize,
    bytes: usize,
    what: &'static str,
    _guard: SyncOnDrop<'a>,
}

impl BufArg<'static> {
    /// A buffer of `len` elements of `elem_bytes` at `ptr` that the caller owns and keeps valid
    /// in stream order (temp storage): nothing to record with cudarc.
    pub(crate) fn raw(ptr: sys::CUdeviceptr, len: usize, elem_bytes: usize) -> Self {
        BufArg { ptr, len, bytes: len * elem_bytes, what: "temp", _guard: SyncOnDrop::Sync(None) }
    }
}

impl Gpu {
    fn check_context<T, S: DeviceSlice<T>>(&self, what: &'static str, buf: &S) -> Result<()> {
        if **buf.stream().context() != *self.ctx {
            return Err(Error::WrongContext { what });
        }
        Ok(())
    }

    /// Validates an input buffer whose elements the kernels access in `align`-byte words.
    pub(crate) fn input<'a, T, S: DevicePtr<T>>(&'a self, what: &'static str, buf: &'a S, align: usize) -> Result<BufArg<'a>> {
        self.check_context(what, buf)?;
        let (ptr, guard) = buf.device_ptr(&self.stream);
        check_alignment(what, ptr, align)?;
        Ok(BufArg { ptr, len: buf.len(), bytes: buf.num_bytes(), what, _guard: guard })
    }

    /// Validates keys and the values (`what`, in `word`-byte words) that move with them in
    /// place: the same length, not overlapping.
    pub(crate) fn inplace_pairs<'a, K, V>(
        &'a self,
        keys: &'a mut impl DevicePtrMut<K>,
        values: &'a mut impl DevicePtrMut<V>,
        what: &'static str,
        word: usize,
    ) -> Result<(BufArg<'a>, BufArg<'a>)> {
        let n = keys.len();
        if values.len() != n {
            return Err(Error::LengthMismatch { what, expected: n, got: values.len() });
        }
        let keys = self.output("keys", keys, std::mem::align_of::<K>(), n, &[])?;
        let values = self.output(what, values, word, n, &[&keys])?;
        Ok((keys, values))
    }

    /// Validates the keys and values of two inputs (`a_keys`, `a_values`, `b_keys`, `b_values`,
    /// in that order): values in `word`-byte words, each value buffer its keys' length.
    pub(crate) fn pair_inputs<'a, K, V>(
        &'a self,
        a_keys: &'a impl DevicePtr<K>,
        a_values: &'a impl DevicePtr<V>,
        b_keys: &'a impl DevicePtr<K>,
        b_values: &'a impl DevicePtr<V>,
        word: usize,
    ) -> Result<[BufArg<'a>; 4]> {
        let align = std::mem::align_of::<K>();
        let a = self.input("a_keys", a_keys, align)?;
        let b = self.input("b_keys", b_keys, align)?;
        let av = self.input("a_values", a_values, word)?;
        let bv = self.input("b_values", b_values, word)?;
        for (what, keys, values) in [("a_values", &a, &av), ("b_values", &b, &bv)] {
            if values.len != keys.len {
                return Err(Error::LengthMismatch { what, expected: keys.len, got: values.len });
            }
        }
        Ok([a, b, av, bv])
    }

    /// Validates an output buffer that must hold at least `needed` elements and must not
    /// overlap any of `inputs`.
    pub(crate) fn output<'a, T, S: DevicePtrMut<T>>(
        &'a self,
        what: &'static str,
        buf: &'a mut S,
        align: usize,
        needed: usize,
        inputs: &[&BufArg<'_>],
    ) -> Result<BufArg<'a>> {
        let (len, bytes) = (buf.len(), buf.num_bytes());
        if len < needed {
            return Err(Error::OutputTooSmall { what, needed, got: len });
        }
        self.check_context(what, buf)?;
        let (ptr, guard) = buf.device_ptr_mut(&self.stream);
        let out = BufArg { ptr, len, bytes, what, _guard: guard };
        check_placement(&out, align, inputs)?;
        Ok(out)
    }
}

fn check_alignment(what: &'static str, ptr: u64, align: usize) -> Result<()> {
    if ptr % align as u64 != 0 {
        return Err(Error::Misaligned { what, align });
    }
    Ok(())
}

/// Checks an output's alignment and that it overlaps none of the inputs (empty buffers overlap
/// nothing).
fn check_placement(out: &BufArg<'_>, align: usize, inputs: &[&BufArg<'_>]) -> Result<()> {
    check_alignment(out.what, out.ptr, align)?;
    let end = |b: &BufArg<'_>| b.ptr + b.bytes as u64;
    for input in inputs {
        let disjoint = end(out) <= input.ptr || end(input) <= out.ptr;
        if out.bytes > 0 && input.bytes > 0 && !disjoint {
            return Err(Error::Overlap { output: out.what, input: input.what });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(what: &'static str, ptr: u64, bytes: usize) -> BufArg<'static> {
        BufArg { what, ..BufArg::raw(ptr, bytes / 4, 4) }
    }

    #[test]
    fn temp_sizes_round_up_a_little() {
        assert_eq!(temp_size(0), 1);
        assert_eq!(temp_size(1000), 1024);
        assert_eq!(temp_size(1 << 20), 1 << 20);
        assert_eq!(temp_size((1 << 20) + 1), (1 << 20) + (1 << 17));
        assert_eq!(temp_size(256 << 20), 256 << 20);
        assert_eq!(temp_size((256 << 20) + 256), (256 << 20) + (32 << 20));
        for bytes in [3usize << 20, 5 << 20, (1 << 30) + 7] {
            assert!(temp_size(bytes) >= bytes && temp_size(bytes) <= bytes + bytes / 8, "{bytes}");
        }
    }

    #[test]
    fn placement_accepts_disjoint_and_adjacent_buffers() {
        let (a, b) = (arg("a", 0x1000, 64), arg("b", 0x1040, 64));
        assert_eq!(check_placement(&arg("out", 0x1080, 128), 4, &[&a, &b]), Ok(()));
        assert_eq!(check_placement(&arg("out", 0x0f00, 256), 4, &[&a, &b]), Ok(()));
        // Empty buffers overlap nothing, wherever they point.
        assert_eq!(check_placement(&arg("out", 0x1000, 0), 4, &[&a]), Ok(()));
        assert_eq!(check_placement(&arg("out", 0x1000, 64), 4, &[&arg("a", 0x1000, 0)]), Ok(()));
    }

    #[test]
    fn placement_rejects_overlap_and_misalignment() {
        let (a, b) = (arg("a", 0x1000, 64), arg("b", 0x1040, 64));
        assert_eq!(check_placement(&arg("out", 0x107c, 8), 4, &[&a, &b]), Err(Error::Overlap { output: "out", input: "b" }));
        assert_eq!(check_placement(&arg("out", 0x0ffc, 8), 4, &[&a, &b]), Err(Error::Overlap { output: "out", input: "a" }));
        assert_eq!(check_placement(&arg("out", 0x2004, 8), 8, &[&a]), Err(Error::Misaligned { what: "out", align: 8 }));
    }
}
