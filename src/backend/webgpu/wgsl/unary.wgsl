// out = op(in0) over a strided input; out is contiguous. With op the identity this is the
// strided copy that makes views contiguous.

@group(0) @binding(0) var<storage, read> in0: array<{{STORE}}>;
@group(0) @binding(1) var<storage, read_write> out: array<{{STORE}}>;

fn load0(i: u32) -> {{T}} { return {{LOAD0}}; }
fn op(x: {{T}}) -> {{T}} { return {{OP}}; }
fn value(i: u32) -> {{T}} { return op(load0(input_index0(i))); }

{{WRITE_OUT}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let word = invocation_index(gid, groups);
    let first = word * ELEMS;
    if (first >= params.numel) { return; }
    let v0 = value(first);
    var v1 = v0;
    if (ELEMS == 2u && first + 1u < params.numel) { v1 = value(first + 1u); }
    write_out(word, v0, v1);
}
