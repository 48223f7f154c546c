// Rotary position embedding for small x (a decoding step's heads: core/transformer.c sends
// x of at most 65536 elements here): out [B, S, d] (contiguous) from x [B, S, d] (any
// strides), the pair (j, j + d/2) of row (b, s) turned by the angle pos(s) * freq[j]:
// out_j = x_j cos - x_{j+d/2} sin, out_{j+d/2} = x_{j+d/2} cos + x_j sin. The composed rope (elementwise ops) computes each element on its own, so each
// pair took its angle's cos and sin twice, and read its partner through a strided index;
// here each pair takes them once. The values are the composition's: the same f32 angle,
// wgt_sin / wgt_cos (trig.c), each product rounded before the sum (keep(): no fused
// multiply-add, which the composition's kernels cannot form either). BODY is the kernel for
// x's type: rope_f32.wgsl (one invocation per pair) or rope_f16.wgsl (f16 two to a word, one
// invocation per two neighbouring pairs, so that each store is a whole word).

struct Params {
    items: u32,      // invocations' work: B * S * d / 2 pairs (f32), half as many pairs of pairs (f16)
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

@group(0) @binding(0) var<storage, read> x: array<{{STORAGE}}>;
@group(0) @binding(1) var<storage, read> pos: array<i32>;
@group(0) @binding(2) var<storage, read> freq: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<{{STORAGE}}>;
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

{{BODY}}
