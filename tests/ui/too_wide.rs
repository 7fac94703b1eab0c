#[derive(Clone, Copy, mergepath::Key)]
#[repr(C)]
#[key(order = "name, id")]
struct Row {
    name: [u8; 40],
    id: u32,
    payload: [u8; 20],
}

fn main() {}
