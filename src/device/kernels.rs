//! Loaded kernel modules and their entry points by name: the library's own, one per (key,
//! comparator) pair, and users' ([`Gpu::load_module`](crate::Gpu::load_module)).

use crate::error::{Error, Result};
use cudarc::driver::{sys, CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A kernel module loaded into a [`Gpu`](crate::Gpu)'s context
/// ([`Gpu::load_module`](crate::Gpu::load_module)), with its entry points looked up by name on
/// first use and kept (a lookup is a driver call).
///
/// Launch its functions with cudarc's launch builder on [`Gpu::stream`](crate::Gpu::stream):
///
/// ```no_run
/// use mergepath::cudarc::driver::PushKernelArg;
/// use mergepath::partition::TileShape;
/// # fn main() -> Result<(), mergepath::Error> {
/// # let fatbin: &[u8] = &[];
/// let gpu = mergepath::Gpu::new(0)?;
/// let module = gpu.load_module(fatbin)?; // e.g. include_bytes!(concat!(env!("OUT_DIR"), "/my.fatbin"))
/// let fill = module.function("fill_iota")?;
/// let mut out = gpu.alloc_zeros::<u32>(1000)?;
/// let n = out.len() as i64;
/// let cfg = TileShape { threads: 128, items_per_thread: 1 }.launch_config(out.len())?;
/// let mut launch = gpu.stream().launch_builder(&fill);
/// launch.arg(&mut out).arg(&n);
/// // SAFETY: fill_iota(uint32_t* out, int64_t n) writes out[i] for i < n, one thread each.
/// unsafe { launch.launch(cfg) }?;
/// # Ok(()) }
/// ```
pub struct Module {
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<String, CudaFunction>>,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let functions = self.functions.lock().unwrap_or_else(|p| p.into_inner());
        f.debug_struct("Module").field("looked_up", &functions.keys().collect::<Vec<_>>()).finish_non_exhaustive()
    }
}

impl Module {
    /// Loads `image` (a fatbin, a cubin or NUL-terminated PTX) into `ctx`.
    pub(crate) fn load(ctx: &Arc<CudaContext>, image: &[u8]) -> Result<Self> {
        if image.is_empty() {
            return Err(Error::invalid("image", "the module image (fatbin) is empty"));
        }
        let module = ctx.load_module(Ptx::from_binary(image.to_vec()))?;
        Ok(Module { module, functions: Mutex::new(HashMap::new()) })
    }

    /// The entry point `name` (its `extern "C"` name): [`Error::MissingEntryPoint`] if the
    /// module has none.
    pub fn function(&self, name: &str) -> Result<CudaFunction> {
        self.function_with(name, |_| Ok(()))
    }

    /// The virtual architecture (compute capability x10) the code of entry point `name` that
    /// runs on this device was compiled for: the `arch` of
    /// [`select_shape`](crate::tuning::select_shape) on your own tuning table, so the host picks
    /// the row the kernel was compiled with.
    pub fn arch(&self, name: &str) -> Result<u32> {
        let f = self.function(name)?;
        Ok(f.get_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PTX_VERSION)? as u32)
    }

    /// The entry point `name`, with `setup` run on it once, when it is first looked up (for
    /// attributes such as its dynamic shared memory limit).
    pub fn function_with(&self, name: &str, setup: impl FnOnce(&CudaFunction) -> Result<()>) -> Result<CudaFunction> {
        let mut functions = self.functions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = functions.get(name) {
            return Ok(f.clone());
        }
        let f = self.module.load_function(name).map_err(|e| match e.0 {
            sys::cudaError_enum::CUDA_ERROR_NOT_FOUND => Error::MissingEntryPoint(name.to_owned()),
            _ => Error::Driver(e),
        })?;
        setup(&f)?;
        functions.insert(name.to_owned(), f.clone());
        Ok(f)
    }
}

/// The kernels of one (key, comparator) pair (`mergepath-build/kernels/mergepath/instantiate.cuh`): the loaded
/// module, each entry point looked up by the algorithm that launches it on its first launch.
pub(crate) struct Kernels {
    module: Module,
    /// The virtual architecture the loaded code was compiled for (x10), which selects the
    /// kernels' compile-time tuning row.
    pub arch: u32,
    /// The record type whose module this is, if it is one: then only the key-independent entry
    /// points may be looked up, because the module is another key's (the `u64` kernels a
    /// record wider than the key tiles sorts with, `Comparator::RECORD`), so its algorithms'
    /// kernels would misread the record's items.
    record: Option<&'static str>,
    /// The dynamic shared memory each entry point (by its driver handle) has been allowed, so
    /// the attribute is set once, not on every launch.
    dynamic_shared: Mutex<HashMap<usize, usize>>,
}

/// [`Error::NoKernelsForDevice`] for `ctx`'s device (a driver error where its compute
/// capability cannot be read).
fn no_kernels_for(ctx: &Arc<CudaContext>) -> Error {
    match ctx.compute_capability() {
        Ok((major, minor)) => Error::NoKernelsForDevice { compute_capability: (major * 10 + minor) as u32 },
        Err(e) => Error::Driver(e),
    }
}

/// An entry point of the library's kernels, launched ([`Gpu::launch`](crate::Gpu)) only with its
/// own parameter struct `P`: the accessors generated from the contract (`Kernels::sort_merge_keys`
/// and the others, `device::contract`) are the only way to one, so a kernel name is written
/// nowhere else and a launch with another struct does not compile.
pub(crate) struct Entry<P> {
    pub(crate) function: CudaFunction,
    params: std::marker::PhantomData<fn(P)>,
}

impl Kernels {
    /// Loads `fatbin` (a module of `mergepath-build/kernels/mergepath/instantiate.cuh`) into `ctx`.
    /// For a `record` (its type's name), only the key-independent entry points can be looked up.
    pub(crate) fn load(ctx: &Arc<CudaContext>, fatbin: &[u8], record: Option<&'static str>) -> Result<Self> {
        if fatbin.is_empty() {
            return Err(Error::KernelsNotBuilt);
        }
        let module = Module::load(ctx, fatbin).map_err(|e| match e {
            Error::Driver(d) if d.0 == sys::cudaError_enum::CUDA_ERROR_NO_BINARY_FOR_GPU => no_kernels_for(ctx),
            other => other,
        })?;
        let mut kernels = Kernels { module, arch: 0, record, dynamic_shared: Mutex::new(HashMap::new()) };
        // Every entry point's code is compiled for the module's architecture.
        let iota = kernels.iota(4)?;
        kernels.arch = iota.function.get_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PTX_VERSION)? as u32;
        Ok(kernels)
    }

    /// The entry point `name` taking parameter struct `P` (the generated accessors' lookup);
    /// [`Error::NotSupported`] for one that reads keys where the module is a record's.
    pub(crate) fn entry<P>(&self, name: &str, key_independent: bool) -> Result<Entry<P>> {
        if let (Some(key), false) = (self.record, key_independent) {
            return Err(Error::NotSupported {
                key,
                operation: format!(
                    "{} (no kernel for records wider than 16 bytes: their sorts, merges, searches, set operations, segmented sorts, multiway merges, runs and partitions go by one u64 key per record)",
                    name.trim_start_matches("mergepath_")
                ),
            });
        }
        Ok(Entry { function: self.module.function(name)?, params: std::marker::PhantomData })
    }

    /// `entry`, one of this module's, allowed up to `bytes` of dynamic shared memory (more than
    /// the default 48 KB needs it said); the attribute is set on the first call for the entry
    /// and again only for a larger size.
    pub(crate) fn allow_dynamic_shared<P>(&self, entry: Entry<P>, bytes: usize) -> Result<Entry<P>> {
        let mut allowed = self.dynamic_shared.lock().unwrap_or_else(|p| p.into_inner());
        let handle = entry.function.cu_function() as usize;
        if allowed.get(&handle).is_none_or(|&b| b < bytes) {
            let limit = i32::try_from(bytes).map_err(|_| Error::TooLarge { what: "dynamic shared memory" })?;
            entry.function.set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, limit)?;
            allowed.insert(handle, bytes);
        }
        Ok(entry)
    }
}
