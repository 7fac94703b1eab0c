//! The kernels of one (key, comparator) pair, looked up by name.

use crate::error::{Error, Result};
use cudarc::driver::{sys, CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

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
    /// Loads `fatbin` (a module of `kernels/mergepath/instantiate.cuh`) into `ctx`.
    pub(crate) fn load(ctx: &Arc<CudaContext>, fatbin: &[u8]) -> Result<Self> {
        if fatbin.is_empty() {
            return Err(Error::KernelsNotBuilt);
        }
        let module = ctx.load_module(Ptx::from_binary(fatbin.to_vec()))?;
        let merge_keys = module.load_function("mergepath_merge_keys")?;
        let arch = merge_keys.get_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PTX_VERSION)? as u32;
        Ok(Kernels { module, functions: Mutex::new(HashMap::new()), arch })
    }

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
