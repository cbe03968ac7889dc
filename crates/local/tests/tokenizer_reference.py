"""llama.cpp's token ids for a corpus, the reference `tokenizer::tests` compares with.

Usage: python tokenizer_reference.py MODEL.gguf < strings.json > ids.json
Reads a JSON list of strings; writes a JSON list of id lists, each the text tokenized
as plain text (no BOS, special tokens not parsed), through llama-cpp-python.

Usage: python tokenizer_reference.py --spm OUT.gguf PREFIX NAME < strings.json > cases.json
Writes a small SentencePiece vocabulary (`tokenizer.ggml.model` "llama": <unk>, <s>,
</s>, the 256 <0xNN> byte tokens, two control and one user-defined token, single
characters and a few hundred merged pieces with scores, some tied) to OUT.gguf with
`tokenizer.ggml.add_space_prefix` PREFIX ("true" as Llama 2, "false" as Gemma) and
`general.name` NAME (llama.cpp strips whitespace after special tokens for "phi-3"), then
writes, for each string, llama.cpp's ids as plain text, as markup (special tokens
parsed), as markup with BOS, and llama_detokenize's bytes of the plain ids.
"""

import ctypes
import json
import random
import sys

import gguf
import llama_cpp
from llama_cpp import Llama

SPACE = "\u2581"
CONTROLS = ["<start_of_turn>", "<end_of_turn>", "<|user|>", "<|end|>", "<|assistant|>", "<|endoftext|>"]
USER_DEFINED = ["<tool_call>"]
CHARS = (
    [chr(c) for c in range(0x21, 0x7F)]
    + [SPACE]
    + list("éèêàâçïîôüßäöñ中文語日本")
)
WORDS = (
    "the quick brown fox jumps over lazy dog hello world how are you today "
    "tokenizer sentence piece merge score byte fallback leading trailing multiple "
    "spaces tabs line one two four naïve café résumé déjà vu über straße größe "
    "function return value print let main vec user model assistant system think "
    "is was were and that this with for from they their there here where when "
    "中文 日本語 ing er ed ly tion"
).split()


def spm_vocabulary():
    """(tokens, scores, types) of the test vocabulary, deterministic."""
    rng = random.Random(44)
    tokens, scores, types = [], [], []

    def add(text, score, kind):
        if text not in tokens:
            tokens.append(text)
            scores.append(score)
            types.append(kind)

    add("<unk>", 0.0, gguf.TokenType.UNKNOWN)
    add("<s>", 0.0, gguf.TokenType.CONTROL)
    add("</s>", 0.0, gguf.TokenType.CONTROL)
    for b in range(256):
        add(f"<0x{b:02X}>", 0.0, gguf.TokenType.BYTE)
    for t in CONTROLS:
        add(t, 0.0, gguf.TokenType.CONTROL)
    for t in USER_DEFINED:
        add(t, 0.0, gguf.TokenType.USER_DEFINED)
    for i, c in enumerate(CHARS):
        add(c, -1000.0 - i, gguf.TokenType.NORMAL)
    pieces = [SPACE * 2, SPACE * 4, SPACE * 8, "<s", "</", "</s"]
    for w in WORDS:
        for form in (SPACE + w, w):
            pieces.extend(form[:n] for n in range(2, len(form) + 1))
    for p in pieces:
        # Quarter steps over a narrow range: many pieces tie, so the order among
        # equals (leftmost first) is exercised.
        add(p, -0.25 * rng.randint(4, 60), gguf.TokenType.NORMAL)
    return tokens, scores, types


def write_spm(path, add_space_prefix, name):
    tokens, scores, types = spm_vocabulary()
    w = gguf.GGUFWriter(path, "llama")
    w.add_name(name)
    w.add_context_length(64)
    w.add_embedding_length(64)
    w.add_block_count(1)
    w.add_feed_forward_length(128)
    w.add_head_count(2)
    w.add_head_count_kv(2)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_space_prefix(add_space_prefix)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def detokenize(model, ids):
    """llama.cpp's own detokenizer (llama-cpp-python's strips after BOS only)."""
    arr = (llama_cpp.llama_token * max(len(ids), 1))(*ids)
    size = 64 + 16 * len(ids)
    buf = ctypes.create_string_buffer(size)
    vocab = llama_cpp.llama_model_get_vocab(model._model.model)
    n = llama_cpp.llama_detokenize(vocab, arr, len(ids), buf, size, False, False)
    return list(buf.raw[:n])


def spm_main(path, prefix, name):
    write_spm(path, prefix == "true", name)
    model = Llama(model_path=path, vocab_only=True, verbose=False)
    texts = json.load(sys.stdin)
    out = {"plain": [], "markup": [], "bos": [], "decoded": []}
    for t in texts:
        b = t.encode("utf-8")
        plain = model.tokenize(b, add_bos=False, special=False)
        out["plain"].append(plain)
        out["markup"].append(model.tokenize(b, add_bos=False, special=True))
        out["bos"].append(model.tokenize(b, add_bos=True, special=True))
        out["decoded"].append(detokenize(model, plain))
    json.dump(out, sys.stdout)


def main() -> None:
    if sys.argv[1] == "--spm":
        spm_main(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    model = Llama(model_path=sys.argv[1], vocab_only=True, verbose=False)
    texts = json.load(sys.stdin)
    ids = [model.tokenize(t.encode("utf-8"), add_bos=False, special=False) for t in texts]
    json.dump(ids, sys.stdout)


if __name__ == "__main__":
    main()
