// f16 matrix product through subgroup matrices (src/backend/webgpu/matmul_sgmatrix.c):
// out[batch, M, N] = a[batch, M, K] @ b[batch, K, N], f16 operands, f32 accumulators, an f32
// or f16 output. One workgroup computes a BM x BN tile of the output; its subgroups (WM along
// M, WN along N, of SG invocations each) a SUBM x SUBN part of it, TM x TN result matrices of
// SM x SN. K goes in steps of BK: each step's operand tiles are fetched from storage into
// registers during the previous step's multiplies, then staged in workgroup memory (a as
// [BM][AP], b as [BK][BP], padded against bank conflicts), from where the subgroup matrices
// load. Elements past M, N or K are staged as zeros; outputs past M or N are not written.
// Where K is a multiple of the tile's, the host builds the fetches of interior workgroups
// without their bounds checks, and every fetch so where M and N are too (matmul_sgmatrix.c).
enable f16;
{{ENABLES}}

struct Params {
    M: u32, N: u32, K: u32, batch: u32,
    tiles_m: u32, tiles_n: u32, batch_ndim: u32, a_offset: u32,
    b_offset: u32, pad0: u32, pad1: u32, pad2: u32,
    a_so: i32, a_sk: i32, b_so: i32, b_sk: i32,
    batch_shape: array<vec4<u32>, 2>,
    a_batch: array<vec4<i32>, 2>,
    b_batch: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<storage, read> a: array<{{A_STORAGE}}>;
@group(0) @binding(1) var<storage, read> b: array<{{B_STORAGE}}>;
@group(0) @binding(2) var<storage, read_write> out: array<{{OUT_TYPE}}>;
@group(0) @binding(3) var<uniform> params: Params;

const BM = {{BM}}u;
const BN = {{BN}}u;
const BK = {{BK}}u;
const AP = {{AP}}u;
const BP = {{BP}}u;
const SG = {{SG}}u;
const WN = {{WN}}u;
const SUBM = {{SUBM}}u;
const SUBN = {{SUBN}}u;
const SM = {{SM}}u;
const SN = {{SN}}u;
const SK = {{SK}}u;
const WG = {{WG}}u;

var<workgroup> sa: array<f16, BM * AP>;
var<workgroup> sb: array<f16, BK * BP>;
// Each subgroup's result matrix on its way out, where it cannot be stored whole.
var<workgroup> sc: array<f32, {{NSG}}u * SM * SN>;

fn halves(w: u32) -> vec2<f16> { return bitcast<vec2<f16>>(w); }
{{HELPERS}}

@compute @workgroup_size({{WG}})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>{{LANE_PARAM}}) {
{{LANE_LET}}
    let group = wid.x + wid.y * groups.x;
    let per = params.tiles_m * params.tiles_n;
    if (group >= per * params.batch) { return; }
    let bt = group / per;
    let t = group % per;
    let m0 = (t / params.tiles_n) * BM;
    let n0 = (t % params.tiles_n) * BN;
    var a_base = i32(params.a_offset);
    var b_base = i32(params.b_offset);
    var rest = bt;
    for (var d = i32(params.batch_ndim) - 1; d >= 0; d = d - 1) {
        let len = params.batch_shape[d / 4][d % 4];
        let i = i32(rest % len);
        rest = rest / len;
        a_base = a_base + i * params.a_batch[d / 4][d % 4];
        b_base = b_base + i * params.b_batch[d / 4][d % 4];
    }
    // Subgroups are consecutive runs of SG invocations (the host runs this only where the
    // adapter's subgroups are all SG wide).
    let sg = lid / SG;
    let wm = sg / WN;
    let wn = sg % WN;
    let am = wm * SUBM;
    let bn = wn * SUBN;
    // The workgroup's tile lies wholly inside the output.
    let interior = m0 + BM <= params.M && n0 + BN <= params.N;
{{ACC_DECL}}
{{REG_DECL}}
    let steps = (params.K + BK - 1u) / BK;
    var k0 = 0u;
{{FETCH}}
    for (var s = 0u; s < steps; s = s + 1u) {
        workgroupBarrier();
{{STAGE}}
        workgroupBarrier();
        k0 = k0 + BK;
        if (s + 1u < steps) {
{{FETCH}}
        }
{{MULTIPLY}}
    }
    let obase = bt * params.M * params.N;
    let whole = interior;
{{EPILOGUE}}
}
