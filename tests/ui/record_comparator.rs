#[derive(Clone, Copy, mergepath::Key)]
#[repr(C)]
#[key(order = "score desc, id")]
#[key(comparator(ById, cuda = "a.id < b.id", rust = "|a, b| a.id < b.id"))]
struct Row {
    score: f32,
    id: u32,
    payload: [u8; 24],
}

fn main() {}
