//! The one error type of the crate.

use cudarc::driver::DriverError;
use std::fmt;

/// Everything a mergepath call can fail with. Bad input is reported before anything is launched.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// No CUDA driver library (libcuda) could be loaded on this machine.
    NoDriver,
    /// A CUDA driver call failed (no device, launch failure, ...).
    Driver(DriverError),
    /// Device memory ran out while allocating `bytes`.
    OutOfMemory {
        /// The size of the failed allocation.
        bytes: usize,
    },
    /// The crate was built without kernels: on docs.rs, or a dev build on a machine without a
    /// GPU, whose kernels are compiled only to check them (`MERGEPATH_KERNEL_CODE`, docs/building.md).
    KernelsNotBuilt,
    /// The kernels hold no code this GPU can run: they were built for other architectures
    /// (`MERGEPATH_CUDA_ARCHS`, else the build machine's GPU, else sm_90).
    NoKernelsForDevice {
        /// The device's compute capability, x10 (80 for sm_80).
        compute_capability: u32,
    },
    /// Two buffers that must have the same length do not.
    LengthMismatch {
        /// Which buffer.
        what: &'static str,
        /// The length it must have.
        expected: usize,
        /// Its length.
        got: usize,
    },
    /// An output buffer is shorter than the result.
    OutputTooSmall {
        /// Which buffer.
        what: &'static str,
        /// The length the result needs.
        needed: usize,
        /// The buffer's length.
        got: usize,
    },
    /// A buffer belongs to another CUDA context than the `Gpu` handle.
    WrongContext {
        /// Which buffer.
        what: &'static str,
    },
    /// A buffer's device address is not a multiple of its element's alignment (possible only
    /// through transmuted views).
    Misaligned {
        /// Which buffer.
        what: &'static str,
        /// The required alignment in bytes.
        align: usize,
    },
    /// An output buffer overlaps an input buffer.
    Overlap {
        /// Which output.
        output: &'static str,
        /// Which input.
        input: &'static str,
    },
    /// An argument is out of its range.
    InvalidArgument {
        /// Which argument (`offsets`, `spacing`, `ordinals`, ...).
        argument: &'static str,
        /// Why, with the values that show it (`offsets[2] = 5 is below offsets[1] = 7`).
        reason: String,
    },
    /// The operation has no kernels for this key type: records (derived keys wider than 16
    /// bytes) have sorts only. Nothing was launched or changed.
    NotSupported {
        /// The key type (as `std::any::type_name` spells it).
        key: &'static str,
        /// What is not supported, and what is.
        operation: String,
    },
    /// The problem is larger than one launch can cover.
    TooLarge {
        /// What overflowed.
        what: &'static str,
    },
    /// A call on host slices needs more device memory (its data and the algorithm's
    /// temporaries) than the device has free (or than the [`crate::Gpu::with_memory_limit`]
    /// cap), and cannot be cut into pieces that fit: nothing was copied.
    TooLargeForDevice {
        /// The bytes of device memory the call needs.
        needed: usize,
        /// The bytes it could have: the device's free memory and the `Gpu`'s idle pool, at most
        /// the cap.
        available: usize,
    },
    /// Host memory ran out while allocating `bytes`: page-locked (pinned) memory, or the
    /// host buffers of the sorted runs of a sort larger than the device. Nothing was changed.
    HostOutOfMemory {
        /// The size of the failed allocation.
        bytes: usize,
    },
    /// A loaded module has no kernel entry point of this name (as `extern "C"` spells it).
    MissingEntryPoint(String),
    /// The NCCL library could not be loaded (it is loaded as `libnccl.so`; NCCL's packages
    /// ship `libnccl.so.2`: put a link named `libnccl.so` to it on the loader's path).
    NoNccl,
    /// An NCCL call failed.
    Nccl {
        /// The call (`ncclCommInitAll`, `ncclSend`, ...).
        call: &'static str,
        /// NCCL's result code.
        result: String,
    },
    /// Another rank of a group failed a step that all ranks take together, so this rank
    /// stopped too (the failing rank returns its own error).
    RankFailed {
        /// The first rank that failed.
        rank: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDriver => write!(f, "no CUDA driver library (libcuda) found"),
            Error::Driver(e) => match (e.error_name(), e.error_string()) {
                (Ok(name), Ok(text)) => write!(f, "CUDA driver error {}: {}", name.to_string_lossy(), text.to_string_lossy()),
                _ => write!(f, "CUDA driver error {:?}", e.0),
            },
            Error::OutOfMemory { bytes } => write!(f, "out of device memory allocating {bytes} bytes"),
            Error::KernelsNotBuilt => write!(
                f,
                "mergepath was built without CUDA kernels (on docs.rs, or a dev build on a machine without a GPU, whose kernels are only checked: MERGEPATH_KERNEL_CODE=sass or MERGEPATH_CUDA_ARCHS embeds them)"
            ),
            Error::NoKernelsForDevice { compute_capability } => write!(
                f,
                "the kernels were built for other GPUs than this one (sm_{compute_capability}): rebuild with MERGEPATH_CUDA_ARCHS={compute_capability} (or a list such as 80,90)"
            ),
            Error::LengthMismatch { what, expected, got } => {
                write!(f, "{what} has length {got}, expected {expected}")
            }
            Error::OutputTooSmall { what, needed, got } => {
                write!(f, "{what} holds {got} elements, the result needs {needed}")
            }
            Error::WrongContext { what } => write!(f, "{what} belongs to another CUDA context"),
            Error::Misaligned { what, align } => {
                write!(f, "{what} is not aligned to {align} bytes")
            }
            Error::Overlap { output, input } => write!(f, "{output} overlaps {input}"),
            Error::InvalidArgument { argument, reason } => write!(f, "invalid argument `{argument}`: {reason}"),
            Error::NotSupported { key, operation } => write!(f, "not supported for key type {key}: {operation}"),
            Error::TooLarge { what } => write!(f, "problem too large: {what}"),
            Error::TooLargeForDevice { needed, available } => write!(
                f,
                "problem too large for the device: it needs {needed} bytes of device memory, {available} are available"
            ),
            Error::HostOutOfMemory { bytes } => write!(f, "out of host memory allocating {bytes} bytes (page-locked buffers or sorted runs)"),
            Error::NoNccl => write!(f, "no NCCL library (libnccl.so) found"),
            Error::Nccl { call, result } => write!(f, "NCCL call {call} failed: {result}"),
            Error::RankFailed { rank } => write!(f, "rank {rank} of the group failed"),
            Error::MissingEntryPoint(name) => write!(f, "the module has no kernel entry point named `{name}`"),
        }
    }
}

impl std::error::Error for Error {
    /// The driver's error behind [`Error::Driver`], so error chains (`anyhow`, `eyre`) keep it.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Driver(e) => Some(e),
            _ => None,
        }
    }
}

impl Error {
    /// [`Error::InvalidArgument`] for `argument`, `reason` saying why with its values.
    pub(crate) fn invalid(argument: &'static str, reason: impl Into<String>) -> Error {
        Error::InvalidArgument { argument, reason: reason.into() }
    }
}

impl From<DriverError> for Error {
    fn from(e: DriverError) -> Self {
        Error::Driver(e)
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::Error;
    use cudarc::driver::{sys::CUresult, DriverError};
    use std::error::Error as _;

    #[test]
    fn driver_errors_are_the_source() {
        let error = Error::from(DriverError(CUresult::CUDA_ERROR_LAUNCH_FAILED));
        let source = error.source().and_then(|s| s.downcast_ref::<DriverError>());
        assert_eq!(source.map(|e| e.0), Some(CUresult::CUDA_ERROR_LAUNCH_FAILED));
        assert!(Error::OutOfMemory { bytes: 1 }.source().is_none());
    }

    #[test]
    fn argument_errors_name_the_argument_and_values() {
        let message = Error::invalid("offsets", "offsets[2] = 5 is below offsets[1] = 7").to_string();
        assert_eq!(message, "invalid argument `offsets`: offsets[2] = 5 is below offsets[1] = 7");
    }

    #[test]
    fn no_kernels_for_device_names_the_setting() {
        let message = Error::NoKernelsForDevice { compute_capability: 80 }.to_string();
        assert!(message.contains("sm_80") && message.contains("MERGEPATH_CUDA_ARCHS=80"), "{message}");
    }
}
