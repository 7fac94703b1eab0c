#[derive(Clone, Copy, mergepath::Key)]
#[repr(C)]
struct Hit {
    tag: u8,
    id: u32,
}

#[derive(Clone, Copy, mergepath::Key)]
#[repr(C)]
struct Tail {
    id: u64,
    tag: u16,
}

fn main() {}
