//! The derived key of the derive and host tests: three fields of mixed types, one descending,
//! and a custom comparator on one field. Included as `#[path = "common/hit.rs"] mod hit;`.

use super::common::Rng;

/// Three fields, mixed types, one descending; plus a custom comparator on one field.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "score desc, id asc")]
#[key(comparator(ByX, cuda = "a.x < b.x", rust = "|a, b| a.x < b.x"))]
pub struct Hit {
    pub score: f32,
    pub id: u32,
    pub x: i64,
}

/// Hits with NaN and signed-zero scores and many repeats.
pub fn hits(n: usize, rng: &mut Rng) -> Vec<Hit> {
    (0..n)
        .map(|_| {
            let r = rng.next();
            let score = match r % 16 {
                0 => f32::NAN,
                1 => -0.0,
                2 => 0.0,
                _ => (r >> 8) as u8 as f32 / 4.0,
            };
            Hit { score, id: (r >> 16) as u32 % 50, x: (r >> 40) as i64 % 20 - 10 }
        })
        .collect()
}
