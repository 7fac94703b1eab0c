#[derive(Clone, Copy, mergepath::Key)]
#[repr(C)]
#[key(order = "score desc, nope")]
struct Hit {
    score: f32,
    id: u32,
}

fn main() {}
