#[derive(Clone, Copy, mergepath::Key)]
struct Hit {
    score: f32,
    id: u32,
}

fn main() {}
