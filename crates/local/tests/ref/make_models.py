"""Small random-weight GGUF models of each architecture × quantisation the local model
reads, and llama.cpp's logits on each (llama-cpp-python), for the Rust reference test
(`llama::families` in crates/local).

Usage: python make_models.py OUT_DIR

Writes OUT_DIR/<arch>-<quant>.gguf and OUT_DIR/reference.json:
  {"models": [{"arch", "quant", "file", "types": {ggml type: tensors},
               "dequantized": {K-quant tensor: {"head": first 512 values, "sum"}},
               "prompt": [ids], "steps": [{"token", "logits": [...]}],
               "chat": {"text", "ids"}}]}
where steps[0] holds the logits after the whole prompt and each later step the logits
after feeding the previous step's argmax (greedy, teacher-forced on both sides), and
chat is the file's chat template rendered (Jinja) for one user message with llama.cpp's
ids for it. gemma2, gemma3 and phi3 have SentencePiece vocabularies, as the hubs' files
do (Gemma without the space prefix; the Phi-3 file named so, for llama.cpp's rule that
its special tokens eat the whitespace after them); the others byte-level BPE.

Each model is written in F32 by PyPI's `gguf` (the writer llama.cpp's converter uses),
then quantised by llama.cpp's own quantiser (`llama_model_quantize`) exactly as the
files people download were: Q4_K_M and Q5_K_M mix Q4_K/Q5_K with Q6_K where llama.cpp
puts more bits (attn_v, ffn_down, the tied embedding), Q6_K is Q6_K throughout.
Widths are multiples of 256 so every matrix takes the K-quant, but for qwen2's, which
take llama.cpp's fallback types (Q5_0, Q5_1, Q8_0) as narrow real models' files do.

gemma2, gemma3 and phi3 carry what those graphs read: Gemma's post-norms, soft caps
(small, so they bite on random weights), a sliding window of 6 positions (the prompt
is 12, so local layers drop some), gemma3's QK-norm and six layers (five local at RoPE
base 10,000, one global at 1,000,000 scaled linearly by 1/8); phi3's fused attn_qkv
and ffn_up, with long and short RoPE factors and an attention factor, its trained
context (64) below the window so the long factors apply.
"""
import ctypes
import json
import os
import sys

import gguf
import jinja2
import numpy as np
import llama_cpp

VOCAB_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>",
                  "<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
PROMPT = [5, 77, 260, 31, 140, 9, 201, 256, 3, 88, 120, 45]
STEPS = 4
CHAT = "Where am I? The  room\tis  the hall."

CHATML_TOOLS = (
    "{%- if tools %}{{- '<|im_start|>system\\n' }}# Tools\\n<tools>{% for tool in tools %}"
    "{{ tool | tojson }}{% endfor %}</tools>\\nFor each function call, return a json object "
    "within <tool_call></tool_call> XML tags{{ '<|im_end|>\\n' }}{%- endif %}"
    "{%- for message in messages %}{%- if message.role == 'tool' %}"
    "{{- '<|im_start|>user\\n<tool_response>\\n' + message.content + '\\n</tool_response><|im_end|>\\n' }}"
    "{%- else %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
LLAMA3 = (
    "{{- bos_token }}{%- for message in messages %}{%- if message.role == 'tool' %}"
    "{{- '<|start_header_id|>ipython<|end_header_id|>\\n\\n' + message.content + '<|eot_id|>' }}"
    "{%- else %}{{- '<|start_header_id|>' + message.role + '<|end_header_id|>\\n\\n' + message.content + '<|eot_id|>' }}"
    "{%- endif %}{%- endfor %}{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}"
)

GEMMA = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    "{% for message in messages %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}"
    "{% else %}{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}"
)
PHI3 = (
    "{% for message in messages %}{% if message['role'] == 'system' and message['content'] %}"
    "{{'<|system|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}"
    "{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}"
    "{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}"
)
GEMMA_SPECIALS = ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>"]
PHI3_SPECIALS = ["<s>", "<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
GEMMA_COMMON = {"specials": GEMMA_SPECIALS, "bos": "<bos>", "eos": "<eos>", "tied": True,
                "spm": True, "space_prefix": False,
                "post_norms": True, "sliding_window": 6}

# name: (gguf architecture, tokenizer pre, chat template, shape overrides)
ARCHS = {
    "llama": ("llama", "llama-bpe", LLAMA3, {}),
    "llama3": ("llama", "llama-bpe", LLAMA3, {"rope_freqs": True, "rope_base": 500000.0}),
    # 384 wide, not whole 256-blocks (as Qwen2.5-0.5B's 896): llama.cpp's quantiser falls
    # back to Q5_0 (Q4_K_M), Q5_1 (Q5_K_M) and Q8_0 (Q6_K) for the matrices that many
    # columns wide, as it does in the hubs' files.
    "qwen2": ("qwen2", "qwen2", CHATML_TOOLS, {"qkv_bias": True, "tied": True, "dim": 384,
                                              "rope_base": 1000000.0}),
    "qwen3": ("qwen3", "qwen2", CHATML_TOOLS, {"qk_norm": True, "tied": True, "heads": 8, "head_dim": 64,
                                              "rope_base": 1000000.0}),
    "gemma2": ("gemma2", "llama-bpe", GEMMA, dict(GEMMA_COMMON, attn_softcap=2.0, final_softcap=3.0)),
    "gemma3": ("gemma3", "llama-bpe", GEMMA, dict(GEMMA_COMMON, qk_norm=True, layers=6, rope_base=1000000.0,
                                                rope_linear=8.0)),
    "phi3": ("phi3", "llama-bpe", PHI3, {"specials": PHI3_SPECIALS, "bos": "<s>", "eos": "<|endoftext|>",
                                         "spm": True, "space_prefix": True, "name": "Phi-3-mini-test",
                                         "fused": True, "rope_factors": True, "orig_context": 64,
                                         "attn_factor": 1.2}),
}
QUANTS = {
    "F32": None,
    "Q8_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0,
    "Q4_K_M": llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_K_M,
    "Q5_K_M": llama_cpp.LLAMA_FTYPE_MOSTLY_Q5_K_M,
    "Q6_K": llama_cpp.LLAMA_FTYPE_MOSTLY_Q6_K,
}

DIM, LAYERS, HEADS, KV_HEADS, FFN = 256, 2, 4, 2, 512


def byte_vocab(specials=VOCAB_SPECIALS):
    """GPT-2's byte-to-unicode alphabet: one token per byte, then two merges."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    chars = [chr(c) for _, c in sorted(zip(bs, cs))]
    tokens = chars + ["ĠĠ", "he"] + specials
    merges = ["Ġ Ġ", "h e"]
    types = [1] * (len(tokens) - len(specials)) + [3] * len(specials)
    return tokens, merges, types


def spm_vocab(specials):
    """A SentencePiece vocabulary as Gemma's and Phi-3's files have: <unk>, the 256
    <0xNN> byte tokens, printable ASCII and ▁, pieces of the chat test's words with
    scores, then the specials."""
    space = "\u2581"
    tokens, scores, types = ["<unk>"], [0.0], [2]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>"); scores.append(0.0); types.append(6)
    for i, c in enumerate([chr(c) for c in range(0x21, 0x7F)] + [space]):
        tokens.append(c); scores.append(-100.0 - i); types.append(1)
    for i, w in enumerate(CHAT.split() + ["user", "model", "assistant", "\n\n"]):
        for form in (space + w, w):
            for n in range(2, len(form) + 1):
                if form[:n] not in tokens:
                    tokens.append(form[:n]); scores.append(-1.0 - 0.5 * (i % 4) - 0.1 * n); types.append(1)
    # llama.cpp looks `</s>` up in a file named Phi-3 (and fails without it).
    for t in specials + [t for t in ("<s>", "</s>") if t not in specials]:
        tokens.append(t); scores.append(0.0); types.append(3)
    return tokens, scores, types


def chat(path, llm, template, bos, add_bos):
    """The file's template rendered (Jinja) for one user message, and llama.cpp's ids
    for it: BOS added as the file says, unless the template wrote it."""
    text = jinja2.Environment().from_string(template).render(
        messages=[{"role": "user", "content": CHAT}], add_generation_prompt=True,
        bos_token=bos, eos_token="")
    ids = llm.tokenize(text.encode(), add_bos=add_bos and not text.startswith(bos), special=True)
    return {"text": text, "ids": ids}


def llama3_freq_factors(head_dim, base):
    """The converter's factors for rope_scaling type llama3 (factor 8, 8192 trained)."""
    factor, low, high, old = 8.0, 1.0, 4.0, 8192
    low_wavelen, high_wavelen = old / low, old / high
    out = []
    for i in range(0, head_dim, 2):
        freq = 1.0 / (base ** (i / head_dim))
        wavelen = 2 * np.pi / freq
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def write_f32(path, name, seed):
    arch, pre, template, o = ARCHS[name]
    rng = np.random.default_rng(seed)
    dim = o.get("dim", DIM)
    heads = o.get("heads", HEADS)
    head_dim = o.get("head_dim", dim // HEADS)
    q_dim, kv_dim = heads * head_dim, KV_HEADS * head_dim
    layers = o.get("layers", LAYERS)
    if o.get("spm"):
        tokens, scores, types = spm_vocab(o["specials"])
    else:
        tokens, merges, types = byte_vocab(o.get("specials", VOCAB_SPECIALS))
    vocab = len(tokens)
    w = gguf.GGUFWriter(path, arch)
    w.add_context_length(256)
    w.add_embedding_length(dim)
    w.add_block_count(layers)
    w.add_feed_forward_length(FFN)
    w.add_head_count(heads)
    w.add_head_count_kv(KV_HEADS)
    if "head_dim" in o:
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(o.get("rope_base", 10000.0))
    w.add_layer_norm_rms_eps(1e-6)
    if "sliding_window" in o:
        w.add_sliding_window(o["sliding_window"])
    if "attn_softcap" in o:
        w.add_attn_logit_softcapping(o["attn_softcap"])
        w.add_final_logit_softcapping(o["final_softcap"])
    if "rope_linear" in o:
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(o["rope_linear"])
    if "orig_context" in o:
        w.add_rope_scaling_orig_ctx_len(o["orig_context"])
        w.add_rope_scaling_attn_factors(o["attn_factor"])
    w.add_file_type(0)
    if o.get("spm"):
        # SentencePiece, as the hubs' Gemma and Phi-3 files are (llama.cpp knows a
        # Phi-3 file by its name: its special tokens eat the whitespace after them).
        w.add_name(o.get("name", name))
        w.add_tokenizer_model("llama")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        w.add_add_space_prefix(o["space_prefix"])
        w.add_add_bos_token(True)
    else:
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre(pre)
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.add_token_merges(merges)
        w.add_add_bos_token(False)
    w.add_bos_token_id(tokens.index(o.get("bos", "<|begin_of_text|>" if arch == "llama" else "<|endoftext|>")))
    w.add_eos_token_id(tokens.index(o.get("eos", "<|eot_id|>" if arch == "llama" else "<|im_end|>")))
    w.add_chat_template(template)

    def mat(rows, cols, gain=1.0):
        return (rng.standard_normal((rows, cols)) * gain / np.sqrt(cols)).astype(np.float32)

    def norm(n):
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    # Embeddings as small as a real model's, so the blocks move the residual stream
    # (with N(0, 1) rows a tied head would only ever repeat the last token).
    w.add_tensor("token_embd.weight", (0.1 * rng.standard_normal((vocab, dim))).astype(np.float32))
    if not o.get("tied"):
        w.add_tensor("output.weight", mat(vocab, dim, 4.0))
    if o.get("rope_freqs"):
        w.add_tensor("rope_freqs.weight", llama3_freq_factors(head_dim, o["rope_base"]))
    if o.get("rope_factors"):
        # Phi-3.5's shape: short factors near 1, long ones growing to ~40 with the pair.
        pairs = np.arange(head_dim // 2, dtype=np.float32)
        w.add_tensor("rope_factors_short.weight", (1.0 + 0.05 * pairs / len(pairs)).astype(np.float32))
        w.add_tensor("rope_factors_long.weight", (1.0 + 40.0 * (pairs / len(pairs)) ** 2).astype(np.float32))
    for i in range(layers):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", norm(dim))
        if o.get("fused"):
            w.add_tensor(p + "attn_qkv.weight", np.concatenate([mat(q_dim, dim), mat(kv_dim, dim), mat(kv_dim, dim)]))
        else:
            w.add_tensor(p + "attn_q.weight", mat(q_dim, dim))
            w.add_tensor(p + "attn_k.weight", mat(kv_dim, dim))
            w.add_tensor(p + "attn_v.weight", mat(kv_dim, dim))
        if o.get("qkv_bias"):
            for part, n in (("q", q_dim), ("k", kv_dim), ("v", kv_dim)):
                w.add_tensor(p + f"attn_{part}.bias", (0.5 * rng.standard_normal(n)).astype(np.float32))
        if o.get("qk_norm"):
            w.add_tensor(p + "attn_q_norm.weight", norm(head_dim))
            w.add_tensor(p + "attn_k_norm.weight", norm(head_dim))
        w.add_tensor(p + "attn_output.weight", mat(dim, q_dim, 2.0))
        if o.get("post_norms"):
            w.add_tensor(p + "post_attention_norm.weight", norm(dim))
        w.add_tensor(p + "ffn_norm.weight", norm(dim))
        if o.get("fused"):
            w.add_tensor(p + "ffn_up.weight", np.concatenate([mat(FFN, dim), mat(FFN, dim)]))
        else:
            w.add_tensor(p + "ffn_gate.weight", mat(FFN, dim))
            w.add_tensor(p + "ffn_up.weight", mat(FFN, dim))
        w.add_tensor(p + "ffn_down.weight", mat(dim, FFN, 2.0))
        if o.get("post_norms"):
            w.add_tensor(p + "post_ffw_norm.weight", norm(dim))
    w.add_tensor("output_norm.weight", norm(dim))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def quantize(src, dst, ftype):
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = 1
    if llama_cpp.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(params)) != 0:
        raise SystemExit(f"llama_model_quantize {dst} failed")


def tensor_types(path):
    counts = {}
    for t in gguf.GGUFReader(path).tensors:
        counts[t.tensor_type.name] = counts.get(t.tensor_type.name, 0) + 1
    return counts


def dequantized(path):
    """gguf-py's own decoding of each K-quant tensor: its first 512 values and the
    sum of all, for the Rust side's dequantisation to match exactly."""
    out = {}
    for t in gguf.GGUFReader(path).tensors:
        if t.tensor_type.name.endswith("_K"):
            values = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64).ravel()
            out[t.name] = {"head": [float(v) for v in values[:512]], "sum": float(values.sum())}
    return out


def reference(path, name):
    llm = llama_cpp.Llama(model_path=path, n_ctx=128, n_threads=1, verbose=False)
    _, _, template, o = ARCHS[name]
    bos = o.get("bos", "<|begin_of_text|>" if ARCHS[name][0] == "llama" else "<|endoftext|>")
    prompt = chat(path, llm, template, bos, bool(o.get("spm")))
    n_vocab = llm.n_vocab()
    llm.reset()
    llm.eval(PROMPT)
    steps = []
    for _ in range(STEPS):
        logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,)).copy()
        token = int(np.argmax(logits))
        steps.append({"token": token, "logits": [float(v) for v in logits]})
        llm.eval([token])
    return steps, prompt


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    models = []
    for seed, name in enumerate(ARCHS):
        f32 = os.path.join(out_dir, f"{name}-F32.gguf")
        write_f32(f32, name, seed + 1)
        for quant, ftype in QUANTS.items():
            path = f32 if ftype is None else os.path.join(out_dir, f"{name}-{quant}.gguf")
            if ftype is not None:
                quantize(f32, path, ftype)
            steps, prompt = reference(path, name)
            models.append({"arch": name, "quant": quant, "file": path,
                           "types": tensor_types(path), "dequantized": dequantized(path), "prompt": PROMPT,
                           "steps": steps, "chat": prompt})
    with open(os.path.join(out_dir, "reference.json"), "w") as f:
        json.dump({"models": models}, f)


if __name__ == "__main__":
    main(sys.argv[1])
