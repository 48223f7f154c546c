// Rotary position embedding for small x (a decoding step's heads: core/transformer.c sends
// x of at most 65536 elements here), one invocation per rotated pair: out [B, S, d]
// (contiguous) from x [B, S, d] (any strides), the pair (j, j + d/2) of row (b, s) turned by
// the angle pos(s) * freq[j]: out_j = x_j cos - x_{j+d/2} sin, out_{j+d/2} = x_{j+d/2} cos
// + x_j sin. The composed rope (elementwise ops) computes each element on its own, so each
// pair took its angle's cos and sin twice, and read its partner through a strided index;
// here each pair takes them once. The values are the composition's: the same f32 angle,
// wgt_sin / wgt_cos (trig.c), each product rounded before the sum (keep(): no fused
// multiply-add, which the composition's kernels cannot form either).

struct Params {
    pairs: u32,      // B * S * d / 2
    seq: u32,        // S
    half: u32,       // d / 2
    x_offset: u32,
    x_sb: i32,       // x's strides: batch, position, element
    x_ss: i32,
    x_sd: i32,
    p_offset: u32,   // positions[s] = pos[p_offset + s * p_stride] (i32), with HAS_POS
    p_stride: i32,
    zero: u32,       // 0, which the compiler cannot see
    has_pos: u32,    // 0: the position of row s is s
    pad: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> pos: array<i32>;
@group(0) @binding(2) var<storage, read> freq: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

{{HELPERS}}

fn keep(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ params.zero); }

// An i32 as f32 exactly as the cast op converts it (unary.c's expression, filled in by
// rope.c), as the composed rope casts its positions.
fn i32_as_f32(x: i32) -> f32 { return {{I32_AS_F32}}; }

fn position_of(s: u32) -> f32 {
    if (params.has_pos == 0u) { return f32(s); }
    return i32_as_f32(pos[u32(i32(params.p_offset) + i32(s) * params.p_stride)]);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 256u;
    if (i >= params.pairs) { return; }
    let j = i % params.half;
    let row = i / params.half;
    let s = row % params.seq;
    let b = row / params.seq;
    let angle = keep(position_of(s) * freq[j]);
    let c = keep(wgt_cos(angle));
    let sn = keep(wgt_sin(angle));
    let at = i32(params.x_offset) + i32(b) * params.x_sb + i32(s) * params.x_ss;
    let x0 = x[u32(at + i32(j) * params.x_sd)];
    let x1 = x[u32(at + i32(j + params.half) * params.x_sd)];
    let first = row * 2u * params.half + j;
    out[first] = keep(x0 * c) + -keep(x1 * sn);
    out[first + params.half] = keep(x1 * c) + keep(x0 * sn);
}
