// The forward pass's elementwise steps over `len` values, one invocation each:
// op 0, the residual add `x += y`; op 1, SwiGLU's `x = silu(x) ⊙ y`; op 2, a bias
// `x += y[i mod width]` on every row.

struct Params {
    len: u32,
    op: u32,
    width: u32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = id.x + id.y * n.x * 64u;
    if (i >= p.len) {
        return;
    }
    switch p.op {
        case 0u: {
            x[i] += y[i];
        }
        case 1u: {
            let g = x[i];
            x[i] = g / (1.0 + exp(-g)) * y[i];
        }
        default: {
            x[i] += y[i % p.width];
        }
    }
}
