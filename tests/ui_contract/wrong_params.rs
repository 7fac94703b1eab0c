// A kernel entry launched with another entry's parameter struct does not compile. The contract's
// generated Rust (`mergepath_build::contract_rust()`, written by tests/ui.rs to the path in
// MERGEPATH_CONTRACT_RS) is included beside stand-ins for the library's `Kernels`, `Entry` and
// launch, whose signatures are the library's: an entry is typed by its parameter struct.

mod error {
    pub type Result<T> = std::result::Result<T, ()>;
}

mod device {
    pub mod kernels {
        pub struct Kernels;
        pub struct Entry<P>(std::marker::PhantomData<P>);
        impl Kernels {
            pub fn entry<P>(&self, _name: &str, _key_independent: bool) -> crate::error::Result<Entry<P>> {
                Ok(Entry(std::marker::PhantomData))
            }
        }
        /// `Gpu::launch`'s typing: the parameters are the entry's own struct.
        pub(crate) fn launch<P: super::contract::KernelParams>(_entry: &Entry<P>, _params: &P) {}
    }
    #[allow(dead_code, unused_imports)]
    pub mod contract {
        use mergepath::cudarc;
        include!(env!("MERGEPATH_CONTRACT_RS"));
    }
}

fn main() {
    use device::contract::{GatherParams, IotaParams};
    let kernels = device::kernels::Kernels;
    // SAFETY: plain old data; never read.
    let (iota, gather): (IotaParams, GatherParams) = unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
    device::kernels::launch(&kernels.iota(4).unwrap(), &iota);
    device::kernels::launch(&kernels.iota(4).unwrap(), &gather);
}
