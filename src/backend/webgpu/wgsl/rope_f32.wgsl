// rope.wgsl's kernel for f32 x: one invocation per rotated pair.

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 256u;
    if (i >= params.items) { return; }
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
