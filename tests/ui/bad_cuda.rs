#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(comparator(ByX, cuda = "a.x < b.nope", rust = "|a, b| a.x < b.x"))]
struct Hit {
    x: f32,
    id: u32,
}

fn main() {}
