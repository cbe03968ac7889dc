"""Reference greedy tokens from llama.cpp (llama-cpp-python) for the local model's tests.

Usage: python reference.py MODEL.gguf OUT.json

For each ChatML prompt: the prompt's token ids (llama.cpp's tokenizer), then 16 greedy
steps, each with the chosen token and its logit, the runner-up's logit and the top five (so a test can tell a
real divergence from a near-tie). Single-threaded, as the Rust side runs.
"""
import json
import sys

import numpy as np
from llama_cpp import Llama

PROMPTS = [
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nWrite a haiku about the sea.<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>system\nAnswer briefly.<|im_end|>\n<|im_start|>user\n"
    "List three prime numbers and explain why 9 is not prime.<|im_end|>\n<|im_start|>assistant\n",
]
STEPS = 16


def main(model_path, out_path):
    llm = Llama(model_path=model_path, n_ctx=512, n_threads=1, logits_all=False, verbose=False)
    cases = []
    for text in PROMPTS:
        prompt = llm.tokenize(text.encode(), add_bos=False, special=True)
        llm.reset()
        llm.eval(prompt)
        steps = []
        for _ in range(STEPS):
            # With logits_all=False llama-cpp-python no longer copies them into scores.
            logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).copy()
            order = np.argsort(-logits)
            top, second = int(order[0]), int(order[1])
            steps.append({
                "token": top,
                "logit": float(logits[top]),
                "runner_up": float(logits[second]),
                "top": [[int(t), float(logits[t])] for t in order[:5]],
            })
            llm.eval([top])
        cases.append({"text": text, "prompt": prompt, "steps": steps})
    with open(out_path, "w") as f:
        json.dump({"model": model_path, "cases": cases}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
