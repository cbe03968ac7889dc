// Rotates the first 2·half values of every head of every row in place, by the angles'
// cos and sin the CPU computed (llama/ops.rs's `rope_table`, so both paths rotate by the
// same f32 angles): pairs adjacent, or (NeoX) value i with value i + half. One
// invocation a pair.

struct Params {
    rows: u32,
    width: u32,
    head_dim: u32,
    half: u32,
    neox: u32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> table: array<vec2<f32>>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let k = id.x + id.y * n.x * 64u;
    let heads = p.width / p.head_dim;
    let per_row = heads * p.half;
    if (k >= p.rows * per_row) {
        return;
    }
    let row = k / per_row;
    let head = (k % per_row) / p.half;
    let i = k % p.half;
    let angle = table[row * p.half + i];
    let at = row * p.width + head * p.head_dim;
    var a = at + 2u * i;
    var b = a + 1u;
    if (p.neox != 0u) {
        a = at + i;
        b = a + p.half;
    }
    let va = x[a];
    let vb = x[b];
    x[a] = va * angle.x - vb * angle.y;
    x[b] = va * angle.y + vb * angle.x;
}
