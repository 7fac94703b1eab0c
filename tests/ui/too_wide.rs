#[derive(Clone, Copy, mergepath::Key)]
#[repr(C)]
#[key(order = "name, id")]
struct Row {
    name: [u8; 12],
    id: u32,
    payload: [u8; 16],
}

fn main() {}
