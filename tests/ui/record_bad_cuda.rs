// A record's custom comparator is compiled into kernels on the records' addresses: CUDA that
// does not compile is nvcc's error at the expression, as for keys of at most 16 bytes.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "score desc, id")]
#[key(comparator(ById, cuda = "a.id < b.nope", rust = "|a, b| a.id < b.id"))]
struct Row {
    score: f32,
    id: u32,
    payload: [u8; 24],
}

fn main() {}
