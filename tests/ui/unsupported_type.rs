#[derive(Clone, Copy, mergepath::Key)]
#[repr(C)]
struct Hit {
    score: f32,
    flag: bool,
}

fn main() {}
