//! Records, derived keys wider than the kernels' key tiles: one whose order packs into one
//! `u64` word, and one of three words (their algorithms other than sorts go by the records'
//! ranks; records of different GPUs compare by their order). Their payload fields are outside
//! the order, so stability shows. `Row` also has a custom comparator, on the low byte of its
//! last payload word (bytes 28..32, past any key tile): 256 classes, so ties abound.

#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "score desc, id")]
#[key(comparator(ByPayload, cuda = "(a.payload[3] & 0xff) < (b.payload[3] & 0xff)", rust = "|a, b| (a.payload[3] & 0xff) < (b.payload[3] & 0xff)"))]
pub struct Row {
    pub score: f32,
    pub id: u32,
    pub seq: u64,
    pub payload: [u32; 4],
}

#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "tag, b, a desc")]
pub struct Wide {
    pub a: u64,
    pub b: i64,
    pub tag: u16,
    pub seq: [u8; 6],
}
