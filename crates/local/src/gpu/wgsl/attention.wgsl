// Attention of query positions against the KV cache: one workgroup per (query head,
// query position t), which sees the cache's first start + t + 1 positions. Scores go to
// `scores` (a row of `stride` per workgroup), then their softmax (max and sum reduced in
// workgroup memory), then each output value is the weighted sum of the values. Query
// heads share KV heads in groups (grouped-query attention).

struct Params {
    start: u32,
    heads: u32,
    kv_heads: u32,
    head_dim: u32,
    stride: u32,
    scale: f32,
}

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> keys: array<f32>;
@group(0) @binding(2) var<storage, read> values: array<f32>;
@group(0) @binding(3) var<storage, read_write> scores: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;

const THREADS: u32 = 64u;
var<workgroup> partial: array<f32, 64>;

fn reduce(l: u32, v: f32, maximum: bool) -> f32 {
    partial[l] = v;
    workgroupBarrier();
    for (var stride = THREADS / 2u; stride > 0u; stride /= 2u) {
        if (l < stride) {
            if (maximum) {
                partial[l] = max(partial[l], partial[l + stride]);
            } else {
                partial[l] += partial[l + stride];
            }
        }
        workgroupBarrier();
    }
    let total = partial[0];
    workgroupBarrier();
    return total;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    let h = g.x;
    let t = g.y;
    let hd = p.head_dim;
    let seen = p.start + t + 1u;
    let kv = p.kv_heads * hd;
    let kv_at = (h / (p.heads / p.kv_heads)) * hd;
    let q_at = (t * p.heads + h) * hd;
    let row = (t * p.heads + h) * p.stride;
    var top = -3.4e38;
    for (var pos = l; pos < seen; pos += THREADS) {
        var s = 0.0;
        for (var d = 0u; d < hd; d++) {
            s += q[q_at + d] * keys[pos * kv + kv_at + d];
        }
        s *= p.scale;
        scores[row + pos] = s;
        top = max(top, s);
    }
    top = reduce(l, top, true);
    var sum = 0.0;
    for (var pos = l; pos < seen; pos += THREADS) {
        let e = exp(scores[row + pos] - top);
        scores[row + pos] = e;
        sum += e;
    }
    sum = reduce(l, sum, false);
    storageBarrier();
    for (var d = l; d < hd; d += THREADS) {
        var o = 0.0;
        for (var pos = 0u; pos < seen; pos++) {
            o += scores[row + pos] / sum * values[pos * kv + kv_at + d];
        }
        out[q_at + d] = o;
    }
}
