// Each row of `x` (rows of `width`) scaled to unit root-mean-square, times `weight`:
// one workgroup a row, its sum of squares reduced in workgroup memory. Serves the
// blocks' norms (rows of the model's width) and Qwen3's QK-norm (rows of a head).

struct Params {
    width: u32,
    eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

const THREADS: u32 = 64u;
var<workgroup> partial: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    let row = (g.x + g.y * 32768u) * p.width;
    var sum = 0.0;
    for (var i = l; i < p.width; i += THREADS) {
        let v = x[row + i];
        sum += v * v;
    }
    partial[l] = sum;
    workgroupBarrier();
    for (var stride = THREADS / 2u; stride > 0u; stride /= 2u) {
        if (l < stride) {
            partial[l] += partial[l + stride];
        }
        workgroupBarrier();
    }
    let scale = 1.0 / sqrt(partial[0] / f32(p.width) + p.eps);
    for (var i = l; i < p.width; i += THREADS) {
        out[row + i] = x[row + i] * scale * weight[i];
    }
}
