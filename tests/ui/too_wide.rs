#[derive(Clone, Copy, mergepath::Key)]
#[repr(C)]
#[key(order = "score desc, id")]
struct Row {
    score: f32,
    id: u32,
    payload: [u8; 24],
}

fn main() {}
