#[derive(Clone, Copy, mergepath::Key)]
#[repr(C)]
struct Grid {
    cells: [[u8; 2]; 2],
}

fn main() {}
