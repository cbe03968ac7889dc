"""llama.cpp's token ids for a corpus, the reference `tokenizer::tests` compares with.

Usage: python tokenizer_reference.py MODEL.gguf < strings.json > ids.json
Reads a JSON list of strings; writes a JSON list of id lists, each the text tokenized
as plain text (no BOS, special tokens not parsed), through llama-cpp-python.
"""

import json
import sys

from llama_cpp import Llama


def main() -> None:
    model = Llama(model_path=sys.argv[1], vocab_only=True, verbose=False)
    texts = json.load(sys.stdin)
    ids = [model.tokenize(t.encode("utf-8"), add_bos=False, special=False) for t in texts]
    json.dump(ids, sys.stdout)


if __name__ == "__main__":
    main()
