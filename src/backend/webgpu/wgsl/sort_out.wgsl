// Last pass of a row sort: the first k positions of each sorted segment, and the input's
// elements at them read back bit for bit. Values are written a 32-bit word at a time, so a
// 16-bit output has each invocation write a pair of halves whole (ELEMS 2), an 8-bit one
// four bytes (ELEMS 4).

struct Params {
    rows: u32,
    n: u32,
    seg: u32,         // the sorted segments' length
    k: u32,
    ndim: u32,
    offset: u32,
    row_stride: i32,
    count: u32,       // outputs: rows * k
    shape: array<vec4<u32>, 2>,
    strides: array<vec4<i32>, 2>,
    pos_at: u32,      // position i is pos[pos_at + i * pos_stride]
    pos_stride: u32,
    _pad1: u32,
    _pad2: u32,
};

@group(0) @binding(0) var<storage, read> inp: array<u32>;
@group(0) @binding(1) var<storage, read> pos: array<u32>;
@group(0) @binding(2) var<storage, read_write> values: array<u32>;
@group(0) @binding(3) var<storage, read_write> indices: array<i32>;
@group(0) @binding(4) var<uniform> params: Params;

const ELEMS: u32 = {{ELEMS}}u;

{{KEYS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let w = gid.x + gid.y * groups.x * 256u;
    if (w * ELEMS >= params.count) { return; }
    var word = 0u;
    for (var h = 0u; h < ELEMS; h = h + 1u) {
        let e = w * ELEMS + h;
        if (e >= params.count) { break; }
        let row = e / params.k;
        let x = e - row * params.k;
        let p = pos[params.pos_at + (row * params.seg + x) * params.pos_stride];
        let src = i32(params.offset) + view_offset(row, params.ndim, params.shape, params.strides) + i32(p) * params.row_stride;
        word = word | (raw_inp(u32(src)) << (h * (32u / ELEMS)));
        indices[e] = i32(p);
    }
    values[w] = word;
}
