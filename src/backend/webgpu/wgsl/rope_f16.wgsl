// rope.wgsl's kernel for f16 x: values two to a u32 word, computed in f32 as the elementwise
// ops compute f16, each op's result rounded to f16 as they store it (keep_f16), so the bits
// are the composition's: cos and sin cast to f16 (the cast op's expression, F32_AS_F16), each
// product rounded, then the sum. One invocation per two neighbouring pairs (j, j + 1), j even:
// with d a multiple of 4 (rope.c) each of its two stores is one whole word, which no other
// invocation writes.

fn keep_f16(v: f32) -> f32 { return unpack2x16float(pack2x16float(vec2<f32>(v, 0.0)) ^ params.zero).x; }

// f32 to f16 as the cast op rounds it (unary.c's expression, filled in by rope.c).
fn f32_as_f16(x: f32) -> f32 { return keep_f16({{F32_AS_F16}}); }

// Element e of x, loaded as the elementwise ops load f16 (a NaN keeps its sign).
fn x_at(e: i32) -> f32 { return wgt_unpack_f16(x[u32(e) >> 1u])[u32(e) & 1u]; }

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 256u;
    if (i >= params.items) { return; }
    let quarter = params.half / 2u;
    let j = 2u * (i % quarter);
    let row = i / quarter;
    let s = row % params.seq;
    let b = row / params.seq;
    let p = position_of(s);
    let at = i32(params.x_offset) + i32(b) * params.x_sb + i32(s) * params.x_ss;
    var first_half: vec2<f32>;
    var second_half: vec2<f32>;
    for (var k = 0u; k < 2u; k = k + 1u) {
        let angle = keep(p * freq[j + k]);
        let c = f32_as_f16(keep(wgt_cos(angle)));
        let sn = f32_as_f16(keep(wgt_sin(angle)));
        let x0 = x_at(at + i32(j + k) * params.x_sd);
        let x1 = x_at(at + i32(j + k + params.half) * params.x_sd);
        first_half[k] = keep_f16(keep_f16(x0 * c) + -keep_f16(x1 * sn));
        second_half[k] = keep_f16(keep_f16(x1 * c) + keep_f16(x0 * sn));
    }
    let first = row * 2u * params.half + j;
    out[first / 2u] = pack2x16float(first_half);
    out[(first + params.half) / 2u] = pack2x16float(second_half);
}
